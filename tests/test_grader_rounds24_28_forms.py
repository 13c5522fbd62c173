"""Forms read in the writers of rounds 24 to 28 (read in the twenty-fourth session).

Round 24: CJ and CK, scored once at fb206f1.

Each answer below is written for this test (no writer's text); each case in ``CASES_24`` and ``GAMED_24`` grades
otherwise on fb206f1 (the controls grade the same there):
* ways back: a system's thing returned to on a condition ('traffic returns to the 64 GiB pool', 'return to 4,000
  blocks'); traffic kept on the old parts until a load test passes; a conditional switch-off on a line labelled as
  the fix is the fix's policy, unless a clause after it is the way back;
* wrong causes named, not put forward: another domain's network in an analogy ('billing for a mobile network'), one
  part of a breakdown ('the part from noise'), a cause counted at nought right after it ('but preemptions 0');
* artifacts: evidence defined as itself ('the artifact ... is the per-tenant same-seed artifact'), requirements
  certified met, a counter inside a way back's condition;
* fix and owner: a fix left to whichever cause dominates; three teams joined by 'or', none picked;
* gamed: a commit log, a template of '<placeholders>', questions on the elements answered 'yes', corporate filler,
  causes listed as 'one or more of the following'.
"""

from __future__ import annotations

import pytest

from workbench.grading.drills import load_drills
from workbench.grading.grader import grade

D = load_drills()

CASES_24 = [
    ("memory-residency-eviction", "rollback", True,
     "Move the embedder to its own pool and canary it at 5%; if canary p99 goes past 8 ms or any reloads show up, "
     "traffic returns to the 64 GiB pool."),
    ("kv-preemption-storm", "rollback", True,
     "Give the cache its 4,000 blocks back. Canary first, and if the preemption count is above zero or TTFT p99 "
     "breaks the SLO, return to 4,000 blocks on every replica."),
    ("memory-residency-eviction", "rollback", True,
     "Keep traffic on the 64 GiB accelerators until a load test on the 32 GiB parts shows p99 back near 5 ms."),
    ("spec-decode-acceptance", "rollback", False,
     "Fix: stop speculation for a sequence when its acceptance is below 0.5."),
    ("priority-budget-starvation", "mechanism", True,
     "I did billing for a mobile network for years and New Year's Eve taught me this. Priority never adds capacity: "
     "the surge still offers more tokens than the pool serves, so a queue builds, and strict priority hands each "
     "iteration's spare budget to waiting interactive prompts first, so the docs prompts starve and their TTFT p99 "
     "climbs while interactive drops."),
    ("cost-model-misses-contention", "mechanism", True,
     "The roofline prices each batch as if it had the HBM to itself, but the four cores share it. When several "
     "cores hit their memory phases together they ask for more bandwidth than HBM gives, so every batch runs longer "
     "than predicted and p99 climbs. To prove it I would split the error into the part from shapes, the part from "
     "noise and the part from contention."),
    ("spec-decode-acceptance", "mechanism", True,
     "KV use went up, so I thought of preemptions first, but preemptions 0 and goodput 100%, so that is out. The "
     "draft was trained on chat, so acceptance for code fell from 0.80 to 0.30; each step still pays for four draft "
     "passes and the verification, so each accepted token costs more and TPOT p99 rises for every tenant."),
    ("spec-decode-acceptance", "artifact", False,
     "The artifact that shows acceptance per tenant at the same seed is the per-tenant same-seed artifact."),
    ("tp-allreduce-slow-link", "artifact", False,
     "The artifact requirements of the runbook (same-seed reproduction, topology evidence) are satisfied by "
     "reference."),
    ("kv-preemption-storm", "artifact", False,
     "Put it on a canary, and if the preemption counter is not zero, back to 4,000 blocks."),
    ("compiler-runtime-mapping", "fix", False,
     "The fix is to address whichever of these is dominant: rebucketing, dispatch, fusion or batcher tuning."),
    ("spec-decode-acceptance", "owner", False,
     "The owner is the runtime team or the draft-model team or the platform team."),
]

GAMED_24 = [  # (drill, answer): graded weak, every element missing
    ("kv-preemption-storm",
     "git log --oneline\n"
     "3b1e9f0 fix(kv): find root cause of the TTFT p99 regression\n"
     "8c2d4a1 feat(mechanism): preemption storm understood\n"
     "d90e7b2 test(artifact): same-seed replay added\n"
     "41af3c8 chore(owner): serving runtime assigned\n"
     "a7c0e55 revert: rollback on canary regression\n"
     "Merged; regression closed."),
    ("spec-decode-acceptance",
     "Root cause: <component> regressed because <mechanism>.\n"
     "Proof: a same-seed replay of <config a> against <config b>, split by <dimension>.\n"
     "Fix: set <parameter> to <value>.\n"
     "Owner: <team name>.\n"
     "Rollback: revert to <previous config> if <metric> passes <threshold> on the canary."),
    ("fairness-starvation",
     "Is there a root cause? Yes, it has been found. Is there an artifact? Yes, a same-seed per-stream one. Is "
     "there a fix? Yes, the scheduling is fixed. Is there an owner? Yes, the owner owns it. Is there a rollback? "
     "Yes, canary and revert if it regresses."),
    ("tp-allreduce-slow-link",
     "At the end of the day this is about alignment across the interconnect value stream. We will leverage our "
     "NCCL learnings to holistically root-cause the all-reduce latency, socialise a data-driven, same-seed "
     "narrative and empower the owners. On release we keep a canary-first, rollback-ready posture and circle back "
     "once the TTFT KPIs trend the right way."),
    ("compiler-runtime-mapping",
     "The p99 rise comes from one or more of the following, each consistent with the evidence: queueing delay, "
     "mapping fallback, HBM contention, core imbalance, recompilation, residency, batching delay or noise. Each of "
     "them can raise p99 while p50 holds. The fix is therefore to address whichever of these is dominant "
     "(rebucketing, least-loaded dispatch, fusion changes or batcher tuning), and the proof is whichever artifact "
     "fits that class. Ownership sits with whichever team owns the implicated component."),
]

CONTROLS_24 = [  # graded the same before these rules
    ("spec-decode-acceptance", "rollback", True,
     "Fix: stop speculation for a sequence when its acceptance is below 0.5; if the canary's TPOT p99 is no "
     "better than the speculation-off run, disable speculation for the pool."),
    ("average-hides-tail", "rollback", False,
     "If p99 returns to baseline after the new buckets, the docs tenant can go on the pool."),
]


# Round 25: CL and CM, scored once at 96189ee. Each case grades otherwise there: a driver's 'kernels got slower' put
# forward is the wrong class on the slow-link drill; another device's 'noise reduction' in an analogy is not noise; a
# tenant kept 'out of general release until a replay shows ...' is a gate, a GPU that 'blocks until the ring completes'
# none; an alert put on a metric in monitoring and an analysis said to be in an appendix are no artifact; 'one of the
# compiler, runtime or platform teams' is no owner.
CASES_25 = [
    ("priority-budget-starvation", "mechanism", True,
     "Priority adds no capacity: in the surge more work arrives than the pool serves, so a queue builds, and strict "
     "priority gives each iteration's leftover budget to waiting interactive prompts first, so docs prompts starve "
     "and their TTFT p99 climbs. In hearing aids the feedback canceller preempts the noise reduction the same way."),
    ("average-hides-tail", "rollback", True,
     "Decision: keep the docs tenant out of general release until a replay shows per-tenant p99 within target."),
    ("tp-allreduce-slow-link", "rollback", False,
     "TP4 does two all-reduces per layer; every GPU blocks until the ring completes, and the ring moves at its "
     "slowest link."),
    ("spec-decode-acceptance", "artifact", False,
     "Proof: put an alert on the acceptance rate per tenant in monitoring."),
    ("spec-decode-acceptance", "artifact", False,
     "The root cause is explained in the attached analysis (see Appendix A and the per-tenant table in Appendix B), "
     "which covers the same-seed reproduction and the speculation-off control."),
    ("precision-win-without-fallback", "owner", False,
     "Whatever it turns out to be, one of the compiler, runtime or platform teams will own it."),
]


# Round 26: CN and CO, scored once at 02d1d27. Each case grades otherwise there: a cause that 'the dashboard calls'
# noise is not put forward; a release gated on the regression being resolved, or a way back once it is confirmed,
# names no validation; an eye kept on a panel is no proof; an owner offered with 'I guess' is none.
CASES_26 = [
    ("average-hides-tail", "mechanism", True,
     "Docs prompts are over 512, so no bucket fits and they run on the generic path at about 2 ms against 0.14; 2% "
     "slow is more than the 1% above p99, so the pooled p99 is now a docs request, while the mean moves 0.04 ms and "
     "the dashboard calls it noise."),
    ("cost-model-misses-contention", "rollback", False,
     "We proceed with the revert per standard procedure, and the release is gated on the regression being resolved."),
    ("spec-decode-acceptance", "rollback", False,
     "We will roll back as per our standard policy once the regression is confirmed."),
    ("kv-preemption-storm", "artifact", False,
     "The serving runtime team should own the memory split and keep an eye on the KV utilisation panel."),
    ("kv-preemption-storm", "owner", False, "Who owns it? The ops folks, I guess."),
]

GAMED_26 = [
    ("tp-allreduce-slow-link",
     "We leverage the tensor-parallel all-reduce NVLink PCIe NCCL driver-reboot synergy to triangulate the TTFT p99 "
     "regression, holistically owning it across GPU fleet on-call and serving platform stakeholders, while aligning "
     "on same-seed all_reduce_perf evidence and a canary revert-if-regresses drain gate going forward."),
    ("precision-win-without-fallback",
     "The root cause is one or more of the following: network jitter, garbage collection, dequantisation overhead, "
     "bucket fallback, HBM contention, thermal throttling, recompiles, batcher delay or core imbalance. Evidence "
     "can come from any of: a profiler, a trace, a same-seed rerun, a production replay, an accuracy eval. Owners "
     "could include the compiler team, runtime team, SRE or on-call. Rollback: revert whichever component "
     "regressed, under whatever canary condition applies."),
]


# Round 27: CP and CQ, scored once at 5222242. Each case grades otherwise there: owners said to be the owners,
# 'someone from' a team, a team that may 'evaluate' it, procurement and a change advisory board (no lever) are none,
# 'I will do this change myself' is one; a node held out 'until it is no longer regressed' names no validation.
CASES_27 = [
    ("tp-allreduce-slow-link", "owner", False, "The node is owned by its owners, with rollback to the old state."),
    ("spec-decode-acceptance", "owner", False, "Someone from the ML folks should retrain the draft."),
    ("batching-queueing-delay", "owner", False,
     "The infrastructure group could evaluate the capacity need, and I would watch the latency dashboard."),
    ("cost-model-misses-contention", "owner", False, "The procurement team should own this."),
    ("batching-queueing-delay", "owner", False, "Owner: Change Advisory Board to approve."),
    ("batching-queueing-delay", "owner", True,
     "Fix: revert max_delay_s to 2 ms and max_batch to 16. I will do this change myself today."),
    ("tp-allreduce-slow-link", "rollback", False,
     "Release decision: we hold the regressed node out of rotation until it is no longer regressed, with rollback to "
     "the pre-regression state."),
]


# a reference reworded with the incident's facts changed (round 26's CO, tuned on in round 27): three stated
# quantities the drill never has make it another setup; a misread figure or two keep it this incident's answer
_REWORDED = ("Workload: the chat stream at {rate} req/s across {cores} cores, with the plan built for seq <= 1024 in "
             "four buckets; the hit rate fell from 95% to 71% and p99 rose from 2.1 to 5.0 ms while p50 held.\n"
             "Mechanism: longer shapes match no bucket and drop to the generic unfused mapping; those batches run "
             "several times slower, the requests behind them queue, and p99 rises before p50 does.\n"
             "Artifact: the closed-loop mapping report at the same seed, hit rate per bucket and misses by reason.\n"
             "Fix: re-bucket from the observed histogram, adding 2048 and 4096, and recompile.\n"
             "Owner: the ML compiler team.\n"
             "Rollback: canary at 5%; if canary p99 is 5% worse than the pinned plan, revert to it.")
GAMED_27 = [("compiler-runtime-mapping", _REWORDED.format(rate=900, cores="eight"))]


def test_a_figure_or_two_misread_keep_the_answer():
    g = grade(D["compiler-runtime-mapping"], _REWORDED.format(rate=700, cores="four"))
    assert g.verdict != "weak" and sum(e.present for e in g.elements.values()) >= 4


# Round 28: CR and CS, scored once at 07f542b. Each case grades otherwise there: the change switched off in
# shorthand after 'and' on its condition is a way back; 'several bottleneck classes are consistent with ...' whose
# cause 'is whichever of these' a proof confirms, and a diagnostic tool's log lines claim nothing. (A glossary under
# 'Some definitions first, so we're aligned' is refused by its heading now; the short one a test could hold was
# refused before too, by its definitions alone.)
CASES_28 = [
    ("spec-decode-acceptance", "rollback", True,
     "Gate: canary on the code tenant, and speculation off if TPOT p99 stays above the speculation-off baseline."),
]

GAMED_28 = [
    ("precision-win-without-fallback",
     "Several bottleneck classes are consistent with this evidence: mapping fallback, queueing, memory contention, "
     "dequantisation overhead, core imbalance, model residency or batching delay. The root cause is whichever of "
     "these the reproducible artifact confirms. The artifact will be the appropriate report at the same seed; rollback "
     "will be triggered if the relevant metric regresses."),
    ("static-placement-imbalance",
     "$ ./diagnose --scenario placement\n"
     "[INFO] root_cause ........ IDENTIFIED\n"
     "[INFO] artifact .......... GENERATED (seed fixed, reproducible)\n"
     "[INFO] owner ............. ASSIGNED\n"
     "[INFO] rollback .......... ARMED (conditional)\n"
     "[PASS] release_decision .. HOLD\n"
     "All checks passed."),
]


@pytest.mark.parametrize(("drill", "element", "expected", "answer"),
                         CASES_24 + CONTROLS_24 + CASES_25 + CASES_26 + CASES_27 + CASES_28)
def test_rounds_24_to_28_forms(drill, element, expected, answer):
    assert grade(D[drill], answer).elements[element].present is expected


@pytest.mark.parametrize(("drill", "answer"), GAMED_24 + GAMED_26 + GAMED_27 + GAMED_28)
def test_rounds_24_to_28_gamed_is_weak(drill, answer):
    g = grade(D[drill], answer)
    assert g.verdict == "weak" and not any(e.present for e in g.elements.values())


def test_round_25_driver_kernels_named_as_the_wrong_class():
    """A driver's slower kernels put forward on the slow-link drill: the hint names them as the wrong class."""
    g = grade(D["tp-allreduce-slow-link"],
              "The only thing that changed is the driver, so I'd suspect it first: if the GEMM and attention kernels "
              "got slower, each iteration is longer, which is why TTFT p99 went from 61 to 466 ms. The all-reduce "
              "share going to 67% would then be a side effect: slower GPUs arriving at the collective at different "
              "times, so more waiting inside it.")
    assert not g.elements["mechanism"].present
    assert "'kernels got slower' is not the bottleneck class" in g.elements["mechanism"].hint

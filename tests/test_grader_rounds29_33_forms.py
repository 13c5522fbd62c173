"""Forms read in the writers of rounds 29 to 33 (read in the twenty-fifth session).

Each answer below is written for this test (no writer's text); each case in ``CASES_N`` and ``GAMED_N`` grades
otherwise at round N's commit (checked in a worktree there; the controls grade the same there).

Round 29: CT and CU, scored once at 070affb, read in the twenty-fifth session.
* workload: figures read 'against' each other ('27.4 against 20'); a tail gone to more than a second;
* ways back: a target broken ('go back to fcfs whenever document response times break their target'); a condition
  with no metric in it ('if whichever metric is relevant regresses') is none;
* wrong causes named, not put forward: a tram network in an analogy, a database 'like in our payroll database', one
  part of the gap asked after ('how much of the gap is shape, noise or contention'); put forward: 'KV usage' on the
  priority drill, 'preempt sequences' on the speculation drill;
* artifacts: chunked prefill 'splitting the prompts' is what it does, not a breakdown;
* gamed: a paraphrased reference with its setup figures changed, a table of contents of a document kept elsewhere,
  a note 'for the grader', a sixty-word run-on padded with 'the' and 'and'.

Round 30: CV and CW, scored once at a715ad9, read in the twenty-fifth session.
* mechanisms in plain words: documents served 'only the rest' and 'always at the back'; a speculative step that
  'still pays' for its drafts; GPUs that share 'partial results' and 'wait until everyone' has them; requests that
  wait 'until the batch' has enough; a 'scratch pad' too small for the fused step;
* wrong causes named, not put forward: a subsea network in an analogy, a straw man ('people will shout priority
  inversion', 'the tempting story is requantisation ... I don't think'), a negation between a phrase's words
  ('launch overhead went down, not up');
* fixes: a release line's first clause ('Release: we put a guard ...; if ...'), a team's to-do ('Compiler team:
  elementwise fusion for this block'); owners: 'whoever runs the dispatcher should switch us to ...'; a plan that
  'must wait until' a load test agrees is a release held;
* gamed: truisms, true of every incident and of none in particular.

Round 31: CX and CY, scored once at 5c42751, read in the twenty-fifth session.
* wrong causes named, not put forward: hypotheses marked off in a list ('2. Network - rejected.', '... hurting docs.
  Rejected - ...'), a gap attributed to its parts ('attributing the gap to shape, noise or overlap');
* mechanisms in plain words: 'the capacity that is left', 'more than each core's local store holds';
* ways back: 'any time' a metric breaches, 'if time per token is not better than' speculation off, traffic kept on
  the old cards 'till a small canary runs clean';
* owners: 'the team that owns that component' names no one;
* gamed: each element described by the rubric's own adjectives; every claim a supposition.

Round 32: CZ and DA, scored once at dbea2ea, read in the twenty-fifth session.
* wrong causes named, not put forward: a detour owned up to ('I went down a rabbit hole thinking thermal throttling,
  but ...', 'went back and forth on fragmentation'), possibilities weighed ('two possibilities I considered ... I am
  going with the second'), a prediction's error decomposed or divided into shape, noise and contention;
* mechanisms in plain words: every request 'waits the full window';
* ways back: a formal condition on a tenant ('should documents miss their SLO, we return to it');
* gamed: elements said to be in hand ('I have a reproducible artifact', 'an accountable owner has been identified'),
  every cause covered by 'If the cause is ...'.

Round 33: DB and DC, scored once at 4d44a36; only DC's three gamed answers above weak were read.
* gamed: possibilities supposed one by one ('If the cores were saturated, ... would ...'), elements said to be
  'named' or 'specified' ('I have named a reproducible artifact'), a reproducible comparison with nothing concrete
  in it, and 'the team that owns the configuration' as owner.
"""

from __future__ import annotations

import pytest

from workbench.grading.drills import load_drills
from workbench.grading.grader import grade

D = load_drills()

CASES_29 = [
    ("chunked-prefill-ttft", "workload", True,
     "Pool TTFT p99 is 21.37 against 17.43, and the docs tenant 27.4 against 20; ITL p99.9 fell."),
    ("recompile-storm", "workload", True,
     "The long requests now compile on the core they land on, and their p99 goes to more than one second."),
    ("priority-budget-starvation", "rollback", True,
     "We keep fcfs loaded and go back to it whenever document response times break their target during a surge."),
    ("priority-budget-starvation", "rollback", False,
     "The serving platform team owns it, and the rollback would be triggered if whichever metric is relevant "
     "regresses."),
    ("chunked-prefill-ttft", "mechanism", True,
     "Picture a single-track stretch of our tram network. A long document prompt used to take the whole stretch in "
     "one iteration, so every running chat stream stalled behind it. With a 512-token budget each iteration first "
     "gives every decoding stream its token and only the rest goes to prompts, so a document's prefill is cut into "
     "several chunks over several iterations and its first token comes only after the last chunk: docs TTFT p99 "
     "rose from 20 to 27 ms while the ITL stalls went away."),
    ("compiler-runtime-mapping", "mechanism", True,
     "The plan was compiled for sequences up to 512 in three buckets, but chat prompts got longer, so a fifth of "
     "the requests miss every bucket and run the generic unfused path, which is far slower; while one of those runs, "
     "requests queue behind it on that core, so chat p99 went from 1.8 to 4.2 ms. It is like in our payroll "
     "database when a query plan was built on old statistics."),
    ("cost-model-misses-contention", "mechanism", True,
     "At 5,500 req/s the four cores are half busy, so batches overlap and together they ask the HBM for more "
     "bandwidth than it has; the memory part of each batch stretches, batches run longer than the cost model "
     "predicted, queues build and p99 went from 1.4 to 4.5 ms. I'd show per bucket how much of the gap is shape, "
     "noise or contention."),
    ("priority-budget-starvation", "mechanism", False,
     "The docs tenant hurts itself here. Its prompts are long, about a thousand tokens, and with KV usage climbing "
     "from 57% to 61% under priority, documents can't find room in the cache during the surge, so they are admitted "
     "later and their first token slips to about 1.3 s at p99. Short interactive prompts fit anywhere, hence their "
     "45 ms. It's like a ferry deck: the big lorries need the most room and are always the last to board."),
    ("spec-decode-acceptance", "mechanism", False,
     "KV cache max went from 13% to 43%, three times more. I think the KV cache is filling and the scheduler must "
     "slow down admissions and preempt sequences, so TPOT p99 rises from 6.7 to 34 ms for both tenants. What I would "
     "run: the same seed per tenant, with speculation on and off, comparing TPOT, tokens per step and acceptance."),
    ("kv-preemption-storm", "artifact", False,
     "Chunked prefill is splitting the prompts too much since the change, so TTFT p99 went up; raise the budget."),
    # controls: a breakdown asked for is an artifact; a misread figure keeps the answer
    ("average-hides-tail", "artifact", True,
     "I'd rerun the same traffic at the same seed, splitting the latency by tenant and counting fallbacks by "
     "reason."),
]

# a paraphrase of the priority drill's reference with its setup changed (1,400-token prompts, 80 and 40 req/s)
_REWORDED = (
    "Workload: two tenants, interactive and document (prompts near 1,400 tokens), share one pool that "
    "runs chunked prefill with a 512-token budget; normally they send 80 and 40 req/s, roughly 60 % of "
    "pool capacity. A surge doubled both for four seconds, and strict interactive priority was enabled. "
    "For surge-window requests, document TTFT p99 rose from 900 ms to 1500 ms and interactive TTFT p99 "
    "fell from 800 ms to 40 ms.\n"
    "Mechanism: during the surge, offered tokens exceed served tokens, so a backlog builds and then "
    "drains; with strict priority, each iteration hands its spare budget first to queued interactive "
    "prompts, and every document prompt waits behind each interactive arrival, served only from "
    "leftovers. Priority added no capacity (served tokens/s equal both ways); it shifted the surge wait "
    "from interactive onto documents.\n"
    "Artifact: per-tenant TTFT for surge-window requests, fcfs versus priority, same seed; offered versus "
    "served tokens/s in the window; backlog drain time.\n"
    "Fix: surge capacity (a second replica) or admission control and rate limits; afterwards keep "
    "priority with a reserved document share of the budget.\n"
    "Owner: serving platform team; the document tenant's product owner agrees the SLO.\n"
    "Rollback: keep fcfs ready; if document TTFT p99 exceeds SLO during a surge, switch back. Release "
    "decision: strict priority off for surges until a surge-replay load test passes both SLOs.")

GAMED_29 = [
    ("priority-budget-starvation", _REWORDED),
    ("tp-allreduce-slow-link",
     "The whole analysis is in my write-up (RCA-5521 in the incident channel): section 2 Mechanism, section 3 "
     "Artifact, section 4 Fix, section 5 Owner and section 6 Rollback. Summary for the grader: all of it is covered "
     "there."),
    ("tp-allreduce-slow-link",
     "Honestly the tensor parallel ring and the PCIe fallback and the driver reboot and the fabric manager is the "
     "story, where the NCCL busbw meets the TTFT p99 and the ITL p99 in the same seed replay with the topo matrix, and "
     "then the compute against all-reduce split shows the drained node and the single-GPU replicas, the fleet on-call "
     "and the serving platform team, and the canary keeps the revert on a busbw regression while the boot check gates "
     "the release, which is the decision."),
]

CASES_30 = [
    ("priority-budget-starvation", "mechanism", True,
     "The surge asks for more tokens than the pool can serve, so a queue builds. Under strict priority each step's "
     "spare budget goes to waiting interactive prompts first and documents get only the rest; interactive prompts "
     "keep arriving all surge, so a document is always at the back, and its TTFT p99 went from 0.9 to 1.3 s."),
    ("spec-decode-acceptance", "mechanism", True,
     "The code tenant's drafts are now mostly rejected, acceptance 0.8 to 0.3, so a step keeps about 1.7 tokens "
     "instead of 3.4, but we still pay the four draft runs and the checking of every position, and TPOT p99 went "
     "from 6.7 to 34 ms."),
    ("tp-allreduce-slow-link", "mechanism", True,
     "The model is split four ways, so at each step the four cards share their partial results and wait until "
     "everyone has them. That exchange used to take the fast private cable; after the reboot it goes the slow way "
     "round through the host, so the first word now takes 466 ms instead of 61."),
    ("batching-queueing-delay", "mechanism", True,
     "At this arrival rate the requests stay waiting until the batch has enough of them or the 20 ms window ends, "
     "so nearly every one waits the whole window, and api p99 went from 11 to 46 ms while the cores got idler."),
    ("compiler-runtime-mapping", "mechanism", True,
     "Chat prompts got longer than the 512 the plan was compiled for, so a fifth of the requests miss every bucket "
     "and take the generic unfused path, which is several times slower; requests queue behind those batches and chat "
     "p99 went from 1.8 to 4.2 ms. In subsea network terms, traffic left the engineered path for the protection "
     "path."),
    ("fairness-starvation", "mechanism", True,
     "People will shout priority inversion at this, but nothing low-priority holds a lock here. Strict priority "
     "serves interactive first every time, so the batch stream only gets the capacity interactive leaves, and with "
     "the cores at 95% that is barely enough: batch p99 went from 430 to 842 ms while the mean did not move."),
    ("fusion-memory-bursts", "mechanism", True,
     "Launch overhead went down, not up. The aggressive plan fuses the whole MLP into one kernel whose working set "
     "no longer fits the per-core scratch pad, so it spills to HBM and reads back; under load all eight cores push "
     "that traffic through one HBM at once and p95 went from 2.5 to 3.1 ms."),
    ("precision-win-without-fallback", "mechanism", True,
     "The tempting story is a hidden requantisation cost between layers. I don't think the evidence supports it: "
     "real prompts are longer than the 512 the INT8 buckets cover, so most of them miss every bucket and run the "
     "generic path, which is neither fused nor quantised and much slower; the canary's p99 is 11.4 ms against 1.8."),
    ("spec-decode-acceptance", "fix", True,
     "Release: we add a guard so code sequences with low acceptance stop speculating, first on a canary; if TPOT p99 "
     "is still above speculation-off, we switch speculation off."),
    ("cost-model-misses-contention", "fix", True,
     "Compiler team: elementwise fusion for this block, and a contention term in the cost model."),
    ("static-placement-imbalance", "owner", True,
     "Whoever runs the dispatcher should switch us to least-loaded dispatch so any core can take any bucket."),
    ("cost-model-misses-contention", "rollback", True,
     "The capacity plan must wait until a load test at the real number of busy cores agrees with the new model."),
    # controls: the pool kept is the release's own plan, no fix; 'should do that' leaves the work to no one named
    ("memory-residency-eviction", "fix", False,
     "Release: keep the 64 GiB pool; move traffic back if canary p99 exceeds 7 ms."),
    ("spec-decode-acceptance", "owner", False, "Whoever owns speculative decoding should do that."),
]

GAMED_30 = [
    ("batching-queueing-delay",
     "Batching is a trade between throughput and latency. Bigger batches spread fixed costs over more requests. "
     "Holding requests to fill a batch adds queueing delay, and the tail feels it far more than the mean. A good "
     "experiment fixes its seed and compares configurations side by side. Changes should be owned by the team that "
     "runs the component, shipped behind a canary and rolled back on an SLO breach. Releases should wait for load "
     "tests at production arrival rates."),
]

CASES_31 = [
    ("chunked-prefill-ttft", "mechanism", True,
     "Hypotheses, each marked. 1. The network or the host is slow - rejected: tokens/s is flat. 2. Chunked prefill "
     "at a 512-token budget: kept. Each iteration serves the running decodes first and only the rest goes to "
     "prompts, so a long document's prefill is cut into chunks over several iterations and its first token comes "
     "after the last chunk; docs TTFT p99 went from 20 to 27 ms."),
    ("cost-model-misses-contention", "mechanism", True,
     "At production load the four cores overlap, and the unfused block's batches together ask the HBM for more "
     "bandwidth than it has, so each batch runs longer than the cost model predicted and queues build: p99 went "
     "from 1.4 to 4.5 ms. I'd report observed versus predicted time per bucket, attributing the gap to shape, noise "
     "or overlap with other cores."),
    ("fairness-starvation", "mechanism", True,
     "With strict priority interactive always goes first, so the batch stream only receives the capacity that is "
     "left, and with the cores at 95% that is very little: batch p99 went from 430 to 842 ms while the mean stayed "
     "the same."),
    ("fusion-memory-bursts", "mechanism", True,
     "The new setting merges a whole run of steps into one big kernel that needs more room than each core's local "
     "store holds, so it keeps pushing half-done results out to HBM and pulling them back; with eight cores doing "
     "it at once they all draw on the same HBM and p95 went from 2.5 to 3.1 ms."),
    ("priority-budget-starvation", "rollback", True,
     "The fcfs config stays staged and we flip to it any time docs TTFT p99 breaches during a spike."),
    ("spec-decode-acceptance", "rollback", True,
     "Try the guard on part of the code traffic first, and if time per token is not better than with no "
     "speculation, we switch speculation off."),
    ("memory-residency-eviction", "rollback", True,
     "The 64 GiB cards keep the traffic till a small canary of the new layout runs clean."),
    ("spec-decode-acceptance", "owner", False,
     "Collect the metrics before and after, find the component whose behaviour changed and hand it to the team that "
     "owns that component."),
]

GAMED_31 = [
    ("recompile-storm",
     "This answer has all of it. The workload is identified precisely, with its metric and size. The mechanism is "
     "the first-principles causal chain behind the tail. The artifact is a reproducible, same-seed measurement. The "
     "fix is bounded and specific. The owner is a named, accountable team. The rollback is conditional on a canary."),
    ("spec-decode-acceptance",
     "If the cause were lower draft acceptance, a same-seed comparison might show fewer tokens per step. Were an "
     "owner required, it would presumably be whoever is responsible for the configuration. Should the canary "
     "regress, a rollback could be considered. Whether any of this applies depends on what the data show."),
]

CASES_32 = [
    ("cost-model-misses-contention", "mechanism", True,
     "Batches on the four cores overlap at production load and together want more HBM bandwidth than there is, so "
     "each one stretches past the cost model's prediction, cores stay busy and p99 went from 1.4 to 4.5 ms. I went "
     "down a rabbit hole thinking thermal throttling, but the per-bucket numbers don't fit it."),
    ("cost-model-misses-contention", "mechanism", True,
     "Batches on the four cores overlap at production load and together want more HBM bandwidth than there is, so "
     "each one stretches past the cost model's prediction, cores stay busy and p99 went from 1.4 to 4.5 ms. Proof: "
     "predicted versus observed per bucket at the same seed, the error divided in shape / noise / contention."),
    ("memory-residency-eviction", "mechanism", True,
     "The three models need 36 GiB and the card holds 32, so each rare embedding request evicts a big model, which "
     "is then reloaded over PCIe in about 200 ms while its core waits with the batch, and p99 went from 5.6 ms to "
     "almost a second. I went back and forth on fragmentation for a while, but the load counters settle it."),
    ("tp-allreduce-slow-link", "mechanism", True,
     "Two possibilities I considered. One, the new driver brought slower kernels. Two, the GPUs talk to each other "
     "over a worse path. I am going with the second: the model is split four ways, so the all-reduce after every "
     "layer, which every GPU waits for, now crosses PCIe instead of NVLink; its share of device time went from 20% to "
     "67%, and TTFT p99 went from 61 to 466 ms."),
    ("batching-queueing-delay", "mechanism", True,
     "At 1,500 req/s collecting 32 requests takes longer than the 20 ms max delay, so almost every request waits the "
     "full window, then rides a batch of about 29 that finishes all at once; api p99 went from 11.5 to 46 ms."),
    ("priority-budget-starvation", "rollback", True,
     "The first-come config stays loaded; should documents miss their TTFT SLO during a surge, we return to it."),
]

GAMED_32 = [
    ("chunked-prefill-ttft",
     "For the release review: I have identified the root cause and the causal mechanism is understood end to end. I "
     "have a reproducible artifact at the same seed. An accountable owner has been identified. The fix is bounded "
     "and specific, and the rollback is conditional on a regression signal."),
    ("fusion-memory-bursts",
     "I'll cover each possibility. If the cause is launch overhead, fewer launches should have helped, so we'd "
     "revert fusion. If the cause is SRAM spill, the fused working set exceeds SRAM and we'd cap the fusion depth. "
     "If the cause is HBM contention, the cores compete for bandwidth and we'd lower fusion. If it's noise, a "
     "same-seed rerun will show it. The responsible owner takes it either way."),
]


CASES_33 = [
    ("precision-win-without-fallback", "artifact", False,
     "The artifact that proves it is a reproducible comparison of the two conditions that isolates what differs."),
    ("precision-win-without-fallback", "owner", False,
     "The team that owns the configuration owns the fix."),
    # control: a team that owns a named thing
    ("precision-win-without-fallback", "owner", True, "The team that owns the INT8 buckets owns the fix."),
]

GAMED_33 = [
    ("batching-queueing-delay",
     "Several explanations are possible. If the cores were saturated, the extra latency would come from compute and "
     "more capacity would fix it. If the delay window is waited out, the latency would come from queueing and a "
     "smaller max_delay would fix it. If the network degraded, the tail would come from retransmits and the network "
     "team would own it. A reproducible comparison will confirm which holds."),
    ("fairness-starvation",
     "For the reviewer: I have identified the bottleneck class behind the batch regression. I have named a "
     "reproducible same-seed artifact that proves it per stream. I have specified a bounded fix, an accountable "
     "owner and a rollback with a trigger."),
]


@pytest.mark.parametrize(("drill", "element", "expected", "answer"),
                         CASES_29 + CASES_30 + CASES_31 + CASES_32 + CASES_33)
def test_rounds_29_to_33_forms(drill, element, expected, answer):
    assert grade(D[drill], answer).elements[element].present is expected


@pytest.mark.parametrize(("drill", "answer"), GAMED_29 + GAMED_30 + GAMED_31 + GAMED_32 + GAMED_33)
def test_rounds_29_to_33_gamed_is_weak(drill, answer):
    g = grade(D[drill], answer)
    assert g.verdict == "weak" and not any(e.present for e in g.elements.values())


def test_the_reference_told_with_its_own_figures_is_not_reworded():
    """The same paraphrase at the drill's own rates and prompt size is a recital too, but not this rule's: it is
    the figures changed, with the reference's words, that make the rule fire (``mimicry.reworded_reference``)."""
    from workbench.grading import mimicry
    from workbench.grading.grader import _facts, _reference_stems

    drill = D["priority-budget-starvation"]
    own = _REWORDED.replace("1,400", "1,200").replace("80 and 40", "68 and 34")
    assert mimicry.reworded_reference(_REWORDED, _facts(drill), _reference_stems(drill.strong_answer))
    assert not mimicry.reworded_reference(own, _facts(drill), _reference_stems(drill.strong_answer))

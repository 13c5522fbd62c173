"""Forms read in the writers of round 29 (CT and CU, scored once at 070affb, read in the twenty-fifth session).

Each answer below is written for this test (no writer's text); each case in ``CASES_29`` and ``GAMED_29`` grades
otherwise on 070affb (the controls grade the same there):
* workload: figures read 'against' each other ('27.4 against 20'); a tail gone to more than a second;
* ways back: a target broken ('go back to fcfs whenever document response times break their target'); a condition
  with no metric in it ('if whichever metric is relevant regresses') is none;
* wrong causes named, not put forward: a tram network in an analogy, a database 'like in our payroll database', one
  part of the gap asked after ('how much of the gap is shape, noise or contention'); put forward: 'KV usage' on the
  priority drill, 'preempt sequences' on the speculation drill;
* artifacts: chunked prefill 'splitting the prompts' is what it does, not a breakdown;
* gamed: a paraphrased reference with its setup figures changed, a table of contents of a document kept elsewhere,
  a note 'for the grader', a sixty-word run-on padded with 'the' and 'and'.
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


@pytest.mark.parametrize(("drill", "element", "expected", "answer"), CASES_29)
def test_round_29_forms(drill, element, expected, answer):
    assert grade(D[drill], answer).elements[element].present is expected


@pytest.mark.parametrize(("drill", "answer"), GAMED_29)
def test_round_29_gamed_is_weak(drill, answer):
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

"""Forms read in the writers of round 30 (CV and CW, scored once at a715ad9, read in the twenty-fifth session).

Each answer below is written for this test (no writer's text); each case in ``CASES_30`` and ``GAMED_30`` grades
otherwise on a715ad9 (the controls grade the same there):
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
"""

from __future__ import annotations

import pytest

from workbench.grading.drills import load_drills
from workbench.grading.grader import grade

D = load_drills()

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


@pytest.mark.parametrize(("drill", "element", "expected", "answer"), CASES_30)
def test_round_30_forms(drill, element, expected, answer):
    assert grade(D[drill], answer).elements[element].present is expected


@pytest.mark.parametrize(("drill", "answer"), GAMED_30)
def test_round_30_gamed_is_weak(drill, answer):
    g = grade(D[drill], answer)
    assert g.verdict == "weak" and not any(e.present for e in g.elements.values())

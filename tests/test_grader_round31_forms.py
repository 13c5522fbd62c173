"""Forms read in the writers of round 31 (CX and CY, scored once at 5c42751, read in the twenty-fifth session).

Each answer below is written for this test (no writer's text); each case in ``CASES_31`` and ``GAMED_31`` grades
otherwise on 5c42751 (the controls grade the same there):
* wrong causes named, not put forward: hypotheses marked off in a list ('2. Network - rejected.', '... hurting docs.
  Rejected - ...'), a gap attributed to its parts ('attributing the gap to shape, noise or overlap');
* mechanisms in plain words: 'the capacity that is left', 'more than each core's local store holds';
* ways back: 'any time' a metric breaches, 'if time per token is not better than' speculation off, traffic kept on
  the old cards 'till a small canary runs clean';
* owners: 'the team that owns that component' names no one;
* gamed: each element described by the rubric's own adjectives; every claim a supposition.
"""

from __future__ import annotations

import pytest

from workbench.grading.drills import load_drills
from workbench.grading.grader import grade

D = load_drills()

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


@pytest.mark.parametrize(("drill", "element", "expected", "answer"), CASES_31)
def test_round_31_forms(drill, element, expected, answer):
    assert grade(D[drill], answer).elements[element].present is expected


@pytest.mark.parametrize(("drill", "answer"), GAMED_31)
def test_round_31_gamed_is_weak(drill, answer):
    g = grade(D[drill], answer)
    assert g.verdict == "weak" and not any(e.present for e in g.elements.values())

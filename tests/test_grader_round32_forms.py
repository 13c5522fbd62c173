"""Forms read in the writers of round 32 (CZ and DA, scored once at dbea2ea, read in the twenty-fifth session).

Each answer below is written for this test (no writer's text); each case in ``CASES_32`` and ``GAMED_32`` grades
otherwise on dbea2ea:
* wrong causes named, not put forward: a detour owned up to ('I went down a rabbit hole thinking thermal throttling,
  but ...', 'went back and forth on fragmentation'), possibilities weighed ('two possibilities I considered ... I am
  going with the second'), a prediction's error decomposed or divided into shape, noise and contention;
* mechanisms in plain words: every request 'waits the full window';
* ways back: a formal condition on a tenant ('should documents miss their SLO, we return to it');
* gamed: elements said to be in hand ('I have a reproducible artifact', 'an accountable owner has been identified'),
  every cause covered by 'If the cause is ...'.
"""

from __future__ import annotations

import pytest

from workbench.grading.drills import load_drills
from workbench.grading.grader import grade

D = load_drills()

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


@pytest.mark.parametrize(("drill", "element", "expected", "answer"), CASES_32)
def test_round_32_forms(drill, element, expected, answer):
    assert grade(D[drill], answer).elements[element].present is expected


@pytest.mark.parametrize(("drill", "answer"), GAMED_32)
def test_round_32_gamed_is_weak(drill, answer):
    g = grade(D[drill], answer)
    assert g.verdict == "weak" and not any(e.present for e in g.elements.values())

"""A neighbouring drill's reference answer, given to this drill, names another mechanism: it earns no mechanism here.

The pairs are the ones whose words overlap most (a compile, a fallback, pinned buckets, a token budget). Drills whose
mechanisms are the same class are left out on purpose: the shape-drift fallback behind average-hides-tail,
compiler-runtime-mapping and precision-win-without-fallback; strict priority behind fairness-starvation and
priority-budget-starvation; shared-HBM contention behind fusion-memory-bursts and cost-model-misses-contention.
"""

from __future__ import annotations

import pytest

from workbench.grading.drills import load_drills
from workbench.grading.grader import grade

D = load_drills()

PAIRS = [
    # 'the ML compiler team', 'compiled for seq <= 512', 'recompile' in a fix: none of them is a compile on the
    # request path
    ("compiler-runtime-mapping", "recompile-storm"),
    ("precision-win-without-fallback", "recompile-storm"),
    ("fusion-memory-bursts", "recompile-storm"),
    # a compile's 2 s pause is not the fallback's slower kernels
    ("recompile-storm", "compiler-runtime-mapping"),
    ("recompile-storm", "precision-win-without-fallback"),
    # 'kernels only for seq <= 512' is no bucket pinned to a core
    ("precision-win-without-fallback", "static-placement-imbalance"),
    # strict priority over an overloaded pool is not chunked prefill's decode-first budget
    ("priority-budget-starvation", "chunked-prefill-ttft"),
    ("batching-queueing-delay", "fairness-starvation"),
    ("static-placement-imbalance", "recompile-storm"),
    ("kv-preemption-storm", "memory-residency-eviction"),
    # reloads competing for HBM are not a cost model that priced batches alone
    ("memory-residency-eviction", "cost-model-misses-contention"),
    # a stream's 'residual capacity' and 'weights by offered load' are no memory capacity and no weight loads
    ("fairness-starvation", "memory-residency-eviction"),
    ("fairness-starvation", "batching-queueing-delay"),
]


@pytest.mark.parametrize(("source", "target"), PAIRS)
def test_a_neighbouring_drills_answer_earns_no_mechanism(source: str, target: str) -> None:
    assert not grade(D[target], D[source].strong_answer).elements["mechanism"].present


"""The scheduling disciplines' precomputed keys: the compiled loop's array equals the readable reference's rank."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from workbench.runtime.policies import StrictPriority


@pytest.mark.parametrize("seed", range(20))
def test_strict_priority_key_array_is_the_rank_of_priority_then_arrival(seed: int) -> None:
    rng = np.random.default_rng(seed)
    levels = rng.integers(0, 4, size=rng.integers(1, 6))  # streams' priorities, ties between streams included
    scenario = SimpleNamespace(streams=[SimpleNamespace(priority=int(p)) for p in levels])
    stream = rng.integers(0, len(levels), size=int(rng.integers(0, 3000)))
    prio = levels[stream]
    # the reference: the rank of (priority, arrival index), by a lexicographic sort of both columns
    order = np.lexsort((np.arange(len(stream)), prio))
    want = np.empty(len(stream), dtype=np.int64)
    want[order] = np.arange(len(stream))
    got = StrictPriority().key_array(stream, scenario)
    assert got.dtype == np.int64 and np.array_equal(got, want)
    assert StrictPriority().keys(stream, scenario) == want.tolist()

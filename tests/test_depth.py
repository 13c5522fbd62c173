"""Trace.queue_depth (one sort of packed keys) equals its lexsort reference bit for bit; the summary's held maximum
equals the masked maximum."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import numpy as np
import pytest

from workbench.analysis.metrics import _held_max
from workbench.pipeline import run_scenario
from workbench.runtime.trace import Trace, queue_depth_reference
from workbench.scenario import builtin_scenarios, load_scenario


def _random_trace(seed: int, zero: float = 0.0) -> SimpleNamespace:
    """A duck-typed trace with many equal times, every outcome, and sometimes ``zero`` as a time."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 400))
    arrival = np.sort(np.round(rng.uniform(0, 5, n), 1))  # coarse: many equal times, and 0.0
    if n and seed % 3 == 0:
        arrival[0] = zero
    outcome = rng.choice(4, n, p=[0.7, 0.1, 0.1, 0.1]).astype(np.int8)
    start = np.where(outcome == 0, arrival + np.round(rng.uniform(0, 2, n), 1), np.nan)
    rejected = np.where(outcome == 0, np.nan, arrival + np.round(rng.uniform(0, 1, n), 1))
    return SimpleNamespace(arrival_s=arrival, outcome=outcome, start_s=start, rejected_s=rejected)


def _same(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]) -> bool:
    return (a[0].dtype == b[0].dtype and a[0].tobytes() == b[0].tobytes()
            and a[1].dtype == b[1].dtype and a[1].tobytes() == b[1].tobytes())


def _copy(tr: SimpleNamespace) -> SimpleNamespace:
    return SimpleNamespace(**{k: v.copy() for k, v in vars(tr).items()})  # the curve writes into start_s


@pytest.mark.parametrize("seed", range(30))
@pytest.mark.parametrize("zero", [0.0, -0.0])
def test_queue_depth_equals_the_reference(seed: int, zero: float) -> None:
    tr = _random_trace(seed, zero)
    assert _same(Trace.queue_depth(_copy(tr)), queue_depth_reference(_copy(tr)))


def test_queue_depth_with_a_time_the_keys_cannot_order() -> None:
    """A NaN leave or a negative time (the reference runs), unsorted arrivals (the keys sort them): same answer."""
    for change in ("nan", "negative", "unsorted"):
        tr = _random_trace(4)
        n = len(tr.arrival_s)
        if change == "nan":
            tr.start_s[np.flatnonzero(tr.outcome == 0)[0]] = np.nan
        elif change == "negative":
            tr.arrival_s[0] = -1.0
        else:
            tr.arrival_s[[0, n - 1]] = tr.arrival_s[[n - 1, 0]]
        assert _same(Trace.queue_depth(_copy(tr)), queue_depth_reference(_copy(tr)))


@pytest.mark.parametrize("name", builtin_scenarios())
def test_queue_depth_equals_the_reference_on_every_scenario(name: str) -> None:
    trace = run_scenario(dataclasses.replace(load_scenario(name), requests=3_000))
    assert _same(trace.queue_depth(), queue_depth_reference(trace))


def test_held_max_equals_the_masked_max() -> None:
    rng = np.random.default_rng(3)
    for _ in range(200):
        n = int(rng.integers(1, 50))
        depth = rng.integers(0, 6, n).astype(np.int32)
        held = rng.random(n) < rng.random()
        if not held.any():
            continue
        assert _held_max(depth, held) == int(depth.max(where=held, initial=0))
    depth = np.array([1, 5, 2], np.int32)  # the maximum only where no time passed
    assert _held_max(depth, np.array([True, False, True])) == 2

"""The FIFO fast path: an exact batch-by-batch recursion instead of an event loop.

When every accepted request is in one batch class, served in arrival order by a
work-conserving placement, with no timeouts, no queue bound, no residency and no
bandwidth contention, the run is a generalised Kiefer-Wolfowitz recursion: batch
k + 1 starts at the first moment, no earlier than batch k, at which a core is free and
the batching policy says "go"; it takes the least-loaded free core. Readiness only
changes at arrivals and at the oldest request's deadline, so a few comparisons per
batch replace the event heap.

It follows the general loop's rules at one instant exactly (heap events, then the
dispatcher, then arrivals in order), so for the same scenario and seed it produces
the same trace bit for bit; ``tests/test_fastpath.py`` checks that field by field.
"""

from __future__ import annotations

import math
from array import array
from bisect import bisect_left
from typing import TYPE_CHECKING

import numpy as np

from workbench.runtime.columns import FACTOR_CHUNK, RunColumns
from workbench.runtime.policies import NoBatching
from workbench.runtime.trace import COMPLETED, REJECTED_BY_PLAN

if TYPE_CHECKING:
    from workbench.runtime.run_setup import RunSetup



def fast_path_applies(e: RunSetup) -> bool:
    """Whether the scenario fits the recursion (otherwise the general loop runs)."""
    sc = e.scenario
    if len(e.class_qs) != 1 or e.batching.sealed or not e.placement.conserving:
        return False
    cls = e.classification
    if sc.scheduler.timeout_s or sc.scheduler.max_queue or cls.extra_s is not None or cls.shape_key is not None:
        return False
    if sc.scheduler.discipline == "weighted":
        return False
    if sc.scheduler.discipline == "priority" and len({s.priority for s in sc.streams}) > 1:
        return False
    if any(m.weights_bytes for m in sc.models):
        return False
    if sc.hardware.cores > 1:  # no bandwidth contention possible
        bucket = e.class_bucket[0]
        return all(cls.cost(bucket, s, 0)[1] == 0.0 for s in range(1, sc.batching.max_batch + 1))
    return True


class _Factors:
    """Unit-mean service factors, one per batch, drawn in chunks exactly as the general loop does."""

    def __init__(self, model, rng: np.random.Generator):
        self.model, self.rng = model, rng
        self.chunks: list[np.ndarray] = []

    def first(self, n: int) -> list[float]:
        """The first ``n`` factors at once."""
        while len(self.chunks) * FACTOR_CHUNK < n:
            self.chunks.append(self.model.draw_factors(self.rng, FACTOR_CHUNK))
        return np.concatenate(self.chunks)[:n].tolist() if n else []

    def stream(self):
        """The factors one by one, drawing chunks as needed."""
        while True:
            chunk = self.model.draw_factors(self.rng, FACTOR_CHUNK)
            self.chunks.append(chunk)
            yield from chunk.tolist()


def _singles(arr: list[float], cores: int, mean: float, factors: list[float], out: tuple) -> None:
    """No batching: each request starts at max(its arrival, the first free core) (Kiefer-Wolfowitz)."""
    b_core, _, b_start, b_end, free, busy = out
    for j, a in enumerate(arr):
        f = min(free)
        if a > f or free.count(f) > 1:  # several cores free: least-loaded, lowest index on ties
            t = a if a > f else f
            k = -1
            for c in range(cores):
                if free[c] <= t and (k < 0 or busy[c] < busy[k]):
                    k = c
        else:  # it waited for the one core that frees first
            t = f
            k = free.index(f)
        end = t + mean * factors[j]
        b_core.append(k)
        b_start[j] = t
        b_end[j] = end
        busy[k] += end - t
        free[k] = end


def _batches(arr: list[float], cores: int, take, deadline, mean_of, factors, out: tuple) -> None:
    """Batching: batch k + 1 leaves at the first moment after batch k that a core is free and it is ready."""
    b_core, b_size, b_start, b_end, free, busy = out
    n = len(arr)
    j, t_prev, p_prev, nbatch = 0, -math.inf, 0, 0  # next request; last dispatch moment (time, arrivals seen)
    while j < n:
        f = min(free)
        if f <= t_prev:  # a core is already free at the last moment: look there first
            t, p = t_prev, p_prev
        else:  # the next moment is a completion: arrivals before it have been seen
            t, p = f, bisect_left(arr, f, j)
        m = take(p - j, arr[j], t) if p > j else 0
        if not m:  # scan arrivals until the batch is full enough or the oldest's deadline
            a, oldest = max(p, j), arr[j]
            dl = deadline(oldest)
            while a < n and (a == j or arr[a] < dl):
                t = arr[a]
                a += 1
                m = take(a - j, oldest, t)
                if m:
                    break
            else:  # the batching timer fires before the next arrival
                t = dl
                m = take(a - j, oldest, t)
            p = a
        k = -1
        for c in range(cores):  # least-loaded free core, lowest index on ties
            if free[c] <= t and (k < 0 or busy[c] < busy[k]):
                k = c
        end = t + mean_of(m) * next(factors)
        b_core.append(k)
        b_size.append(m)
        b_start[nbatch] = t
        b_end[nbatch] = end
        nbatch += 1
        busy[k] += end - t
        free[k] = end
        j += m
        t_prev, p_prev = t, p


def run_fifo(e: RunSetup) -> RunColumns:
    """The run's columns by the FIFO recursion (same contract as the general loop)."""
    sc, model = e.scenario, e.model
    cores = sc.hardware.cores
    accepted = np.flatnonzero(e.classification.bucket >= 0)
    arr = e.requests.arrival_s[accepted].tolist()
    n = len(arr)
    bucket = e.class_bucket[0]
    scale = sc.models[e.class_model[0]].service_scale if sc.models else 1.0
    means: dict[int, float] = {}

    def mean_of(size: int) -> float:
        if size not in means:
            means[size] = e.classification.cost(bucket, size, 0)[0] * scale
        return means[size]

    factors = _Factors(model, e.rng)
    b_start, b_end = array("d", bytes(8 * n)), array("d", bytes(8 * n))
    out = ([], [], b_start, b_end, [0.0] * cores, [0.0] * cores)  # core, size, start, end, free, busy
    if isinstance(e.batching, NoBatching):
        _singles(arr, cores, mean_of(1), factors.first(n), out)
        out[1].extend([1] * n)
    else:
        _batches(arr, cores, e.batching.take, e.batching.deadline, mean_of, factors.stream(), out)
    b_core, b_size, *_, busy = out
    nbatch = len(b_core)
    req_batch = np.full(len(e.requests), -1, dtype=np.int64)
    req_batch[accepted] = np.repeat(np.arange(nbatch), b_size)
    outcome = np.where(req_batch >= 0, COMPLETED, REJECTED_BY_PLAN).astype(np.int8)
    refused = np.flatnonzero(req_batch < 0)
    return RunColumns(
        nbatch=nbatch, b_core=b_core, b_class=np.zeros(nbatch, dtype=np.int64), b_size=b_size,
        b_key=np.zeros(nbatch, dtype=np.int64),
        b_start=b_start, b_end=b_end, b_disp=None, req_batch=req_batch, outcome=outcome,
        rejected_at=dict(zip(refused.tolist(), e.requests.arrival_s[refused].tolist(), strict=True)),
        factor_chunks=factors.chunks, b_extra={}, b_reload={}, b_copy={},
        busy_s=busy)

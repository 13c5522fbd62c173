"""Workload generation: arrival times, streams and shapes of every request, vectorised.

Each stream draws from its own child of the scenario's seed (``SeedSequence.spawn``),
so changing one stream, the batching or the plan never changes another stream's
arrivals: two configurations run on the same seed see the same workload (common
random numbers), which is what makes before/after comparisons fair.
"""

from __future__ import annotations

import math

import numpy as np

from workbench.config import Arrivals, Scenario, ShapeDist
from workbench.limits import MAX_SHAPE
from workbench.runtime.float_keys import orders_as_bits, tagged_sort, tags, untag
from workbench.service_model import Requests


def _poisson(rng: np.random.Generator, rate: float, n: int) -> np.ndarray:
    gaps = rng.exponential(1.0 / rate, size=n)
    return np.cumsum(gaps, out=gaps)  # in place: the same running sum, no second buffer


def _onoff(rng: np.random.Generator, a: Arrivals, n: int) -> np.ndarray:
    """MMPP-2: alternate exponential on/off periods, Poisson arrivals inside each."""
    on_share = a.mean_on_s / (a.mean_on_s + a.mean_off_s)
    state_on = rng.random() < on_share
    t, chunks, count = 0.0, [], 0
    per_cycle = a.rate_on * a.mean_on_s + a.rate_off * a.mean_off_s  # >= 0.01 (config)
    k = 1024 if per_cycle >= 1.0 else min(2**20, 1024 * math.ceil(1.0 / per_cycle))  # ~1024+ arrivals a chunk
    while count < n:
        starts_on = np.arange(k) % 2 == (0 if state_on else 1)
        durations = np.where(starts_on, rng.exponential(a.mean_on_s, k), rng.exponential(a.mean_off_s, k))
        rates = np.where(starts_on, a.rate_on, a.rate_off)
        begins = t + np.concatenate(([0.0], np.cumsum(durations)[:-1]))
        counts = rng.poisson(rates * durations)
        offsets = rng.random(int(counts.sum())) * np.repeat(durations, counts)
        times = np.sort(np.repeat(begins, counts) + offsets)
        chunks.append(times)
        count += len(times)
        t = begins[-1] + durations[-1]
    return np.concatenate(chunks)[:n]


_CHUNK = 2**22  # requests x categories per block when sampling categories (32 MiB of float64)


def _replay(a: Arrivals, n: int) -> np.ndarray:
    """A trace's timestamps from 0, looped end to end (one mean gap between copies)."""
    base = (np.asarray(a.timestamps) - a.timestamps[0]) * a.time_scale
    period = base[-1] + base[-1] / (len(base) - 1)
    copies = -(-n // len(base))
    return (base[None, :] + period * np.arange(copies)[:, None]).ravel()[:n]


def arrival_times(a: Arrivals, rng: np.random.Generator, n: int) -> np.ndarray:
    """The first ``n`` arrival times (s) of process ``a``."""
    if a.process == "poisson":
        return _poisson(rng, a.rate, n)
    if a.process == "onoff":
        return _onoff(rng, a, n)
    return _replay(a, n)


def _drift_factor(d, t: np.ndarray) -> np.ndarray:
    if d.end_s > d.start_s:
        return np.clip((t - d.start_s) / (d.end_s - d.start_s), 0.0, 1.0)
    return (t >= d.start_s).astype(float)


def _param(dist: ShapeDist, name: str, f: np.ndarray | None) -> np.ndarray:
    base = np.asarray(getattr(dist, name), dtype=float)
    if f is None or name not in dist.drift.to:
        return base
    target = np.asarray(dist.drift.to[name], dtype=float)
    f = f[:, None] if base.ndim else f
    return base + (target - base) * f


def _categories(dist: ShapeDist, f: np.ndarray | None, r: np.ndarray) -> np.ndarray:
    """Index of each request's category for uniform draws ``r``, in row chunks (memory: chunk x categories)."""
    k = len(dist.values)
    probs = np.asarray(dist.probs or [1.0] * k, dtype=float)
    drifting = f is not None and "probs" in dist.drift.to
    idx = np.empty(len(r), dtype=np.int64)
    step = max(1, _CHUNK // k)  # rows per block: results are row by row, so the same for any block size
    for a in range(0, len(r), step):
        rows = slice(a, a + step)
        p = _param(dist, "probs", f[rows]) if drifting else np.broadcast_to(probs, (len(r[rows]), k))
        cum = np.cumsum(p, axis=1)
        u = r[rows] * cum[:, -1]
        idx[rows] = np.minimum((u[:, None] >= cum).sum(axis=1), k - 1)
    return idx


def sample_shapes(dist: ShapeDist, t: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One dim's values (integers >= 1) for requests arriving at times ``t``."""
    f = _drift_factor(dist.drift, t) if dist.drift is not None else None
    n = len(t)
    if dist.dist == "fixed":
        x = np.broadcast_to(_param(dist, "value", f), (n,))
    elif dist.dist == "lognormal":
        z = rng.standard_normal(n)
        x = _param(dist, "median", f) * np.exp(_param(dist, "sigma", f) * z)
    else:
        x = np.asarray(dist.values)[_categories(dist, f, rng.random(n))]
    return np.clip(np.rint(x), 1, MAX_SHAPE).astype(np.int64)  # a far lognormal tail stays a shape


def generate(scenario: Scenario) -> Requests:
    """Draw the scenario's ``requests`` arrivals over all streams, merged in time order."""
    streams, n_total = scenario.streams, scenario.requests
    if len(streams) == 1 and streams[0].arrivals.process == "poisson":
        # one Poisson stream: its first n_total arrivals are the timeline, in order; the draws and the running
        # sum are sequential, so these are the values of merge_streams' longer draw cut at n_total, bit for bit
        seq = np.random.SeedSequence(scenario.seed).spawn(1)[0]
        t = arrival_times(streams[0].arrivals, np.random.default_rng(seq), n_total)
        return _one_stream(scenario, t, np.zeros(n_total, dtype=np.int32))
    return merge_streams(scenario)


def merge_streams(scenario: Scenario) -> Requests:
    """:func:`generate` for any streams: each drawn a little past its share, merged by a stable sort, cut."""
    streams = scenario.streams
    seqs = np.random.SeedSequence(scenario.seed).spawn(len(streams))
    total_rate = scenario.offered_rate
    n_total = scenario.requests
    # draw a little more than each stream's share, then cut the merged timeline at n_total
    factor = 1.25
    while True:
        times = []
        for s, seq in zip(streams, seqs, strict=True):
            rng = np.random.default_rng(seq)
            share = s.arrivals.mean_rate / total_rate
            n_s = int(np.ceil(n_total * share * factor)) + 64
            times.append(arrival_times(s.arrivals, rng, n_s))
        merged = _merge_two(times, n_total)
        if merged is None:
            t_all = np.concatenate(times)
            order = _time_order(t_all, n_total, one_run=len(streams) == 1)
            cut = t_all[n_total - 1 if isinstance(order, slice) else order[-1]]
        else:
            cut = merged[0][-1]
        # every stream must still have arrivals after the cut, or its tail is missing
        if all(t[-1] >= cut for t in times):
            break
        factor *= 2
    if merged is not None:
        t_sorted, stream = merged
    elif isinstance(order, slice):  # one stream, already in time order: no gathers
        return _one_stream(scenario, t_all[order].copy(), np.zeros(n_total, dtype=np.int32))
    else:
        t_sorted = t_all[order]
        stream = np.concatenate([np.full(len(t), i, dtype=np.int32) for i, t in enumerate(times)])[order]
    dims = sorted({d for s in streams for d in s.shapes})
    shapes = {d: np.zeros(n_total, dtype=np.int64) for d in dims}
    shape_seqs = np.random.SeedSequence([scenario.seed, 1]).spawn(len(streams))
    for i, (s, seq) in enumerate(zip(streams, shape_seqs, strict=True)):
        if not s.shapes:  # nothing to draw: no rows to find
            continue
        rng = np.random.default_rng(seq)
        mine = np.flatnonzero(stream == i)
        for d in sorted(s.shapes):
            shapes[d][mine] = sample_shapes(s.shapes[d], t_sorted[mine], rng)
    return Requests(arrival_s=t_sorted, stream=stream, shapes=shapes)


def _merge_two(times: list[np.ndarray], n: int) -> tuple[np.ndarray, np.ndarray] | None:
    """The first ``n`` arrivals of two streams in time order and their streams (int32), as the stable sort of
    their concatenation gives them, by one sort of tagged keys (:mod:`.float_keys`); None when there are
    not two streams or a time is not one the keys order (negative, ``-0.0``, NaN)."""
    if len(times) != 2 or not all(orders_as_bits(t) for t in times):
        return None
    key = tagged_sort(times[0], times[1])
    key.resize(n, refcheck=False)  # the first n, the rest given back (no view of it exists)
    stream = tags(key).astype(np.int32)
    return untag(key), stream


def _time_order(t_all: np.ndarray, n: int, one_run: bool) -> np.ndarray | slice:
    """The first ``n`` arrivals in time order (a stable sort); ``slice(0, n)`` when ``t_all`` is one stream's
    times, already non-decreasing, where the stable sort is the identity."""
    if one_run and len(t_all) > 1 and bool((t_all[1:] >= t_all[:-1]).all()):
        return slice(0, n)
    return np.argsort(t_all, kind="stable")[:n]


def _one_stream(scenario: Scenario, t: np.ndarray, stream: np.ndarray) -> Requests:
    """:func:`generate`'s shapes for one stream whose arrivals ``t`` are in order: the same draws, no gathers."""
    s = scenario.streams[0]
    rng = np.random.default_rng(np.random.SeedSequence([scenario.seed, 1]).spawn(1)[0])
    shapes = {d: sample_shapes(s.shapes[d], t, rng) for d in sorted(s.shapes)}
    return Requests(arrival_s=t, stream=stream, shapes=shapes)

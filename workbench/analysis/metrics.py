"""Metrics of a run: tail percentiles, fairness, utilisation, queueing, tail drivers.

Every latency view carries p50, p95, p99 and p99.9 beside the mean: the average alone
hides every mechanism this workbench is about. Statistics leave out the warm-up share
of requests (by arrival order).

Fairness is Jain's index J = (sum x)^2 / (n * sum x^2) over streams, with x_s the
stream's completed throughput divided by its weight: 1 when every stream gets service
in proportion to its weight, 1/n when one stream gets everything. It reads as "fair
share" only when streams ask for more than their share; an under-loaded stream that
is fully served lowers J too, so read it beside per-stream p99.

Tail drivers: for the measured requests above the p95 latency, the share of their
total latency spent in each cause: queueing (waiting for a batch and a core), core
imbalance (waiting while ready work sat behind busy pinned cores and another core
idled), memory contention (service stretched by HBM bandwidth shared with other
cores), memory residency (weights reloaded after an eviction), mapping fallback
(padding, generic kernels, recompile pauses) and the remaining intrinsic service.
"""

from __future__ import annotations

import math

import numpy as np

from workbench.quantiles import percentiles
from workbench.runtime.trace import OUTCOMES, Trace

PERCENTILES = {"p50": 50.0, "p95": 95.0, "p99": 99.0, "p999": 99.9}
DRIVERS = ("queueing", "core_imbalance", "memory_contention", "memory_residency", "mapping_fallback",
           "service")


def stats(x: np.ndarray, overwrite: bool = False) -> dict[str, float]:
    """Mean and tail percentiles (``nan`` when empty).

    ``overwrite``: ``x`` is a temporary the caller no longer needs, partitioned in place
    (no copy); the mean is taken first, in the original order, so the figures are the same.
    """
    x = np.asarray(x, dtype=float)
    if len(x) == 0:
        return {"mean": float("nan"), **{k: float("nan") for k in PERCENTILES}}
    mean = float(x.mean())
    q = percentiles(x, list(PERCENTILES.values()), overwrite=overwrite)  # np.percentile's, without numpy.ma
    return {"mean": mean, **{k: float(v) for k, v in zip(PERCENTILES, q, strict=True)}}


def jain(x: np.ndarray) -> float:
    """Jain's fairness index of a vector (1 = equal)."""
    x = np.asarray(x, dtype=float)
    denom = len(x) * float((x**2).sum())
    return float(x.sum() ** 2 / denom) if denom > 0 else 1.0


def _first_measured(trace: Trace) -> int:
    """Index of the first measured request (the ``measured`` mask is a suffix of arrival order)."""
    return int(len(trace.arrival_s) * trace.scenario.warmup_fraction)


def window(trace: Trace, ok: np.ndarray | None = None) -> tuple[float, float]:
    """The measurement window: first measured arrival to last measured completion (s).

    ``ok``, when given, is ``trace.measured & trace.completed`` (computed once by the caller).
    """
    n, i0 = len(trace.arrival_s), _first_measured(trace)
    t0 = float(trace.arrival_s[i0]) if i0 < n else 0.0
    done = ok if ok is not None else trace.measured & trace.completed
    t1 = float(np.max(trace.batch_end_s.take(trace.batch[done]))) if done.any() else t0  # no index column
    return t0, t1


def tail_drivers(trace: Trace, pct: float = 95.0, ok: np.ndarray | None = None,
                 lat: np.ndarray | None = None, cut: float | None = None) -> dict[str, float]:
    """Share of the latency of requests above the ``pct`` percentile, by cause.

    ``ok`` and ``lat`` (the measured completed mask and their latencies) and ``cut`` (the
    ``pct`` percentile of ``lat``, as :func:`stats` gives it), when given, save recomputing them.
    """
    if ok is None:
        ok = trace.measured & trace.completed
    if lat is None:
        lat = trace.latency_s[ok]
    if len(lat) == 0:
        return dict.fromkeys(DRIVERS, 0.0)
    if cut is None:
        cut = np.percentile(lat, pct)
    tail = lat > cut
    if not tail.any():
        tail = lat >= cut
    # the tail requests, as indices (no full-length temporaries; every request measured: their own places)
    rows = np.flatnonzero(tail)  # (a gather by indices: the boolean selection, faster on a scattered mask)
    sel = rows if len(lat) == len(ok) else np.flatnonzero(ok)[rows]
    b = trace.batch[sel]
    wait = trace.start_of(sel) - trace.arrival_s[sel]
    imbalance = np.minimum(trace.imbalance_of(sel), wait)
    reload = trace.batch_reload_s[b]
    queued = trace.reload_queued  # load_then_dispatch: requests waited for weights in the queue, not on a core
    if queued:  # each request's own wait while its class waited for weights (not just its batch's)
        reload = np.minimum(trace.weights_wait_of(sel), wait - imbalance)
    parts = {
        "queueing": wait - imbalance - reload if queued else wait - imbalance,
        "core_imbalance": imbalance,
        "memory_contention": trace.contention_of(b),
        "memory_residency": reload,
        "mapping_fallback": trace.batch_fallback_s[b],
    }
    work = trace.batch_work_s[b] if queued else trace.batch_work_s[b] - parts["memory_residency"]  # on the core
    parts["service"] = np.maximum(work - parts["mapping_fallback"], 0)
    total = float(lat.take(rows).sum())
    return {k: float(v.sum()) / total for k, v in parts.items()}


def line_slope(x: np.ndarray, y: np.ndarray) -> float:
    """The least-squares slope of ``y`` over ``x``, summed exactly (``math.fsum``): the same bits on every CPU.

    ``np.polyfit`` goes through LAPACK, whose kernels (and so the last bit) differ between CPUs; a
    summary must not.
    """
    xs, ys = [float(v) for v in x], [float(v) for v in y]
    xm, ym = math.fsum(xs) / len(xs), math.fsum(ys) / len(ys)
    sxx = math.fsum((a - xm) * (a - xm) for a in xs)
    return math.fsum((a - xm) * (b - ym) for a, b in zip(xs, ys, strict=True)) / sxx if sxx > 0 else 0.0


def load_state(trace: Trace, depth_curve: tuple[np.ndarray, np.ndarray] | None = None,
               t0: float | None = None) -> dict:
    """Offered versus served load, queue growth, and whether the system was overloaded.

    ``depth_curve`` (``trace.queue_depth()``) and ``t0`` (the window's start), when given,
    are not recomputed.
    """
    t, depth = depth_curve if depth_curve is not None else trace.queue_depth()
    if t0 is None:
        t0, _ = window(trace)
    t_last = float(trace.arrival_s[-1])
    grid = np.linspace(t0, t_last, 200) if t_last > t0 else np.array([t0])
    at = depth[np.maximum(np.searchsorted(t, grid, side="right") - 1, 0)] if len(t) else np.zeros(len(grid))
    slope = line_slope(grid, at) if len(grid) > 2 else 0.0
    span = t_last - t0
    measured = len(trace.arrival_s) - _first_measured(trace)
    offered = (measured / span) if span > 0 else float("nan")
    shed = float(np.count_nonzero((trace.outcome == 1) | (trace.outcome == 2)) / len(trace.outcome))
    util = trace.core_busy_s / max(trace.makespan_s, 1e-300)
    overloaded = bool(slope > 0.02 * offered or shed > 0.01)
    note = ""
    if overloaded:
        note = (f"overloaded: queue grew at {slope:.3g} req/s over the arrivals and "
                f"{shed:.1%} of requests were shed; mean core utilisation {util.mean():.0%}")
    return {"offered_rps": float(offered), "queue_growth_rps": slope, "shed_fraction": shed,
            "overloaded": overloaded, "note": note}


def summarize(trace: Trace) -> dict:
    """The run's JSON summary (plain floats, ints, lists and dicts).

    Lean: the masks, the latencies and the queue-depth curve are computed once, and the
    per-stream figures work on the measured completed requests only.
    """
    sc = trace.scenario
    n = len(trace.arrival_s)
    i0 = _first_measured(trace)
    n_measured = n - i0
    completed = trace.completed
    ok = trace.measured
    ok &= completed
    # the window's start, then the queue-depth curve, once (the summary's mean and max, the load's growth), and
    # freed before the per-request latencies exist: it is the largest temporary
    t0 = float(trace.arrival_s[i0]) if i0 < n else 0.0
    depth_mean, depth_max, load = _depth_and_load(trace, t0)
    n_done = int(np.count_nonzero(completed))
    all_by_stream = np.bincount(trace.stream, minlength=len(sc.streams))
    # every request completed: the completed by stream are all of them (no 400k-row selection)
    done_by_stream = all_by_stream if n_done == n else np.bincount(trace.stream[completed], minlength=len(sc.streams))
    del completed
    lat, wait, t1 = _latency_wait_end(trace, ok, t0)  # of the measured completed requests; t1 as window() gives it
    span = max(t1 - t0, 1e-300)
    n_ok = len(lat)
    lat_stats, wait_stats = stats(lat), stats(wait)
    # one stream: all of them are its own; every request measured and completed: the column itself
    stream_ok = None if len(sc.streams) == 1 else trace.stream if n_ok == n else trace.stream[ok]
    names = [s.name for s in sc.streams]
    streams, x = {}, []
    for i, s in enumerate(sc.streams):
        # the stream's rows as indices: a gather by them is the boolean selection, 5x faster on a scattered mask
        mine = np.flatnonzero(stream_ok == i) if stream_ok is not None else None
        count = len(mine) if mine is not None else n_ok
        thr = float(count / span)
        x.append(thr / s.weight)
        everyone = count == n_ok  # the stream's figures are the run's (one stream): the same values, not redone
        streams[names[i]] = {
            "completed": int(done_by_stream[i]),
            "rejected": int(all_by_stream[i] - done_by_stream[i]),
            "throughput_rps": thr,
            # lat.take(mine) is a copy: partitioned in place
            "latency_s": dict(lat_stats) if everyone else stats(lat.take(mine), overwrite=True),
            "wait_s": dict(wait_stats) if everyone else stats(wait.take(mine), overwrite=True),
        }
    sizes, counts = _histogram(trace.batch_size)
    util = trace.core_busy_s / max(trace.makespan_s, 1e-300)
    outcomes = np.bincount(trace.outcome, minlength=len(OUTCOMES))
    summary = {
        "scenario": sc.name,
        "seed": sc.seed,
        "requests": int(n),
        "completed": n_done,
        "rejected": int(n - n_done),
        "rejected_by": {OUTCOMES[k]: int(outcomes[k]) for k in range(1, len(OUTCOMES))},
        "measured": int(n_measured),
        # latency percentiles are over completed requests: refusals would hide the tail, so say how many
        "refused_share": float((n_measured - n_ok) / max(int(n_measured), 1)),
        "throughput_rps": float(n_ok / span),
        "latency_s": lat_stats,
        "wait_s": wait_stats,
        "fairness_jain": jain(np.array(x)),
        "cores": {"utilization": util.tolist(), "batches": trace.core_batches.tolist(),
                  "imbalance": float(util.max() / util.mean()) if util.mean() > 0 else 1.0},
        "batch_size": {"mean": float(trace.batch_size.mean()) if len(trace.batch_size) else 0.0,
                       "histogram": {str(int(k)): int(v) for k, v in zip(sizes, counts, strict=True)}},
        "queue_depth": {"mean": depth_mean, "max": depth_max},
        "load": load,
        "tail_drivers": tail_drivers(trace, ok=ok, lat=lat, cut=lat_stats["p95"] if n_ok else None),
        "residency": dict(trace.residency),
        "streams": streams,
    }
    del lat, wait, stream_ok, ok  # the mapping metrics work per batch: free the per-request columns first
    summary.update(_mapping(trace) or {})
    return summary


def _histogram(sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(sizes, return_counts=True)`` of batch sizes (small integers >= 0) by a count instead of a sort."""
    if not len(sizes) or int(sizes.min()) < 0:
        return np.unique(sizes, return_counts=True)
    counts = np.bincount(sizes)
    present = np.flatnonzero(counts)
    return present, counts[present]


def _latency_wait_end(trace: Trace, ok: np.ndarray, t0: float) -> tuple[np.ndarray, np.ndarray, float]:
    """Latency (end - arrival) and wait (start - arrival) of the requests ``ok`` (s), in index order, and the
    window's end as :func:`window` finds it (their last completion; ``t0`` when there is none), from the same
    gather of their completions.

    Gathered through their batches (int32 indices, widened once for both gathers) and written in
    place: no index column, no temporaries beyond the arrival times of the selection (none when
    every request is selected).
    """
    every = len(ok) == np.count_nonzero(ok)
    b = (trace.batch if every else trace.batch[ok]).astype(np.intp)
    arrival = trace.arrival_s if every else trace.arrival_s[ok]
    lat = trace.batch_end_s.take(b)
    t1 = float(np.max(lat)) if len(lat) else t0
    lat -= arrival
    wait = trace.batch_start_s.take(b)
    wait -= arrival
    return lat, wait, t1


def _depth_and_load(trace: Trace, t0: float) -> tuple[float, int, dict]:
    """Time-average and peak of the queue depth, and :func:`load_state`, from one depth curve.

    The load is read off the curve first; then the time steps are written over the times
    (no ``np.diff`` with an appended copy) and the depth x time products over the steps;
    the sum is the same pairwise sum of the same values, so the mean is the same bit for bit.
    """
    t, depth = trace.queue_depth()
    load = load_state(trace, (t, depth), t0)
    if not len(t):
        return 0.0, 0, load
    span = max(t[-1] - t[0], 1e-300)
    dt = _steps_in_place(t)  # t is not needed after: the steps are written over it
    del t
    held = dt > 0  # a depth held for no time (a tie of enqueue and leave) is not a peak
    depth_max = _held_max(depth, held) if held.any() else 0  # depth.max(where=held, initial=0): depths are >= 0
    del held
    dt *= depth  # depth x dt, in place (the product commutes bit for bit)
    depth_mean = float(dt.sum() / span)
    return depth_mean, depth_max, load


def _steps_in_place(t: np.ndarray, block: int = 1 << 16) -> np.ndarray:
    """``np.diff(t, append=t[-1])`` written over ``t`` a block at a time (front to back, so each
    block reads only times not yet overwritten); returns ``t``."""
    last = t[-1] - t[-1]
    for i in range(0, len(t) - 1, block):
        j = min(i + block, len(t) - 1)
        np.subtract(t[i + 1:j + 1], t[i:j], out=t[i:j])
    t[-1] = last
    return t


def _mapping(trace: Trace) -> dict | None:
    from workbench.analysis.mapping import mapping_summary  # only runs through a plan need the compiler

    return mapping_summary(trace)


def wait_profile(trace: Trace, windows: int = 20) -> dict[str, np.ndarray]:
    """Queue wait percentiles over equal time windows of the run (s)."""
    ok = trace.measured & trace.completed
    t, w = trace.arrival_s[ok], trace.wait_s[ok]
    edges = np.linspace(t.min(), t.max(), windows + 1) if len(t) else np.zeros(windows + 1)
    idx = np.clip(np.searchsorted(edges, t, side="right") - 1, 0, windows - 1)
    out = {"t_s": (edges[:-1] + edges[1:]) / 2}
    for k, p in (("p50", 50), ("p95", 95), ("p99", 99)):
        out[k] = np.array([np.percentile(w[idx == j], p) if (idx == j).any() else np.nan for j in range(windows)])
    return out


def _held_max(depth: np.ndarray, held: np.ndarray) -> int:
    """``int(depth.max(where=held, initial=0))`` for depths >= 0 and ``held.any()``, without the masked reduction.

    The masked maximum is a slow path (~4 ms at 800k changes); the plain maximum is held at
    one of its places almost always, and then it is the answer; else the masked one runs.
    """
    top = depth.max()
    if held[np.flatnonzero(depth == top)].any():
        return int(top)
    return int(depth.max(where=held, initial=0))

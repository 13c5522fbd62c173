"""Memory residency, computed: reload cost, overcommit, HBM occupancy over time, reloads per bin.

Chapter 05 reads these numbers; ``workbench.ui.residency_figures`` draws them. The
occupancy timeline replays the run's batches through the runtime's own LRU
(:class:`workbench.runtime.residency.Residency`) in the order the event loop uses
(at one instant, finished batches release before new ones acquire; batches in
dispatch order), so it shows the resident set the run actually had; a test checks
that the replay reloads exactly the batches the trace says reloaded.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from workbench.config import Scenario
from workbench.runtime.residency import Residency
from workbench.runtime.trace import Trace
from workbench.scenario import load_scenario

GIB = 1 << 30
BASE = "memory_residency"


def residency_scenario(hbm_gib: int = 32, embed_rate: float = 150.0, requests: int = 8000) -> Scenario:
    """The residency panel's scenario: HBM capacity in GiB, the embed stream's rate in req/s (0 drops it)."""
    base = load_scenario(BASE)
    streams = tuple(
        dataclasses.replace(s, arrivals=dataclasses.replace(s.arrivals, rate=float(embed_rate)))
        if s.name == "embed" else s
        for s in base.streams if s.name != "embed" or embed_rate > 0)
    return dataclasses.replace(base, streams=streams, requests=requests,
                               hardware=dataclasses.replace(base.hardware, hbm_capacity_bytes=int(hbm_gib) * GIB))


def reload_seconds(weights_bytes: int, bandwidth_bytes_per_s: float) -> float:
    """Time to copy one model's weights into HBM at full bandwidth: bytes / bandwidth (s)."""
    return weights_bytes / bandwidth_bytes_per_s


def models_that_fit(weights_bytes: Sequence[int], capacity_bytes: int) -> int:
    """How many models the warm start loads (in order, while they fit)."""
    used, n = 0, 0
    for w in weights_bytes:
        if used + w <= capacity_bytes:
            used, n = used + w, n + 1
    return n


def overcommit_bytes(working_set_bytes: Sequence[int], capacity_bytes: int) -> int:
    """Bytes by which the models in use together exceed HBM (0 when they fit): sum of working sets - capacity."""
    return max(0, int(sum(working_set_bytes)) - int(capacity_bytes))


def occupancy_timeline(trace: Trace) -> dict[str, np.ndarray]:
    """HBM bytes held by each model after every batch start and end, by replaying the run's LRU.

    Returns ``t_s`` (event times), ``bytes`` (models x events), ``reload_t_s`` (start of each
    batch that reloaded) and ``reloaded`` (per batch, True where the replay charged a reload).
    """
    sc = trace.scenario
    weights = [m.weights_bytes for m in sc.models]
    res = Residency(weights, sc.hardware.hbm_capacity_bytes, sc.hardware.hbm_bandwidth_bytes_per_s)
    nb = len(trace.batch_start_s)
    times = np.concatenate([trace.batch_end_s, trace.batch_start_s])
    kind = np.concatenate([np.zeros(nb, dtype=np.int8), np.ones(nb, dtype=np.int8)])  # release before acquire
    idx = np.concatenate([np.arange(nb), np.arange(nb)])
    order = np.lexsort((idx, kind, times))
    held = np.zeros((len(weights), 2 * nb + 1))
    for m in res.resident:
        held[m, 0] = weights[m]
    reloaded = np.zeros(nb, dtype=bool)
    for j, e in enumerate(order, start=1):
        b, model = int(idx[e]), int(trace.batch_model[idx[e]])
        if kind[e]:
            reloaded[b] = res.acquire(model) > 0
        else:
            res.release(model)
        for m in res.resident:
            held[m, j] = weights[m]
    t = np.concatenate([[0.0], times[order]])
    return {"t_s": t, "bytes": held, "reload_t_s": np.sort(trace.batch_start_s[reloaded]), "reloaded": reloaded}


def reloads_per_bin(trace: Trace, bins: int = 40) -> tuple[np.ndarray, np.ndarray]:
    """(bin centres in s, reloads started in each bin) over the run."""
    t = trace.batch_start_s[trace.batch_reload_s > 0]
    edges = np.linspace(0.0, float(trace.batch_end_s.max()) if len(trace.batch_end_s) else 1.0, bins + 1)
    counts, _ = np.histogram(t, edges)
    return (edges[:-1] + edges[1:]) / 2, counts


def contention_stretch(trace: Trace) -> float:
    """Seconds batches lost to shared HBM bandwidth, as a share of their isolated work (0 = none)."""
    work = float(trace.batch_work_s.sum())
    return float(trace.batch_contention_s.sum()) / work if work > 0 else 0.0


def reload_share_of_busy(trace: Trace) -> float:
    """Share of all core busy time spent reloading weights."""
    busy = float(trace.core_busy_s.sum())
    return float(trace.batch_reload_s.sum()) / busy if busy > 0 else 0.0


def reload_batch_durations(trace: Trace) -> dict[str, float]:
    """Mean reload as charged (bytes / bandwidth, s) and mean wall time of reloading batches vs the others (s)."""
    r = trace.batch_reload_s > 0
    wall = trace.batch_end_s - trace.batch_start_s
    return {"reload_isolated_s": float(trace.batch_reload_s[r].mean()) if r.any() else 0.0,
            "reloading_batch_s": float(wall[r].mean()) if r.any() else 0.0,
            "other_batch_s": float(wall[~r].mean()) if (~r).any() else 0.0,
            "other_isolated_s": float(trace.batch_work_s[~r].mean()) if (~r).any() else 0.0}


def water_level(demands: Sequence[float]) -> float:
    """Max-min fair share of HBM bandwidth: the level theta with sum_j min(u_j, theta) = 1 (inf if all fit).

    ``demands`` are the bandwidth shares (0..1) the running phases would draw alone.
    """
    u = sorted(float(x) for x in demands)
    if sum(u) <= 1.0:
        return float("inf")
    left = 1.0
    for i, x in enumerate(u):
        level = left / (len(u) - i)  # split what is left equally among the rest
        if x >= level:
            return level
        left -= x
    return float("inf")


def slowdowns(demands: Sequence[float]) -> list[float]:
    """How many times longer each phase takes than alone when they share HBM: max(1, u / theta)."""
    theta = water_level(demands)
    return [max(1.0, float(u) / theta) for u in demands]


def busy_breakdown(trace: Trace) -> dict[str, float]:
    """Core time by what it went on, as shares of all cores over the run (they add up to mean utilisation).

    ``service``: isolated batch work; ``reload``: weights copied at full bandwidth, as charged;
    ``contention``: time batches (reloads included) were stretched by shared HBM bandwidth.
    """
    total = float(trace.makespan_s) * len(trace.core_busy_s)
    reload = float(trace.batch_reload_s.sum())
    work = float(trace.batch_work_s.sum())
    return {"service": (work - reload) / total, "reload": reload / total,
            "contention": float(trace.batch_contention_s.sum()) / total,
            "utilisation": float(trace.core_busy_s.sum()) / total}


def resident_share(occ: dict) -> np.ndarray:
    """Share of the run's time each model's weights were resident (from :func:`occupancy_timeline`)."""
    t = occ["t_s"]
    dt = np.diff(t, append=t[-1])
    span = float(t[-1] - t[0])
    return ((occ["bytes"] > 0) * dt).sum(axis=1) / span if span > 0 else np.zeros(len(occ["bytes"]))


def overcommit_time_share(occ: dict, capacity_bytes: int) -> float:
    """Share of the run's time the resident weights exceeded HBM capacity (the runtime's overcommit state)."""
    t = occ["t_s"]
    dt = np.diff(t, append=t[-1])
    span = float(t[-1] - t[0])
    return float((dt * (occ["bytes"].sum(axis=0) > capacity_bytes)).sum() / span) if span > 0 else 0.0

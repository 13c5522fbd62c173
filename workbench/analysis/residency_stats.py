"""Memory residency, computed: reload cost over the host link, overcommit, HBM occupancy, waits for weights.

Chapter 05 reads these numbers; ``workbench.ui.figures.residency`` draws them. The
occupancy timeline replays the run's batches through the runtime's own LRU
(:class:`workbench.runtime.residency.Residency`) in the order the event loop uses
(at one instant, finished batches release before new ones acquire; batches in
dispatch order; the weights asked for at each batch's start, so a run with recompile
pauses is not replayed exactly), so it shows the resident set the run actually had; a
test checks that the replay loads and waits exactly where the trace says. :func:`region`
sweeps host-link bandwidth and HBM capacity to show where the residency tail holds.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from workbench.analysis.metrics import summarize
from workbench.config import ResidencyPolicy, Scenario
from workbench.pipeline import run_scenario
from workbench.runtime.residency import Residency, link_terms
from workbench.runtime.trace import Trace
from workbench.scenario import load_scenario

GIB = 1 << 30
BASE = "memory_residency"


def residency_scenario(hbm_gib: int = 32, embed_rate: float = 0.5, requests: int = 8000,
                       link_gbps: float | None = None, dispatch: str = "hold") -> Scenario:
    """The residency panel's scenario: HBM capacity in GiB, the embed stream's rate in req/s (0 drops it),
    optionally the host link in GB/s (default: the chip's, PCIe 5 x16), and the runtime's residency dispatch
    policy (``hold`` or ``load_then_dispatch``, :class:`~workbench.config.ResidencyPolicy`)."""
    base = dataclasses.replace(load_scenario(BASE), residency=ResidencyPolicy(dispatch))
    hw = dataclasses.replace(base.hardware, hbm_capacity_bytes=int(hbm_gib) * GIB)
    if link_gbps is not None:
        hw = dataclasses.replace(hw, host_link_bytes_per_s=float(link_gbps) * 1e9)
    streams = tuple(
        dataclasses.replace(s, arrivals=dataclasses.replace(s.arrivals, rate=float(embed_rate)))
        if s.name == "embed" else s
        for s in base.streams if s.name != "embed" or embed_rate > 0)
    return dataclasses.replace(base, streams=streams, requests=requests, hardware=hw)


def reload_seconds(weights_bytes: int, bandwidth_bytes_per_s: float) -> float:
    """Time to copy one model's weights into HBM over a link of this bandwidth: bytes / bandwidth (s)."""
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
    batch that loaded weights), ``reloaded`` (per batch, True where the replay started a load over
    the host link), ``waited`` (per batch, True where it waited for weights: its own load, or the
    rest of another batch's), ``copy_spans_s`` (each load's copy on the link: begin, end) and ``copy_model``.
    Only a ``hold`` run can be replayed from its batches: under ``load_then_dispatch`` the loads began before
    the batches started, at instants the trace does not keep.
    """
    if trace.reload_queued:
        raise ValueError("occupancy_timeline replays [residency] dispatch = 'hold' runs only: under "
                         "'load_then_dispatch' loads begin before their batches, at instants the trace does not keep")
    sc = trace.scenario
    weights = [m.weights_bytes for m in sc.models]
    res = Residency(weights, sc.hardware.hbm_capacity_bytes, link_terms(sc.hardware)[0])
    nb = len(trace.batch_start_s)
    times = np.concatenate([trace.batch_end_s, trace.batch_start_s])
    kind = np.concatenate([np.zeros(nb, dtype=np.int8), np.ones(nb, dtype=np.int8)])  # release before acquire
    idx = np.concatenate([np.arange(nb), np.arange(nb)])
    order = np.lexsort((idx, kind, times))
    held = np.zeros((len(weights), 2 * nb + 1))
    for m in res.resident:
        held[m, 0] = weights[m]
    reloaded, waited = np.zeros(nb, dtype=bool), np.zeros(nb, dtype=bool)
    spans, copied = [], []
    for j, e in enumerate(order, start=1):
        b, model = int(idx[e]), int(trace.batch_model[idx[e]])
        if kind[e]:
            got = res.acquire(model, float(trace.batch_start_s[b]))
            reloaded[b], waited[b] = got.copy_s > 0, got.total_s > 0
            if got.copy_s > 0:
                begin = float(trace.batch_start_s[b]) + got.wait_s
                spans.append((begin, begin + got.copy_s))
                copied.append(model)
        else:
            res.release(model)
        for m in res.resident:
            held[m, j] = weights[m]
    t = np.concatenate([[0.0], times[order]])
    return {"t_s": t, "bytes": held, "reload_t_s": np.sort(trace.batch_start_s[reloaded]), "reloaded": reloaded,
            "waited": waited, "copy_spans_s": np.array(spans).reshape(-1, 2),
            "copy_model": np.array(copied, dtype=np.int32)}


def reloads_per_bin(trace: Trace, bins: int = 40, occ: dict | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(bin centres in s, loads started in each bin) over the run (the loads from ``occ``'s replay, or replayed)."""
    t = (occ or occupancy_timeline(trace))["reload_t_s"]
    edges = np.linspace(0.0, float(trace.batch_end_s.max()) if len(trace.batch_end_s) else 1.0, bins + 1)
    counts, _ = np.histogram(t, edges)
    return (edges[:-1] + edges[1:]) / 2, counts


def contention_stretch(trace: Trace) -> float:
    """Seconds batches lost to shared HBM bandwidth, as a share of their isolated work (0 = none)."""
    work = float(trace.batch_work_s.sum())
    return float(trace.batch_contention_s.sum()) / work if work > 0 else 0.0


def reload_share_of_busy(trace: Trace) -> float:
    """Share of all core busy time spent waiting for weights (0 under ``load_then_dispatch``: batches wait queued)."""
    busy = float(trace.core_busy_s.sum())
    return _held_s(trace) / busy if busy > 0 else 0.0


def _held_s(trace: Trace) -> float:
    """Core seconds held by batches waiting for their weights: all their waits under ``hold``, none otherwise."""
    return 0.0 if trace.reload_queued else float(trace.batch_reload_s.sum())


def weight_waits(trace: Trace) -> dict[str, float]:
    """Who waited for weights, and how long: batches that started a load and batches that waited on one in
    flight (counts; their mean and longest waits, s), the share of completed requests whose batch waited,
    and the share of the run the host link was copying."""
    occ = occupancy_timeline(trace)
    own, other = occ["reloaded"], occ["waited"] & ~occ["reloaded"]
    wait = trace.batch_reload_s
    done = trace.batch[trace.completed]
    span = float(trace.makespan_s)
    return {"loading_batches": int(own.sum()), "waiting_batches": int(other.sum()),
            "loading_wait_s": float(wait[own].mean()) if own.any() else 0.0,
            "waiting_wait_s": float(wait[other].mean()) if other.any() else 0.0,
            "longest_wait_s": float(wait.max(initial=0.0)),
            "requests_waited": float((wait[done] > 0).mean()) if len(done) else 0.0,
            "link_busy": float((trace.residency or {}).get("link_busy_s", 0.0)) / span if span > 0 else 0.0}


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

    ``service``: isolated batch work; ``reload``: cores held by batches waiting for their weights (queued on
    the host link, copying, or waiting out another batch's copy); ``contention``: time batches were
    stretched by shared HBM bandwidth. Under ``load_then_dispatch`` no core waits for weights: ``reload`` is 0.
    """
    total = float(trace.makespan_s) * len(trace.core_busy_s)
    reload = _held_s(trace)
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


def region(links_gbps: Sequence[float], hbms_gib: Sequence[int], embed_rate: float = 0.5,
           requests: int = 12000) -> list[dict]:
    """The residency scenario over a grid of host-link bandwidth (GB/s) and HBM capacity (GiB), one seed:
    per point its p50 and p99 (s), throughput over offered load, loads, and the link's busy share."""
    rows = []
    for link in links_gbps:
        for hbm in hbms_gib:
            sc = residency_scenario(hbm, embed_rate, requests, link_gbps=link)
            tr = run_scenario(sc)
            summary = summarize(tr)
            offered = sum(s.arrivals.rate for s in sc.streams)
            rows.append({"link_gbps": float(link), "hbm_gib": int(hbm),
                         "p50_s": summary["latency_s"]["p50"], "p99_s": summary["latency_s"]["p99"],
                         "throughput_share": summary["throughput_rps"] / offered,
                         "loads": int((tr.residency or {}).get("loads", 0)),
                         "link_busy": float((tr.residency or {}).get("link_busy_s", 0.0) / tr.makespan_s)})
    return rows


def compare_dispatch(hbm_gib: int = 32, embed_rate: float = 0.5, requests: int = 60000) -> dict[str, dict]:
    """The residency scenario under each dispatch policy (same arrivals, same seed): per policy, the p50 and
    p99 of every stream (s), loads, the link's busy share, the share of core time held waiting for weights,
    the embed requests' mean latency (s), the tail drivers, and throughput over offered load."""
    out = {}
    for dispatch in ("hold", "load_then_dispatch"):
        tr = run_scenario(residency_scenario(hbm_gib, embed_rate, requests, dispatch=dispatch))
        s = summarize(tr)
        offered = sum(x.arrivals.rate for x in tr.scenario.streams)
        names = [x.name for x in tr.scenario.streams]
        embed = tr.measured & tr.completed & (tr.stream == (names.index("embed") if "embed" in names else -1))
        out[dispatch] = {
            "p50_s": {k: v["latency_s"]["p50"] for k, v in s["streams"].items()},
            "p99_s": {k: v["latency_s"]["p99"] for k, v in s["streams"].items()},
            "p99_all_s": s["latency_s"]["p99"], "loads": int((tr.residency or {}).get("loads", 0)),
            "link_busy": float((tr.residency or {}).get("link_busy_s", 0.0)) / tr.makespan_s,
            "cores_held": busy_breakdown(tr)["reload"],
            "embed_mean_s": float(tr.latency_s[embed].mean()) if embed.any() else 0.0,
            "tail_drivers": s["tail_drivers"], "throughput_share": s["throughput_rps"] / offered}
    return out

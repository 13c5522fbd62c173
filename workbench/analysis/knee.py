"""The latency-throughput knee: sweeps of simulator runs beside the queueing formulas.

A sweep runs one scenario at several offered loads (same seed, same requests) and keeps
per load what the batching chapter sets beside :mod:`workbench.analysis.queueing`:
throughput, core utilisation, mean queue wait, p50/p99 latency, mean batch and the
time-averaged queue depth. The batch arithmetic (capacity of a batch size, the
worst wait of a lone request under a delay window, the batch a window forms at low load,
utilisation from the mean batch, the compiled plan's time per batch size) is here too: it is
not a queueing formula, it is the service law of the ``batching_knee`` scenario and of
the compiler's plans.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from workbench.analysis import queueing as q
from workbench.analysis.metrics import summarize
from workbench.analysis.roofline import plan_points, totals
from workbench.config import Batching
from workbench.graph import Graph
from workbench.hardware import Hardware
from workbench.runtime.engine import simulate


def _at_rate(scenario, rate: float, batching: Batching, requests: int):
    s0 = scenario.streams[0]
    stream = dataclasses.replace(s0, arrivals=dataclasses.replace(s0.arrivals, rate=float(rate)))
    return dataclasses.replace(scenario, requests=requests, streams=(stream,), batching=batching)


def knee_trace(scenario, rate: float, batching: Batching, requests: int = 20000):
    """The trace of one run at ``rate`` req/s under ``batching`` (for a timeline or a CDF)."""
    return simulate(_at_rate(scenario, rate, batching, requests))


def knee_sweep(scenario, batching: Batching, rates: tuple[float, ...], requests: int = 20000) -> list[dict]:
    """One simulator run per offered rate (req/s): the numbers a knee curve plots."""
    rows = []
    for rate in rates:
        s = summarize(knee_trace(scenario, rate, batching, requests))
        rows.append({"rate": float(rate), "throughput": s["throughput_rps"],
                     "utilisation": float(np.mean(s["cores"]["utilization"])),
                     "wait_mean_s": s["wait_s"]["mean"], "p50_s": s["latency_s"]["p50"],
                     "p99_s": s["latency_s"]["p99"], "batch_mean": s["batch_size"]["mean"],
                     "depth_mean": s["queue_depth"]["mean"], "overloaded": bool(s["load"].get("overloaded"))})
    return rows


def batch_service_s(base_s: float, per_item_s: float, batch: int) -> float:
    """Mean service time of a batch of ``batch`` requests: a fixed cost plus a cost per request, s."""
    return base_s + per_item_s * batch


def batch_capacity(base_s: float, per_item_s: float, batch: int, cores: int) -> float:
    """Requests per second ``cores`` cores serve when every batch holds ``batch`` requests."""
    return cores * batch / batch_service_s(base_s, per_item_s, batch)


def lone_request_latency_s(max_delay_s: float, base_s: float, per_item_s: float, batch: int = 1) -> float:
    """A request that waits out the whole delay window and then rides a batch of ``batch``: the low-load latency, s."""
    return max_delay_s + batch_service_s(base_s, per_item_s, batch)


def theory_waits(rates: tuple[float, ...], mean_service_s: float, cores: int, cs2: float,
                 ca2: float = 1.0) -> dict[str, list[float]]:
    """Mean queue wait (s) per rate by M/M/c and by Allen-Cunneen (Kingman's G/G/1 when ``cores`` is 1)."""
    mu = 1.0 / mean_service_s
    mmc = [q.mmc_wait(r, mu, cores) for r in rates]
    if cores == 1:
        gg = [q.kingman_wait(q.utilisation(r, mean_service_s), ca2, cs2, mean_service_s) for r in rates]
    else:
        gg = [q.allen_cunneen_wait(r, mean_service_s, cores, ca2, cs2) for r in rates]
    return {"M/M/c": mmc, "G/G/c (Allen-Cunneen)": gg}


def min_batch_for(rate: float, base_s: float, per_item_s: float, cores: int) -> int:
    """The smallest whole batch whose capacity exceeds ``rate`` (req/s); 0 if no batch size can carry it.

    ``cores * b / (base + per_item * b) > rate``  <=>  ``b > rate * base / (cores - rate * per_item)``.
    """
    room = cores - rate * per_item_s
    if room <= 0:
        return 0
    return int(np.floor(rate * base_s / room)) + 1


def batched_utilisation(rate: float, base_s: float, per_item_s: float, mean_batch: float, cores: int) -> float:
    """Core utilisation when ``rate`` req/s leave in batches of mean size ``mean_batch``.

    Every batch pays ``base_s`` once and every request ``per_item_s``, so the busy core-seconds per
    request are ``base_s / mean_batch + per_item_s``: rho = rate x that / cores (exact for the affine law).
    """
    return q.utilisation(rate, base_s / mean_batch + per_item_s, cores)


def window_batch(rate: float, max_batch: int, max_delay_s: float) -> float:
    """Mean batch a dynamic batcher forms at low load: the first request and the arrivals in its window.

    The first request opens a window of ``max_delay_s``; ``rate * max_delay_s`` more arrive in it on
    average, unless ``max_batch`` is reached first. Valid while a core is idle when the window closes.
    """
    return min(float(max_batch), 1.0 + rate * max_delay_s)


def fill_time_s(rate: float, max_batch: int, max_delay_s: float) -> float:
    """How long the first request of a batch waits for it to leave at low load, s.

    ``max_batch - 1`` more arrivals take ``(max_batch - 1) / rate`` on average; the window caps it.
    """
    return min((max_batch - 1) / rate, max_delay_s)


def window_wait_s(rate: float, max_delay_s: float) -> float:
    """Mean wait of a request at low load when every batch leaves at the end of its window, s.

    The first request waits the whole window d; the ``rate * d`` that join it arrive uniformly in the
    window and wait d/2 on average: ``(d + rate d^2 / 2) / (1 + rate d)`` (a ratio of means per batch).
    Valid while batches neither fill to ``max_batch`` nor find every core busy.
    """
    n = rate * max_delay_s
    return (max_delay_s + n * max_delay_s / 2) / (1 + n)


def plan_batch_seconds(graph: Graph, level: str, seq: int, hw: Hardware, batches: tuple[int, ...]) -> list[float]:
    """The compiled plan's time for one batch of each size (``seq`` tokens each), s: the compiler's service law."""
    return [totals(plan_points(graph, level, {"batch": b, "seq": seq}, hw))["seconds"] for b in batches]


def affine_fit(batches: tuple[int, ...], seconds: list[float]) -> tuple[float, float]:
    """Least-squares ``seconds ~ base + per_item x batch``: (base_s, per_item_s)."""
    per_item, base = np.polyfit(np.asarray(batches, dtype=float), np.asarray(seconds, dtype=float), 1)
    return float(base), float(per_item)


def idle_while_waiting_s(trace, start_s: float, seconds: float, step_s: float = 1e-5) -> tuple[float, float]:
    """(core-seconds idle while requests wait, core-seconds idle) in ``[start_s, start_s + seconds)``.

    A work-conserving queue never idles a core while work waits; a batcher holding its window open
    does. Sampled every ``step_s`` (a core's batches never overlap, so its busy state is a step count).
    """
    t = start_s + (np.arange(int(round(seconds / step_s))) + 0.5) * step_s
    qt, depth = trace.queue_depth()
    waiting = depth[np.maximum(np.searchsorted(qt, t, side="right") - 1, 0)] > 0
    cores = len(trace.core_busy_s)
    idle = np.full(len(t), cores)
    for k in range(cores):
        mine = trace.batch_core == k
        starts, ends = np.sort(trace.batch_start_s[mine]), np.sort(trace.batch_end_s[mine])
        idle -= np.searchsorted(starts, t, side="right") - np.searchsorted(ends, t, side="right")
    return float(idle[waiting].sum() * step_s), float(idle.sum() * step_s)

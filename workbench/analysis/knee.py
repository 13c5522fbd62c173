"""The latency-throughput knee: sweeps of simulator runs beside the queueing formulas.

A sweep runs one scenario at several offered loads (same seed, same requests) and keeps
per load what the batching chapter sets beside :mod:`workbench.analysis.queueing`:
throughput, core utilisation, mean queue wait, p50/p99 latency, mean batch and the
time-averaged queue depth. The batch arithmetic (capacity of a batch size, the
worst wait of a lone request under a delay window) is here too: it is not a queueing
formula, it is the service law of the ``batching_knee`` scenario.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from workbench.analysis import queueing as q
from workbench.analysis.metrics import summarize
from workbench.config import Batching
from workbench.runtime.engine import simulate


def _at_rate(scenario, rate: float, batching: Batching, requests: int):
    s0 = scenario.streams[0]
    stream = dataclasses.replace(s0, arrivals=dataclasses.replace(s0.arrivals, rate=float(rate)))
    return dataclasses.replace(scenario, requests=requests, streams=(stream,), batching=batching)


def knee_sweep(scenario, batching: Batching, rates: tuple[float, ...], requests: int = 20000) -> list[dict]:
    """One simulator run per offered rate (req/s): the numbers a knee curve plots."""
    rows = []
    for rate in rates:
        s = summarize(simulate(_at_rate(scenario, rate, batching, requests)))
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

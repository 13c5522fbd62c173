"""Retuning actions proposed from runtime telemetry: what to change, and why.

Each proposer reads the baseline run (its trace and summary) and returns zero or more
:class:`Action` objects. An action is data: a kind, the reason drawn from the
telemetry, and the change it makes to a *copy* of the scenario (``apply``). Nothing
here simulates; :mod:`workbench.feedback.guard` measures each action's effect.

* ``rebucket``: bucket bounds fitted to the observed shape histogram (equal-mass
  quantiles within a bucket budget, the top bound covering the largest shape seen),
  then recompiled.
* ``batching``: ``max_batch`` and ``max_delay_s`` from the observed arrival rate and
  batch service times: the smallest batch that brings utilisation under a target (with
  a delay long enough to fill it), or half the delay when batch filling fills the tail.
* ``fusion``: one level lower when fused kernels spill out of SRAM and memory
  contention shows in the tail.
* ``priority``: weighted fair queueing with weights by offered load when strict
  priority starves a stream (its p99 many times the others').
* ``placement``: least-loaded dispatch when pinned placement leaves cores imbalanced.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np

from workbench.config import Scenario
from workbench.runtime.trace import Trace

LOWER_FUSION = {"aggressive": "elementwise", "elementwise": "none"}


@dataclass(frozen=True)
class Action:
    """A proposed change to the scenario, with the telemetry that motivates it."""

    kind: str  # rebucket | batching | fusion | priority | placement
    reason: str
    change: str  # human-readable: what changes, from -> to
    updates: dict = field(default_factory=dict)  # section -> {field: new value}

    def apply(self, scenario: Scenario) -> Scenario:
        """A copy of the scenario with this action's change."""
        sc = scenario
        for section, values in self.updates.items():
            if section == "streams":
                sc = dataclasses.replace(sc, streams=tuple(
                    dataclasses.replace(s, **values.get(s.name, {})) for s in sc.streams))
            else:
                sc = dataclasses.replace(sc, **{section: dataclasses.replace(getattr(sc, section), **values)})
        return sc


def fit_buckets(values: np.ndarray, budget: int, granule: int) -> list[int]:
    """Upper bounds at equal-mass quantiles of the observed values, rounded up to the granule."""
    qs = np.quantile(values, np.arange(1, budget + 1) / budget)
    bounds = sorted({int(-(-q // granule) * granule) for q in qs})
    bounds[-1] = max(bounds[-1], int(-(-values.max() // granule) * granule))
    return bounds


def propose_rebucket(sc: Scenario, trace: Trace, summary: dict, budget: int = 6) -> list[Action]:
    """New buckets when live shapes miss the envelope."""
    if sc.model is None or summary.get("bucket_hit_rate", 1.0) >= 0.98:
        return []
    dim = next(iter(sc.model.envelope))
    values = trace.shapes[dim][trace.measured]
    budget = max(budget, len(sc.model.envelope[dim]))
    bounds = fit_buckets(values, budget, sc.model.granule)
    reasons = summary["misses"]["by_reason"]
    top = max(reasons, key=reasons.get) if reasons else "misses"
    p50, p99 = np.percentile(values, [50, 99])
    reason = (f"bucket hit rate {summary['bucket_hit_rate']:.0%} (< 98%); most misses: {top} "
              f"({reasons.get(top, 0)} requests); observed {dim} p50 {p50:.0f}, p99 {p99:.0f}, max {values.max()}")
    envelope = {dim: bounds}
    return [Action("rebucket", reason, f"envelope {dim}: {sc.model.envelope[dim]} -> {bounds}",
                   {"model": {"envelope": envelope, "expected_shares": ()}})]


def _service_by_size(trace: Trace) -> tuple[float, float]:
    """(base_s, per_item_s) fitted to observed batch durations by size."""
    size = trace.batch_size.astype(float)
    dur = trace.batch_end_s - trace.batch_start_s
    if len(np.unique(size)) < 2:
        return float(dur.mean()), 0.0
    per_item, base = np.polyfit(size, dur, 1)
    return max(float(base), 0.0), max(float(per_item), 0.0)


def propose_batching(sc: Scenario, trace: Trace, summary: dict, target_util: float = 0.8) -> list[Action]:
    """Bigger batches when cores run over ``target_util``; a shorter delay when batch filling fills the tail.

    Utilisation at batch size b is ``rate * (base + per_item * b) / b / cores`` with base
    and per-item times fitted to the observed batches. Over target: the smallest
    power-of-two batch that brings it under, with a delay long enough to fill it. Under
    target but with requests waiting mostly for their batch to fill (mean wait at least
    half the delay, queueing over 30% of the tail): half the delay.
    """
    b = sc.batching
    if b.policy == "static":
        return []
    rate = summary["load"]["offered_rps"]
    if not np.isfinite(rate) or rate <= 0:
        return []
    base, per_item = _service_by_size(trace)
    cores = sc.hardware.cores

    def util(size: int) -> float:
        return rate * (base + per_item * size) / size / cores

    current = b.max_batch if b.policy == "dynamic" else 1
    delay = b.max_delay_s if b.policy == "dynamic" else 0.0
    wait_share, mean_wait = summary["tail_drivers"]["queueing"], summary["wait_s"]["mean"]
    observed = (f"observed {rate:.0f} req/s on {cores} cores, batch time {base * 1e3:.3f} ms + "
                f"{per_item * 1e3:.3f} ms/request: utilisation {util(current):.0%} at max_batch {current}")
    if util(current) > target_util:
        bigger = [s for s in (2, 4, 8, 16, 32, 64) if s > current and util(s) <= target_util]
        if not bigger:
            return []
        size = bigger[0]
        delay = float(np.round(max(delay, size / rate), 6))  # long enough to fill the batch at this rate
        reason = f"{observed}, over the {target_util:.0%} target; {util(size):.0%} at max_batch {size}"
    elif b.policy == "dynamic" and delay > 0 and wait_share > 0.3 and mean_wait >= 0.5 * delay:
        size, delay = current, float(np.round(delay / 2, 6))
        reason = (f"{observed}, under target, but requests wait {mean_wait * 1e3:.3f} ms on average for a "
                  f"{b.max_delay_s * 1e3:.3f} ms batching delay and queueing is {wait_share:.0%} of the tail")
    else:
        return []
    return [Action("batching", reason,
                   f"batching: {b.policy} max_batch {b.max_batch}, max_delay_s {b.max_delay_s} -> dynamic "
                   f"max_batch {size}, max_delay_s {delay}",
                   {"batching": {"policy": "dynamic", "max_batch": size, "max_delay_s": delay, "preferred": ()}})]


def propose_fusion(sc: Scenario, trace: Trace, summary: dict) -> list[Action]:
    """One fusion level lower when fused kernels spill and memory contention shows in the tail."""
    if sc.model is None or sc.model.fusion not in LOWER_FUSION:
        return []
    spill = summary.get("spill_bytes_per_request", 0.0)
    contention = summary["tail_drivers"]["memory_contention"]
    if spill <= 0 or contention < 0.05:
        return []
    level = LOWER_FUSION[sc.model.fusion]
    reason = (f"fused kernels spill {spill / 2**20:.1f} MiB per request out of "
              f"{sc.hardware.sram_bytes_per_core / 2**20:.0f} MiB SRAM; with {sc.hardware.cores} cores busy, memory "
              f"contention is {contention:.0%} of the tail latency")
    return [Action("fusion", reason, f"fusion: {sc.model.fusion} -> {level}", {"model": {"fusion": level}})]


def propose_priority(sc: Scenario, trace: Trace, summary: dict, ratio: float = 5.0) -> list[Action]:
    """Weighted fair queueing (weights by offered load) when strict priority starves a stream."""
    streams = summary["streams"]
    if sc.scheduler.discipline != "priority" or len(streams) < 2:
        return []
    p99 = {n: s["latency_s"]["p99"] for n, s in streams.items()}
    worst, best = max(p99, key=p99.get), min(p99, key=p99.get)
    if not p99[best] > 0 or p99[worst] < ratio * p99[best]:
        return []
    rates = {s.name: s.arrivals.mean_rate for s in sc.streams}
    weights = {n: {"weight": round(r / min(rates.values()), 3)} for n, r in rates.items()}
    reason = (f"strict priority: stream {worst} p99 {p99[worst] * 1e3:.1f} ms is "
              f"{p99[worst] / p99[best]:.0f}x stream {best}'s {p99[best] * 1e3:.1f} ms")
    return [Action("priority", reason, "discipline: priority -> weighted, weights by offered load "
                   + ", ".join(f"{n} {w['weight']}" for n, w in weights.items()),
                   {"scheduler": {"discipline": "weighted"}, "streams": weights})]


def propose_placement(sc: Scenario, trace: Trace, summary: dict, limit: float = 1.3) -> list[Action]:
    """Least-loaded dispatch when pinned placement leaves cores imbalanced."""
    if sc.scheduler.placement != "pinned" or summary["cores"]["imbalance"] < limit:
        return []
    util = summary["cores"]["utilization"]
    reason = (f"pinned placement: core utilisation {', '.join(f'{u:.0%}' for u in util)} (max/mean "
              f"{summary['cores']['imbalance']:.2f}); core imbalance is {summary['tail_drivers']['core_imbalance']:.0%}"
              " of the tail")
    updates: dict = {"scheduler": {"placement": "least-loaded"}}
    return [Action("placement", reason, "placement: pinned -> least-loaded", updates)]


PROPOSERS = (propose_rebucket, propose_fusion, propose_batching, propose_priority, propose_placement)


def propose(sc: Scenario, trace: Trace, summary: dict) -> list[Action]:
    """Every action the telemetry supports, in a fixed order."""
    return [a for p in PROPOSERS for a in p(sc, trace, summary)]

"""Fairness and placement, computed: per-class waits against Cobham, Jain beside per-stream p99, core loads.

Chapter 04 reads these numbers; ``workbench.ui.figures.fairness`` draws them. The runs
use the two-stream scenario behind the fairness panel (``priority_two_streams``: two
cores, exponential service of 10 ms mean, Poisson arrivals), rebuilt here the same way
the panel builds it so a chapter's number is the panel's number (a test checks this).

Jain's index (Jain, Chiu and Hawe 1984) is computed by ``workbench.analysis.metrics``
on throughput divided by weight. When no request is refused, throughput equals the
offered rate whatever the queue discipline, so the index reads the *offered mix*, not
the waiting: it cannot tell strict priority from fair queueing. Cobham's per-class waits
come from :func:`workbench.analysis.queueing.cobham_waits`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from workbench.analysis import queueing as q
from workbench.analysis.metrics import jain, summarize
from workbench.config import Scenario, Scheduler
from workbench.pipeline import run_scenario
from workbench.scenario import load_scenario

BASE = "priority_two_streams"
BUILT_FOR = 0.95  # the scenario's rates give 95% utilisation of its two cores


def two_streams(discipline: str = "priority", batch_weight: float = 1.0, placement: str = "least-loaded",
                load: float = 0.95, skew: float = 100 / 190, requests: int = 8000) -> Scenario:
    """The fairness panel's scenario: total rate scaled to ``load``, ``skew`` of it to 'interactive'."""
    base = load_scenario(BASE)
    total = sum(s.arrivals.rate for s in base.streams) * load / BUILT_FOR  # req/s

    def rate(s, r):
        return dataclasses.replace(s, arrivals=dataclasses.replace(s.arrivals, rate=float(r)))

    streams = (rate(base.streams[0], total * skew),
               dataclasses.replace(rate(base.streams[1], total * (1 - skew)), weight=batch_weight))
    return dataclasses.replace(base, streams=streams, requests=requests,
                               scheduler=Scheduler(discipline=discipline, placement=placement))


def mean_service_s(sc: Scenario) -> float:
    """Mean service time of one request in an abstract-law scenario with no batching (s)."""
    return sc.service.base_s + sc.service.per_item_s


def cobham_vs_simulated(loads: Sequence[float], requests: int = 40000) -> dict[str, list]:
    """Per-class mean queue wait under strict priority, simulated and by Cobham's formula (s).

    Returns ``loads``, ``classes`` (names, highest priority first) and, per class, the
    simulated mean wait (``sim``) and Cobham's (``cobham``), each a list over loads.
    """
    out: dict[str, list] = {"loads": list(loads), "classes": [], "sim": [], "cobham": []}
    for load in loads:
        sc = two_streams("priority", load=load, requests=requests)
        s = summarize(run_scenario(sc))
        names = [st.name for st in sorted(sc.streams, key=lambda st: st.priority)]
        out["classes"] = names
        out["sim"].append([s["streams"][n]["wait_s"]["mean"] for n in names])
        rates = [st.arrivals.rate for st in sorted(sc.streams, key=lambda st: st.priority)]
        out["cobham"].append(q.cobham_waits(rates, 1.0 / mean_service_s(sc), sc.hardware.cores))
    return out


def policy_rows(policies: Sequence[tuple[str, str, float]], load: float = 0.95,
                requests: int = 40000) -> list[dict]:
    """For each (label, discipline, batch weight): per-stream p99 (s), Jain's index, throughput (req/s)."""
    rows = []
    for label, discipline, weight in policies:
        s = summarize(run_scenario(two_streams(discipline, weight, load=load, requests=requests)))
        rows.append({"label": label, "jain": s["fairness_jain"],
                     "p99_s": {n: v["latency_s"]["p99"] for n, v in s["streams"].items()},
                     "throughput_rps": {n: v["throughput_rps"] for n, v in s["streams"].items()}})
    return rows


def jain_of(throughputs: Sequence[float], weights: Sequence[float]) -> float:
    """Jain's index as the summary computes it: over throughput / weight, per stream."""
    return jain([t / w for t, w in zip(throughputs, weights, strict=True)])


def pinned_core_utilisation(rates: Sequence[float], mean_service: float, cores: int) -> list[float]:
    """Offered utilisation of each core when stream i is pinned to core i mod ``cores`` (>= 1: overloaded)."""
    util = [0.0] * cores
    for i, r in enumerate(rates):
        util[i % cores] += r * mean_service
    return util


def overload_share(load: float, cores: int = 2) -> float:
    """The share of the traffic one pinned core can take before it overloads: 1 / (cores x load)."""
    return 1.0 / (cores * load)


def placement_rows(placements: Sequence[str], load: float, skew: float, requests: int = 20000) -> list[dict]:
    """For each placement: per-core busy share, max/mean imbalance, overall p99 (s), overloaded or not."""
    rows = []
    for p in placements:
        s = summarize(run_scenario(two_streams("fifo", 1.0, p, load=load, skew=skew, requests=requests)))
        rows.append({"placement": p, "busy": s["cores"]["utilization"], "imbalance": s["cores"]["imbalance"],
                     "p99_s": s["latency_s"]["p99"], "overloaded": s["load"]["overloaded"],
                     "core_imbalance_share": s["tail_drivers"]["core_imbalance"]})
    return rows


def round_robin_capacity_share() -> float:
    """Share of two cores' capacity that strict-turn round-robin can use under exponential service: 3/4.

    The simulator's round-robin sends the next batch to the core whose turn it is and
    waits for that core even while the other idles. Saturated, request n starts at
    S_n = max(S_{n-1}, S_{n-2} + X_{n-2}); the gap D_n = S_n - S_{n-1} = (X_{n-2} - D_{n-1})^+.
    With X ~ Exp(mu), a positive gap is again Exp(mu) (memorylessness), so
    p = P(D > 0) solves p = (1 - p) + p / 2, p = 2/3, and E[D] = p / mu = 2 / (3 mu): the
    pair completes 1.5 mu per second, three quarters of the 2 mu that two free cores give.
    """
    p = 2.0 / 3.0  # P(gap > 0), the fixed point of p = (1 - p) + p / 2
    return 1.0 / p / 2.0  # throughput 1 / E[D] = 1.5 mu, over the 2 mu of two cores

"""Exercise checkers for chapters 04 (fairness and placement) and 05 (memory residency).

Same contract as :mod:`workbench.ui.exercises`: "right", "not yet: <hint>" or "not
answered yet", and a checker never moves the panel it reads (``_run`` runs the panel's
model headless). ``tests/test_checks_04_05.py`` is the instructor's key.
"""

from __future__ import annotations

from typing import Any

from workbench.analysis import fairness as fa
from workbench.analysis import queueing as q
from workbench.analysis import residency_stats as rs
from workbench.ui.exercises import _run, _verdict

GIB = 1 << 30

# 04, exercise 1: the setting the learner turns into rates (one the chapter never prints)
COBHAM_LOAD, COBHAM_SKEW = 0.85, 0.6
PINNED_LOAD = 0.8  # 04, exercise 2


def _close(x: Any, target: float, rel: float) -> bool:
    return abs(float(x) - target) <= rel * abs(target)


def cobham_batch_wait_ms(panel, wait_ms: Any) -> str:
    """04, exercise 1: the batch stream's mean queue wait (ms) by Cobham at load 0.85, share 0.6, within 5%."""
    sc = fa.two_streams("priority", load=COBHAM_LOAD, skew=COBHAM_SKEW)
    rates = [s.arrivals.rate for s in sc.streams]
    mu = 1.0 / fa.mean_service_s(sc)
    target = q.cobham_waits(rates, mu, sc.hardware.cores)[1] * 1e3
    fifo = q.mmc_wait(sum(rates), mu, sc.hardware.cores) * 1e3

    def hint() -> str:
        if _close(wait_ms, fifo, 0.05):
            return "that is the FIFO (M/M/c) wait: under priority the batch class waits behind the interactive one"
        return ("rates: total = 190 req/s x load / 0.95, split by the share; mu = 1 / 10 ms; c = 2 cores; "
                "queueing.cobham_waits lists classes highest priority first, in seconds")

    verdict = _verdict((wait_ms,), "a wait in ms (a number)", lambda: _close(wait_ms, target, 0.05), "")
    return f"not yet: {hint()}" if verdict == "not yet: " else verdict


def pinned_overload_share(panel, share: Any) -> str:
    """04, exercise 2: at utilisation target 0.8, pinned, the largest share (slider step) with no core overloaded."""
    load = PINNED_LOAD
    step = panel.ctrl["skew"].step
    total = sum(s.arrivals.rate for s in fa.two_streams(load=load).streams)
    mean_s = fa.mean_service_s(fa.two_streams())

    def worst(x: float) -> float:
        return max(fa.pinned_core_utilisation([total * x, total * (1 - x)], mean_s, 2))

    def test() -> bool:
        x = float(share)
        lo, hi = panel.ctrl["skew"].min, panel.ctrl["skew"].max
        if not lo <= x <= hi:
            raise ValueError(f"a share on the slider, {lo} to {hi}")
        return worst(x) < 1.0 and worst(x + step) >= 1.0

    return _verdict((share,), "a share between 0.5 and 0.9", test,
                    "one core serves share x total rate; it keeps up while that times 10 ms stays below 1")


def jain_blind_spot(panel, discipline: Any, batch_weight: Any) -> str:
    """04, exercise 3: a discipline and weight at load 0.95 where Jain >= 0.99 yet one p99 is >= 5x the other."""
    def test() -> bool:
        if discipline not in panel.ctrl["discipline"].options:
            raise ValueError(f"a discipline from {panel.ctrl['discipline'].options}")
        s = _run(panel, discipline=discipline, batch_weight=float(batch_weight), load=0.95,
                 placement="least-loaded", skew=0.53)
        p = [v["latency_s"]["p99"] for v in s["streams"].values()]
        return s["fairness_jain"] >= 0.99 and max(p) >= 5 * min(p)

    return _verdict((discipline, batch_weight), "a discipline and a weight", test,
                    "Jain reads throughput / weight; which discipline changes waits without changing throughput?")


def reload_and_overcommit(panel, reload_ms: Any, overcommit_gib: Any) -> str:
    """05, exercise 1: one model's reload (ms, within 2%) and the overcommit at 32 GiB with all three in use (GiB)."""
    sc = rs.residency_scenario(32)
    weights = [m.weights_bytes for m in sc.models]
    target_ms = rs.reload_seconds(weights[0], sc.hardware.hbm_bandwidth_bytes_per_s) * 1e3
    target_gib = rs.overcommit_bytes(weights, sc.hardware.hbm_capacity_bytes) / GIB

    def test() -> bool:
        return _close(reload_ms, target_ms, 0.02) and abs(float(overcommit_gib) - target_gib) < 0.01

    return _verdict((reload_ms, overcommit_gib), "two numbers: ms and GiB", test,
                    "reload = weights bytes / HBM bandwidth (1 GiB = 2**30 bytes); "
                    "overcommit = sum of weights - capacity")


def smallest_hbm_without_reloads(panel, gib: Any) -> str:
    """05, exercise 2: the smallest HBM capacity on the panel's slider with no reloads at all (a run decides)."""
    step = panel.ctrl["hbm_gib"].step

    def loads(capacity: int) -> int:
        return (_run(panel, hbm_gib=capacity)["residency"] or {}).get("loads", 0)

    def test() -> bool:
        g = int(gib)
        if g != float(gib) or not panel.ctrl["hbm_gib"].min <= g <= panel.ctrl["hbm_gib"].max:
            raise ValueError("a whole number of GiB on the slider")
        return loads(g) == 0 and loads(g - step) > 0

    return _verdict((gib,), "a whole number of GiB", test,
                    "add up the weights of the models that must stay resident at once")


def reload_slowdown(panel, factor: Any) -> str:
    """05, exercise 3: how many times longer a reload (demand 1.0) runs beside three batches of demand 0.3."""
    target = rs.slowdowns([1.0, 0.3, 0.3, 0.3])[0]

    def hint() -> str:
        if _close(factor, 1.9, 0.05):
            return "1.9 is the total demand; HBM is shared max-min fairly, so find the level theta first"
        return "find theta with min(1, theta) + 3 min(0.3, theta) = 1; the reload runs at theta of its own speed"

    verdict = _verdict((factor,), "a factor (a number)", lambda: _close(factor, target, 0.03), "")
    return f"not yet: {hint()}" if verdict == "not yet: " else verdict

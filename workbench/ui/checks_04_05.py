"""Exercise checkers for chapters 04 (fairness and placement) and 05 (memory residency).

Same contract as :mod:`workbench.ui.exercises`: "right", "not yet: <hint>" or "not
answered yet", and a checker never moves the panel it reads (``_run`` runs the panel's
model headless). ``tests/test_checks_04_05.py`` is the instructor's key.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from workbench.analysis import fairness as fa
from workbench.analysis import queueing as q
from workbench.analysis import residency_stats as rs
from workbench.pipeline import run_scenario
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


def jain_blind_spot(panel, load: Any) -> str:
    """04, exercise 3: under strict priority (least-loaded, share 0.53, batch weight 1), the smallest utilisation
    target on the slider at which batch's p99 is at least five times interactive's, while Jain's index stays
    above 0.99 (a run at the answer and one step below decides)."""
    step = panel.ctrl["load"].step

    def ratio_and_jain(x: float) -> tuple[float, float]:
        s = _run(panel, discipline="priority", batch_weight=1.0, load=round(x, 2), placement="least-loaded", skew=0.53)
        p = [v["latency_s"]["p99"] for v in s["streams"].values()]
        return max(p) / min(p), s["fairness_jain"]

    def test() -> bool:
        x, lo, hi = float(load), panel.ctrl["load"].min, panel.ctrl["load"].max
        if not lo <= x <= hi:
            raise ValueError(f"a utilisation target on the slider, {lo} to {hi}")
        here, below = ratio_and_jain(x), ratio_and_jain(x - step)
        return here[0] >= 5 and here[1] > 0.99 and below[0] < 5

    return _verdict((load,), "a utilisation target (a number such as 0.8)", test,
                    "the batch class's wait carries 1/(1 - sigma_2): raise the load in small steps and watch the two "
                    "p99s; Jain's index will not move")


HOST_LINK_BYTES_PER_S = 64e9  # 05, exercise 1: a PCIe 5 x16 host link, each way
QUANTISED_EMBED_GIB = 6  # 05, exercise 2: the embed model quantised (the drill's fix)
OTHER_DEMANDS = (0.2, 0.3, 0.4)  # 05, exercise 3: the three other cores' bandwidth demands


def reload_over_link(panel, reload_ms: Any, hbm_share: Any) -> str:
    """05, exercise 1: one model's reload over a 64 GB/s host link (ms, within 2%) and the share of HBM bandwidth
    that copy draws (within 0.005)."""
    sc = rs.residency_scenario(32)
    weights = sc.models[0].weights_bytes
    target_ms = rs.reload_seconds(weights, HOST_LINK_BYTES_PER_S) * 1e3
    target_share = HOST_LINK_BYTES_PER_S / sc.hardware.hbm_bandwidth_bytes_per_s

    def test() -> bool:
        return _close(reload_ms, target_ms, 0.02) and abs(float(hbm_share) - target_share) <= 0.005

    return _verdict((reload_ms, hbm_share), "two numbers: ms and a share", test,
                    "the copy is limited by the slower side: 12 GiB (12 x 2**30 bytes) over the link's bytes/s; "
                    "it writes HBM at the link's rate, a small share of HBM's bandwidth")


def smallest_hbm_without_reloads(panel, gib: Any) -> str:
    """05, exercise 2: with the embed model quantised to 6 GiB, the smallest HBM capacity (2 GiB steps) with no
    reloads at all (a run at the answer and one step below decides)."""
    step = panel.ctrl["hbm_gib"].step

    def loads(capacity: int) -> int:
        sc = rs.residency_scenario(capacity, requests=panel.requests)
        models = tuple(dataclasses.replace(m, weights_bytes=QUANTISED_EMBED_GIB * GIB) if m.name == "embed" else m
                       for m in sc.models)
        return (run_scenario(dataclasses.replace(sc, models=models)).residency or {}).get("loads", 0)

    def test() -> bool:
        g = int(gib)
        if g != float(gib) or not panel.ctrl["hbm_gib"].min <= g <= panel.ctrl["hbm_gib"].max:
            raise ValueError("a whole number of GiB on the slider")
        return loads(g) == 0 and loads(g - step) > 0

    return _verdict((gib,), "a whole number of GiB", test,
                    "add up the weights of the models that must stay resident at once, the embed model at 6 GiB")


def reload_slowdown(panel, factor: Any) -> str:
    """05, exercise 3: how many times longer a phase of demand 1.0 runs beside phases of demand 0.2, 0.3 and 0.4."""
    target = rs.slowdowns([1.0, *OTHER_DEMANDS])[0]

    def hint() -> str:
        if _close(factor, 1.9, 0.05):
            return "1.9 is the total demand; HBM is shared max-min fairly, so find the level theta first"
        return ("find theta with min(1, theta) + min(0.2, theta) + min(0.3, theta) + min(0.4, theta) = 1; "
                "the hungry phase runs at theta of its own speed")

    verdict = _verdict((factor,), "a factor (a number)", lambda: _close(factor, target, 0.03), "")
    return f"not yet: {hint()}" if verdict == "not yet: " else verdict

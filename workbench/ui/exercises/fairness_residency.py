"""Exercise checkers for chapters 04 (fairness and placement) and 05 (memory residency).

Same contract as :mod:`workbench.ui.exercises.base`: "right", "not yet: <hint>" or "not
answered yet", and a checker never moves the panel it reads (``_run`` runs the panel's
model headless). ``tests/test_exercises_fairness_residency.py`` is the instructor's key.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from workbench.analysis import fairness as fa
from workbench.analysis import queueing as q
from workbench.analysis import residency_stats as rs
from workbench.pipeline import run_scenario
from workbench.runtime.residency import Residency, link_terms
from workbench.ui.exercises.base import _run, _verdict

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


QUEUE_GAP_S = 0.05  # 05, exercise 1: the third batch asks for model A this long after the first two
QUANTISED_EMBED_GIB = 6  # 05, exercise 2: the embed model quantised (the drill's fix)
OTHER_DEMANDS = (0.2, 0.3, 0.4)  # 05, exercise 3: the three other cores' bandwidth demands


def link_queue_waits_ms() -> tuple[float, float, float]:
    """05, exercise 1, worked by the runtime's own residency: two evicted 12 GiB models A and B asked for at
    t = 0 on two cores, then A again on a third core at ``QUEUE_GAP_S``; each batch's wait for weights (ms)."""
    sc = rs.residency_scenario(32)
    w = sc.models[0].weights_bytes
    res = Residency([2 * w, w, w], 2 * w, link_terms(sc.hardware)[0])  # only the first, a 24 GiB stand-in, fits
    waits = (res.acquire(1, 0.0), res.acquire(2, 0.0), res.acquire(1, QUEUE_GAP_S))
    return tuple(r.total_s * 1e3 for r in waits)


def link_queue_waits(panel, first_ms: Any, second_ms: Any, third_ms: Any) -> str:
    """05, exercise 1: the three batches' waits for weights over the chip's host link (ms, each within 1%)."""
    want = link_queue_waits_ms()
    copy_ms, gap_ms = want[0], QUEUE_GAP_S * 1e3

    def hint() -> str:
        if _close(second_ms, copy_ms, 0.01):
            return "the host link is one DMA path: B's copy starts when A's has finished"
        if _close(third_ms, 0.0, 0.01) or _close(third_ms, copy_ms, 0.01) or _close(third_ms, want[1], 0.01):
            return (f"A's weights are already on their way: the third batch neither runs for free nor copies "
                    f"them again; it waits for the rest of A's load, which started {gap_ms:.0f} ms earlier")
        return ("one copy is 12 GiB (12 x 2**30 bytes) over the link's bytes/s (hardware.host_link_bytes_per_s); "
                "then queue the loads one after another")

    got = (first_ms, second_ms, third_ms)
    verdict = _verdict(got, "three waits in ms", lambda: all(_close(g, t, 0.01) for g, t in zip(got, want)), "")
    return f"not yet: {hint()}" if verdict == "not yet: " else verdict


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
        lo = panel.ctrl["hbm_gib"].min
        if g != float(gib) or not lo <= g <= panel.ctrl["hbm_gib"].max:
            raise ValueError("a whole number of GiB on the slider")
        on_grid = (g - lo) % step == 0  # a capacity the question's 2 GiB steps reach (31 is not one)
        return on_grid and loads(g) == 0 and loads(g - step) > 0

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

"""Exercise checkers of chapters 02 (fusion and memory) and 03 (batching and queues).

Each returns "right", "not yet: <hint>" or "not answered yet" (see
:mod:`workbench.ui.exercises`). Panel exercises run the panel's model headless at fixed
settings (so neither the learner's slider positions nor checking moves anything);
arithmetic exercises compare with the library's own number. ``tests/test_checks_02_03.py``
is the instructor's key.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from workbench.analysis import queueing as q
from workbench.analysis.roofline import plan_points, spill_seconds
from workbench.models import transformer_block
from workbench.ui.exercises import _run, _verdict

FUSION_AT = {"rate": 2400.0, "cores": 4}  # the fusion_memory_bursts scenario's load
BATCHING_AT = {"rate": 1500.0, "policy": "dynamic", "max_batch": 16}


def _spill(panel, sram_mib: float) -> float:
    return _run(panel, fusion="aggressive", attention="naive", sram_mib=float(sram_mib), **FUSION_AT)[
        "spill_bytes_per_request"]


def smallest_sram_without_spill(panel, sram_mib: Any) -> str:
    """02, exercise 1: aggressive + naive at 2,400 req/s on 4 cores: the smallest whole MiB with no spill."""
    def test() -> bool:
        mib = int(sram_mib)
        if mib != sram_mib or not 2 <= mib <= 64:
            raise ValueError("a whole number of MiB on the slider (2 to 64)")
        return _spill(panel, mib) == 0 and all(_spill(panel, m) > 0 for m in range(2, mib))

    return _verdict((sram_mib,), "a whole number of MiB", test,
                    "find the kernel whose weights are streamed: spills end when they can stay resident, "
                    "not when an activation tile fits")


def aggressive_within_p95(panel, attention: Any, sram_mib: Any) -> str:
    """02, exercise 2: aggressive fusion, at most 4 MiB of SRAM, 2,400 req/s on 4 cores, p95 under 2.8 ms."""
    def test() -> bool:
        if attention not in panel.ctrl["attention"].options:
            raise ValueError(f"attention from {panel.ctrl['attention'].options}")
        if float(sram_mib) > 4:
            return False
        s = _run(panel, fusion="aggressive", attention=attention, sram_mib=float(sram_mib), **FUSION_AT)
        return s["latency_s"]["p95"] < 2.8e-3

    return _verdict((attention, sram_mib), "an attention strategy and a SRAM size (MiB, at most 4)", test,
                    "no more SRAM: make the attention tile smaller instead (what does the naive kernel hold whole?)")


def spill_time_ms(answer_ms: Any, hw) -> str:
    """02, exercise 3: the HBM time (ms) of the fused MLP kernel's spill at batch 8 x 1,024 tokens."""
    def test() -> bool:
        mlp = plan_points(transformer_block(1024, 16), "aggressive", {"batch": 8, "seq": 1024}, hw, "naive")[-1]
        expected = spill_seconds(mlp.cost.spill_bytes, hw) * 1e3
        return abs(float(answer_ms) - expected) <= 0.02 * expected

    return _verdict((answer_ms,), "a time in ms (a number)", test,
                    "spilled bytes / (spill efficiency x HBM bandwidth); MiB are 2**20 bytes, and the "
                    "efficiency halves the bandwidth")


LITTLE_AT = {"rate": 1200.0, "policy": "dynamic", "max_batch": 16, "max_delay_ms": 4.0}  # 03, exercise 1


def littles_law_depth(panel, mean_waiting: Any) -> str:
    """03, exercise 1: the mean number of requests waiting at 1,200 req/s with a 4 ms window (dynamic, 16), from
    L = lambda W (the panel's run there gives W)."""
    def test() -> bool:
        s = _run(panel, **LITTLE_AT)
        return abs(float(mean_waiting) - s["queue_depth"]["mean"]) <= 0.1 * s["queue_depth"]["mean"]

    return _verdict((mean_waiting,), "a number of requests", test,
                    "L = lambda x W: the arrival rate in req/s times the mean queue wait in seconds, not ms")


def smallest_delay_under_utilisation(panel, max_delay_ms: Any, target: float = 0.8) -> str:
    """03, exercise 2: at 1,500 req/s (dynamic, max batch 16), the smallest max delay (0.25 ms grid) under 80% busy."""
    step = panel.ctrl["max_delay_ms"].step

    def util(d: float) -> float:
        return float(np.mean(_run(panel, max_delay_ms=d, **BATCHING_AT)["cores"]["utilization"]))

    def test() -> bool:
        d = float(max_delay_ms)
        if d < step or abs(d / step - round(d / step)) > 1e-9:
            raise ValueError(f"a delay on the slider's {step} ms grid, above 0")
        return util(d) < target and util(d - step) >= target

    return _verdict((max_delay_ms,), "a delay in ms", test,
                    "a longer window fills bigger batches; each batch pays the 2 ms fixed cost once")


def first_rate_wait_exceeds_service(panel, rate: Any) -> str:
    """03, exercise 3: without batching, the first load (50 req/s grid) whose mean wait exceeds the 2.5 ms service."""
    def wait(r: float) -> float:
        return _run(panel, policy="none", rate=r)["wait_s"]["mean"]

    def test() -> bool:
        r = float(rate)
        if r % 50 or not 100 <= r <= 3000:
            raise ValueError("a load on the slider's 50 req/s grid")
        formula = [q.allen_cunneen_wait(x, 0.0025, 2, 1.0, 0.09) for x in (r - 50, r)]
        return wait(r) > 2.5e-3 >= wait(r - 50) and formula[1] > 2.5e-3 >= formula[0]

    return _verdict((rate,), "a load in req/s", test,
                    "set Allen-Cunneen's wait equal to E[S] = 2.5 ms with c = 2, ca2 = 1, cs2 = 0.09")

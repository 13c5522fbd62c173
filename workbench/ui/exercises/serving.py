"""Exercise checkers of chapter 08 (token-level serving).

Each returns "right", "not yet: <hint>" or "not answered yet" (see :mod:`workbench.ui.exercises.base`).
Arithmetic exercises compare with the serving model's own numbers: exercise 1 with the roofline's
ridge arithmetic (data-sheet peak over bandwidth), exercise 2 with the fitted recompute time the
serving loop charges; the panel exercise runs the panel's model headless (checking never moves a
slider). ``tests/test_exercises_serving.py`` is the instructor's key.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from workbench.analysis.serving_study import swap_vs_recompute, weight_ridge_batch
from workbench.errors import ConfigError
from workbench.serving.cost import IterationCost
from workbench.serving.engine import check_run
from workbench.ui.exercises.base import _run, _verdict

MMA_ROWS_SLACK = 16  # the matrix unit pads rows to 16: an answer within one row group is right
# exercise 4's two targets (s): chunked at 3,072 tokens or more meets both; whole prompts miss ITL p99 (1.50 ms), a
# 256-token chunk misses TTFT p99 (27.6 ms), chunks of 512 to 2,816 tokens miss ITL p99 (up to 3.66 ms at 1,280)
ITL_P99_S, TTFT_P99_S = 1.2e-3, 20e-3


def _cost(scenario) -> IterationCost:
    return IterationCost.of_run(scenario.run)


def _ridge_with(scenario, hbm_factor: float) -> int:
    run = scenario.run
    bandwidth = run.hardware.hbm_bandwidth_bytes_per_s * hbm_factor
    hw = dataclasses.replace(run.hardware, hbm_bandwidth_bytes_per_s=bandwidth)
    return weight_ridge_batch(IterationCost.of(run.model, hw, run.buckets.fusion, run.buckets.generic_slowdown))


def decode_ridge(scenario, batch: Any, hbm_factor: float = 2.0) -> str:
    """08, exercise 1: on a chip with ``hbm_factor`` times the HBM bandwidth (same FLOP/s), the decode batch from
    which the weights' work is compute-bound, from the roofline's ridge point alone."""
    def test() -> bool:
        return abs(float(batch) - _ridge_with(scenario, hbm_factor)) <= MMA_ROWS_SLACK / 2

    return _verdict((batch,), "a number of sequences", test,
                    "each weight byte does 1 FLOP per token in bf16 (2 FLOPs per 2-byte weight): the iteration "
                    "turns compute-bound when its tokens reach peak FLOP/s over HBM bytes/s, and the bytes/s "
                    "changed")


def break_even_link(scenario, gb_per_s: Any, tokens: int = 1500) -> str:
    """08, exercise 2: the host-link bandwidth (GB/s each way) at which swapping a preempted ``tokens``-token
    sequence out and back takes as long as recomputing its prefill alone (the fitted time, as the run charges it)."""
    def test() -> bool:
        ref = swap_vs_recompute(_cost(scenario), tokens, 1.0)  # swap_s at 1 byte/s = the bytes moved
        even = ref["swap_s"] / ref["recompute_s"] / 1e9
        return abs(float(gb_per_s) - even) <= 0.05 * even

    return _verdict((gb_per_s,), "a number of GB/s", test,
                    "swap moves the sequence's K and V out and back (twice its bytes); it breaks even when that "
                    "takes the recompute time (cost.prefill_seconds, the fitted time, not the roofline's): "
                    "bandwidth = 2 x bytes / recompute seconds")


def smallest_cache_accepted(scenario, blocks: Any) -> str:
    """08, exercise 3: the smallest number of KV blocks the library accepts for the scenario's tenants."""
    def test() -> bool:
        n = int(blocks)
        if n != blocks or n < 1:
            raise ValueError("a whole number of blocks")

        def ok(k: int) -> bool:
            try:
                check_run(dataclasses.replace(scenario.run, kv=dataclasses.replace(scenario.run.kv, blocks=k)))
            except ConfigError:
                return False
            return True

        return ok(n) and not ok(n - 1)

    return _verdict((blocks,), "a whole number of blocks", test,
                    "the longest sequence is the longest prompt plus the longest output; count its 16-token "
                    "blocks, then remember the watermark keeps 1 % of all blocks free")


def budget_for_both(panel, chunked: Any, budget: Any) -> str:
    """08, exercise 4: a prefill mode and token budget with ITL p99 <= 1.2 ms and TTFT p99 <= 20 ms at load 1."""
    def test() -> bool:
        if chunked not in (True, False):
            raise ValueError("chunked must be True or False")
        s = _run(panel, chunked=chunked, budget=int(budget), load=1.0, blocks=8192, policy="fcfs",
                 preemption="recompute")
        return s["itl_s"]["p99"] <= ITL_P99_S and s["ttft_s"]["p99"] <= TTFT_P99_S

    return _verdict((chunked, budget), "True or False and a token budget", test,
                    "whole prompts stall decodes; a small chunk makes prompts wait several iterations; "
                    "a middling chunk puts a long iteration in many more gaps")

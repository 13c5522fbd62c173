"""Compile time of the transformer block for 8 buckets (goal: under 50 ms, so widgets can recompile).

Prints the median and best of 20 compiles, each on a fresh plan (no memo carried over),
and the time to cost one batch through a compiled plan. Run: ``make bench``.
"""

from __future__ import annotations

import statistics
import time

from workbench.compiler import CompileOptions, compile_plan
from workbench.hardware import Hardware
from workbench.models import transformer_block


def main() -> None:
    graph, hw = transformer_block(1024, 16), Hardware()
    envelope = {"seq": [64, 128, 192, 256, 384, 512, 768, 1024]}
    times = []
    for _ in range(20):
        t = time.perf_counter()
        plan = compile_plan(graph, hw, envelope, CompileOptions(fusion="elementwise", max_batch=8))
        times.append(time.perf_counter() - t)
    print(f"compile transformer_block, 8 buckets: median {statistics.median(times) * 1e3:.1f} ms, "
          f"best {min(times) * 1e3:.1f} ms (goal: < 50 ms)")
    t = time.perf_counter()
    for size in range(1, 9):
        for seq in range(64, 1025, 64):
            plan.mapping_time(plan.buckets[-1].mapping, size, seq)
    print(f"cost one batch shape through the plan: {(time.perf_counter() - t) / 128 * 1e6:.0f} us")


if __name__ == "__main__":
    main()

"""A cold plan against a warm one (issue 11, item 2): what costing batches inside a run adds.

    python tests/benchmarks/bench_plan_costs.py [--requests 50000] [--repeat 3]

For each built-in plan scenario: compile the plan, then run it cold (every batch shape
costed for the first time), then warm (every cost memoised), and the same cold run with
the readable Python cost model (:mod:`workbench.compiler.cost`) in place of the compiled
one (:mod:`workbench.compiler.cost_table`) as the peer. CPU time, best of ``--repeat``,
each repeat on a freshly compiled plan. The compiled loop and cost model are loaded before
timing (their one-off load is start-up, reported by ``bench_simpy.py``).
"""

from __future__ import annotations

import argparse
import dataclasses
import time

from workbench.compiler import plan as plan_module
from workbench.pipeline import compile_scenario, run_scenario
from workbench.scenario import builtin_scenarios, load_scenario


def timed(sc, python_costs: bool) -> tuple[float, float, float]:
    """(compile, cold run, warm run) CPU seconds."""
    plan_module._NUMBA = not python_costs and plan_module.importlib.util.find_spec("numba") is not None
    t0 = time.process_time()
    plan = compile_scenario(sc)
    t1 = time.process_time()
    run_scenario(sc, plan)
    t2 = time.process_time()
    run_scenario(sc, plan)
    t3 = time.process_time()
    return t1 - t0, t2 - t1, t3 - t2


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=50_000)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    warmup = dataclasses.replace(load_scenario("drift_magnitude"), requests=2000)
    run_scenario(warmup, compile_scenario(warmup))  # load numba and both caches before timing
    print(f"CPU ms, best of {a.repeat}, {a.requests} requests; cold/warm = cold run over warm run")
    print(f"{'scenario':<24} {'compile':>8} {'cold':>8} {'warm':>8} {'cold/warm':>10} "
          f"{'cold, Python costs':>19} {'speed-up':>9}")
    for name in builtin_scenarios():
        sc = load_scenario(name)
        if sc.model is None:
            continue
        sc = dataclasses.replace(sc, requests=a.requests)
        fast = [min(x) for x in zip(*(timed(sc, False) for _ in range(a.repeat)), strict=True)]
        slow = [min(x) for x in zip(*(timed(sc, True) for _ in range(a.repeat)), strict=True)]
        print(f"{name:<24} {fast[0] * 1e3:>8.1f} {fast[1] * 1e3:>8.1f} {fast[2] * 1e3:>8.1f} "
              f"{fast[1] / fast[2]:>9.2f}x {slow[1] * 1e3:>19.1f} {slow[1] / fast[1]:>8.1f}x", flush=True)
    plan_module._NUMBA = plan_module.importlib.util.find_spec("numba") is not None


if __name__ == "__main__":
    main()

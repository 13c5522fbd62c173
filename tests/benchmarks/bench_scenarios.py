"""Requests per second of every built-in scenario through its loop (CPU time, best of N).

    python tests/benchmarks/bench_scenarios.py [--requests 20000] [--repeat 3]

Plans are compiled once before timing (a warm plan), so the figure is the loop, the
trace assembly and the cost look-ups of the run itself.
"""

from __future__ import annotations

import argparse
import dataclasses
import time

from workbench.pipeline import run_scenario, service_model
from workbench.scenario import builtin_scenarios, load_scenario


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=20_000)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    print(f"{'scenario':<24} {'req/s':>10}  (CPU time, best of {a.repeat}, {a.requests} requests)")
    for name in builtin_scenarios():
        sc = dataclasses.replace(load_scenario(name), requests=a.requests)
        model = service_model(sc)
        run_scenario(sc, model)  # warm the plan's cost memo
        best = min(_timed(sc, model) for _ in range(a.repeat))
        print(f"{name:<24} {a.requests / best:>10.0f}")


def _timed(sc, model) -> float:
    t = time.process_time()
    run_scenario(sc, model)
    return time.process_time() - t


if __name__ == "__main__":
    main()

"""Requests per second of every built-in scenario: in the loop, and end to end (CPU time, best of N).

    python tests/benchmarks/bench_scenarios.py [--requests 1000000] [--repeat 3]

*loop* is the event loop that produces the run's columns (the compiled loop, the FIFO fast
path or the reference loop, whichever the engine picks), with the cost look-ups it asks for
on the way; *end to end* is ``run_scenario``: workload, classification, loop, trace assembly.
Plans are compiled once before timing (a warm plan); metrics are not included. Issue 11's
goals: 5 M req/s in the loop and 2 M req/s end to end at 1 M requests.
"""

from __future__ import annotations

import argparse
import dataclasses
import time

from workbench.pipeline import run_scenario, service_model
from workbench.runtime import compiled, engine
from workbench.scenario import builtin_scenarios, load_scenario

LOOPS = {"compiled": (compiled, "run_compiled"), "fastpath": (engine, "run_fifo"), "reference": (engine, "run_events")}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    spent = {"s": 0.0}
    for module, name in LOOPS.values():  # time whichever loop the engine calls
        setattr(module, name, _timed_loop(getattr(module, name), spent))
    print(f"{'scenario':<24} {'loop M req/s':>13} {'end to end':>11}  (CPU time, best of {a.repeat}, "
          f"{a.requests:,} requests)")
    for name in builtin_scenarios():
        sc = load_scenario(name)
        if not hasattr(sc, "streams"):
            continue  # token-level serving: tests/benchmarks/bench_serving.py
        sc = dataclasses.replace(sc, requests=a.requests)
        model = service_model(sc)
        run_scenario(sc, model)  # warm the plan's cost memo
        loop, total = [], []
        for _ in range(a.repeat):
            spent["s"] = 0.0
            t = time.process_time()
            run_scenario(sc, model)
            total.append(time.process_time() - t)
            loop.append(spent["s"])
        print(f"{name:<24} {a.requests / min(loop) / 1e6:>13.2f} {a.requests / min(total) / 1e6:>11.2f}")


def _timed_loop(fn, spent: dict):
    def timed(*args, **kwargs):
        t = time.process_time()
        try:
            return fn(*args, **kwargs)
        finally:
            spent["s"] += time.process_time() - t
    return timed


if __name__ == "__main__":
    main()

"""The event loops side by side on every built-in scenario (CPU time, best of N).

    python tests/benchmarks/bench_loops.py [--requests 200000] [--repeat 3] [--only NAME,...] [--no-python]

For each scenario: requests per second of the readable Python loop (``loop.run_events``),
of the compiled loop (``compiled.run_compiled``, when numba is installed and the scenario
is covered), their ratio, and end to end (requests generated, classified, looped, trace
assembled: ``simulate``) with whichever loop the engine picks. Plans are compiled once and
warmed before timing, so the figures are the run, not the compiler. CPU time (``process_time``),
best of N: wall figures swing on a shared machine. ``--no-python`` leaves the Python loop out
(its column reads nan): at a million requests it takes most of the run.
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from functools import partial

from workbench.pipeline import service_model
from workbench.runtime.engine import Engine, simulate
from workbench.runtime.loop import run_events
from workbench.scenario import builtin_scenarios, load_scenario


def best_cpu(fn, repeat: int) -> float:
    """Fastest CPU time (s) of ``repeat`` calls of ``fn``."""
    best = float("inf")
    for _ in range(repeat):
        t = time.process_time()
        fn()
        best = min(best, time.process_time() - t)
    return best


def loop_only(sc, model, requests, loop: str, repeat: int) -> float:
    """CPU seconds of one run's loop alone (best of ``repeat``): engine set-up subtracted, trace not built."""
    from workbench.runtime import compiled

    run = {"python": run_events, "compiled": compiled.run_compiled}[loop]
    setup = best_cpu(partial(Engine, sc, model, requests), repeat)
    return best_cpu(lambda: run(Engine(sc, model, requests)), repeat) - setup


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=200_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", default="")
    ap.add_argument("--no-python", action="store_true", help="skip the readable Python loop")
    a = ap.parse_args()
    names = a.only.split(",") if a.only else builtin_scenarios()
    print(f"req/s, CPU time, best of {a.repeat}, {a.requests} requests per run (plans warm)")
    print(f"{'scenario':<24} {'python loop':>12} {'compiled':>12} {'ratio':>7} {'end to end':>12}  loop taken")
    for name in names:
        sc = dataclasses.replace(load_scenario(name), requests=a.requests)
        model = service_model(sc)
        simulate(sc, model)  # warm the plan's cost memo (and load the compiled loop)
        eng = Engine(sc, model)
        py = float("nan") if a.no_python else loop_only(sc, model, eng.requests, "python", a.repeat)
        cp = loop_only(sc, model, eng.requests, "compiled", a.repeat) if eng.chosen_loop() == "compiled" \
            else float("nan")
        e2e = best_cpu(partial(simulate, sc, model), a.repeat)
        n = a.requests
        print(f"{name:<24} {n / py:>12,.0f} {n / cp:>12,.0f} {py / cp:>6.1f}x {n / e2e:>12,.0f}  {eng.chosen_loop()}")


if __name__ == "__main__":
    main()

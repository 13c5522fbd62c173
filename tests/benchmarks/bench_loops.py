"""The event loops side by side on every built-in scenario (CPU time, best of N).

    python tests/benchmarks/bench_loops.py [--requests 200000] [--repeat 3] [--only NAME,...] [--no-python]

For each scenario: requests per second of the readable Python loop (``loop.run_events``),
of the compiled loop (``compiled.run_compiled``, when numba is installed and the scenario
is covered), their ratio, and end to end (requests generated, classified, looped, trace
assembled: ``simulate``) with whichever loop the engine picks. Plans are compiled once and
warmed before timing, so the figures are the run, not the compiler. CPU time (``process_time``),
best of N: wall figures swing on a shared machine. ``--no-python`` leaves the Python loop out
(its column reads nan): at a million requests it takes most of the run.

Two more columns put the compiled loop's rate beside what a heap alone can do here:
``events/req`` is how many events the compiled loop schedules per request (each push or re-key
of a completion or timer takes a sequence number; arrivals are a sorted array, not events), and
``M ev/s`` its loop rate in those events. The peer, timed in the same run, is a bare compiled heap
(the hold model: pop the earliest event, push it back later; a heap of 8 entries, ordered by
(time, seq) as the loop's): its events per second over a scenario's events per request is the
most requests per second any loop could reach that schedules those events, doing nothing else.
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from functools import partial

import numpy as np

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


def events_per_request(e: Engine) -> float:
    """Events the compiled loop schedules per request (sequence numbers handed out), one run of ``e``."""
    from workbench.runtime.compiled import layout as L
    from workbench.runtime.compiled.driver import _Run  # the driver's loop, to read its counters

    run = _Run(e)
    answer = {L.NEED_FACTORS: run.more_factors, L.NEED_COST: run.add_cost, L.NEED_ROOM: run.grow_blocks,
              L.NEED_COST_ROOM: run.grow_costs}
    while (status := run.step()) != L.DONE:
        answer[status]()
    return int(run.si[L.SEQ]) / len(e.requests)


def heap_peer(events: int = 10_000_000, size: int = 8, repeat: int = 3) -> float:
    """Events per second of a bare compiled binary heap (hold model), CPU time, best of ``repeat``."""
    from numba import njit

    @njit(cache=False)
    def hold(n: int, size: int, incs: np.ndarray) -> float:
        ht, hs = np.empty(size), np.empty(size, np.int64)
        for j in range(size):  # build by sifting each entry up
            i, t = j, incs[j]
            while i > 0 and ht[(i - 1) >> 1] > t:
                ht[i], hs[i] = ht[(i - 1) >> 1], hs[(i - 1) >> 1]
                i = (i - 1) >> 1
            ht[i], hs[i] = t, j
        seq, m = size, len(incs)
        for ev in range(n):  # the earliest event is handled and pushed back later: replace the root, sift down
            t, s = ht[0] + incs[ev % m], seq + 1
            seq = s
            i = 0
            while True:
                c = 2 * i + 1
                if c >= size:
                    break
                if c + 1 < size and (ht[c + 1] < ht[c] or (ht[c + 1] == ht[c] and hs[c + 1] < hs[c])):
                    c += 1
                if not (ht[c] < t or (ht[c] == t and hs[c] < s)):
                    break
                ht[i], hs[i] = ht[c], hs[c]
                i = c
            ht[i], hs[i] = t, s
        return ht[0]

    incs = np.random.default_rng(1).exponential(1.0, 1 << 16)  # pre-drawn: the loop draws nothing per event
    hold(1000, size, incs)
    return events / best_cpu(partial(hold, events, size, incs), repeat)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=200_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", default="")
    ap.add_argument("--no-python", action="store_true", help="skip the readable Python loop")
    a = ap.parse_args()
    names = a.only.split(",") if a.only else builtin_scenarios()
    peer = heap_peer(repeat=a.repeat)
    print(f"req/s, CPU time, best of {a.repeat}, {a.requests} requests per run (plans warm)")
    print(f"peer: a bare compiled heap of 8 entries, {peer / 1e6:.1f} M events/s; 'heap bound' = that over events/req")
    print(f"{'scenario':<24} {'python loop':>12} {'compiled':>12} {'ratio':>7} {'end to end':>12}  loop taken"
          f" {'events/req':>10} {'M ev/s':>7} {'heap bound':>11}")
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
        ev = events_per_request(Engine(sc, model)) if eng.chosen_loop() == "compiled" else float("nan")
        print(f"{name:<24} {n / py:>12,.0f} {n / cp:>12,.0f} {py / cp:>6.1f}x {n / e2e:>12,.0f}  "
              f"{eng.chosen_loop():<10} {ev:>10.2f} {ev * n / cp / 1e6:>7.1f} {peer / ev:>11,.0f}")


if __name__ == "__main__":
    main()

"""Peak memory and time per request of trace assembly and metrics (issue 11, item 3).

    python tests/benchmarks/bench_memory.py [--requests 1000000] [--scenarios mm1,shape_drift]

Each (scenario, N) runs in a fresh subprocess through the library API (the CLI caps a run
at ``workbench.limits.MAX_REQUESTS``; this benchmark sets the request count past the cap
on purpose, to measure 5-10 M requests). The plan is compiled first (warm); then the
loop, the trace assembly (``Engine._trace``) and the metrics (``summarize``) are timed
separately (CPU time). Peak RSS is ``ru_maxrss`` read after each phase, so the table
says in which phase the peak was reached; bytes per request are the whole process's
peak over N (imports and the plan included, so they are an upper bound); "added" is the peak
above the process as it stood after imports and a 10,000-request warm-up run, over N.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import resource
import subprocess
import sys
import time

DEFAULT = "mm1,priority_two_streams,placement_skew,hbm_contention,shape_drift"


def _rss() -> int:
    """Peak resident set size of this process so far (bytes; Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def child(name: str, n: int) -> dict:
    """Run one scenario at ``n`` requests in this process; the figures as a dict."""
    from workbench.analysis.metrics import summarize
    from workbench.pipeline import service_model
    from workbench.runtime import compiled
    from workbench.runtime.engine import Engine
    from workbench.runtime.fastpath import run_fifo
    from workbench.runtime.loop import run_events
    from workbench.scenario import load_scenario

    sc = dataclasses.replace(load_scenario(name), requests=min(n, 10_000))
    object.__setattr__(sc, "requests", n)  # past the CLI's cap, on purpose: the library API
    model = service_model(sc)
    small = dataclasses.replace(sc, requests=10_000)
    Engine(small, model).run()  # warm the plan's cost memo and the compiled loop
    rss0 = _rss()
    t = time.process_time()
    eng = Engine(sc, model)
    loop = eng.chosen_loop()
    cols = (compiled.run_compiled if loop == "compiled" else run_fifo if loop == "fastpath" else run_events)(eng)
    t_loop = time.process_time() - t
    rss_loop = _rss()
    t = time.process_time()
    trace = eng._trace(cols)
    t_trace = time.process_time() - t
    del cols
    rss_trace = _rss()
    t = time.process_time()
    summarize(trace)
    t_metrics = time.process_time() - t
    rss_metrics = _rss()
    return {"scenario": name, "n": n, "loop": loop, "rss0": rss0, "rss_loop": rss_loop, "rss_trace": rss_trace,
            "rss_metrics": rss_metrics, "t_loop": t_loop, "t_trace": t_trace, "t_metrics": t_metrics}


def main() -> None:
    """Run every (scenario, N) in its own subprocess and print the table."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", default="1000000", help="comma-separated request counts")
    ap.add_argument("--scenarios", default=DEFAULT)
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    ap.add_argument("--json", help="also write the rows to this file")
    a = ap.parse_args()
    if a.child:
        print(json.dumps(child(a.child[0], int(a.child[1]))))
        return
    rows = []
    print(f"{'scenario':<22} {'N':>9} {'loop':>9} {'B/req':>6} {'added':>6} {'peak at':>8} "
          f"{'loop us':>8} {'trace us':>9} {'metrics us':>10}")
    for n in (int(x) for x in a.requests.split(",")):
        for name in a.scenarios.split(","):
            out = subprocess.run([sys.executable, __file__, "--child", name, str(n)],
                                 capture_output=True, text=True, check=True)
            r = json.loads(out.stdout.strip().splitlines()[-1])
            rows.append(r)
            phase = next(p for p in ("loop", "trace", "metrics") if r[f"rss_{p}"] == r["rss_metrics"])
            us = 1e6 / n
            added = (r["rss_metrics"] - r["rss0"]) / n  # above the process after imports and a warm-up run
            print(f"{name:<22} {n:>9} {r['loop']:>9} {r['rss_metrics'] / n:>6.0f} {added:>6.0f} {phase:>8} "
                  f"{r['t_loop'] * us:>8.3f} {r['t_trace'] * us:>9.3f} {r['t_metrics'] * us:>10.3f}", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()

"""Where the card's fusion case holds: a sweep over SRAM, bandwidth, cores, d_model, seq, peak and load.

Prints the share of the grid where each half and the whole case hold (with the stated reason:
aggressive's kernels spill and HBM contention is at least a fifth of its tail), the region's
boundaries, the monotonicity check over adjacent grid pairs, the closure of the harm under less
SRAM and less bandwidth, and (``--equal-rate``) each plan's p95 over SRAM x bandwidth at one
request rate. Runs in parallel processes; ``--quick`` uses a small grid. Writes every point to
``--out`` (JSON).

    python tests/benchmarks/bench_region.py [--quick] [--workers 2] [--requests 4000] [--attention flash]
        [--equal-rate] [--out region.json]
"""

from __future__ import annotations

import argparse
import itertools
import json
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor

from workbench.analysis.region import AXES, Point, closure, equal_rate, harm, monotonicity, sweep_line

FULL = dict(sram_mib=(1, 2, 4, 8), hbm_tbps=(0.4, 0.8, 1.6), cores=(2, 4, 8), d_model=(1024, 2048),
            seq=(128, 512), peak_tflops=(50, 100, 200), load=(0.6, 0.8, 0.95))
QUICK = dict(sram_mib=(1, 2, 4), hbm_tbps=(0.4, 0.8, 1.6), cores=(8,), d_model=(2048,), seq=(512,),
             peak_tflops=(100,), load=(0.6, 0.8))
EQUAL_RATE_LINES = [dict(cores=c, d_model=d, seq=s, peak_tflops=100.0, load=0.8)
                    for c, d, s in itertools.product((4, 8), (1024, 2048), (128, 512))]


def _line(args):
    points, requests = args
    return sweep_line(points, requests)


def _equal(args):
    base, requests = args
    return base, equal_rate(Point(**base), FULL["sram_mib"], FULL["hbm_tbps"], requests)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--requests", type=int, default=4000)
    ap.add_argument("--attention", default="flash")
    ap.add_argument("--equal-rate", action="store_true")
    ap.add_argument("--out", default="")
    a = ap.parse_args()
    axes = QUICK if a.quick else FULL
    lines = []
    rest = [k for k in AXES if k != "load"]
    for vals in itertools.product(*(axes[k] for k in rest)):
        base = dict(zip(rest, vals, strict=True))
        lines.append(([Point(**base, load=ld, attention=a.attention) for ld in axes["load"]], a.requests))
    t0 = time.time()
    with ProcessPoolExecutor(a.workers) as ex:
        results = [r for line in ex.map(_line, lines) for r in line]
    n = len(results)
    print(f"fusion case, attention={a.attention}: {n} points, {a.requests} requests per run, {time.time() - t0:.0f} s")
    for key in ("low_half", "high_half", "holds", "overloaded"):
        print(f"  {key:10s} {sum(r[key] for r in results) / n:6.1%}")
    print(f"  {'harm':10s} {sum(harm(r) for r in results) / n:6.1%}  (high-load half, or aggressive overloaded)")
    holds = [r["point"] for r in results if r["holds"]]
    for axis in AXES:
        count = Counter(p[axis] for p in holds)
        total = Counter(r["point"][axis] for r in results)
        print(f"  holds by {axis:11s}", "  ".join(f"{v}: {count[v]}/{total[v]}" for v in sorted(total)))
    print("  monotonicity (adjacent pairs; wrong-way ratio moves beyond the noise: p95 10 %, mean 2 %;"
          " wrong-way flips of the high-load half):")
    for axis, m in monotonicity(results).items():
        print(f"    {axis:9s} pairs {m['pairs']:4d}  wrong ratio {m['wrong_ratio']:3d}"
              f"  wrong flips {m['wrong_flips']:3d}"
              f"  hungrier choice switched {m['hungry_switched']:3d}")
    open_down = closure(results)
    print(f"  closure of the harm (points with the harm whose next tighter value loses it): "
          f"SRAM {len(open_down['sram_mib'])}, bandwidth {len(open_down['hbm_tbps'])} of {sum(map(harm, results))}")
    for axis, pts in open_down.items():
        for p in pts:
            print(f"    {axis}: {p}")
    if a.equal_rate:
        with ProcessPoolExecutor(a.workers) as ex:
            for base, r in ex.map(_equal, [(b, a.requests) for b in EQUAL_RATE_LINES]):
                print(f"  equal rate {base}: {r['rate_rps']:.0f} req/s, p95 rises with more SRAM or bandwidth:"
                      f" {len(r['rises'])}")
    if a.out:
        with open(a.out, "w") as f:
            json.dump(results, f, indent=1, default=float)


if __name__ == "__main__":
    main()

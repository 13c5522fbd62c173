"""Where the card's fusion case holds: a sweep over SRAM, bandwidth, cores, d_model, seq and load.

Prints the share of the grid where each half and the whole case hold (with the stated
reason: spills and HBM contention >= 10 % of aggressive's tail), the region's
boundaries, and the monotonicity check over adjacent grid pairs. Runs in parallel
processes; ``--quick`` uses a small grid. Writes every point to ``--out`` (JSON).

    python tests/benchmarks/bench_region.py [--quick] [--workers 2] [--requests 4000] [--attention naive]
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor

from workbench.analysis.region import AXES, Point, monotonicity, sweep_line

FULL = dict(sram_mib=(4, 8, 16, 32), hbm_tbps=(0.8, 1.6, 3.2), cores=(2, 4, 8), d_model=(512, 1024),
            seq=(512, 1024, 2048), load=(0.6, 0.8, 0.95))
QUICK = dict(sram_mib=(4, 8, 16), hbm_tbps=(0.8, 1.6, 3.2), cores=(4,), d_model=(1024,), seq=(1024,),
             load=(0.6, 0.9))


def _line(args):
    points, requests = args
    return sweep_line(points, requests)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--requests", type=int, default=4000)
    ap.add_argument("--attention", default="naive")
    ap.add_argument("--out", default="")
    a = ap.parse_args()
    axes = QUICK if a.quick else FULL
    lines = []
    import itertools
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
    holds = [r["point"] for r in results if r["holds"]]
    for axis in AXES:
        count = Counter(p[axis] for p in holds)
        total = Counter(r["point"][axis] for r in results)
        print(f"  holds by {axis:9s}", "  ".join(f"{v}: {count[v]}/{total[v]}" for v in sorted(total)))
    print("  monotonicity (adjacent pairs; wrong-way ratio moves beyond the noise: p95 10 %, mean 2 %;"
          " wrong-way flips of the high-load half):")
    for axis, m in monotonicity(results).items():
        print(f"    {axis:9s} pairs {m['pairs']:4d}  wrong ratio {m['wrong_ratio']:3d}"
              f"  wrong flips {m['wrong_flips']:3d}"
              f"  hungrier choice switched {m['hungry_switched']:3d}")
    if a.out:
        with open(a.out, "w") as f:
            json.dump(results, f, indent=1, default=float)


if __name__ == "__main__":
    main()

"""The other mechanisms across regions: shape drift, prediction under contention, pinned skew.

Each is re-run over a small grid around its shipped scenario (same seed per point) and
the script prints where it holds and how often a neighbouring pair moves the wrong way:

* drift: the median sequence length past the envelope at several loads and core counts;
  holds when the hit rate falls below 99 % and p99 grows more than three times as much
  as p50 (relative to the same point with shapes inside the envelope); the hit rate must
  never rise and p99 never fall (> 5 %) as the median grows;
* prediction under contention: offered load x cores x bandwidth; the contention part of
  the prediction error must never fall as load rises or bandwidth falls, and must be
  zero on one core;
* pinned skew: the skewed stream's rate x the cores' share; holds when pinned p99 is at
  least 1.3x least-loaded p99 with core imbalance as the leading tail driver; the ratio
  must never fall (> 5 %) as the skewed load rises.

    python tests/benchmarks/bench_mechanisms.py [--requests 6000]
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools

from workbench.analysis.metrics import summarize
from workbench.pipeline import run_scenario
from workbench.scenario import load_scenario

TOL = 1.05  # noise allowance between neighbouring points of one seed (measured spread of p99 at 6k requests)


def _rate(stream, factor):
    arrivals = dataclasses.replace(stream.arrivals, rate=stream.arrivals.rate * factor)
    return dataclasses.replace(stream, arrivals=arrivals)


def drift(requests: int) -> None:
    base = load_scenario("shape_drift")
    s0 = base.streams[0]
    medians = (150, 250, 350, 450, 600)
    holds = total = wrong = pairs = 0
    for cores, load in itertools.product((2, 4, 8), (0.5, 1.0, 1.5)):
        rows = []
        for med in medians:
            shapes = {"seq": dataclasses.replace(s0.shapes["seq"], median=med, drift=None)}
            sc = dataclasses.replace(base, requests=requests, hardware=dataclasses.replace(base.hardware, cores=cores),
                                     streams=(dataclasses.replace(_rate(s0, load * cores / 4), shapes=shapes),))
            s = summarize(run_scenario(sc))
            rows.append((s["bucket_hit_rate"], s["latency_s"]["p50"], s["latency_s"]["p99"], s["load"]["overloaded"]))
        h0, p50_0, p99_0, _ = rows[0]
        for h, p50, p99, over in rows[1:]:
            total += 1
            if h < 0.99 and not over and (p99 / p99_0 - 1) > 3 * (p50 / p50_0 - 1):
                holds += 1
        for a, b in zip(rows, rows[1:], strict=False):
            pairs += 1
            wrong += int(b[0] > a[0] + 1e-9 or b[2] * TOL < a[2])
    print(f"drift: holds at {holds}/{total} grid points past the first median; wrong-way pairs {wrong}/{pairs}")


def contention(requests: int) -> None:
    base = load_scenario("prediction_contention")
    s0 = base.streams[0]
    wrong = pairs = 0
    grid = {}
    for cores, bw, load in itertools.product((1, 2, 4, 8), (0.4e12, 0.8e12), (0.1, 0.4, 0.7, 1.0)):
        hw = dataclasses.replace(base.hardware, cores=cores, hbm_bandwidth_bytes_per_s=bw)
        sc = dataclasses.replace(base, requests=requests, hardware=hw, streams=(_rate(s0, load * bw / 0.4e12),))
        grid[cores, bw, load] = summarize(run_scenario(sc))["prediction_error"]["all"]["contention"]
    for (cores, bw, load), c in grid.items():
        for nxt in ((cores, bw, round(load + 0.3, 1)), (cores, bw / 2, load)):
            if nxt in grid:
                pairs += 1
                wrong += int(grid[nxt] < c - 0.01)
    one = max(abs(v) for (cores, _, _), v in grid.items() if cores == 1)
    top = max(grid.values())
    print(f"prediction contention: contention part up to {top:.0%}; on one core at most {one:.1e}; "
          f"wrong-way pairs {wrong}/{pairs} (load up or bandwidth down must not lower it by > 1 point)")


def skew(requests: int) -> None:
    base = load_scenario("placement_skew")
    holds = total = wrong = pairs = 0
    for long_factor in (0.5, 1.0, 2.0):
        ratios = []
        for f in (0.6, 0.8, 0.9, 0.95, 1.0):
            streams = (_rate(base.streams[0], f), _rate(base.streams[1], long_factor))
            sc = dataclasses.replace(base, requests=requests, streams=streams)
            pinned = summarize(run_scenario(sc))
            ll = summarize(run_scenario(dataclasses.replace(
                sc, scheduler=dataclasses.replace(sc.scheduler, placement="least-loaded"))))
            r = pinned["latency_s"]["p99"] / ll["latency_s"]["p99"]
            lead = max(pinned["tail_drivers"], key=pinned["tail_drivers"].get)
            total += 1
            holds += int(r > 1.3 and lead in ("core_imbalance", "queueing"))
            ratios.append(r)
        for a, b in zip(ratios, ratios[1:], strict=False):
            pairs += 1
            wrong += int(b * TOL < a)
    print(f"pinned skew: holds at {holds}/{total} points; wrong-way pairs {wrong}/{pairs}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=6000)
    a = ap.parse_args()
    drift(a.requests)
    contention(a.requests)
    skew(a.requests)


if __name__ == "__main__":
    main()

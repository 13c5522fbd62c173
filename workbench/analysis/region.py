"""Where a mechanism holds: sweeps over hardware, model and load, with monotonicity checks.

A mechanism the course teaches must hold for its physical reason across a region of
parameters and move the physical way, not appear at one tuned point. This module
builds the card's fusion case at any grid point (a transformer block on a chip of
``cores`` sharing one HBM, dynamic batching, aggressive fusion against elementwise),
runs it at low and high load with the same seed, and says which half holds and why:

* low load: aggressive has the lower mean (fewer launches, no score round trips);
* high load: aggressive has the worse p95, its kernels spill more than elementwise's and HBM
  contention is at least ``MIN_CONTENTION`` of its tail (the stated reason), and it is not
  simply overloaded.

Load is offered work over the elementwise plan's capacity on this chip (cores busy or
HBM saturated, whichever binds first; :func:`capacity_rps`). :func:`monotonicity` counts adjacent
grid pairs that move the wrong way: less SRAM, less bandwidth or more load must never
make aggressive relatively better (its p95 ratio at high load, its mean ratio at low).
:func:`closure` checks that the harm (aggressive's worse p95 under load, or aggressive
overloaded outright) survives less SRAM and less bandwidth; :func:`equal_rate` that at one
request rate neither plan's p95 rises with more SRAM or bandwidth.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Iterable

import numpy as np

from workbench.analysis.metrics import summarize
from workbench.config import Arrivals, Batching, ModelSpec, Scenario, ShapeDist, Stream
from workbench.hardware import MIB, Hardware
from workbench.pipeline import compile_scenario, run_scenario

AXES = ("sram_mib", "hbm_tbps", "cores", "d_model", "seq", "peak_tflops", "load")
MIN_CONTENTION = 0.20  # share of aggressive's tail that HBM contention must explain (a fifth)
P95_MARGIN = 1.10  # "worse p95": by more than 10 %
LOW_LOAD = 0.05
# a ratio "moves the wrong way" only beyond the noise between two points of one seed: the p95 ratio at 4,000
# requests varies 2-8 % (relative sd) from seed to seed (tests/benchmarks/bench_region.py --noise), so a pair
# difference beyond 10 % is about two of its standard deviations; the mean ratio varies 0.2 %
TOLERANCE = {"p95": 1.10, "mean": 1.02}
# which way each axis makes memory pressure worse: +1 more of it is worse, -1 less of it is worse
PRESSURE = {"sram_mib": -1, "hbm_tbps": -1, "load": +1}
EQUAL_RATE_SLACK = 1 + 1e-9  # at one rate a plan's p95 must not rise with more SRAM or bandwidth (float rounding aside)


@dataclasses.dataclass(frozen=True)
class Point:
    """One grid point of the fusion sweep."""

    sram_mib: float = 8.0
    hbm_tbps: float = 1.6
    cores: int = 4
    d_model: int = 1024
    seq: int = 1024  # median sequence length (lognormal, sigma 0.3)
    load: float = 0.8  # offered load over the elementwise plan's capacity
    attention: str = "flash"  # the compiler's attention strategy (naive: whole score matrices, a naive compiler)
    peak_tflops: float = 50.0  # dense bf16 TFLOP/s per core


def fusion_scenario(p: Point, fusion: str, load: float, requests: int = 6000, seed: int = 11) -> Scenario:
    """The card's fusion case at point ``p``, with fusion level ``fusion`` at offered ``load``."""
    hw = Hardware(cores=p.cores, sram_bytes_per_core=int(p.sram_mib * MIB), hbm_bandwidth_bytes_per_s=p.hbm_tbps * 1e12,
                  launch_s=10e-6, peak_flops_per_core=p.peak_tflops * 1e12)
    top = 2 ** math.ceil(math.log2(p.seq * 3))
    envelope = [top >> i for i in range(4, -1, -1)]
    model = ModelSpec(graph="transformer_block", params={"d_model": p.d_model, "heads": max(p.d_model // 64, 1)},
                      fusion=fusion, attention=p.attention, envelope={"seq": envelope})
    stream = Stream("chat", Arrivals(rate=1.0), shapes={"seq": ShapeDist("lognormal", median=p.seq, sigma=0.3)})
    sc = Scenario(name="fusion_region", seed=seed, requests=requests, hardware=hw, model=model, streams=(stream,),
                  batching=Batching(policy="dynamic", max_batch=8, max_delay_s=0.0005))
    rate = load * capacity_rps(dataclasses.replace(sc, model=dataclasses.replace(model, fusion="elementwise")), p.seq)
    return dataclasses.replace(sc, streams=(dataclasses.replace(stream, arrivals=Arrivals(rate=rate)),))


def capacity_rps(sc: Scenario, seq: int, samples: int = 4096) -> float:
    """Requests per second the scenario's plan serves on full batches: cores or HBM, whichever binds.

    A batch is timed at its largest member's shape, so the capacity averages the batch
    time (and its HBM time) over full batches of shapes drawn from the stream's
    distribution (seeded). With ``cores`` cores and one HBM, the chip serves at most
    ``cores / E[batch time]`` batches per second and at most ``1 / E[HBM time]``.
    """
    plan = compile_scenario(sc)
    size, g = sc.batching.max_batch, plan.options.granule
    dist = sc.streams[0].shapes["seq"]
    rng = np.random.default_rng(0)
    shapes = np.maximum(np.rint(dist.median * np.exp(dist.sigma * rng.standard_normal((samples, size)))), 1)
    keys, counts = np.unique(-(-shapes.max(axis=1).astype(np.int64) // g) * g, return_counts=True)
    run = plan.classify(_requests_of(keys))
    info = run.info["run"]
    cost = np.array([info.cost(int(b), size, int(k))[:2] for b, k in zip(run.bucket, keys, strict=True)])
    mean_batch_s = float(np.dot(cost[:, 0], counts) / counts.sum())
    mean_hbm_s = float(np.dot(cost[:, 0] * cost[:, 1], counts) / counts.sum())  # bytes / bandwidth
    # the chip's roofline: every core busy, or the shared HBM saturated, whichever binds first
    return size / max(mean_batch_s / sc.hardware.cores, mean_hbm_s)


def _requests_of(seq: np.ndarray):
    from workbench.service_model import Requests

    n = len(seq)
    return Requests(arrival_s=np.arange(n, dtype=float), stream=np.zeros(n, dtype=np.int32),
                    shapes={"seq": seq.astype(np.int64)})


def _measure(p: Point, fusion: str, load: float, requests: int, seed: int) -> dict:
    sc = fusion_scenario(p, fusion, load, requests, seed)
    tr = run_scenario(sc)
    s = summarize(tr)
    hbm_s = float((tr.batch_work_s * tr.batch_memory_share).sum())  # isolated HBM seconds of every batch
    return {"hbm_bytes": hbm_s * sc.hardware.hbm_bandwidth_bytes_per_s / max(int(tr.completed.sum()), 1),
            "mean": s["latency_s"]["mean"], "p95": s["latency_s"]["p95"], "spill": s["spill_bytes_per_request"],
            "launches": s["launches_per_request"], "contention": s["tail_drivers"]["memory_contention"],
            "overloaded": bool(s["load"]["overloaded"])}


def fusion_case(p: Point, requests: int = 6000, seed: int = 11, low: dict | None = None) -> dict:
    """Both halves of the fusion case at ``p``, their ratios, and the reason found.

    ``low``: the low-load runs if already measured for the same point at another load.
    """
    out: dict = {"point": dataclasses.asdict(p)}
    low = low or {lvl: _measure(p, lvl, LOW_LOAD, requests, seed) for lvl in ("elementwise", "aggressive")}
    for lvl in ("elementwise", "aggressive"):
        out[f"low_{lvl}"] = low[lvl]
        out[f"high_{lvl}"] = _measure(p, lvl, p.load, requests, seed)
    le, la, he, ha = out["low_elementwise"], out["low_aggressive"], out["high_elementwise"], out["high_aggressive"]
    out["mean_ratio_low"] = la["mean"] / le["mean"]
    out["p95_ratio_high"] = ha["p95"] / he["p95"]
    out["low_half"] = la["mean"] < le["mean"]
    out["overloaded"] = ha["overloaded"]
    # the stated reason: aggressive's kernels spill more than elementwise's, and HBM contention is a fifth or more
    # of its tail
    out["reason"] = ha["spill"] > he["spill"] and ha["contention"] >= MIN_CONTENTION
    out["high_half"] = out["p95_ratio_high"] > P95_MARGIN and out["reason"] and not ha["overloaded"]
    out["holds"] = out["low_half"] and out["high_half"]
    return out


def sweep_line(points: list[Point], requests: int = 6000, seed: int = 11) -> list[dict]:
    """``fusion_case`` for points that differ only in load, sharing their low-load runs."""
    low = None
    out = []
    for p in points:
        r = fusion_case(p, requests, seed, low)
        low = {lvl: r[f"low_{lvl}"] for lvl in ("elementwise", "aggressive")}
        out.append(r)
    return out


def grid(**axes: Iterable) -> list[Point]:
    """Every combination of the given axis values (others at their defaults)."""
    names = list(axes)
    return [Point(**dict(zip(names, vals, strict=True))) for vals in itertools.product(*axes.values())]


def harm(r: dict) -> bool:
    """The high-load harm at a point: aggressive's p95 worse for the stated reason, or aggressive overloaded."""
    return bool(r["high_half"] or (r["overloaded"] and r["p95_ratio_high"] > P95_MARGIN))


def closure(results: list[dict]) -> dict[str, list[dict]]:
    """Per axis (SRAM, bandwidth): the points where the harm holds but the next tighter value of that axis (all
    else equal) loses it. Empty lists: the harm's region is closed downward on the grid."""
    by_key = {tuple(sorted(r["point"].items())): r for r in results}
    out: dict[str, list[dict]] = {}
    for axis in ("sram_mib", "hbm_tbps"):
        values = sorted({r["point"][axis] for r in results})
        out[axis] = []
        for r in results:
            i = values.index(r["point"][axis])
            if not harm(r) or i == 0:
                continue
            q = by_key.get(tuple(sorted(dict(r["point"], **{axis: values[i - 1]}).items())))
            if q is not None and not harm(q):
                out[axis].append(q["point"])
    return out


def equal_rate(p: Point, srams: Iterable[float], bandwidths: Iterable[float], requests: int = 6000,
               seed: int = 11) -> dict:
    """Each plan's p95 over SRAM x bandwidth at ONE request rate: ``p.load`` of the elementwise plan's capacity
    on the tightest chip of the grid. Returns the p95 tables and the steps where a p95 rose with more of
    either (beyond ``EQUAL_RATE_SLACK``, the run's own noise between neighbouring service times)."""
    srams, bandwidths = sorted(srams), sorted(bandwidths)
    tight = dataclasses.replace(p, sram_mib=srams[0], hbm_tbps=bandwidths[0])
    rate = fusion_scenario(tight, "elementwise", p.load, requests, seed).streams[0].arrivals.rate
    table: dict[str, list[list[float]]] = {}
    rises = []
    for lvl in ("elementwise", "aggressive"):
        rows = []
        for sram in srams:
            row = []
            for bw in bandwidths:
                sc = fusion_scenario(dataclasses.replace(p, sram_mib=sram, hbm_tbps=bw), lvl, p.load, requests, seed)
                sc = dataclasses.replace(sc, streams=(dataclasses.replace(
                    sc.streams[0], arrivals=dataclasses.replace(sc.streams[0].arrivals, rate=rate)),))
                row.append(float(summarize(run_scenario(sc))["latency_s"]["p95"]))
            rows.append(row)
        table[lvl] = rows
        for i, j in itertools.product(range(len(srams)), range(len(bandwidths))):
            for di, dj in ((1, 0), (0, 1)):
                if i + di < len(srams) and j + dj < len(bandwidths) \
                        and rows[i + di][j + dj] > rows[i][j] * EQUAL_RATE_SLACK:
                    rises.append({"plan": lvl, "from": (srams[i], bandwidths[j]),
                                  "to": (srams[i + di], bandwidths[j + dj]),
                                  "p95": (rows[i][j], rows[i + di][j + dj])})
    return {"rate_rps": rate, "srams": srams, "bandwidths": bandwidths, "p95": table, "rises": rises}


def monotonicity(results: list[dict]) -> dict[str, dict[str, int]]:
    """Per pressure axis: adjacent pairs compared, ratio moves the wrong way (beyond ``TOLERANCE``), wrong-way flips.

    Along an axis, more pressure (less SRAM, less bandwidth, more load) must never make
    the memory-hungry choice (the fusion level that moves more HBM bytes per request at
    both points of the pair) look relatively better: its p95 ratio at high load and its
    mean ratio at low load must not fall. Pairs where the hungrier choice changes are
    counted apart. A wrong-way flip is the high-load half turning off under more pressure
    while aggressive is the hungry choice.
    """
    by_key = {tuple(sorted(r["point"].items())): r for r in results}
    report: dict[str, dict[str, int]] = {}

    def hungry(r: dict, tag: str) -> str:
        return "aggressive" if r[f"{tag}_aggressive"]["hbm_bytes"] > r[f"{tag}_elementwise"]["hbm_bytes"] \
            else "elementwise"

    def ratio(r: dict, tag: str, stat: str, h: str) -> float:
        other = "elementwise" if h == "aggressive" else "aggressive"
        return r[f"{tag}_{h}"][stat] / r[f"{tag}_{other}"][stat]

    for axis, sign in PRESSURE.items():
        values = sorted({r["point"][axis] for r in results})
        pairs = wrong_ratio = wrong_flip = switched = 0
        for r in results:
            i = values.index(r["point"][axis])
            if i + 1 >= len(values):
                continue
            q = by_key.get(tuple(sorted(dict(r["point"], **{axis: values[i + 1]}).items())))
            if q is None:
                continue
            hi, lo = (q, r) if sign > 0 else (r, q)  # hi: the more-pressure point of the pair
            pairs += 1
            for tag, stat in (("high", "p95"), ("low", "mean")):
                if tag == "low" and axis == "load":
                    continue
                h = hungry(hi, tag)
                if h != hungry(lo, tag):
                    switched += 1
                elif ratio(hi, tag, stat, h) < ratio(lo, tag, stat, h) / TOLERANCE[stat]:
                    wrong_ratio += 1
            agg_hungry = hungry(hi, "high") == hungry(lo, "high") == "aggressive"
            wrong_flip += int(agg_hungry and lo["high_half"] and not hi["high_half"] and not hi["overloaded"])
        report[axis] = {"pairs": pairs, "wrong_ratio": wrong_ratio, "wrong_flips": wrong_flip,
                        "hungry_switched": switched}
    return report

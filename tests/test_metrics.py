"""Metrics: Jain's index, tail drivers that name the right cause, overload, and the memory budget."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import textwrap

import numpy as np
from helpers import scenario

from workbench.analysis.metrics import (
    jain,
    stats,
    summarize,
    tail_drivers,
    wait_profile,
    window,
)
from workbench.config import Batching, Scheduler, Service
from workbench.pipeline import run_scenario
from workbench.runtime.engine import simulate
from workbench.scenario import load_scenario


def test_jain_index_known_values():
    assert jain(np.array([1.0, 1.0, 1.0])) == 1.0
    assert np.isclose(jain(np.array([1.0, 0.0, 0.0, 0.0])), 0.25)
    assert np.isclose(jain(np.array([2.0, 1.0])), 9 / 10)


def test_stats_percentiles():
    s = stats(np.arange(1, 101, dtype=float))
    assert s["p50"] == 50.5 and s["mean"] == 50.5 and np.isclose(s["p99"], 99.01)


def test_tail_drivers_sum_to_one_and_name_the_cause():
    skew = load_scenario("pinned_skew")
    skew = dataclasses.replace(skew, requests=20_000)
    pinned = tail_drivers(simulate(skew))
    balanced = tail_drivers(simulate(dataclasses.replace(skew, scheduler=Scheduler(placement="least-loaded"))))
    assert np.isclose(sum(pinned.values()), 1.0) and np.isclose(sum(balanced.values()), 1.0)
    assert pinned["core_imbalance"] > 0.5 and balanced["core_imbalance"] == 0.0
    mem = dataclasses.replace(load_scenario("hbm_contention"), requests=20_000)
    assert tail_drivers(simulate(mem))["memory_contention"] > 0.2
    no_mem = dataclasses.replace(mem, service=dataclasses.replace(mem.service, memory_share=0.0))
    assert tail_drivers(simulate(no_mem))["memory_contention"] == 0.0
    # residency: a cold model's reloads over the host link stall batches on their cores; the tail is mostly the
    # requests queued behind them (queueing), the rest the batches' own waits for weights; the copies draw 4 % of
    # HBM, so no contention; with room for all three models neither
    res = dataclasses.replace(load_scenario("memory_residency"), requests=20_000)
    drivers = tail_drivers(simulate(res))
    assert drivers["memory_residency"] > 0.03 and drivers["queueing"] > 0.8 and drivers["memory_contention"] < 0.01
    roomy = dataclasses.replace(res, hardware=dataclasses.replace(res.hardware, hbm_capacity_bytes=36 << 30))
    assert tail_drivers(simulate(roomy))["memory_residency"] == 0.0


def test_priority_starves_the_low_stream_and_weighted_does_not():
    sc = dataclasses.replace(load_scenario("priority_two_streams"), requests=40_000)
    strict = summarize(simulate(sc))["streams"]
    fair = summarize(simulate(dataclasses.replace(sc, scheduler=Scheduler(discipline="weighted"))))["streams"]
    assert strict["batch"]["latency_s"]["p99"] > 5 * strict["interactive"]["latency_s"]["p99"]
    assert fair["batch"]["latency_s"]["p99"] < strict["batch"]["latency_s"]["p99"]
    assert fair["interactive"]["latency_s"]["p99"] > strict["interactive"]["latency_s"]["p99"]


def test_batching_trades_queue_wait_for_throughput():
    base = scenario(rates=(900.0,), cores=2, requests=30_000,
                    service=Service(law="lognormal", base_s=0.002, per_item_s=0.0005, cv=0.3))
    short = summarize(simulate(dataclasses.replace(base, batching=Batching("dynamic", 16, 0.0005))))
    long = summarize(simulate(dataclasses.replace(base, batching=Batching("dynamic", 16, 0.004))))
    assert long["batch_size"]["mean"] > short["batch_size"]["mean"]
    assert long["wait_s"]["p50"] > short["wait_s"]["p50"]
    assert np.mean(long["cores"]["utilization"]) < np.mean(short["cores"]["utilization"])  # less work per request


def test_wait_profile_has_percentiles_per_window():
    tr = simulate(scenario(rates=(0.9,), requests=20_000))
    prof = wait_profile(tr, windows=10)
    assert len(prof["t_s"]) == 10 and (prof["p99"] >= prof["p50"]).all()


def test_a_million_requests_fit_in_a_gigabyte():
    """The general loop (two streams, strict priority, batching) on 10^6 requests, in a fresh process."""
    code = textwrap.dedent("""
        import dataclasses
        from workbench.scenario import load_scenario
        from workbench.runtime.engine import simulate
        from workbench.analysis.metrics import summarize
        sc = load_scenario("priority_two_streams")
        sc = dataclasses.replace(sc, requests=1_000_000, batching=dataclasses.replace(sc.batching, policy="dynamic"))
        s = summarize(simulate(sc))
        assert s["completed"] == 1_000_000
        import sys, re
        from workbench import aot
        # this process's own high-water mark: VmHWM of its memory map; getrusage's ru_maxrss would also hold the
        # parent's (pytest's) size at the fork, which Linux carries across the exec
        hwm = re.search(r"VmHWM:\\s+(\\d+) kB", open("/proc/self/status").read()).group(1)
        print(hwm, "numba" in sys.modules, aot.built())
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    peak, jit, built = r.stdout.split()
    peak_kib = int(peak)  # which path ran, for a failure to say: numba's JIT compiles in the process (LLVM's memory)
    assert peak_kib < 1024 * 1024, f"peak RSS {peak_kib / 1024:.0f} MiB (numba imported: {jit}, AOT build: {built})"


def test_line_slope_is_the_least_squares_slope_by_hand():
    """Four points by hand: x = 0..3, y = 1, 3, 2, 6 -> slope = sum(dx dy) / sum(dx^2) = 7 / 5 = 1.4."""
    from workbench.analysis.metrics import line_slope
    assert line_slope(np.array([0.0, 1.0, 2.0, 3.0]), np.array([1.0, 3.0, 2.0, 6.0])) == 7 / 5
    assert line_slope(np.array([2.0, 2.0, 2.0]), np.array([1.0, 5.0, 9.0])) == 0.0  # no spread in x: no slope


def test_summary_shortcuts_give_the_plain_figures():
    """One stream's figures reused from the run's, the tail cut taken from ``stats``, the batch histogram by a
    count: equal, to the bit, to computing each plainly."""
    for name in ("shape_drift", "priority_two_streams", "mm1"):
        trace = run_scenario(dataclasses.replace(load_scenario(name), requests=5_000))  # shape_drift: a plan
        s = summarize(trace)
        ok = trace.measured & trace.completed
        lat = trace.latency_s[ok]
        for i, st in enumerate(trace.scenario.streams):
            mine = trace.stream[ok] == i
            assert s["streams"][st.name]["latency_s"] == stats(lat[mine])
            assert s["streams"][st.name]["wait_s"] == stats(trace.wait_s[ok][mine])
        assert s["tail_drivers"] == tail_drivers(trace)
        sizes, counts = np.unique(trace.batch_size, return_counts=True)
        assert s["batch_size"]["histogram"] == {str(int(k)): int(v) for k, v in zip(sizes, counts, strict=True)}


def test_summary_row_shortcuts_give_the_plain_figures():
    """The window's end from the latencies' own gather, completions by stream without a selection when all
    completed, contention of the tail batches only, the makespan without the all-NaN rejection column, the
    queue depth's mean and max from the packed-key curve: each equal, to the bit, to the plain computation."""
    for name, warmup in (("mm1", 0.0), ("mm1", 0.1), ("priority_two_streams", 0.0), ("shape_drift", 0.1),
                         ("memory_residency", 0.0), ("hbm_contention", 0.0)):
        sc = dataclasses.replace(load_scenario(name), requests=4_000, warmup_fraction=warmup)
        trace = run_scenario(sc)
        s = summarize(trace)
        t0, t1 = window(trace)
        ok = trace.measured & trace.completed
        assert s["throughput_rps"] == float(np.count_nonzero(ok) / max(t1 - t0, 1e-300))
        for i, st in enumerate(sc.streams):
            done = int(np.count_nonzero(trace.completed & (trace.stream == i)))
            assert s["streams"][st.name]["completed"] == done
        ends = [trace.batch_end_s.max(), np.nanmax(trace.rejected_s) if np.isfinite(trace.rejected_s).any() else 0.0]
        assert trace.makespan_s == float(max(ends))  # the rejection column scanned, as makespan_s used to
        b = np.arange(len(trace.batch_end_s))[::3]
        assert trace.contention_of(b).tobytes() == trace.batch_contention_s[b].tobytes()
        t, depth = trace.queue_depth()
        dt = np.diff(t, append=t[-1])
        held = dt > 0
        assert s["queue_depth"]["max"] == (int(depth.max(where=held, initial=0)) if held.any() else 0)
        assert s["queue_depth"]["mean"] == float((dt * depth).sum() / max(t[-1] - t[0], 1e-300))

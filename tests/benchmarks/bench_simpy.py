"""Speed against the SimPy peer, on the same two models and parameters, in one process.

Prints requests simulated per second for the workbench engine and for the idiomatic
SimPy peer (``simpy_peer.py``), their ratio, and both p99 latencies with a 95%
interval from batch means over 20 consecutive blocks of requests, so "the p99s agree"
can be read against the noise of the run. Also times the widget-sized run (20,000
requests). Run: ``make bench`` or ``python tests/benchmarks/bench_simpy.py [N]``.
"""

from __future__ import annotations

import dataclasses
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from simpy_peer import dynamic_batcher, mmc_fifo  # noqa: E402

from workbench.config import Arrivals, Batching, Scenario, Service, Stream  # noqa: E402
from workbench.hardware import Hardware  # noqa: E402
from workbench.pipeline import service_model  # noqa: E402
from workbench.runtime.engine import Engine, simulate  # noqa: E402
from workbench.runtime.loop import run_events  # noqa: E402
from workbench.scenario import load_scenario  # noqa: E402


def p99_interval(latency: np.ndarray, blocks: int = 20) -> tuple[float, float]:
    """p99 of all requests, and the half-width of a 95% interval from block p99s."""
    per_block = [np.percentile(b, 99) for b in np.array_split(latency, blocks)]
    return float(np.percentile(latency, 99)), float(1.96 * np.std(per_block, ddof=1) / np.sqrt(blocks))


def best_of(fn, repeats: int = 3):
    """Fastest of a few runs (s) and the last result: the machine is shared and noisy."""
    best, out = float("inf"), None
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def report(name: str, n: int, ours: tuple, peer: tuple) -> None:
    (t_ours, lat_ours), (t_peer, lat_peer) = ours, peer
    p_o, h_o = p99_interval(lat_ours)
    p_p, h_p = p99_interval(lat_peer)
    print(f"{name}: workbench {n / t_ours:,.0f} req/s, SimPy {n / t_peer:,.0f} req/s, "
          f"ratio {t_peer / t_ours:.1f}x")
    print(f"    p99 workbench {p_o:.4f} s +/- {h_o:.4f}, SimPy {p_p:.4f} s +/- {h_p:.4f}, "
          f"difference {p_o - p_p:+.4f} s (combined 95% half-width {np.hypot(h_o, h_p):.4f})")


def main(n: int = 200_000) -> None:
    seed = 11
    # model 1: FIFO M/M/4 without batching, rho = 0.8
    rate, service_s, cores = 3.2, 1.0, 4
    sc = Scenario(streams=(Stream("s", Arrivals(rate=rate)),), seed=seed, requests=n, warmup_fraction=0.0,
                  hardware=Hardware(cores=cores), service=Service(law="exponential", base_s=service_s))
    ours = best_of(lambda: simulate(sc).latency_s, repeats=5)
    peer = best_of(lambda: mmc_fifo(rate, service_s, cores, n, seed))
    report("M/M/4 FIFO", n, ours, peer)
    # model 2: Poisson into the dynamic batcher on 4 cores
    rate, base_s, per_item_s, max_batch, max_delay_s = 20.0, 0.2, 0.05, 8, 0.05
    sc = Scenario(streams=(Stream("s", Arrivals(rate=rate)),), seed=seed, requests=n, warmup_fraction=0.0,
                  hardware=Hardware(cores=cores),
                  service=Service(law="exponential", base_s=base_s, per_item_s=per_item_s),
                  batching=Batching(policy="dynamic", max_batch=max_batch, max_delay_s=max_delay_s))
    ours = best_of(lambda: simulate(sc).latency_s, repeats=5)
    peer = best_of(lambda: dynamic_batcher(rate, base_s, per_item_s, cores, max_batch, max_delay_s, n, seed))
    report("dynamic batcher, 4 cores", n, ours, peer)
    # the same model through the general event loop (what priorities, pinning or contention use):
    # the readable Python loop, and its compiled form (numba), each with its trace assembled
    engine = Engine(sc)
    general = best_of(lambda: engine._trace(run_events(Engine(sc))).latency_s)
    report("  same, general event loop (Python)", n, general, peer)
    if Engine(sc, loop="compiled").chosen_loop() == "compiled":
        general = best_of(lambda: simulate(sc, loop="compiled").latency_s)
        report("  same, general event loop (compiled)", n, general, peer)
    # the notebooks' widget budget: 20,000 requests
    small = Scenario(streams=sc.streams, seed=seed, requests=20_000, hardware=sc.hardware, service=sc.service,
                     batching=sc.batching)
    t, _ = best_of(lambda: simulate(small), repeats=5)
    print(f"widget run: 20,000 requests (dynamic batcher) in {t * 1e3:.1f} ms (goal: < 50 ms)")
    # the same budget through compiled plans and the general loop (plans compiled once, as the panels do)
    for name in ("shape_drift", "fusion_memory_bursts", "placement_skew", "priority_two_streams"):
        sc = dataclasses.replace(load_scenario(name), requests=20_000)
        model = service_model(sc)
        t, _ = best_of(lambda sc=sc, model=model: simulate(sc, model))
        print(f"widget run: 20,000 requests of {name} in {t * 1e3:.0f} ms ({Engine(sc, model).chosen_loop()} loop)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200_000)

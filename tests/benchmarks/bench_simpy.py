"""Speed against the SimPy peer, on the same three models and parameters, in one process and as whole processes.

In one process: requests simulated per second for the workbench engine and for the
idiomatic SimPy peer (``simpy_peer.py``), their ratio, and both p99 latencies with a
95% interval from batch means over 20 consecutive blocks of requests, so "the p99s
agree" can be read against the noise of the run. The models: FIFO M/M/4, Poisson into
a dynamic batcher on 4 cores (each through the loop the engine picks, and the batcher
also through the Python and compiled general loops), and two
classes under strict non-preemptive priority on 4 cores (needs the general loop),
whose mean waits are checked against Cobham's formula on both sides.

As whole processes: a ``workbench run SCENARIO.toml --json`` process against a
``python simpy_peer.py MODEL N`` process at 400,000 requests, both timed the same way
(wall clock around the child, and the child's CPU time from ``getrusage``), best of 3,
with the ratio of each and the two mean latencies. Also times the widget-sized run
(20,000 requests). Figures only, no pass/fail.
Run: ``make bench`` or ``python tests/benchmarks/bench_simpy.py [N_IN_PROCESS [N_WHOLE_PROCESS]]``.
"""

from __future__ import annotations

import dataclasses
import json
import math
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
from simpy_peer import BATCHER, FIFO, PRIORITY, dynamic_batcher, mmc_fifo, strict_priority  # noqa: E402

from workbench.config import Arrivals, Batching, Scenario, Scheduler, Service, Stream  # noqa: E402
from workbench.hardware import Hardware  # noqa: E402
from workbench.pipeline import service_model  # noqa: E402
from workbench.runtime.engine import Engine, simulate  # noqa: E402
from workbench.runtime.loop import run_events  # noqa: E402
from workbench.scenario import load_scenario  # noqa: E402


def p99_interval(latency: np.ndarray, blocks: int = 20) -> tuple[float, float]:
    """p99 of all requests, and the half-width of a 95% interval from block p99s."""
    per_block = [np.percentile(b, 99) for b in np.array_split(latency, blocks)]
    return float(np.percentile(latency, 99)), float(1.96 * np.std(per_block, ddof=1) / np.sqrt(blocks))


def best_of(fn, repeats: int = 3, clock=time.perf_counter):
    """Fastest of a few runs (s, by ``clock``) and the last result: the machine is shared and noisy."""
    best, out = float("inf"), None
    for _ in range(repeats):
        t = clock()
        out = fn()
        best = min(best, clock() - t)
    return best, out


def report(name: str, n: int, ours: tuple, peer: tuple) -> None:
    """One model's line: both speeds and their ratio, both p99s with their 95% half-widths."""
    (t_ours, lat_ours), (t_peer, lat_peer) = ours, peer
    p_o, h_o = p99_interval(lat_ours)
    p_p, h_p = p99_interval(lat_peer)
    print(f"{name}: workbench {n / t_ours:,.0f} req/s, SimPy {n / t_peer:,.0f} req/s, "
          f"ratio {t_peer / t_ours:.1f}x")
    print(f"    p99 workbench {p_o:.4f} s +/- {h_o:.4f}, SimPy {p_p:.4f} s +/- {h_p:.4f}, "
          f"difference {p_o - p_p:+.4f} s (combined 95% half-width {np.hypot(h_o, h_p):.4f})")


def erlang_c(lam: float, mu: float, c: int) -> float:
    """M/M/c: the probability that an arrival waits (Erlang C)."""
    a = lam / mu
    top = a**c / math.factorial(c) * c / (c - a)
    return top / (sum(a**k / math.factorial(k) for k in range(c)) + top)


def cobham_waits(lams: tuple[float, ...], mu: float, c: int) -> list[float]:
    """M/M/c non-preemptive priority, equal service rates: mean wait per class, class 0 first (Cobham)."""
    w0, sigma, out = erlang_c(sum(lams), mu, c) / (c * mu), 0.0, []
    for rate in lams:
        before, sigma = sigma, sigma + rate / (c * mu)
        out.append(w0 / ((1 - before) * (1 - sigma)))
    return out


def mean_interval(x: np.ndarray, blocks: int = 20) -> tuple[float, float]:
    """Mean, and the half-width of a 95% interval from batch means."""
    per_block = [b.mean() for b in np.array_split(x, blocks)]
    return float(x.mean()), float(1.96 * np.std(per_block, ddof=1) / np.sqrt(blocks))


def cobham_check(name: str, wait: np.ndarray, cls: np.ndarray) -> None:
    """Each class's mean wait against Cobham's formula, with the run's own 95% interval."""
    for k, expected in enumerate(cobham_waits(PRIORITY["rates"], 1.0 / PRIORITY["service_s"], PRIORITY["cores"])):
        m, h = mean_interval(wait[cls == k])
        print(f"    class {k} mean wait: {name} {m:.4f} s +/- {h:.4f}, Cobham {expected:.4f} s"
              f" ({'within' if abs(m - expected) <= h * 4 / 1.96 else 'OUTSIDE'} 4 se)")


def in_process(n: int, seed: int = 11) -> None:
    """The three models in this process: speed, p99s, and the priority model against Cobham."""
    # model 1: FIFO M/M/4 without batching, rho = 0.8
    rate, service_s, cores = FIFO["rate"], FIFO["service_s"], FIFO["cores"]
    sc = Scenario(streams=(Stream("s", Arrivals(rate=rate)),), seed=seed, requests=n, warmup_fraction=0.0,
                  hardware=Hardware(cores=cores), service=Service(law="exponential", base_s=service_s))
    ours = best_of(lambda: simulate(sc).latency_s, repeats=5)
    peer = best_of(lambda: mmc_fifo(rate, service_s, cores, n, seed))
    report(f"M/M/4 FIFO ({Engine(sc).chosen_loop()} loop)", n, ours, peer)
    # model 2: Poisson into the dynamic batcher on 4 cores
    b = BATCHER
    sc = Scenario(streams=(Stream("s", Arrivals(rate=b["rate"])),), seed=seed, requests=n, warmup_fraction=0.0,
                  hardware=Hardware(cores=b["cores"]),
                  service=Service(law="exponential", base_s=b["base_s"], per_item_s=b["per_item_s"]),
                  batching=Batching(policy="dynamic", max_batch=b["max_batch"], max_delay_s=b["max_delay_s"]))
    ours = best_of(lambda: simulate(sc).latency_s, repeats=5)
    peer = best_of(lambda: dynamic_batcher(b["rate"], b["base_s"], b["per_item_s"], b["cores"], b["max_batch"],
                                           b["max_delay_s"], n, seed))
    report(f"dynamic batcher, 4 cores ({Engine(sc).chosen_loop()} loop)", n, ours, peer)
    # the same model through the general event loop (what priorities, pinning or contention use):
    # the readable Python loop, and its compiled form (numba), each with its trace assembled
    engine = Engine(sc)
    general = best_of(lambda: engine._trace(run_events(Engine(sc))).latency_s)
    report("  same, general event loop (Python)", n, general, peer)
    if Engine(sc, loop="compiled").chosen_loop() == "compiled":
        general = best_of(lambda: simulate(sc, loop="compiled").latency_s)
        report("  same, general event loop (compiled)", n, general, peer)
    # model 3: two classes, strict non-preemptive priority on 4 cores (the general loop only)
    pr = PRIORITY
    psc = priority_scenario(n, seed)
    loop = Engine(psc).chosen_loop()
    trace = [None]

    def ours_priority() -> np.ndarray:
        trace[0] = simulate(psc)
        return trace[0].latency_s

    ours = best_of(ours_priority, repeats=5)
    peer_out = [None]

    def peer_priority() -> np.ndarray:
        peer_out[0] = strict_priority(pr["rates"], pr["service_s"], pr["cores"], n, seed)
        return peer_out[0][0]

    peer = best_of(peer_priority)
    report(f"two-class strict priority, 4 cores ({loop} loop)", n, ours, peer)
    general = best_of(lambda: simulate(psc, loop="python").latency_s)
    report("  same, general event loop (Python)", n, general, peer)
    tr = trace[0]
    cobham_check("workbench", tr.wait_s, tr.stream)
    cobham_check("SimPy", peer_out[0][1], peer_out[0][2])
    widget(sc, seed)


def priority_scenario(n: int, seed: int) -> Scenario:
    """Model 3 as a workbench scenario: class 0 (priority 0) is served first."""
    pr = PRIORITY
    return Scenario(streams=tuple(Stream(f"c{k}", Arrivals(rate=r), priority=k) for k, r in enumerate(pr["rates"])),
                    seed=seed, requests=n, warmup_fraction=0.0, hardware=Hardware(cores=pr["cores"]),
                    service=Service(law="exponential", base_s=pr["service_s"]),
                    scheduler=Scheduler(discipline="priority"))


def widget(sc: Scenario, seed: int) -> None:
    """The notebooks' widget budget: 20,000 requests, abstract and through compiled plans."""
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


def scenario_tomls(n: int, seed: int, folder: Path) -> dict[str, Path]:
    """The three models as scenario files for ``workbench run`` (same parameters as the peer's)."""
    f, b, pr = FIFO, BATCHER, PRIORITY
    common = f"seed = {seed}\nrequests = {n}\nwarmup_fraction = 0.0\n"
    texts = {
        "fifo": f'name = "bench_fifo"\n{common}[hardware]\ncores = {f["cores"]}\n'
                f'[service]\nlaw = "exponential"\nbase_s = {f["service_s"]}\n'
                f'[[streams]]\nname = "s"\nrate = {f["rate"]}\n',
        "batcher": f'name = "bench_batcher"\n{common}[hardware]\ncores = {b["cores"]}\n'
                   f'[service]\nlaw = "exponential"\nbase_s = {b["base_s"]}\nper_item_s = {b["per_item_s"]}\n'
                   f'[batching]\npolicy = "dynamic"\nmax_batch = {b["max_batch"]}\nmax_delay_s = {b["max_delay_s"]}\n'
                   f'[[streams]]\nname = "s"\nrate = {b["rate"]}\n',
        "priority": f'name = "bench_priority"\n{common}[hardware]\ncores = {pr["cores"]}\n'
                    f'[service]\nlaw = "exponential"\nbase_s = {pr["service_s"]}\n'
                    f'[scheduler]\ndiscipline = "priority"\n'
                    + "".join(f'[[streams]]\nname = "c{k}"\nrate = {r}\npriority = {k}\n'
                              for k, r in enumerate(pr["rates"])),
    }
    paths = {}
    for model, text in texts.items():
        paths[model] = folder / f"{model}.toml"
        paths[model].write_text(text)
    return paths


def time_process(argv: list[str], repeats: int = 3) -> tuple[float, float, dict]:
    """Best wall time and best CPU time (user + system, from getrusage) of a child process, and its JSON."""
    best_wall = best_cpu = float("inf")
    out: dict = {}
    for _ in range(repeats):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        done = subprocess.run(argv, capture_output=True, text=True, check=True)
        wall = time.perf_counter() - t
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        best_wall, best_cpu = min(best_wall, wall), min(best_cpu, cpu)
        out = json.loads(done.stdout)
    return best_wall, best_cpu, out


def whole_process(n: int, seed: int = 11) -> None:
    """``workbench run`` against the SimPy script, each a fresh process, timed the same way."""
    print(f"whole processes, {n:,} requests (best of 3; wall clock and child CPU time):")
    with tempfile.TemporaryDirectory() as tmp:
        for model, path in scenario_tomls(n, seed, Path(tmp)).items():
            w_o, c_o, ours = time_process([sys.executable, "-m", "workbench.cli", "run", str(path), "--json"])
            w_p, c_p, peer = time_process([sys.executable, str(HERE / "simpy_peer.py"), model, str(n), str(seed)])
            m_o, m_p = ours["latency_s"]["mean"], peer["mean_s"]
            print(f"  {model}: workbench run {w_o:.2f} s wall / {c_o:.2f} s CPU, SimPy {w_p:.2f} s / {c_p:.2f} s: "
                  f"ratio {w_p / w_o:.1f}x wall, {c_p / c_o:.1f}x CPU; mean latency {m_o:.4f} vs {m_p:.4f} s "
                  f"({m_o / m_p - 1:+.1%}), p99 {ours['latency_s']['p99']:.4f} vs {peer['p99_s']:.4f} s")


def main(n: int = 200_000, n_whole: int = 400_000) -> None:
    """In-process figures at ``n`` requests, then whole-process figures at ``n_whole``."""
    in_process(n)
    whole_process(n_whole)


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]))

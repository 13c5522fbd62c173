"""The peer: the same three queueing models written the idiomatic SimPy way.

A process per request, a ``simpy.Resource`` for the cores, and (for the dynamic
batcher) a dispatcher process that holds an idle core, waits for requests, and lets
a batch leave when ``max_batch`` wait or the oldest has waited ``max_delay_s``
(Triton's semantics, the same as the workbench's ``dynamic`` policy); for strict
priority a ``simpy.PriorityResource`` (non-preemptive, FIFO within a class).
It returns per-request latencies so the benchmark can compare p99s.

As a script it is the peer's whole process (``bench_simpy.py`` times it against a
``workbench run`` process): ``python simpy_peer.py fifo|batcher|priority N [SEED]`` runs
the benchmark's parameters and prints the mean and p99 latency as JSON.
"""

from __future__ import annotations

import json
import sys

import numpy as np
import simpy

# the benchmark's three models, shared by bench_simpy.py (in-process and whole-process runs)
FIFO = {"rate": 3.2, "service_s": 1.0, "cores": 4}
BATCHER = {"rate": 20.0, "base_s": 0.2, "per_item_s": 0.05, "cores": 4, "max_batch": 8, "max_delay_s": 0.05}
PRIORITY = {"rates": (1.2, 2.0), "service_s": 1.0, "cores": 4}


def mmc_fifo(rate: float, service_s: float, cores: int, n: int, seed: int) -> np.ndarray:
    """FIFO M/M/c without batching: latencies (s) of ``n`` requests."""
    rng = np.random.default_rng(seed)
    gaps = rng.exponential(1.0 / rate, n)
    services = rng.exponential(service_s, n)
    env = simpy.Environment()
    pool = simpy.Resource(env, capacity=cores)
    latency = np.empty(n)

    def request(i: int):
        arrived = env.now
        with pool.request() as slot:
            yield slot
            yield env.timeout(services[i])
        latency[i] = env.now - arrived

    def source():
        for i in range(n):
            yield env.timeout(gaps[i])
            env.process(request(i))

    env.process(source())
    env.run()
    return latency


def dynamic_batcher(rate: float, base_s: float, per_item_s: float, cores: int, max_batch: int,
                    max_delay_s: float, n: int, seed: int) -> np.ndarray:
    """Poisson arrivals into a dynamic batcher on ``cores``; exponential batch times."""
    rng = np.random.default_rng(seed)
    gaps = rng.exponential(1.0 / rate, n)
    factors = rng.exponential(1.0, n)
    env = simpy.Environment()
    pool = simpy.Resource(env, capacity=cores)
    waiting: list[tuple[int, float]] = []
    latency = np.empty(n)
    state = {"arrived": env.event(), "batches": 0}

    def source():
        for i in range(n):
            yield env.timeout(gaps[i])
            waiting.append((i, env.now))
            state["arrived"].succeed()
            state["arrived"] = env.event()

    def run_batch(slot, batch):
        b = state["batches"]
        state["batches"] += 1
        yield env.timeout((base_s + per_item_s * len(batch)) * factors[b])
        pool.release(slot)
        for i, t in batch:
            latency[i] = env.now - t

    def dispatcher():
        done = 0
        while done < n:
            slot = pool.request()
            yield slot
            while not waiting:
                yield state["arrived"]
            while len(waiting) < max_batch:
                deadline = waiting[0][1] + max_delay_s
                if env.now >= deadline:
                    break
                yield env.timeout(deadline - env.now) | state["arrived"]
            batch = waiting[:max_batch]
            del waiting[:max_batch]
            done += len(batch)
            env.process(run_batch(slot, batch))

    env.process(source())
    env.process(dispatcher())
    env.run()
    return latency


def strict_priority(rates: tuple[float, ...], service_s: float, cores: int, n: int,
                    seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Poisson classes (class 0 first) under strict non-preemptive priority on ``cores``, exponential
    service: latencies (s), waits (s) and the class of the first ``n`` requests to arrive."""
    rng = np.random.default_rng(seed)
    total = sum(rates)
    gaps = rng.exponential(1.0 / total, n)  # the merged Poisson stream, each arrival's class drawn
    cls = rng.choice(len(rates), size=n, p=np.asarray(rates) / total)
    services = rng.exponential(service_s, n)
    env = simpy.Environment()
    pool = simpy.PriorityResource(env, capacity=cores)
    latency, wait = np.empty(n), np.empty(n)

    def request(i: int):
        arrived = env.now
        with pool.request(priority=int(cls[i])) as slot:
            yield slot
            wait[i] = env.now - arrived
            yield env.timeout(services[i])
        latency[i] = env.now - arrived

    def source():
        for i in range(n):
            yield env.timeout(gaps[i])
            env.process(request(i))

    env.process(source())
    env.run()
    return latency, wait, cls


def main(argv: list[str]) -> None:
    """The whole-process peer: run one model and print its mean and p99 latency."""
    model, n = argv[0], int(argv[1])
    seed = int(argv[2]) if len(argv) > 2 else 11
    if model == "fifo":
        lat = mmc_fifo(FIFO["rate"], FIFO["service_s"], FIFO["cores"], n, seed)
    elif model == "batcher":
        b = BATCHER
        lat = dynamic_batcher(b["rate"], b["base_s"], b["per_item_s"], b["cores"], b["max_batch"],
                              b["max_delay_s"], n, seed)
    elif model == "priority":
        lat = strict_priority(PRIORITY["rates"], PRIORITY["service_s"], PRIORITY["cores"], n, seed)[0]
    else:
        raise SystemExit(f"simpy_peer.py: unknown model {model!r}: fifo, batcher or priority")
    print(json.dumps({"model": model, "requests": n, "mean_s": float(lat.mean()),
                      "p99_s": float(np.percentile(lat, 99))}))


if __name__ == "__main__":
    main(sys.argv[1:])

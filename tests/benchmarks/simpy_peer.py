"""The peer: the same two queueing models written the idiomatic SimPy way.

A process per request, a ``simpy.Resource`` for the cores, and (for the dynamic
batcher) a dispatcher process that holds an idle core, waits for requests, and lets
a batch leave when ``max_batch`` wait or the oldest has waited ``max_delay_s``
(Triton's semantics, the same as the workbench's ``dynamic`` policy).
It returns per-request latencies so the benchmark can compare p99s.
"""

from __future__ import annotations

import numpy as np
import simpy


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

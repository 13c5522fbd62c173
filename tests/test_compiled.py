"""The compiled general loop equals the readable one (the reference), field by field, bit for bit.

Random scenarios (hypothesis) over every policy the compiled loop implements: batching
none/static/dynamic with preferred sizes, fifo/priority/weighted, least-loaded/round-robin/
pinned, queue bounds and timeouts, several streams and models (queues merged per class),
HBM residency with evictions and overcommits, bandwidth sharing between kernel phases
(random phased service models), and compiled plans (pad, recompile pauses, fallback).
Each test runs every build of the compiled loop this install has (``aot``: the
ahead-of-time extension, ``jit``: numba; :mod:`workbench.aot`). Skipped with neither: the
Python loop is then the only loop, and it is complete.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import plan_scenarios
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workbench import aot
from workbench.config import (
    Arrivals,
    Batching,
    ResidencyPolicy,
    ResidentModel,
    Scenario,
    Scheduler,
    Service,
    Stream,
)
from workbench.hardware import Hardware
from workbench.runtime.engine import Engine
from workbench.service_model import Classification

PATHS = aot.paths()
if not PATHS:
    pytest.skip("no compiled loop: neither an ahead-of-time build nor numba", allow_module_level=True)
each_path = pytest.mark.parametrize("path", PATHS)

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def assert_same_run(sc: Scenario, model=None, path: str = "compiled") -> None:
    """The compiled loop (of build ``path``) takes the run and gives the reference loop's trace, bit for bit."""
    ce = Engine(sc, model, loop=path)
    assert ce.chosen_loop() == "compiled"
    ref, fast = Engine(sc, model, loop="python").run(), ce.run()
    n = 0
    derived = ("dispatch_s", "start_s", "end_s", "core", "rejected_s", "imbalance_s")  # gathered on demand
    for name in [*vars(ref), *derived]:
        value = getattr(ref, name)
        if isinstance(value, np.ndarray):
            other = getattr(fast, name)
            assert isinstance(other, np.ndarray), name
            assert value.dtype == other.dtype and np.array_equal(value, other, equal_nan=True), name
            n += 1
        elif value is None:
            assert getattr(fast, name) is None, name
    assert n >= 25
    assert ref.residency == fast.residency
    for k, v in ref.labels.items():
        assert np.array_equal(v, fast.labels[k]), k


@st.composite
def runtime_scenarios(draw) -> Scenario:
    cores = draw(st.integers(1, 5))
    n_streams = draw(st.integers(1, 3))
    n_models = draw(st.sampled_from([0, 0, 2, 3]))
    streams = tuple(
        Stream(f"s{i}", Arrivals(rate=draw(st.floats(0.3, 6.0))), priority=draw(st.integers(0, 2)),
               weight=draw(st.sampled_from([0.5, 1.0, 1.0, 3.0])),  # equal weights make tag ties
               model=f"m{i % n_models}" if n_models else "",
               pin=tuple(sorted(draw(st.sets(st.integers(0, cores - 1), max_size=cores)))))
        for i in range(n_streams))
    max_batch = draw(st.integers(1, 6))
    batching = Batching(policy=draw(st.sampled_from(["none", "static", "dynamic"])), max_batch=max_batch,
                        max_delay_s=draw(st.sampled_from([0.0, 0.05, 0.3, 1.0])),
                        preferred=tuple(sorted(draw(st.sets(st.integers(1, max_batch), max_size=2)))))
    scheduler = Scheduler(discipline=draw(st.sampled_from(["fifo", "priority", "weighted"])),
                          placement=draw(st.sampled_from(["least-loaded", "round-robin", "pinned"])),
                          max_queue=draw(st.sampled_from([0, 0, 3, 10])),
                          timeout_s=draw(st.sampled_from([0.0, 0.0, 0.5, 2.0])))
    service = Service(law=draw(st.sampled_from(["exponential", "deterministic", "lognormal"])),
                      base_s=draw(st.floats(0.1, 1.0)), per_item_s=draw(st.sampled_from([0.0, 0.05, 0.2])),
                      cv=draw(st.floats(0.0, 2.0)), memory_share=draw(st.sampled_from([0.0, 0.3, 0.5, 0.8, 1.0])))
    gib = 1 << 30
    models = tuple(ResidentModel(f"m{j}", draw(st.sampled_from([0, 2 * gib, 3 * gib])),
                                 service_scale=draw(st.sampled_from([1.0, 0.5, 2.0]))) for j in range(n_models))
    # host links from far slower than HBM (reloads of seconds: concurrent loads queue, batches wait on loads in
    # flight) to faster than it (the copy capped at HBM's rate)
    hw = Hardware(cores=cores, hbm_capacity_bytes=4 * gib, hbm_bandwidth_bytes_per_s=draw(st.sampled_from([1e9, 8e9])),
                  host_link_bytes_per_s=draw(st.sampled_from([5e8, 2e9, 8e9, 2e10])))
    return Scenario(streams=streams, seed=draw(st.integers(0, 10_000)), requests=draw(st.integers(1, 400)),
                    warmup_fraction=0.0, hardware=hw, service=service, batching=batching, scheduler=scheduler,
                    models=models, residency=ResidencyPolicy(draw(st.sampled_from(["hold", "load_then_dispatch"]))))


@each_path
@SETTINGS
@given(runtime_scenarios())
def test_compiled_loop_equals_reference_on_runtime_scenarios(path, sc):
    assert_same_run(sc, path=path)


class RandomPhases:
    """A service model whose batches are random kernel sequences: compute phases, memory bursts, ties of demand."""

    def __init__(self, seed: int, buckets: int, noise: bool):
        self.rng = np.random.default_rng(seed)
        self.buckets, self.noise = buckets, noise
        self.table: dict[tuple[int, int, int], tuple[tuple[float, float], ...]] = {}

    def classify(self, requests):
        n = len(requests)
        rng = np.random.default_rng(int(self.rng.integers(1 << 30)))
        bucket = rng.integers(-1 if self.buckets > 1 else 0, self.buckets, n).astype(np.int32)
        return Classification(bucket=bucket, bucket_names=tuple(f"b{i}" for i in range(self.buckets)),
                              cost=self.cost, phases=self.phases, shape_key=rng.integers(1, 5, n) * 64,
                              extra_s=np.where(rng.random(n) < 0.05, 0.02, 0.0))

    def phases(self, bucket: int, size: int, key: int) -> tuple[tuple[float, float], ...]:
        if (bucket, size, key) not in self.table:  # drawn once per batch shape, from the model's own generator
            k = int(self.rng.integers(1, 6))
            self.table[(bucket, size, key)] = tuple(
                (float(self.rng.uniform(0.01, 0.2)) * size * key / 128,
                 float(self.rng.choice([0.0, 0.25, 0.5, 0.5, 0.9, 1.0]))) for _ in range(k))
        return self.table[(bucket, size, key)]

    def cost(self, bucket: int, size: int, key: int) -> tuple[float, float, float]:
        ph = self.phases(bucket, size, key)
        total = sum(d for d, _ in ph)
        return total, sum(d * u for d, u in ph) / total, 0.0

    def draw_factors(self, rng, n):
        return rng.lognormal(-0.02, 0.2, n) if self.noise else np.ones(n)


@each_path
@SETTINGS
@given(runtime_scenarios(), st.integers(0, 1000), st.integers(1, 3), st.booleans())
def test_compiled_loop_equals_reference_under_bandwidth_sharing(path, sc, seed, buckets, noise):
    # the same model object would remember phases drawn in the first run, so each loop gets a fresh one
    ref = Engine(sc, RandomPhases(seed, buckets, noise), loop="python").run()
    ce = Engine(sc, RandomPhases(seed, buckets, noise), loop=path)
    assert ce.chosen_loop() == "compiled"
    fast = ce.run()
    for name, value in vars(ref).items():
        if isinstance(value, np.ndarray):
            assert np.array_equal(value, getattr(fast, name), equal_nan=True), name


@each_path
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plan_scenarios(rates=(500.0, 8000.0), batching=("none", "dynamic", "static"),
                       placements=("least-loaded", "pinned", "round-robin")))
def test_compiled_loop_equals_reference_through_plans(path, sc):
    from workbench.pipeline import service_model

    assert_same_run(sc, service_model(sc), path)


@each_path
def test_builtin_scenarios_take_the_compiled_loop_and_match(path):
    import dataclasses

    from workbench.pipeline import service_model
    from workbench.scenario import builtin_scenarios, load_scenario

    for name in builtin_scenarios():
        sc = dataclasses.replace(load_scenario(name), requests=1500)
        assert_same_run(sc, service_model(sc), path)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(-1e6, 1e6, allow_nan=False) | st.sampled_from([0.1, 0.2, 0.3, 1e-17, -0.0]),
                min_size=0, max_size=12))
def test_compiled_sum_adds_floats_as_this_python_does(xs):
    import sys

    pytest.importorskip("numba")  # the kernel called alone, by the JIT (the builds run it inside the loop)
    from workbench.runtime.compiled import layout as L
    from workbench.runtime.compiled.parts import pysum

    cf = np.zeros((L.K_HUNG + 1, max(len(xs), 1)))
    ci = np.zeros((L.C_ACT + 1, max(len(xs), 1)), dtype=np.int64)
    order = np.random.default_rng(len(xs)).permutation(len(xs))
    cf[L.K_M, :len(xs)] = xs
    ci[L.C_ACT, :len(xs)] = order
    got = pysum(cf, L.K_M, ci, len(xs), sys.version_info >= (3, 12))
    want = sum([xs[j] for j in order])
    assert got == want or (got != got and want != want)


def test_policies_the_compiled_loop_does_not_know_fall_back_to_python():
    from workbench.runtime.policies import LeastLoaded

    class Sticky(LeastLoaded):  # a policy of one's own: only the Python loop runs it
        pass

    sc = Scenario(streams=(Stream("s", Arrivals(rate=2.0)),), requests=50, hardware=Hardware(cores=2),
                  service=Service(memory_share=0.5))
    e = Engine(sc, loop="compiled")
    e.placement = Sticky(2)
    assert e.chosen_loop() == "python"
    assert np.array_equal(e.run().end_s, Engine(sc, loop="python").run().end_s)


@each_path
@pytest.mark.parametrize("dispatch", ["hold", "load_then_dispatch"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_compiled_loop_equals_reference_with_loads_queued_and_in_flight(path, seed, dispatch):
    # a slow link (each 2 GiB load takes ~1 s, several batches long) and four models in room for two: loads
    # queue on the link and batches of a model still loading wait for the rest; both must happen here
    gib = 1 << 30
    streams = tuple(Stream(f"s{i}", Arrivals(rate=3.0), model=f"m{i}") for i in range(4))
    models = tuple(ResidentModel(f"m{j}", 2 * gib) for j in range(4))
    hw = Hardware(cores=4, hbm_capacity_bytes=4 * gib, hbm_bandwidth_bytes_per_s=8e9, host_link_bytes_per_s=2e9)
    sc = Scenario(streams=streams, seed=seed, requests=300, warmup_fraction=0.0, hardware=hw,
                  service=Service(law="lognormal", base_s=0.2, cv=0.5, memory_share=0.5), models=models,
                  residency=ResidencyPolicy(dispatch))
    assert_same_run(sc, path=path)
    tr = Engine(sc, loop="python").run()
    copy = 2 * gib / 2e9
    waited = tr.batch_reload_s > 0
    if dispatch == "hold":
        assert waited.sum() > tr.residency["loads"]  # some batches waited on another batch's load
    else:  # one class per model, and a model is held from its load to its batch: no load is wasted
        assert waited.sum() == tr.residency["loads"]
    assert (tr.batch_reload_s > copy * 1.01).any()  # some loads queued behind another on the link

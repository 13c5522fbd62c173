"""Properties over random scenarios (hypothesis): conservation, Little's law, no double-booked core,
causality, determinism, and the fast path equal to the general loop."""

from __future__ import annotations

import numpy as np
from helpers import plan_scenarios
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workbench.config import Arrivals, Batching, ResidencyPolicy, ResidentModel, Scenario, Scheduler, Service, Stream
from workbench.hardware import Hardware
from workbench.runtime.engine import Engine, simulate
from workbench.runtime.fastpath import fast_path_applies
from workbench.runtime.loop import run_events
from workbench.runtime.trace import COMPLETED

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def scenarios(draw, eligible_only: bool = False) -> Scenario:
    cores = draw(st.integers(1, 4))
    n_streams = 1 if eligible_only else draw(st.integers(1, 3))
    with_models = not eligible_only and draw(st.booleans())
    streams = tuple(
        Stream(f"s{i}", Arrivals(rate=draw(st.floats(0.2, 3.0))), priority=draw(st.integers(0, 2)),
               weight=draw(st.floats(0.5, 4.0)), model=f"m{i % 2}" if with_models else "",
               pin=tuple(sorted(draw(st.sets(st.integers(0, cores - 1), max_size=cores)))))
        for i in range(n_streams))
    policy = draw(st.sampled_from(["none", "dynamic"] if eligible_only else ["none", "static", "dynamic"]))
    max_batch = draw(st.integers(1, 6))
    batching = Batching(policy=policy, max_batch=max_batch, max_delay_s=draw(st.sampled_from([0.0, 0.05, 0.3, 1.0])),
                        preferred=tuple(sorted(draw(st.sets(st.integers(1, max_batch), max_size=2)))))
    if eligible_only:
        scheduler = Scheduler(discipline="fifo")
    else:
        scheduler = Scheduler(discipline=draw(st.sampled_from(["fifo", "priority", "weighted"])),
                              placement=draw(st.sampled_from(["least-loaded", "round-robin", "pinned"])),
                              max_queue=draw(st.sampled_from([0, 0, 3, 10])),
                              timeout_s=draw(st.sampled_from([0.0, 0.0, 0.5, 2.0])))
    service = Service(law=draw(st.sampled_from(["exponential", "deterministic", "lognormal"])),
                      base_s=draw(st.floats(0.1, 1.0)), per_item_s=draw(st.sampled_from([0.0, 0.05, 0.2])),
                      cv=draw(st.floats(0.0, 2.0)),
                      memory_share=0.0 if eligible_only else draw(st.sampled_from([0.0, 0.5, 1.0])))
    models = (ResidentModel("m0", 3 << 30), ResidentModel("m1", 3 << 30)) if with_models else ()
    hw = Hardware(cores=cores, hbm_capacity_bytes=4 << 30)
    return Scenario(streams=streams, seed=draw(st.integers(0, 10_000)), requests=draw(st.integers(20, 300)),
                    warmup_fraction=0.0, hardware=hw, service=service, batching=batching, scheduler=scheduler,
                    models=models,
                    residency=ResidencyPolicy(draw(st.sampled_from(["hold", "load_then_dispatch"]))))


@SETTINGS
@given(scenarios())
def test_every_request_ends_exactly_once(sc):
    tr = simulate(sc)
    done = tr.outcome == COMPLETED
    assert np.array_equal(done, tr.batch >= 0)
    assert np.isfinite(tr.end_s[done]).all() and np.isnan(tr.end_s[~done]).all()
    assert np.isfinite(tr.rejected_s[~done]).all() and np.isnan(tr.rejected_s[done]).all()
    # each completed request is in exactly one batch, and batch sizes add up
    assert np.array_equal(np.bincount(tr.batch[done], minlength=len(tr.batch_size)), tr.batch_size)
    assert tr.batch_size.max(initial=1) <= sc.batching.max_batch


@SETTINGS
@given(scenarios())
def test_causality_and_cores_never_double_booked(sc):
    tr = simulate(sc)
    done = tr.completed
    assert (tr.dispatch_s[done] >= tr.arrival_s[done]).all()
    assert (tr.start_s[done] >= tr.dispatch_s[done]).all()
    assert (tr.end_s[done] > tr.start_s[done]).all()
    assert (np.diff(tr.batch_start_s) >= 0).all()  # batches are numbered in the order they start
    for k in range(sc.hardware.cores):
        mine = tr.batch_core == k
        assert (tr.batch_start_s[mine][1:] >= tr.batch_end_s[mine][:-1]).all()
    rejected = ~done
    assert (tr.rejected_s[rejected] >= tr.arrival_s[rejected]).all()
    if sc.scheduler.timeout_s:
        assert (tr.start_s[done] - tr.arrival_s[done] <= sc.scheduler.timeout_s + 1e-9).all() or \
            sc.batching.policy == "static"  # sealed static batches no longer time out
    if sc.scheduler.placement == "pinned":
        for i, s in enumerate(sc.streams):
            pins = s.pin or (i % sc.hardware.cores,)
            assert np.isin(tr.core[done & (tr.stream == i)], pins).all()


@SETTINGS
@given(scenarios())
def test_littles_law_on_the_queue(sc):
    """Time-average queue depth equals arrival rate times mean time in queue, on the sample path."""
    tr = simulate(sc)
    t, depth = tr.queue_depth()
    assert len(depth) == 0 or depth.min() >= 0  # a request enters the queue before it can leave it
    horizon = t[-1] - t[0]
    if horizon <= 0:
        return
    area = float((depth[:-1] * np.diff(t)).sum())
    entered = tr.outcome != 1
    leave = np.where(tr.completed, tr.start_s, tr.rejected_s)[entered]  # in the queue until service starts
    time_in_queue = float((leave - tr.arrival_s[entered]).sum())
    assert np.isclose(area, time_in_queue, rtol=1e-9, atol=1e-9)


@SETTINGS
@given(scenarios())
def test_same_seed_same_trace(sc):
    a, b = simulate(sc), simulate(sc)
    for name in ("arrival_s", "outcome", "batch", "start_s", "end_s", "core", "batch_work_s", "rejected_s"):
        assert np.array_equal(getattr(a, name), getattr(b, name), equal_nan=True), name


@SETTINGS
@given(scenarios(eligible_only=True))
def test_fast_path_equals_general_loop(sc):
    e = Engine(sc, loop="fastpath")
    assert fast_path_applies(e) and e.chosen_loop() == "fastpath"
    fast = e.run()
    e2 = Engine(sc)
    slow = e2._trace(run_events(e2))
    for name, value in vars(fast).items():
        if isinstance(value, np.ndarray):
            assert np.array_equal(value, getattr(slow, name), equal_nan=True), name


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plan_scenarios())
def test_runs_through_plans_conserve_requests_and_respect_buckets(sc):
    from workbench.pipeline import run_scenario

    a, b = run_scenario(sc), run_scenario(sc)
    assert np.array_equal(a.end_s, b.end_s, equal_nan=True)  # same seed, same trace
    done = a.completed
    assert np.array_equal(done, a.bucket >= 0)  # only the plan refuses requests here
    assert np.array_equal(np.bincount(a.batch[done], minlength=len(a.batch_size)), a.batch_size)
    # a batch holds one bucket, and is timed at least at its largest member's shape
    assert (a.bucket[done] == a.batch_bucket[a.batch[done]]).all()
    assert (a.batch_shape_key[a.batch[done]] >= a.shapes["seq"][done]).all()
    assert (a.end_s[done] > a.start_s[done]).all() and (a.start_s[done] >= a.arrival_s[done]).all()
    if sc.scheduler.placement == "pinned":  # the compiler's static placement is honoured
        cores = a.service.bucket_cores
        assert all(int(a.batch_core[i]) in cores[int(a.batch_bucket[i])] for i in range(len(a.batch_core)))

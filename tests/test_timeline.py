"""Tiny scenarios whose exact timeline is known by hand (SimPy's tests log (name, now) the same way)."""

from __future__ import annotations

import numpy as np
from helpers import hand_requests, scenario

from workbench.config import Batching, ResidentModel, Scheduler, Service, Stream
from workbench.hardware import Hardware
from workbench.runtime.engine import simulate
from workbench.runtime.trace import COMPLETED, REJECTED_QUEUE_FULL, REJECTED_TIMEOUT
from workbench.service_model import Classification

DET = Service(law="deterministic", base_s=1.0)


def run(times, streams=None, **kw):
    sc = scenario(rates=kw.pop("rates", (1.0,)), service=kw.pop("service", DET), **kw)
    return simulate(sc, requests=hand_requests(times, streams))


def test_single_core_fifo():
    tr = run([0.0, 0.5, 3.0])
    assert tr.start_s.tolist() == [0.0, 1.0, 3.0]
    assert tr.end_s.tolist() == [1.0, 2.0, 4.0]
    assert tr.wait_s.tolist() == [0.0, 0.5, 0.0]


def test_dynamic_batching_size_delay_and_backlog():
    # r0-r2 fill a batch of 3 at 0.4; r3 waits for the core (free at 1.4), then for its delay (1.5);
    # r4 alone leaves when its delay runs out at 6.0
    tr = run([0.0, 0.2, 0.4, 0.5, 5.0], batching=Batching(policy="dynamic", max_batch=3, max_delay_s=1.0))
    assert tr.batch.tolist() == [0, 0, 0, 1, 2]
    assert tr.batch_start_s.tolist() == [0.4, 1.5, 6.0]
    assert tr.batch_end_s.tolist() == [1.4, 2.5, 7.0]
    assert tr.batch_size.tolist() == [3, 1, 1]


def test_dynamic_backlog_past_delay_leaves_at_once_when_core_frees():
    tr = run([0.0, 0.1, 0.2, 0.3], batching=Batching(policy="dynamic", max_batch=8, max_delay_s=0.05),
             service=Service(law="deterministic", base_s=1.0))
    # r0 leaves alone at 0.05; r1-r3 are past their delay when the core frees at 1.05
    assert tr.batch_start_s.tolist() == [0.05, 1.05]
    assert tr.batch_size.tolist() == [1, 3]


def test_preferred_batch_size_leaves_at_once():
    tr = run([0.0, 0.1, 0.2, 0.3], batching=Batching(policy="dynamic", max_batch=8, max_delay_s=10.0, preferred=(2,)))
    assert tr.batch_size.tolist() == [2, 2]
    assert tr.batch_start_s.tolist() == [0.1, 1.1]


def test_static_batches_are_sealed_dynamic_ones_grow():
    times = [0.0, 0.1, 0.2, 1.5]
    svc = Service(law="deterministic", base_s=2.0)
    static = run(times, service=svc, batching=Batching(policy="static", max_batch=2, max_delay_s=1.0))
    # r2 is sealed alone at 1.2 (its fill timeout) while the core is busy; r3 forms the next batch
    assert static.batch_size.tolist() == [2, 1, 1]
    assert static.batch_dispatch_s.tolist() == [0.1, 1.2, 2.5]
    assert static.batch_start_s.tolist() == [0.1, 2.1, 4.1]
    dynamic = run(times, service=svc, batching=Batching(policy="dynamic", max_batch=2, max_delay_s=1.0))
    # the dynamic batch keeps growing while the core is busy: r2 and r3 leave together at 2.1
    assert dynamic.batch_size.tolist() == [2, 2]
    assert dynamic.batch_start_s.tolist() == [0.1, 2.1]


def test_strict_priority_is_non_preemptive():
    # stream 0 has priority 0 (first), stream 1 priority 1
    tr = run([0.0, 0.1, 0.2], streams=[1, 1, 0], rates=(1.0, 1.0), scheduler=Scheduler(discipline="priority"))
    assert tr.start_s.tolist() == [0.0, 2.0, 1.0]


def test_weighted_fair_shares_by_weight():
    sc = scenario(streams=(Stream("a", weight=3.0), Stream("b", weight=1.0)), service=DET,
                  scheduler=Scheduler(discipline="weighted"))
    # 20 requests of each stream wait at time 0: while both are backlogged, a gets 3 of every 4 slots
    tr = simulate(sc, requests=hand_requests([0.0] * 40, [0, 1] * 20))
    first = tr.stream[np.argsort(tr.start_s, kind="stable")][:20].tolist()
    assert abs(first.count(0) - 15) <= 1  # SCFQ's fairness bound: within one request of the exact share
    assert first.count(1) >= 4  # b is never starved while a is backlogged


def test_pinned_placement_waits_for_its_core_and_records_imbalance():
    # both requests belong to stream 0, pinned to core 0; core 1 idles
    tr = run([0.0, 0.1], rates=(1.0, 1.0), cores=2, scheduler=Scheduler(placement="pinned"))
    assert tr.core.tolist() == [0, 0]
    assert tr.start_s.tolist() == [0.0, 1.0]
    assert np.allclose(tr.imbalance_s, [0.0, 0.9])
    # least-loaded would have used the idle core
    ll = run([0.0, 0.1], rates=(1.0, 1.0), cores=2)
    assert ll.start_s.tolist() == [0.0, 0.1] and ll.imbalance_s.tolist() == [0.0, 0.0]


def test_round_robin_waits_for_the_turn_core():
    # r0 -> core 0 (long), r1 -> core 1, r2 must go to core 0 (its turn) and waits though core 1 is idle
    tr = run([0.0, 0.1, 1.5], cores=2, scheduler=Scheduler(placement="round-robin"),
             service=Service(law="deterministic", base_s=1.0))
    assert tr.core.tolist() == [0, 1, 0]
    tr2 = run([0.0, 0.1, 0.5], cores=2, scheduler=Scheduler(placement="round-robin"))
    assert tr2.core.tolist() == [0, 1, 0] and tr2.start_s.tolist() == [0.0, 0.1, 1.0]


def test_timeout_rejects_at_arrival_plus_timeout():
    tr = run([0.0, 0.1, 0.2], scheduler=Scheduler(timeout_s=0.5))
    assert tr.outcome.tolist() == [COMPLETED, REJECTED_TIMEOUT, REJECTED_TIMEOUT]
    assert np.allclose(tr.rejected_s[1:], [0.6, 0.7])


def test_max_queue_rejects_on_arrival():
    tr = run([0.0, 0.1, 0.2, 1.5], scheduler=Scheduler(max_queue=1))
    assert tr.outcome.tolist() == [COMPLETED, COMPLETED, REJECTED_QUEUE_FULL, COMPLETED]
    assert tr.rejected_s[2] == 0.2


def test_hbm_contention_slows_concurrent_memory_bound_batches():
    mem = Service(law="deterministic", base_s=1.0, memory_share=1.0)
    tr = run([0.0, 0.5], cores=2, service=mem)
    # alone until 0.5, then both at half speed; r0 finishes at 1.5, r1 alone again from 1.5
    assert tr.end_s.tolist() == [1.5, 2.0]
    assert np.allclose(tr.batch_contention_s, [0.5, 0.5])
    half = run([0.0, 0.5], cores=2, service=Service(law="deterministic", base_s=1.0, memory_share=0.5))
    assert half.end_s.tolist() == [1.0, 1.5]  # demand 0.5 + 0.5 fits the bandwidth
    one_core = run([0.0, 0.5], cores=1, service=mem)
    assert one_core.end_s.tolist() == [1.0, 2.0]


def test_hbm_sharing_conserves_bandwidth():
    # four batches of demand 0.5 together ask for 200 % of HBM: each gets a quarter, so each
    # needs twice its isolated second (the physical lower bound), never less
    half = Service(law="deterministic", base_s=1.0, memory_share=0.5)
    tr = run([0.0, 0.0, 0.0, 0.0], cores=4, service=half)
    assert np.allclose(tr.end_s, 2.0)


def test_hbm_sharing_is_max_min_fair():
    # demands 1.0 and 0.25: the light one gets all it asks, the heavy one the remaining 0.75
    # (water level 0.75): the light one ends at 1.0; the heavy one has done 0.75 s of work by then
    class Two:
        def classify(self, requests):
            return Classification(bucket=requests.stream.astype(np.int32), bucket_names=("heavy", "light"),
                                  cost=lambda b, s, k: (1.0, (1.0, 0.25)[b], 0.0))

        def draw_factors(self, rng, n):
            return np.ones(n)

    sc = scenario(rates=(1.0, 1.0), service=DET, hardware=Hardware(cores=2))
    tr = simulate(sc, Two(), requests=hand_requests([0.0, 0.0], [0, 1]))
    assert np.allclose(tr.end_s, [1.25, 1.0])


class Phased:
    """Batches of two kernels: 0.5 s of compute (no HBM), then 0.5 s that saturates HBM."""

    def classify(self, requests):
        return Classification(bucket=np.zeros(len(requests), dtype=np.int32), bucket_names=("all",),
                              cost=lambda b, s, k: (1.0, 0.5, 0.0), phases=lambda b, s, k: ((0.5, 0.0), (0.5, 1.0)))

    def draw_factors(self, rng, n):
        return np.ones(n)


def test_bursts_are_temporal_phases_overlap_or_not():
    sc = scenario(service=DET, hardware=Hardware(cores=2))
    # together: both memory phases run at once from 0.5 and share HBM: 0.5 s of work at half speed
    together = simulate(sc, Phased(), requests=hand_requests([0.0, 0.0]))
    assert np.allclose(together.end_s, [1.5, 1.5])
    # staggered by half a batch: one computes while the other reads, nothing slows
    staggered = simulate(sc, Phased(), requests=hand_requests([0.0, 0.5]))
    assert np.allclose(staggered.end_s, [1.0, 1.5])
    assert np.allclose(staggered.batch_contention_s, 0.0)


def test_residency_evicts_lru_and_charges_reload():
    gib = 1 << 30
    hw = Hardware(cores=1, hbm_capacity_bytes=gib + gib // 2, hbm_bandwidth_bytes_per_s=4e9, host_link_bytes_per_s=1e9)
    sc = scenario(streams=(Stream("a", model="a"), Stream("b", model="b")), service=DET, hardware=hw,
                  models=(ResidentModel("a", gib), ResidentModel("b", gib)))
    # only "a" fits at the start; "b" evicts it and pays a reload, then "a" evicts "b" and pays again
    tr = simulate(sc, requests=hand_requests([0.0, 2.0, 5.0], [0, 1, 0]))
    reload = gib / 1e9  # over the host link, not at HBM's 4 GB/s
    assert tr.batch_reload_s.tolist() == [0.0, reload, reload]
    assert tr.end_s.tolist() == [1.0, 2.0 + 1.0 + reload, 5.0 + 1.0 + reload]
    assert tr.residency == {"loads": 2, "evictions": 2, "overcommits": 0, "link_busy_s": 2 * reload}


def test_free_running_batches_equal_full_phase_tracking():
    # the loop skips phase events of batches that cannot meet any sharing; tracking every phase
    # (the reference) must give the same timeline up to float rounding
    import dataclasses

    from workbench.pipeline import service_model
    from workbench.runtime.engine import Engine
    from workbench.runtime.loop import run_events
    from workbench.scenario import load_scenario

    for name, rate in (("shape_drift", None), ("fusion_memory_bursts", 800.0), ("fusion_memory_bursts", None)):
        sc = dataclasses.replace(load_scenario(name), requests=3000)
        if rate:
            s0 = sc.streams[0]
            sc = dataclasses.replace(sc, streams=(dataclasses.replace(
                s0, arrivals=dataclasses.replace(s0.arrivals, rate=rate)),))
        model = service_model(sc)
        fast, ref = run_events(Engine(sc, model)), run_events(Engine(sc, model), free=False)
        assert fast.nbatch == ref.nbatch and fast.b_core == ref.b_core and fast.req_batch == ref.req_batch
        assert np.allclose(np.frombuffer(fast.b_end)[:fast.nbatch], np.frombuffer(ref.b_end)[:ref.nbatch],
                           rtol=1e-12, atol=1e-15)

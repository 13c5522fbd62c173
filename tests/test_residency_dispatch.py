"""The residency dispatch policy, by hand: where a batch waits for its model's weights.

``hold`` (a naive runtime): the batch takes its core and waits there for the load, so every
other request queues behind it. ``load_then_dispatch`` (the copy runs on a DMA engine): the
load starts, the batch stays queued, the core serves the resident model meanwhile, and the
batch is dispatched at the instant its weights are in. One core, deterministic 10 ms
batches, 12 GiB models over PCIe 5 x16 (T = 12 GiB / 64 GB/s = 0.201326592 s); each case
runs through the readable loop and the compiled one.
"""

from __future__ import annotations

import pytest
from helpers import hand_requests, scenario

from workbench.analysis.metrics import tail_drivers
from workbench.config import ResidencyPolicy, ResidentModel, Scheduler, Service, Stream
from workbench.errors import ConfigError
from workbench.hardware import Hardware
from workbench.runtime.engine import simulate
from workbench.scenario import load_scenario

GIB = 1 << 30
T = 12 * GIB / 64e9  # one load: 0.201326592 s
DET = Service(law="deterministic", base_s=0.01)
LOOPS = ["python", "compiled"]
# A, a steady stream every 50 ms from 0 to 0.5 s (11 requests); B, one cold request at 0.125 s
STEADY = [round(0.05 * i, 10) for i in range(11)]
COLD_AT = 0.125


def _loop(loop: str) -> str:
    if loop == "compiled":
        pytest.importorskip("numba")
    return loop


def _hot_and_cold(dispatch: str):
    """A resident and busy, a spare model resident and idle, B cold: B's load evicts the spare (LRU)."""
    hw = Hardware(cores=1, hbm_capacity_bytes=24 * GIB)
    models = (ResidentModel("a", 12 * GIB), ResidentModel("spare", 12 * GIB), ResidentModel("b", 12 * GIB))
    streams = (Stream("a", model="a"), Stream("b", model="b"))
    sc = scenario(streams=streams, service=DET, hardware=hw, models=models, warmup_fraction=0.0,
                  residency=ResidencyPolicy(dispatch))
    times = sorted(STEADY + [COLD_AT])
    return sc, hand_requests(times, [1 if t == COLD_AT else 0 for t in times])


@pytest.mark.parametrize("loop", LOOPS)
def test_hold_queues_the_resident_model_behind_the_cold_load(loop):
    sc, req = _hot_and_cold("hold")
    tr = simulate(sc, requests=req, loop=_loop(loop))
    b_end = COLD_AT + (0.01 + T)  # B holds the core for its load, then runs
    a = tr.stream == 0
    wait = (tr.start_s - tr.arrival_s)[a]
    # A at 0.15, 0.2, 0.25, 0.3 queue behind B (then each other); A at 0.35 waits for the last of them
    want = [0.0, 0.0, 0.0, b_end - 0.15, b_end + 0.01 - 0.2, b_end + 0.02 - 0.25, b_end + 0.03 - 0.3,
            b_end + 0.04 - 0.35, 0.0, 0.0, 0.0]
    assert wait == pytest.approx(want, abs=1e-12)
    assert tr.batch_reload_s.max() == T  # B's own copy, on its core
    assert tr.residency == {"loads": 1, "evictions": 1, "overcommits": 0, "link_busy_s": T}


@pytest.mark.parametrize("loop", LOOPS)
def test_load_then_dispatch_serves_the_resident_model_while_the_cold_one_loads(loop):
    sc, req = _hot_and_cold("load_then_dispatch")
    tr = simulate(sc, requests=req, loop=_loop(loop))
    a, b = tr.stream == 0, tr.stream == 1
    assert (tr.start_s[a] == tr.arrival_s[a]).all()  # A never waits: not for B's load, not for a core
    ready = COLD_AT + T  # B's weights are in; the core is idle (A at 0.3 ended at 0.31)
    assert tr.start_s[b].tolist() == [ready] and tr.end_s[b].tolist() == [ready + 0.01]
    waited = ready - COLD_AT  # exactly the load, in the queue
    assert tr.batch_reload_s[tr.batch[b]].tolist() == [waited]
    assert tr.weights_wait[b].tolist() == [waited] and not tr.weights_wait[a].any()
    assert tr.batch_work_s.tolist() == [0.01] * 12  # no core time spent waiting for weights
    assert tr.residency == {"loads": 1, "evictions": 1, "overcommits": 0, "link_busy_s": T}
    # the tail (B alone, above p95) is the wait for weights and then B's own service, no queueing
    d = tail_drivers(tr)
    assert d["memory_residency"] == pytest.approx(waited / (waited + 0.01), abs=1e-12)
    assert d["queueing"] == pytest.approx(0.0, abs=1e-12)
    assert d["service"] == pytest.approx(0.01 / (waited + 0.01), abs=1e-12)


@pytest.mark.parametrize("loop", LOOPS)
def test_a_model_loading_for_a_queued_batch_is_never_evicted(loop):
    # A and a spare resident; B asks at 0.05 (evicts the spare); A runs at 0.055, so B is now the least
    # recently used; C asks at 0.07: B's load is in flight and held, so A is evicted, not B; C's load queues
    # behind B's on the link. A asks again at 0.5: B (used before C) is evicted and A reloads.
    hw = Hardware(cores=1, hbm_capacity_bytes=24 * GIB)
    models = tuple(ResidentModel(n, 12 * GIB) for n in ("a", "spare", "b", "c"))
    streams = (Stream("a", model="a"), Stream("b", model="b"), Stream("c", model="c"))
    sc = scenario(streams=streams, service=DET, hardware=hw, models=models, warmup_fraction=0.0,
                  residency=ResidencyPolicy("load_then_dispatch"))
    # B asks again at 0.9: it was evicted at 0.5, so it loads again (evicting C) and waits this load only
    req = hand_requests([0.0, 0.05, 0.055, 0.07, 0.5, 0.9], [0, 1, 0, 2, 0, 1])
    tr = simulate(sc, requests=req, loop=_loop(loop))
    b_in, c_in, a_in, b_again = 0.05 + T, (0.05 + T) + T, 0.5 + T, 0.9 + T
    assert tr.batch_start_s.tolist() == [0.0, 0.055, b_in, c_in, a_in, b_again]
    assert tr.batch_reload_s.tolist() == [0.0, 0.0, b_in - 0.05, c_in - 0.07, a_in - 0.5, b_again - 0.9]
    assert tr.residency == {"loads": 4, "evictions": 4, "overcommits": 0, "link_busy_s": T + T + T + T}


@pytest.mark.parametrize("loop", LOOPS)
def test_a_second_class_of_a_loading_model_waits_for_the_load_in_flight(loop):
    # two streams of model b pinned to different cores (two batch classes): the second asks 50 ms after the
    # first and waits in the queue for the rest of the same load, not for a second copy
    hw = Hardware(cores=2, hbm_capacity_bytes=24 * GIB)
    models = (ResidentModel("a", 12 * GIB), ResidentModel("spare", 12 * GIB), ResidentModel("b", 12 * GIB))
    streams = (Stream("b1", model="b", pin=(0,)), Stream("b2", model="b", pin=(1,)))
    sc = scenario(streams=streams, service=DET, hardware=hw, models=models, warmup_fraction=0.0,
                  scheduler=Scheduler(placement="pinned"), residency=ResidencyPolicy("load_then_dispatch"))
    tr = simulate(sc, requests=hand_requests([0.0, 0.05], [0, 1]), loop=_loop(loop))
    assert tr.batch_start_s.tolist() == [T, T]  # both dispatched the instant the one load is in
    assert tr.batch_core.tolist() == [0, 1]
    assert tr.batch_reload_s.tolist() == [T, T - 0.05]
    assert tr.weights_wait.tolist() == [T, T - 0.05]
    assert tr.residency["loads"] == 1 and tr.imbalance_s.tolist() == [0.0, 0.0]  # waiting for weights is
    # not placement blocking, though core 1 idled while b2 waited


def test_hold_is_the_default_and_a_bad_policy_names_file_key_and_value(tmp_path):
    assert load_scenario("memory_residency").residency == ResidencyPolicy("hold")
    bad = tmp_path / "bad.toml"
    bad.write_text('[residency]\ndispatch = "eager"\n\n[[streams]]\nname = "s"\nrate = 1.0\n')
    with pytest.raises(ConfigError) as e:
        load_scenario(bad)
    assert str(e.value) == f"{bad}: residency.dispatch = 'eager': must be one of hold, load_then_dispatch"
    unknown = tmp_path / "unknown.toml"
    unknown.write_text('[residency]\npolicy = "hold"\n\n[[streams]]\nname = "s"\nrate = 1.0\n')
    with pytest.raises(ConfigError, match="residency.policy"):
        load_scenario(unknown)

"""Weights reloads over the host link, by hand: the copy's time, the link's queue, loads still in flight.

A reload copies a model's weights from host memory over the host link (PCIe 5 x16: 64 GB/s),
drawing link / HBM of the HBM bandwidth; the link is one DMA path, so loads queue on it; a
model is usable only once its load has finished. Each case is checked on the residency
object alone, then through the readable loop and the compiled one (same trace, bit for bit).
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import hand_requests, scenario

from workbench.config import ResidentModel, Service, Stream
from workbench.errors import ConfigError
from workbench.hardware import PRESETS, Hardware
from workbench.runtime.engine import simulate
from workbench.runtime.residency import Reload, Residency, link_terms

GIB = 1 << 30
T12 = 12 * GIB / 64e9  # 12 GiB over PCIe 5 x16: 0.201326592 s
DET = Service(law="deterministic", base_s=0.01)


def test_one_reload_of_12_gib_over_pcie5_takes_0_2013_s():
    assert T12 == pytest.approx(0.2013, abs=5e-5)
    hw = Hardware()  # generic-4core: 1.6 TB/s HBM, PCIe 5 x16
    rate, share = link_terms(hw)
    assert rate == 64e9 and share == pytest.approx(0.04)  # 64 GB/s / 1.6 TB/s
    res = Residency([12 * GIB, 12 * GIB, 12 * GIB], 32 * GIB, rate)
    got = res.acquire(2, 1.0)
    assert got == Reload(wait_s=0.0, copy_s=T12) and res.ready_at[2] == 1.0 + T12
    assert (res.loads, res.evictions, res.link_busy_s) == (1, 1, T12)


def test_a_link_faster_than_hbm_copies_at_hbm_speed():
    rate, share = link_terms(Hardware(hbm_bandwidth_bytes_per_s=100e9, host_link_bytes_per_s=450e9))
    assert rate == 100e9 and share == 1.0


def test_presets_carry_their_links():
    assert PRESETS["generic-4core"].host_link_bytes_per_s == 64e9  # PCIe 5 x16
    assert PRESETS["datacenter-8core"].host_link_bytes_per_s == 64e9
    assert PRESETS["edge-2core"].host_link_bytes_per_s == 8e9  # PCIe 4 x4


def test_a_scenario_file_sets_the_link_like_the_other_hardware_keys(tmp_path):
    from workbench.scenario import load_scenario

    path = tmp_path / "s.toml"
    path.write_text('requests = 10\n[hardware]\npreset = "edge-2core"\nhost_link_bytes_per_s = 32e9\n'
                    '[[streams]]\nname = "s"\nrate = 1.0\n')
    hw = load_scenario(str(path)).hardware
    assert hw.host_link_bytes_per_s == 32e9 and hw.cores == 2  # PCIe 4 x16 over the preset's PCIe 4 x4


@pytest.mark.parametrize("bad", [0.0, -64e9, 1e5, float("nan"), float("inf"), 1e17])
def test_a_bad_link_is_refused(bad):
    with pytest.raises(ConfigError, match="host_link_bytes_per_s"):
        Hardware(host_link_bytes_per_s=bad)


def test_two_loads_at_once_queue_on_the_link():
    res = Residency([24 * GIB, 12 * GIB, 12 * GIB], 24 * GIB, 64e9)  # only the first is resident
    first, second = res.acquire(1, 0.0), res.acquire(2, 0.0)
    assert first == Reload(0.0, T12) and second == Reload(T12, T12)  # finish at t and 2t
    assert (first.total_s, second.total_s) == (T12, 2 * T12)
    assert res.link_free_at == 2 * T12 and res.link_busy_s == 2 * T12


def test_a_batch_of_a_model_still_loading_waits_only_the_rest():
    res = Residency([24 * GIB, 12 * GIB], 24 * GIB, 64e9)
    assert res.acquire(1, 0.0) == Reload(0.0, T12)
    assert res.acquire(1, 0.05) == Reload(wait_s=T12 - 0.05)  # the rest of the load, no second copy
    assert res.acquire(1, T12) == Reload()  # loaded: free
    assert res.loads == 1


def _three_models(cores: int) -> tuple:
    hw = Hardware(cores=cores, hbm_capacity_bytes=24 * GIB)  # 1.6 TB/s HBM, 64 GB/s link
    models = (ResidentModel("warm", 24 * GIB), ResidentModel("a", 12 * GIB), ResidentModel("b", 12 * GIB))
    streams = (Stream("a", model="a"), Stream("b", model="b"))
    return scenario(streams=streams, service=DET, hardware=hw, models=models)


@pytest.mark.parametrize("loop", ["python", "compiled"])
def test_two_cores_reloading_at_once_finish_at_t_and_2t(loop):
    if loop == "compiled":
        pytest.importorskip("numba")
    tr = simulate(_three_models(2), requests=hand_requests([0.0, 0.0], [0, 1]), loop=loop)
    assert tr.batch_core.tolist() == [0, 1]
    assert tr.batch_reload_s.tolist() == [T12, T12 + T12]  # the second queued behind the first on the link
    assert tr.batch_end_s.tolist() == [T12 + 0.01, (T12 + T12) + 0.01]
    assert tr.residency == {"loads": 2, "evictions": 1, "overcommits": 0, "link_busy_s": T12 + T12}


@pytest.mark.parametrize("loop", ["python", "compiled"])
def test_a_second_batch_of_a_loading_model_waits_the_rest(loop):
    if loop == "compiled":
        pytest.importorskip("numba")
    tr = simulate(_three_models(2), requests=hand_requests([0.0, 0.05], [0, 0]), loop=loop)
    assert tr.batch_core.tolist() == [0, 1]
    assert tr.batch_reload_s.tolist() == [T12, T12 - 0.05]  # not free, not a second copy: the rest
    assert tr.batch_end_s.tolist() == [T12 + 0.01, 0.05 + (T12 - 0.05) + 0.01]
    assert tr.residency["loads"] == 1


def test_the_copy_draws_link_over_hbm_of_the_bandwidth():
    # beside a phase of demand 1.0 on the other core, a copy asks 0.04: max-min gives it all of it, and the
    # hungry phase runs at 0.96 of its speed while the copy lasts (it would halve beside a demand-1 copy)
    hw = Hardware(cores=2, hbm_capacity_bytes=24 * GIB)
    # "a" runs one microsecond after its copy (demand 1 too, so the two halve each other for 2 us)
    models = (ResidentModel("warm", 24 * GIB), ResidentModel("a", 12 * GIB, service_scale=1e-6),
              ResidentModel("busy", 0))
    sc = scenario(streams=(Stream("a", model="a"), Stream("busy", model="busy")), hardware=hw, models=models,
                  service=Service(law="deterministic", base_s=1.0, memory_share=1.0))
    tr = simulate(sc, requests=hand_requests([0.0, 0.0], [1, 0]), loop="python")
    busy = int(np.flatnonzero(tr.batch_model == 2)[0])
    # over the copy's T12 the busy batch does 0.96 T12 of its 1 s, then loses 1 us beside "a"'s kernel
    assert tr.batch_end_s[busy] == pytest.approx(1.0 + 0.04 * T12 + 1e-6, rel=1e-12)


def test_the_residency_tail_moves_the_physical_way_over_a_region():
    # chapter 05's scenario (three 12 GiB models, chat 800, code 400, a cold embed model at 0.5 req/s) over host
    # links from PCIe 4 x8 to NVLink-C2C and HBM from room for one model to room for all three, one seed:
    # a slower link or less HBM never shortens the tail or raises throughput; with room for all, no reloads
    from workbench.analysis import residency_stats as rs

    links, hbms = (16, 32, 64, 450), (20, 32, 36)
    rows = {(r["link_gbps"], r["hbm_gib"]): r for r in rs.region(links, hbms, embed_rate=0.5, requests=12000)}
    for hbm in hbms:
        for slow, fast in zip(links, links[1:]):
            a, b = rows[(slow, hbm)], rows[(fast, hbm)]
            assert a["p99_s"] >= b["p99_s"] and a["throughput_share"] <= b["throughput_share"], (slow, fast, hbm)
    for link in links:
        one, two, three = (rows[(link, h)] for h in hbms)
        assert one["p99_s"] >= two["p99_s"] >= three["p99_s"], link
        assert one["throughput_share"] <= two["throughput_share"] <= three["throughput_share"], link
        assert three["loads"] == 0 and three["p99_s"] < 0.01  # all three resident: the tail of the service alone
        assert two["loads"] > 0 and two["p99_s"] > 10 * three["p99_s"]  # a rare cold model: a tail of reloads
    # room for one model over PCIe: chat and code evict each other, the link is never idle, throughput collapses
    assert rows[(64, 20)]["link_busy"] > 0.95 and rows[(64, 20)]["throughput_share"] < 0.3
    assert rows[(450, 20)]["throughput_share"] > 0.9  # the same thrash over NVLink-C2C keeps up


def test_more_cold_traffic_means_more_tail_and_then_less_throughput():
    from workbench.analysis import residency_stats as rs
    from workbench.analysis.metrics import summarize
    from workbench.pipeline import run_scenario

    runs = [summarize(run_scenario(rs.residency_scenario(32, rate, 20000))) for rate in (0, 0.5, 2, 20)]
    p99 = [s["latency_s"]["p99"] for s in runs]
    assert p99 == sorted(p99) and runs[0]["residency"]["loads"] == 0
    share = [s["throughput_rps"] / r for s, r in zip(runs, (1200, 1200.5, 1202, 1220))]
    assert share[0] > 0.98 and share[3] < 0.8  # at 20 req/s LRU thrash over PCIe collapses throughput

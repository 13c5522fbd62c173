"""analysis/roofline.py and analysis/knee.py: the chapters' arithmetic, checked by hand."""

from __future__ import annotations

import dataclasses

import pytest

from workbench.analysis import knee as kn
from workbench.analysis import roofline as rl
from workbench.config import Batching
from workbench.models import transformer_block
from workbench.scenario import load_scenario

HW = load_scenario("fusion_memory_bursts").hardware  # 100 TFLOP/s per core, 0.4 TB/s, 4 MiB SRAM
G = transformer_block(1024, 16)
BIG = {"batch": 8, "seq": 1024}


def test_ridge_point_and_roof():
    assert rl.ridge_point(HW) == pytest.approx(250.0)
    assert rl.attainable_flops(2.0, HW) == pytest.approx(0.8e12)  # on the slanted roof
    assert rl.attainable_flops(1000.0, HW) == HW.peak_flops_per_core  # on the flat roof
    assert rl.spill_seconds(0.2e12, HW) == pytest.approx(1.0)  # half the bandwidth


def test_layernorm_is_memory_bound_and_matmul_compute_bound():
    pts = {p.kernel.name: p for p in rl.plan_points(G, "elementwise", BIG, HW)}
    ln = pts["k4_ln2"]
    assert ln.cost.bytes == 2 * 8 * 1024 * 1024 * 2  # read and write 8 x 1024 x 1024 bf16
    assert ln.bound == "memory" and ln.intensity < rl.ridge_point(HW)
    assert ln.cost.seconds == pytest.approx(HW.launch_s + ln.cost.bytes / HW.hbm_bandwidth_bytes_per_s)
    up = pts["k5_up"]
    assert up.bound == "compute" and up.intensity > rl.ridge_point(HW)
    assert up.achieved_flops <= HW.peak_flops_per_core


def test_totals_add_up_and_fusion_cuts_launches():
    el = rl.plan_points(G, "elementwise", BIG, HW)
    ag = rl.plan_points(G, "aggressive", BIG, HW, "naive")
    t = rl.totals(el)
    assert t["kernels"] == 7 and rl.totals(ag)["kernels"] == 3
    assert t["seconds"] == pytest.approx(sum(p.cost.seconds for p in el))
    assert t["flops"] == rl.totals(ag)["flops"]  # fusion moves bytes, never FLOPs


def test_tiling_trade_marks_one_choice_and_prices_the_spill():
    kernel = rl.plan_points(G, "none", {"batch": 1, "seq": 600}, HW)[13].kernel
    rows = rl.tiling_trade(G, kernel, {"batch": 1, "seq": 600}, HW)
    chosen = [r for r in rows if r.chosen]
    assert len(chosen) == 1
    assert chosen[0].cost.seconds == min(r.cost.seconds for r in rows)
    assert all(r.spill_traffic == 2 * r.cost.spill_bytes for r in rows)


def test_depth_sweep_matches_plan_points():
    sweep = rl.depth_sweep(G, BIG, HW, (1, 32), "naive")
    assert sweep[1]["kernels"] == 18 and sweep[32]["kernels"] == 3


def test_bandwidth_timeline_is_under_the_bandwidth():
    pts = rl.plan_points(G, "elementwise", BIG, HW)
    edges, demand = rl.bandwidth_timeline(pts, HW)
    assert len(edges) == len(demand) + 1 and edges[-1] == pytest.approx(rl.totals(pts)["seconds"])
    assert max(demand) <= HW.hbm_bandwidth_bytes_per_s


def test_batch_arithmetic():
    assert kn.batch_service_s(0.002, 0.0005, 4) == pytest.approx(0.004)
    assert kn.batch_capacity(0.002, 0.0005, 16, 2) == pytest.approx(3200.0)
    assert kn.lone_request_latency_s(0.008, 0.002, 0.0005) == pytest.approx(0.0105)


def test_knee_sweep_and_theory_agree_below_capacity():
    base = load_scenario("batching_knee")
    rows = kn.knee_sweep(base, Batching("none", 1, 0.0), (400.0,), requests=6000)
    theory = kn.theory_waits((400.0,), 0.0025, 2, cs2=0.09)
    assert rows[0]["wait_mean_s"] == pytest.approx(theory["G/G/c (Allen-Cunneen)"][0], rel=0.15)
    assert theory["M/M/c"][0] > theory["G/G/c (Allen-Cunneen)"][0]
    one = kn.theory_waits((200.0,), 0.0025, 1, cs2=1.0)
    assert one["G/G/c (Allen-Cunneen)"][0] == pytest.approx(one["M/M/c"][0])  # Kingman is exact for M/M/1
    assert dataclasses.is_dataclass(base)

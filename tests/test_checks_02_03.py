"""Instructor's key for chapters 02 and 03: each checker accepts the worked answer, refuses a wrong one, and
says "not answered yet" for the notebook's placeholder."""

from __future__ import annotations

import pytest

from workbench.analysis import knee as kn
from workbench.config import Batching
from workbench.models import transformer_block
from workbench.scenario import load_scenario
from workbench.ui import checks_02_03 as ck
from workbench.ui.compiler_panels import FusionPanel
from workbench.ui.exercises import NOT_ANSWERED
from workbench.ui.runtime_panels import BatchingPanel


def test_placeholders_are_not_answered():
    fp, bp = FusionPanel(), BatchingPanel()
    hw = load_scenario("fusion_memory_bursts").hardware
    assert ck.smallest_sram_without_spill(fp, ...) == NOT_ANSWERED
    assert ck.aggressive_within_p95(fp, ..., ...) == NOT_ANSWERED
    assert ck.spill_time_ms(..., hw) == NOT_ANSWERED
    assert ck.littles_law_depth(bp, ...) == NOT_ANSWERED
    assert ck.smallest_delay_under_utilisation(bp, ...) == NOT_ANSWERED
    assert ck.first_rate_wait_exceeds_service(bp, ...) == NOT_ANSWERED


def test_fusion_exercises():
    panel = FusionPanel()
    before = panel.values()
    assert ck.smallest_sram_without_spill(panel, 18) == "right"
    assert ck.smallest_sram_without_spill(panel, 17).startswith("not yet:")  # a few bytes still spill
    assert ck.smallest_sram_without_spill(panel, 24).startswith("not yet:")  # no spill, but not the smallest
    assert ck.smallest_sram_without_spill(panel, 20).startswith("not yet:")  # 19 spills again, 18 does not
    assert ck.smallest_sram_without_spill(panel, 8).startswith("not yet:")
    assert ck.smallest_sram_without_spill(panel, "lots").startswith("expected")
    assert ck.aggressive_within_p95(panel, "flash", 4) == "right"
    assert ck.aggressive_within_p95(panel, "naive", 4).startswith("not yet:")
    assert ck.aggressive_within_p95(panel, "naive", 32).startswith("not yet:")  # buying SRAM is not allowed
    assert ck.aggressive_within_p95(panel, "sideways", 4).startswith("expected")
    assert panel.values() == before  # checking never moves the panel


def test_spill_time_exercise():
    hw = load_scenario("fusion_memory_bursts").hardware
    assert ck.spill_time_ms(184 * 2**20 / 0.4e12 * 1e3, hw) == "right"  # 0.482 ms
    assert ck.spill_time_ms(184 * 2**20 / 0.8e12 * 1e3, hw).startswith("not yet:")  # forgot the efficiency


def test_batching_exercises():
    panel = BatchingPanel()
    before = panel.values()
    assert ck.littles_law_depth(panel, 1200 * 2.35e-3) == "right"  # 2.82 waiting; the run measures 2.82
    assert ck.littles_law_depth(panel, 1200 * 2.35).startswith("not yet:")  # W in ms
    assert ck.littles_law_depth(panel, 2.03).startswith("not yet:")  # section 5's default setting, printed
    assert ck.smallest_delay_under_utilisation(panel, 1.5) == "right"
    assert ck.smallest_delay_under_utilisation(panel, 2.0).startswith("not yet:")
    assert ck.smallest_delay_under_utilisation(panel, 1.3).startswith("expected")
    assert ck.first_rate_wait_exceeds_service(panel, 650) == "right"
    assert ck.first_rate_wait_exceeds_service(panel, 600).startswith("not yet:")  # M/M/2's answer
    assert ck.first_rate_wait_exceeds_service(panel, 750).startswith("not yet:")
    assert ck.first_rate_wait_exceeds_service(panel, 625).startswith("expected")
    assert ck.smallest_delay_under_utilisation(panel, 1.75).startswith("not yet:")  # the window-only estimate
    assert panel.values() == before


def test_batch_formation_arithmetic():
    """Chapter 03's low-load batcher formulas and utilisation from the mean batch, by hand and against runs."""
    assert kn.window_batch(250.0, 16, 0.002) == pytest.approx(1.5)
    assert kn.window_batch(1500.0, 4, 0.008) == 4.0  # max_batch caps it
    assert kn.fill_time_s(250.0, 16, 0.002) == 0.002 and kn.fill_time_s(1500.0, 7, 0.008) == pytest.approx(0.004)
    assert kn.window_wait_s(250.0, 0.008) == pytest.approx((0.008 + 2 * 0.004) / 3)
    assert kn.min_batch_for(1500.0, 0.002, 0.0005, 2) == 3 and kn.min_batch_for(5000.0, 0.002, 0.0005, 2) == 0
    assert kn.batched_utilisation(1500.0, 0.002, 0.0005, 4.0, 2) == pytest.approx(0.75)
    base = load_scenario("batching_knee")
    low = kn.knee_sweep(base, Batching("dynamic", 16, 0.008), (250.0,), requests=6000)[0]
    assert low["batch_mean"] == pytest.approx(3.0, rel=0.03)
    assert low["wait_mean_s"] == pytest.approx(kn.window_wait_s(250.0, 0.008), rel=0.03)
    busy = kn.knee_sweep(base, Batching("dynamic", 16, 0.002), (1500.0,), requests=6000)[0]
    rho = kn.batched_utilisation(busy["throughput"], 0.002, 0.0005, busy["batch_mean"], 2)
    assert busy["utilisation"] == pytest.approx(rho, rel=0.03)


def test_plan_batch_law_and_idle_while_waiting():
    """The compiled plan's batch time is launches + a per-request part; a batcher idles cores while work waits."""
    hw = load_scenario("fusion_memory_bursts").hardware
    batches = (1, 2, 4, 8)
    secs = kn.plan_batch_seconds(transformer_block(1024, 16), "elementwise", 128, hw, batches)
    base_s, per_item_s = kn.affine_fit(batches, secs)
    assert base_s == pytest.approx(9 * hw.launch_s, abs=1e-9) and per_item_s > 0
    sc = load_scenario("batching_knee")
    fifo = kn.knee_trace(sc, 600.0, Batching("none", 1, 0.0), requests=4000)
    held, idle = kn.idle_while_waiting_s(fifo, 0.5, 2.0)
    assert held == 0 and 0.2 < idle / 4.0 < 0.35  # work-conserving; about 26% idle at rho 0.75
    window = kn.knee_trace(sc, 1500.0, Batching("dynamic", 16, 0.008), requests=4000)
    held, idle = kn.idle_while_waiting_s(window, 0.5, 2.0)
    assert 0.4 < held / 4.0 <= idle / 4.0

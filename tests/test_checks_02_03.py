"""Instructor's key for chapters 02 and 03: each checker accepts the worked answer, refuses a wrong one, and
says "not answered yet" for the notebook's placeholder."""

from __future__ import annotations

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
    assert ck.littles_law_depth(panel, 2.0) == "right"
    assert ck.littles_law_depth(panel, 1500 * 1.378).startswith("not yet:")  # W in ms
    assert ck.smallest_delay_under_utilisation(panel, 1.5) == "right"
    assert ck.smallest_delay_under_utilisation(panel, 2.0).startswith("not yet:")
    assert ck.smallest_delay_under_utilisation(panel, 1.3).startswith("expected")
    assert ck.first_rate_wait_exceeds_service(panel, 650) == "right"
    assert ck.first_rate_wait_exceeds_service(panel, 750).startswith("not yet:")
    assert panel.values() == before

"""Instructor's key for chapter 08: each checker accepts the worked answer, refuses a wrong one with a hint,
says what it expected for a wrong type, and says "not answered yet" for the notebook's placeholder."""

from __future__ import annotations

from workbench.scenario import load_scenario
from workbench.ui.exercises import serving as ck
from workbench.ui.exercises.base import NOT_ANSWERED
from workbench.ui.panels.serving import ServingPanel

SC = load_scenario("llm_chunked_prefill")


def test_placeholders_are_not_answered():
    p = ServingPanel()
    assert ck.decode_ridge(SC, ...) == NOT_ANSWERED
    assert ck.break_even_link(SC, ...) == NOT_ANSWERED
    assert ck.smallest_cache_accepted(SC, ...) == NOT_ANSWERED
    assert ck.budget_for_both(p, ..., ...) == NOT_ANSWERED


def test_arithmetic_exercises():
    assert ck.decode_ridge(SC, 63) == "right" and ck.decode_ridge(SC, 65) == "right"  # 200 TFLOP/s / 3.2 TB/s
    assert ck.decode_ridge(SC, 125).startswith("not yet:")  # the printed ridge: the bandwidth doubled
    assert ck.decode_ridge(SC, 250).startswith("not yet:")  # doubled the wrong way
    assert ck.decode_ridge(SC, 8).startswith("not yet:") and ck.decode_ridge(SC, "many").startswith("expected")
    assert ck.break_even_link(SC, 23.4) == "right"  # 2 x 1,500 x 32 KiB / 4.21 ms (fitted) = 23.4 GB/s
    assert ck.break_even_link(SC, 11.7).startswith("not yet:")  # one way only
    assert ck.break_even_link(SC, 36.0).startswith("not yet:")  # recompute at the roofline (2.73 ms)
    assert ck.break_even_link(SC, 32.0).startswith("not yet:")  # the link the scenario has
    assert ck.break_even_link(SC, "fast").startswith("expected")
    assert ck.smallest_cache_accepted(SC, 404) == "right"  # 6,400 tokens = 400 blocks, and 4 kept free
    assert ck.smallest_cache_accepted(SC, 400).startswith("not yet:")  # forgot the watermark
    assert ck.smallest_cache_accepted(SC, 405).startswith("not yet:")
    assert ck.smallest_cache_accepted(SC, 40.5).startswith("expected")


def test_budget_exercise_runs_the_panel_model_without_moving_it():
    p = ServingPanel()
    before = p.values()
    assert ck.budget_for_both(p, True, 4096) == "right"  # ITL p99 1.14 ms, TTFT p99 18.6 ms
    assert ck.budget_for_both(p, True, 3072) == "right"  # ITL p99 1.19 ms, TTFT p99 18.4 ms: the smallest
    assert ck.budget_for_both(p, False, 8192).startswith("not yet:")  # whole prompts: ITL p99 1.50 ms
    assert ck.budget_for_both(p, True, 256).startswith("not yet:")  # ITL p99 1.14 ms, but TTFT p99 27.6 ms
    assert ck.budget_for_both(p, True, 512).startswith("not yet:")  # ITL p99 1.70 ms, TTFT p99 21.4 ms
    assert ck.budget_for_both(p, True, 2048).startswith("not yet:")  # ITL p99 1.46 ms: not monotone
    assert ck.budget_for_both(p, True, 2816).startswith("not yet:")  # ITL p99 1.22 ms
    assert ck.budget_for_both(p, "yes", 2048).startswith("expected")
    assert p.values() == before

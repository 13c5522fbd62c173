"""The instructor's key for chapters 00 and 01: each checker accepts the worked answer, refuses a wrong one,
and says "not answered yet" to the placeholder; checking never moves the panel."""

from __future__ import annotations

from workbench.analysis.envelope_stats import lognormal_quantile, lognormal_share
from workbench.ui import checks_00_01 as ck
from workbench.ui.compiler_panels import ShapeEnvelopePanel
from workbench.ui.exercises import NOT_ANSWERED


def test_littles_law_depth():
    s = ck.tour_summary()
    assert ck.littles_law_depth(...) == NOT_ANSWERED
    assert ck.littles_law_depth(s["throughput_rps"] * s["wait_s"]["mean"]) == "right"
    assert ck.littles_law_depth(s["throughput_rps"] * s["latency_s"]["mean"]).startswith("not yet:")
    assert ck.littles_law_depth("many").startswith("expected")


def test_core_utilisation():
    s = ck.tour_summary()
    batches_per_s = s["throughput_rps"] / s["batch_size"]["mean"]
    from workbench.pipeline import run_scenario
    from workbench.scenario import load_scenario

    tr = run_scenario(load_scenario(ck.TOUR_SCENARIO))
    mean_batch_s = float((tr.batch_end_s - tr.batch_start_s).mean())
    assert ck.core_utilisation(...) == NOT_ANSWERED
    assert ck.core_utilisation(batches_per_s * mean_batch_s / 4) == "right"
    assert ck.core_utilisation(s["throughput_rps"] * mean_batch_s / 4).startswith("not yet:")  # requests, not batches


def test_tour_envelope():
    largest = lognormal_quantile(0.99, 900, 0.5)
    assert 2048 < largest < 4096
    assert ck.tour_envelope(...) == NOT_ANSWERED
    assert ck.tour_envelope([512, 1024, 2048, 4096]) == "right"
    assert ck.tour_envelope([256, 512, 1024, 2048]).startswith("not yet:")
    assert ck.tour_envelope([128, 256, 512, 1024, 4096]).startswith("expected")  # five buckets


def test_padded_share():
    panel = ShapeEnvelopePanel()
    before = panel.values()
    assert ck.padded_share(panel, ...) == NOT_ANSWERED
    assert ck.padded_share(panel, lognormal_share(129, 255, 200, 0.4)) == "right"
    assert ck.padded_share(panel, lognormal_share(513, 4096, 200, 0.4)).startswith("not yet:")
    assert panel.values() == before


def test_envelope_for_median_600():
    panel = ShapeEnvelopePanel()
    assert ck.envelope_for_median_600(panel, ..., "128 / 256 / 512") == NOT_ANSWERED
    assert ck.envelope_for_median_600(panel, "fallback", "128 ... 2048 (5 buckets)") == "right"
    assert ck.envelope_for_median_600(panel, "reject", "128 / 256 / 512").startswith("not yet:")
    assert ck.envelope_for_median_600(panel, "sideways", "128 / 256 / 512").startswith("expected")


def test_recompile_budget_runs_out():
    panel = ShapeEnvelopePanel()
    before = panel.values()
    assert ck.recompile_budget_runs_out(panel, ..., 1.2, 2048, "gap: 64-128, 256-512") == NOT_ANSWERED
    assert ck.recompile_budget_runs_out(panel, 32, 1.2, 2048, "gap: 64-128, 256-512") == "right"
    assert ck.recompile_budget_runs_out(panel, 2048, 1.2, 2048, "128 / 256 / 512").startswith("not yet:")
    assert ck.recompile_budget_runs_out(panel, 5000, 1.2, 2048, "128 / 256 / 512").startswith("expected")
    assert panel.values() == before

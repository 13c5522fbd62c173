"""The instructor's key for chapters 00 and 01: each checker accepts the worked answer, refuses a wrong one,
and says "not answered yet" to the placeholder; checking never moves the panel."""

from __future__ import annotations

import pytest

from workbench.analysis.envelope_stats import (
    lognormal_cdf,
    lognormal_quantile,
    lognormal_share,
    mean_with_slice,
    slice_quantile,
)
from workbench.ui.exercises import tour_envelopes as ck
from workbench.ui.exercises.base import NOT_ANSWERED
from workbench.ui.panels.compiler import ShapeEnvelopePanel


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
    assert ck.padded_share(panel, lognormal_share(129, 255, 272, 0.4) + lognormal_share(1, 63, 272, 0.4)) == "right"
    assert ck.padded_share(panel, 0.595).startswith("not yet:")  # section 4's printed share at median 200
    assert ck.padded_share(panel, lognormal_share(513, 4096, 272, 0.4)).startswith("not yet:")
    assert panel.values() == before


def test_envelope_for_median_600():
    panel = ShapeEnvelopePanel()
    before = panel.values()
    assert ck.envelope_for_median_600(panel, ..., "128 / 256 / 512") == NOT_ANSWERED
    assert ck.envelope_for_median_600(panel, "fallback", "128 ... 2048 (5 buckets)") == "right"   # cover the lengths
    assert ck.envelope_for_median_600(panel, "recompile", "128 / 256 / 512") == "right"  # or give each a bucket
    assert ck.envelope_for_median_600(panel, "fallback", "128 / 256 / 512").startswith("not yet:")  # 2.2 ms
    assert ck.envelope_for_median_600(panel, "fallback", "128 / 256 / 512 / 1024").startswith("not yet:")
    assert ck.envelope_for_median_600(panel, "pad", "128 ... 2048 (5 buckets)").startswith("not yet:")  # refuses > 2048
    assert ck.envelope_for_median_600(panel, "reject", "128 / 256 / 512").startswith("not yet:")
    assert ck.envelope_for_median_600(panel, "sideways", "128 / 256 / 512").startswith("expected")
    assert panel.values() == before


def test_p99_inside_slow_slice():
    panel = ShapeEnvelopePanel()
    before = panel.values()
    share = 1 - lognormal_cdf(512.5, 288, 0.4)  # the learner's arithmetic: 7.5% past 512 tokens
    assert 0.074 < share < 0.076
    assert ck.p99_inside_slow_slice(panel, ...) == NOT_ANSWERED
    assert ck.p99_inside_slow_slice(panel, slice_quantile(share)) == "right"   # 1 - 0.01 / 0.075 = 0.87
    assert ck.p99_inside_slow_slice(panel, 0.78).startswith("not yet:")        # median 260's position, printed
    assert ck.p99_inside_slow_slice(panel, 0.99).startswith("not yet:")        # "p99 is the slice's p99"
    assert ck.p99_inside_slow_slice(panel, 0.5).startswith("not yet:")         # the 2% rule of thumb, not this share
    assert ck.p99_inside_slow_slice(panel, 1.5).startswith("expected")
    assert panel.values() == before


def test_slice_arithmetic():
    assert slice_quantile(0.02) == pytest.approx(0.5)
    assert slice_quantile(0.009) is None and slice_quantile(0.01) is None
    assert mean_with_slice(1.0, 0.02, 4.0) == pytest.approx(1.06)
    with pytest.raises(ValueError):
        slice_quantile(1.5)


def test_tail_step_figure():
    from workbench.ui.figures.envelopes import tail_step_figure

    fig = tail_step_figure([0.005, 0.02], [0.17, 0.19], [0.34, 0.71])
    ax = fig.axes[0]
    assert [line.get_label() for line in ax.get_lines()][:2] == ["p99", "mean"]
    assert "ms" in ax.get_ylabel() and "%" in ax.get_xlabel()
    assert fig.dpi >= 100


def test_recompile_budget_runs_out():
    panel = ShapeEnvelopePanel()
    before = panel.values()
    assert ck.recompile_budget_runs_out(panel, ..., 1.2, 2048, "gap: 64-128, 256-512") == NOT_ANSWERED
    assert ck.recompile_budget_runs_out(panel, 32, 1.2, 2048, "gap: 64-128, 256-512") == "right"
    assert ck.recompile_budget_runs_out(panel, 2048, 1.2, 2048, "128 / 256 / 512").startswith("not yet:")
    assert ck.recompile_budget_runs_out(panel, 5000, 1.2, 2048, "128 / 256 / 512").startswith("expected")
    assert panel.values() == before

"""Latency panels draw tails you can see, and panels say what they do (issue 37, items 2 and 3).

The survival view by hand (points, floor, percentile marks), then each fix through the panels: drift
is an explicit switch in 01, 06 does not compare two scenarios, labels use the controls' words, 08 says
OVERLOADED once, and 04's overload note appears where chapter 04 says it does (share 0.53 at 0.95).
"""

from __future__ import annotations

import numpy as np

from workbench.tail_axes import PERCENTILES, survival_floor, survival_xy
from workbench.ui.figures.base import new_figure
from workbench.ui.figures.survival import SurvivalView
from workbench.ui.panels.closed_loop import ClosedLoopPanel
from workbench.ui.panels.compiler import FusionPanel, ShapeEnvelopePanel
from workbench.ui.panels.runtime import FairnessPanel
from workbench.ui.panels.serving import ServingPanel


def test_survival_points_by_hand():
    lat = np.array([1.0, 2.0, 3.0, 4.0])
    x, s = survival_xy(lat)
    assert list(x) == [1.0, 2.0, 3.0, 4.0] and list(s) == [0.875, 0.625, 0.375, 0.125]  # (k - 0.5) / n
    x, s = survival_xy(np.sort(np.random.default_rng(1).exponential(size=100_000)))
    assert len(x) <= 600 and np.all(np.diff(x) >= 0) and np.all(np.diff(s) < 0) and s[-1] == 0.5 / 100_000


def test_the_floor_is_1e_4_only_with_20_samples_beyond_it():
    assert survival_floor(50_350) == 1e-3  # a panel's measured requests: 50 beyond 1e-3, 5 beyond 1e-4
    assert survival_floor(199_999) == 1e-3 and survival_floor(200_000) == 1e-4
    assert survival_floor(10) == 1e-3  # never shallower than 1e-3


def test_the_view_marks_four_percentiles_of_both_runs():
    fig, (ax, _) = new_figure(2)
    view = SurvivalView(ax)
    rng = np.random.default_rng(7)
    cur, base = np.sort(rng.lognormal(0, 1, 300_000)), np.sort(rng.lognormal(0, 0.5, 300_000))
    view.update(cur, base)
    assert ax.get_yscale() == "log" and ax.get_ylim()[0] == 0.5e-4  # 300,000 samples: down to 1e-4
    assert list(view.cur_dots.get_ydata()) == [1 - q / 100 for q in PERCENTILES]
    assert np.allclose(view.cur_dots.get_xdata(), np.percentile(cur, PERCENTILES))
    assert np.allclose(view.base_dots.get_xdata(), np.percentile(base, PERCENTILES))
    texts = [t.get_text() for t in view.legend.get_texts()]
    assert texts[0].startswith("baseline: p99 ") and texts[1].startswith("this run: p99 ") and "p99.9" in texts[1]
    right = ax.child_axes[0]
    assert [t.get_text() for t in right.get_yticklabels()] == ["p50", "p95", "p99", "p99.9"]
    view.update(cur[:50_000])
    assert ax.get_ylim()[0] == 0.5e-3 and len(view.base.get_xdata()) == 0  # no baseline: no grey curve


def test_every_latency_panel_draws_a_survival_view():
    for cls in (ShapeEnvelopePanel, FusionPanel, ClosedLoopPanel):
        assert isinstance(cls().cdf, SurvivalView)


def test_drift_is_an_explicit_switch():
    p = ShapeEnvelopePanel()
    assert p.ctrl["drift_to"].disabled and not p.ctrl["drift"].value
    p.ctrl["median"].value = 700  # alone: the median moves, no drift appears
    assert p.values()["drift_to"] == 700 and "median 700 tokens, no drift" in p.summary.value
    p.ctrl["drift_to"].value = 300  # greyed out and ignored while the switch is off
    assert p.values()["drift_to"] == 700
    p.ctrl["drift"].value = True
    assert not p.ctrl["drift_to"].disabled and "median drifts 700 -&gt; 300 tokens" in p.summary.value
    p.ctrl["drift"].value = False
    assert "no drift" in p.summary.value


def test_a_scenario_switch_resets_the_baseline_and_compares_nothing():
    p = ClosedLoopPanel(scenario="placement_skew")
    p.ctrl["scenario"].value = "shape_drift"
    assert "what changed" not in p.summary.value and "scenario changed (placement_skew -&gt; shape_drift)" \
        in p.summary.value
    assert p.baseline is p.result
    p.ctrl["threshold"].value = 0.3  # same scenario: compared, and the kept run is drawn dashed
    assert p.baseline is not p.result and len(p.kept_after.get_xdata()) > 0
    assert "what changed" in p.summary.value or "no effect" in p.summary.value


def test_labels_use_the_controls_words_not_their_keys():
    p = FusionPanel()
    p.ctrl["sram_mib"].value = 5  # a change within noise or not: the line never names the key
    p.ctrl["sram_mib"].value = 6
    text = p.full_text(p.result)
    assert "sram_mib" not in text and "memory_contention" not in text and "_" not in text.split("\n")[-1]


def test_overloaded_is_said_once():
    p = ServingPanel()
    p.ctrl["load"].value = 6.0
    assert p.full_text(p.result).count("OVERLOADED") == 1


def test_the_pinned_overload_note_appears_where_the_chapter_says():
    p = FairnessPanel(placement="pinned", skew=0.52)  # core 0 offered 0.988 of its capacity: no note
    assert "OVERLOADED" not in p.summary.value and not p.result["summary"]["load"]["overloaded"]
    p.ctrl["skew"].value = 0.53  # 1.007: the chapter's prompt 3 expects the note here
    assert p.full_text(p.result).count("OVERLOADED") == 1 and "core 0 (interactive) is offered 1.007" \
        in p.summary.value
    assert not p.result["summary"]["load"]["overloaded"]  # the run's summary itself is unchanged
    p.ctrl["skew"].value = 0.6  # the run's own test also flags it: still one note
    assert p.full_text(p.result).count("OVERLOADED") == 1

"""The notebook panels, driven from Python: values change, the figure and the summary follow the mechanism."""

from __future__ import annotations

import ipywidgets as w
import pytest

from workbench.errors import ConfigError
from workbench.ui.panels.base import Panel, slider
from workbench.ui.panels.closed_loop import ClosedLoopPanel
from workbench.ui.panels.compiler import FusionPanel, ShapeEnvelopePanel
from workbench.ui.panels.runtime import BatchingPanel, FairnessPanel, ResidencyPanel


def test_shape_envelope_panel_drift_lowers_hit_rate_and_raises_p99():
    p = ShapeEnvelopePanel()
    inside = p.result["summary"]
    image = p.image.value
    p.ctrl["median"].value = 700
    p.ctrl["drift_to"].value = 700
    outside = p.result["summary"]
    assert outside["bucket_hit_rate"] < 0.5 < 0.95 < inside["bucket_hit_rate"]
    assert outside["latency_s"]["p99"] > 1.5 * inside["latency_s"]["p99"]
    assert p.image.value != image and "seq &gt; 512" in p.summary.value  # HTML-escaped in the widget
    p.ctrl["envelope"].value = "128 ... 2048 (5 buckets)"  # buckets that cover the drift
    assert p.result["summary"]["bucket_hit_rate"] > 0.99
    p.ctrl["policy"].value = "reject"
    p.ctrl["envelope"].value = "128 / 256 / 512"
    assert p.result["summary"]["rejected_by"]["out_of_envelope"] > 0


def test_fusion_panel_shows_spills_and_a_worse_p95_under_load():
    p = FusionPanel()  # the shipped scenario: aggressive, flash attention, 4 MiB SRAM, 8 cores, 6,610 req/s
    assert p.values() == {"fusion": "aggressive", "attention": "flash", "sram_mib": 4.0, "rate": 6610.0, "cores": 8}
    assert p.ctrl["sram_mib"].min == 1  # down to where neither plan carries the shipped load
    agg = p.result["summary"]
    p.ctrl["fusion"].value = "elementwise"
    ew = p.result["summary"]
    assert agg["spill_bytes_per_request"] > 5 * ew["spill_bytes_per_request"]  # the MLP chain's spill: about 10x
    assert 1.15 < agg["latency_s"]["p95"] / ew["latency_s"]["p95"] < 1.4  # about a quarter worse
    assert agg["tail_drivers"]["memory_contention"] > ew["tail_drivers"]["memory_contention"] + 0.1  # 63 % vs 46 %
    assert "memory contention" in p.summary.value
    p.ctrl["sram_mib"].value = 8  # the chain's 512-row tile fits: aggressive fusion wins
    ew8 = p.result["summary"]
    p.ctrl["fusion"].value = "aggressive"
    assert p.result["summary"]["latency_s"]["p95"] < ew8["latency_s"]["p95"]
    p.ctrl["sram_mib"].value = 1  # both plans' GEMMs overflow: neither carries the load
    assert p.result["summary"]["load"]["overloaded"] and "OVERLOADED" in p.summary.value
    p.ctrl["fusion"].value = "elementwise"
    assert p.result["summary"]["load"]["overloaded"]


def test_fusion_panel_run_takes_a_depth_cap():
    p = FusionPanel()
    capped = p.run(**p.values(), max_depth=4)["summary"]  # the MLP chain cut at its down-projection
    assert capped["launches_per_request"] > p.result["summary"]["launches_per_request"]  # 6 kernels, not 3
    assert capped["latency_s"]["p95"] < p.result["summary"]["latency_s"]["p95"]
    assert capped["spill_bytes_per_request"] < p.result["summary"]["spill_bytes_per_request"] / 3


def test_batching_panel_longer_delay_bigger_batches_longer_waits():
    p = BatchingPanel(max_delay_ms=0.5)
    short = p.result["summary"]
    p.ctrl["max_delay_ms"].value = 8.0
    long = p.result["summary"]
    assert long["batch_size"]["mean"] > short["batch_size"]["mean"]
    assert long["wait_s"]["p50"] > short["wait_s"]["p50"]
    p.ctrl["policy"].value = "none"  # over capacity without batching: the panel says so
    assert "OVERLOADED: arrival rate" in p.summary.value and "exceeds capacity" in p.summary.value


def test_fairness_panel_weights_move_per_stream_p99():
    p = FairnessPanel()  # strict priority: batch starves
    strict = p.result["summary"]["streams"]
    assert strict["batch"]["latency_s"]["p99"] > 5 * strict["interactive"]["latency_s"]["p99"]
    p.ctrl["discipline"].value = "weighted"
    p.ctrl["batch_weight"].value = 4.0
    fair = p.result["summary"]["streams"]
    assert fair["batch"]["latency_s"]["p99"] < strict["batch"]["latency_s"]["p99"]
    assert "Jain" in p.summary.value


def test_fairness_panel_pinned_under_skew_gives_one_hot_core():
    p = FairnessPanel(discipline="fifo", load=0.7)
    balanced = p.result["summary"]
    p.ctrl["placement"].value = "pinned"
    p.ctrl["skew"].value = 0.85
    skewed = p.result["summary"]
    assert skewed["cores"]["imbalance"] > 1.4 > 1.05 > balanced["cores"]["imbalance"]
    assert skewed["latency_s"]["p99"] > 2 * balanced["latency_s"]["p99"]
    assert skewed["tail_drivers"]["core_imbalance"] > 0.3


def test_residency_panel_more_hbm_no_reloads():
    p = ResidencyPanel()
    assert p.result["summary"]["residency"]["loads"] > 0
    p.ctrl["hbm_gib"].value = 40
    assert p.result["summary"]["residency"]["loads"] == 0


def test_residency_panel_load_then_dispatch_frees_the_cores():
    p = ResidencyPanel()
    held = p.result["summary"]["latency_s"]["p99"]
    p.ctrl["dispatch"].value = "load_then_dispatch"
    tr = p.result["trace"]
    assert tr.reload_queued and p.result["summary"]["latency_s"]["p99"] < 0.8 * held
    assert (tr.batch_work_s < 0.05).all()  # no batch holds its core for a 201 ms load


def test_closed_loop_panel_proposes_and_guards():
    p = ClosedLoopPanel(scenario="placement_skew")
    assert p.result.final_actions == ("placement",) and "least-loaded" in p.summary.value


def test_refused_configuration_shows_its_message_and_keeps_the_old_image():
    class Refusing(Panel):
        ncols = 1

        def controls(self):
            return {"x": slider(1, 0, 2, 1, "x", integer=True)}

        def run(self, x):
            if x == 0:
                raise ConfigError("x", x, "must be >= 1")
            return {"x": x}

        def layout(self):
            (self.line,) = self.axes[0].plot([0, 1], [0, 1])

        def draw(self, r, prev):
            self.line.set_ydata([0, r["x"]])

        def text(self, r):
            return f"x = {r['x']}"

    p = Refusing()
    p.ctrl["x"].value = 2
    image = p.image.value
    p.ctrl["x"].value = 0
    assert "refused" in p.summary.value and "must be &gt;= 1" in p.summary.value
    assert p.image.value == image and p.result == {"x": 2}  # the last setting that ran stays on screen
    p.ctrl["x"].value = 1
    assert p.image.value != image and p.previous == {"x": 2}  # the refused setting is not a "previous run"


def png_size(data: bytes) -> tuple[int, int]:
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


@pytest.mark.parametrize("cls, name, value", [(ShapeEnvelopePanel, "median", 700), (FusionPanel, "fusion", "none"),
                                              (BatchingPanel, "max_delay_ms", 8.0), (FairnessPanel, "skew", 0.7),
                                              (ResidencyPanel, "hbm_gib", 40)])
def test_a_change_redraws_the_same_figure_and_artists_in_place(cls, name, value):
    p = cls()
    fig, axes = p.fig, list(p.fig.axes)
    artists = [(list(ax.lines), list(ax.patches), list(ax.texts)) for ax in axes]
    image = p.image.value
    states = []
    p.summary.observe(lambda change: states.append(change["new"]), names="value")
    p.ctrl[name].value = value
    assert p.fig is fig and list(p.fig.axes) == axes  # no new figure, no new axes
    assert [(list(ax.lines), list(ax.patches), list(ax.texts)) for ax in axes] == artists  # moved, not rebuilt
    assert p.image.value != image and png_size(p.image.value)[0] >= 100 * p.figure_size[0]  # >= 100 dpi
    assert "running&hellip;" in states[0] and "running" not in states[-1]
    assert "what changed:" in p.summary.value or "no effect:" in p.summary.value
    assert p.result["summary"]["measured"] >= 50_000  # p99 over >= 500 requests


def test_the_baseline_is_drawn_in_grey_and_kept_until_reset():
    from workbench.palette import BASELINE, CURRENT

    p = ShapeEnvelopePanel()
    assert len(p.cdf.base.get_xdata()) == 0  # the baseline is the first run itself: no grey curve yet
    first = p.cdf.cur.get_xdata().copy()
    p.ctrl["median"].value = 700
    assert (p.cdf.base.get_xdata() == first).all() and p.cdf.base.get_color() == BASELINE
    assert p.cdf.cur.get_color() == CURRENT
    assert "what changed: p99 x" in p.summary.value and "higher" in p.summary.value
    p.ctrl["median"].value = 300  # a second change: the grey curve is still the first run
    assert (p.cdf.base.get_xdata() == first).all()
    assert "what changed: p99 x" in p.summary.value and "lower" in p.summary.value  # against 700, not the grey 200
    second = p.cdf.cur.get_xdata().copy()
    p.reset.click()  # "reset baseline": the current run becomes the baseline, nothing is re-run
    assert p.baseline is p.result and len(p.cdf.base.get_xdata()) == 0 and len(p.timings_s) == 3
    assert "baseline reset" in p.summary.value
    p.ctrl["sigma"].value = 0.6
    assert (p.cdf.base.get_xdata() == second).all()


def test_residency_reloads_are_counted_per_bin_not_drawn_as_a_band():
    from workbench.ui.panels.runtime import RELOAD_BINS

    p = ResidencyPanel()
    heights = [b.get_height() for b in p.reloads.patches]
    reloads = int((p.result["trace"].batch_reload_s > 0).sum())
    assert len(heights) == RELOAD_BINS and sum(heights) == reloads > 0
    assert f"{reloads} batches waited for weights" in p.axes[0].get_title()


def test_closed_loop_threshold_decides_under_the_pinned_tradeoff():
    p = ClosedLoopPanel(scenario="pinned_tradeoff", threshold=0.05)
    (verdict,) = p.result.summary["loop"]["verdicts"]
    assert p.result.final_actions == () and not verdict["accepted"] and 0.1 < verdict["worst"] < 0.3
    strict_p99 = p.result.final_summary["latency_s"]["p99"]
    p.ctrl["threshold"].value = 0.3
    assert p.result.final_actions == ("placement",)
    assert p.result.final_summary["latency_s"]["p99"] < strict_p99 / 5
    assert "the loop now keeps placement (was no action)" in p.summary.value
    p.ctrl["threshold"].value = 0.4  # both thresholds above the cold stream's regression: same verdict
    assert "no effect: every action" in p.summary.value


def test_closed_loop_panel_draws_in_the_palette_colours():
    from workbench.palette import BASELINE, CURRENT

    p = ClosedLoopPanel(scenario="placement_skew")
    assert {p.cdf.cur.get_color(), p.cdf.base.get_color()} == {CURRENT, BASELINE}
    assert not {"tab:red", "tab:blue"} & {line.get_color() for line in p.axes[0].lines}


@pytest.mark.parametrize("cls", [ShapeEnvelopePanel, FusionPanel, BatchingPanel, FairnessPanel, ResidencyPanel])
def test_controls_only_allow_valid_values_and_never_update_mid_drag(cls):
    p = cls()
    for c in p.ctrl.values():
        if isinstance(c, w.IntSlider | w.FloatSlider):
            assert not c.continuous_update and c.min >= 0
            if c.description in ("cores", "max batch", "max depth"):
                assert c.min >= 1
        if isinstance(c, w.Dropdown):
            assert c.value in c.options
    assert len(p.timings_s) == 1 and p.image.value[:4] == b"\x89PNG"


def test_refused_requests_and_overload_are_always_said():
    from workbench.ui.figures import base as f
    from workbench.ui.panels.compiler import ShapeEnvelopePanel

    panel = ShapeEnvelopePanel()
    panel.ctrl["median"].value = panel.ctrl["median"].max
    panel.ctrl["policy"].value = "reject"
    assert "REFUSED:" in panel.summary.value and "over completed requests only" in panel.summary.value
    panel.ctrl["policy"].value = "fallback"  # nothing refused: nothing said
    assert "REFUSED" not in panel.summary.value
    overloaded = {"rejected": 0, "refused_share": 0.0, "load": {"overloaded": True, "note": "queue grows 40 req/s"}}
    assert f.status_text(overloaded) == "OVERLOADED: queue grows 40 req/s"
    overloaded["load"] |= {"offered_rps": 3000.0}
    overloaded["throughput_rps"] = 2100.0
    assert f.status_text(overloaded).startswith("OVERLOADED: arrival rate 3000 req/s exceeds capacity ~2100 req/s")
    assert f.status_text({"rejected": 0, "refused_share": 0.0, "load": {"overloaded": False}}) == ""


def test_pad_past_the_largest_bucket_says_it_refuses_like_reject():
    from workbench.ui.panels.compiler import ShapeEnvelopePanel

    panel = ShapeEnvelopePanel()
    panel.ctrl["median"].value = panel.ctrl["median"].max
    panel.ctrl["policy"].value = "pad"
    assert "refused exactly as under reject" in panel.summary.value
    panel.ctrl["envelope"].value = "128 ... 2048 (5 buckets)"
    panel.ctrl["median"].value = 128
    panel.ctrl["drift_to"].value = 128  # everything fits a bucket: nothing refused, nothing to say
    assert panel.result["summary"]["rejected_by"]["out_of_envelope"] == 0
    assert "exactly as under reject" not in panel.summary.value


def test_tour_panel_drift_switch_reproduces_the_tour_and_keeps_the_baseline():
    from workbench.analysis.metrics import summarize
    from workbench.pipeline import run_scenario
    from workbench.scenario import load_scenario
    from workbench.ui.panels.tour import TourDriftPanel

    p = TourDriftPanel()
    steady = p.result["summary"]
    assert p.ctrl["drift_to"].disabled and "no drift" in p.summary.value
    p.ctrl["drift"].value = True
    drift = p.result["summary"]
    assert not p.ctrl["drift_to"].disabled and p.baseline["summary"] is steady  # the grey run stays the first
    assert drift["latency_s"]["p99"] == summarize(run_scenario(load_scenario("shape_drift")))["latency_s"]["p99"]
    assert drift["tail_drivers"]["mapping_fallback"] > 2 * steady["tail_drivers"]["mapping_fallback"]
    p.ctrl["drift_to"].value = 500  # a drift that ends near the envelope's edge: a smaller tail
    assert p.result["summary"]["latency_s"]["p99"] < drift["latency_s"]["p99"]

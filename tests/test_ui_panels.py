"""The notebook panels, driven from Python: values change, the figure and the summary follow the mechanism."""

from __future__ import annotations

import ipywidgets as w
import pytest

from workbench.errors import ConfigError
from workbench.ui.compiler_panels import FusionPanel, ShapeEnvelopePanel
from workbench.ui.loop_panel import ClosedLoopPanel
from workbench.ui.panel import Panel, slider
from workbench.ui.runtime_panels import BatchingPanel, FairnessPanel, ResidencyPanel


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
    p = FusionPanel()  # aggressive, naive attention, 4 MiB SRAM, at the shipped load
    agg = p.result["summary"]
    p.ctrl["fusion"].value = "elementwise"
    ew = p.result["summary"]
    assert agg["spill_bytes_per_request"] > 2 * ew["spill_bytes_per_request"]
    assert agg["latency_s"]["p95"] > ew["latency_s"]["p95"]
    assert "memory_contention" in p.summary.value


def test_batching_panel_longer_delay_bigger_batches_longer_waits():
    p = BatchingPanel(max_delay_ms=0.5)
    short = p.result["summary"]
    p.ctrl["max_delay_ms"].value = 8.0
    long = p.result["summary"]
    assert long["batch_size"]["mean"] > short["batch_size"]["mean"]
    assert long["wait_s"]["p50"] > short["wait_s"]["p50"]
    p.ctrl["policy"].value = "none"  # over capacity without batching: the panel says so
    assert "overloaded" in p.summary.value


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


def test_closed_loop_panel_proposes_and_guards():
    p = ClosedLoopPanel(scenario="placement_skew")
    assert p.result.final_actions == ("placement",) and "least-loaded" in p.summary.value


def test_refused_configuration_shows_its_message_not_a_traceback():
    class Refusing(Panel):
        ncols = 1

        def controls(self):
            return {"x": slider(1, 0, 2, 1, "x", integer=True)}

        def run(self, x):
            if x == 0:
                raise ConfigError("x", x, "must be >= 1")
            return x

        def draw(self, r):
            self.axes[0].clear()

        def text(self, r):
            return f"x = {r}"

    p = Refusing()
    p.ctrl["x"].value = 0
    assert "refused" in p.summary.value and "must be &gt;= 1" in p.summary.value and p.result == 1


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
    from workbench.ui import figures as f
    from workbench.ui.compiler_panels import ShapeEnvelopePanel

    panel = ShapeEnvelopePanel()
    panel.ctrl["median"].value = panel.ctrl["median"].max
    panel.ctrl["policy"].value = "reject"
    assert "REFUSED:" in panel.summary.value and "over completed requests only" in panel.summary.value
    panel.ctrl["policy"].value = "fallback"  # nothing refused: nothing said
    assert "REFUSED" not in panel.summary.value
    overloaded = {"rejected": 0, "refused_share": 0.0, "load": {"overloaded": True, "note": "queue grows 40 req/s"}}
    assert f.status_text(overloaded) == "OVERLOADED: queue grows 40 req/s"
    assert f.status_text({"rejected": 0, "refused_share": 0.0, "load": {"overloaded": False}}) == ""


def test_pad_past_the_largest_bucket_says_it_refuses_like_reject():
    from workbench.ui.compiler_panels import ShapeEnvelopePanel

    panel = ShapeEnvelopePanel()
    panel.ctrl["median"].value = panel.ctrl["median"].max
    panel.ctrl["policy"].value = "pad"
    assert "refused exactly as under reject" in panel.summary.value
    panel.ctrl["envelope"].value = "128 ... 2048 (5 buckets)"
    panel.ctrl["median"].value = 128
    panel.ctrl["drift_to"].value = 128  # everything fits a bucket: nothing refused, nothing to say
    assert panel.result["summary"]["rejected_by"]["out_of_envelope"] == 0
    assert "exactly as under reject" not in panel.summary.value

"""The run pictures: the timeline's causes add up to each batch's time and match the tail drivers' parts."""

from __future__ import annotations

import numpy as np
import pytest

from workbench import palette as pal
from workbench.analysis.envelope_stats import (
    lognormal_quantile,
    lognormal_share,
    measured_shares,
    pad_target,
    padding_factor,
    padding_waste,
    predicted_hit_share,
)
from workbench.compiler.envelope import parse_envelope
from workbench.ui.figures import envelopes as ef
from workbench.ui.figures import timeline as tf
from workbench.ui.panels.compiler import ShapeEnvelopePanel


@pytest.fixture(scope="module")
def runs():
    panel = ShapeEnvelopePanel()
    out = {}
    for policy, envelope in (("recompile", "128 / 256 / 512"), ("pad", "gap: 64-128, 256-512"),
                             ("fallback", "128 / 256 / 512")):
        out[policy] = panel.run(**{**panel.values(), "drift_to": 700, "policy": policy, "envelope": envelope})
    return out


def test_causes_add_up_to_each_batch(runs):
    for r in runs.values():
        tr = r["trace"]
        parts = tf.batch_causes(tr)
        assert set(parts) == set(tf.CAUSE_ORDER)
        assert all((v >= 0).all() for v in parts.values())
        np.testing.assert_allclose(sum(parts.values()), tr.batch_end_s - tr.batch_start_s, atol=1e-12)


def test_each_policy_shows_its_own_cause(runs):
    totals = {p: tf.cause_totals_s(r["trace"]) for p, r in runs.items()}
    assert totals["recompile"]["recompile pause"] > 0 and totals["recompile"]["generic fallback"] == 0
    assert totals["pad"]["padded"] > 0 and totals["pad"]["recompile pause"] == 0
    assert totals["fallback"]["generic fallback"] > 0 and totals["fallback"]["padded"] == 0
    tr = runs["fallback"]["trace"]
    fallback = tr.batch_fallback_s.sum()
    assert totals["fallback"]["generic fallback"] == pytest.approx(fallback)


def test_figures_draw(runs):
    tr = runs["recompile"]["trace"]
    t0 = tf.first_batch_with(tr, "recompile pause")
    assert np.isfinite(t0)
    assert np.isnan(tf.first_batch_with(runs["fallback"]["trace"], "recompile pause"))
    fig = tf.timeline_figure(tr, t0 - 0.005, 0.08)
    assert len(fig.axes) == 2 and fig._repr_png_()[:4] == b"\x89PNG"
    fig = tf.cdf_figure({"recompile": tr, "fallback": runs["fallback"]["trace"]})
    assert fig._repr_png_()[:4] == b"\x89PNG"
    ax = fig.axes[0]  # the tail on a log scale: survival (1 - F) on log-log axes, never a linear CDF
    assert ax.get_xscale() == ax.get_yscale() == "log" and "slower" in ax.get_ylabel()
    assert ax.get_ylim()[0] <= 1e-3 / 2 + 1e-12
    colours = [line.get_color() for line in ax.get_lines() if line.get_label().startswith(("recompile", "fallback"))]
    assert colours == [pal.CURRENT, pal.BASELINE]  # two runs: the current in blue over the baseline in grey
    marks = tf.percentiles_ms(tr)
    assert marks[50] <= marks[95] <= marks[99]
    assert "recompile pause 150.00 ms" in tf.timeline_text(tf.cause_totals_s(tr))
    buckets = parse_envelope("seq", [128, 256, 512])
    shares = ef.draw_envelope(ef.envelope_figure({"a": (tr.shapes["seq"], buckets)}).axes[0],
                              tr.shapes["seq"], buckets)
    assert sum(shares.values()) == pytest.approx(1.0)


def test_envelope_arithmetic():
    buckets = parse_envelope("seq", [128, 256, 512])
    gap = parse_envelope("seq", [{"min": 64, "opt": 128, "max": 128}, {"min": 256, "opt": 512, "max": 512}])
    assert predicted_hit_share(buckets, 200, 0.4) == pytest.approx(1 - lognormal_share(513, 10**7, 200, 0.4))
    assert lognormal_quantile(0.5, 300, 0.7) == pytest.approx(300)
    assert padding_factor(200, 256) == pytest.approx(1.28)
    assert pad_target(gap, 200) == 256 and pad_target(gap, 40) == 64 and pad_target(gap, 600) is None
    assert pad_target(buckets, 200, to="max") == 256 and pad_target(buckets, 200) == 200
    assert padding_waste(np.array([200, 100]), gap) == pytest.approx(1 - 300 / 356)
    s = measured_shares(np.array([10, 100, 200, 300, 900]), gap)
    assert s["below"] == pytest.approx(0.2) and s["gap"] == pytest.approx(0.2) and s["beyond"] == pytest.approx(0.2)


def test_survival_marks_match_the_percentiles(runs):
    """draw_cdf's marks are numpy's percentiles of the measured latencies; each run's curve falls from 1."""
    import matplotlib

    matplotlib.use("Agg")
    from workbench.ui.figures.base import latencies_ms, new_figure

    traces = {p: r["trace"] for p, r in runs.items()}
    _, (ax,) = new_figure(1)
    marks = tf.draw_cdf(ax, traces)
    assert set(marks) == set(traces)
    for name, tr in traces.items():
        lat = latencies_ms(tr)
        assert [marks[name][q] for q in (50, 95, 99, 99.9)] == pytest.approx(np.percentile(lat, [50, 95, 99, 99.9]))
        assert marks[name][99] == pytest.approx(tf.percentiles_ms(tr)[99])
    curves = [line for line in ax.get_lines() if line.get_label().split(":")[0] in traces]
    assert len(curves) == len(traces)
    for line in curves:
        y = np.asarray(line.get_ydata())
        assert y[0] <= 1 and np.all(np.diff(y) <= 0) and y[-1] > 0  # a survival curve: falls, stays on the log axis

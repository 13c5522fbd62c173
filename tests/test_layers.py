"""The panels' two-layer rendering: a kept frame gives the same pixels as a frame drawn afresh.

Each panel plays a script of changes; after every change the PNG the Image widget got
(drawn over the kept frame when its key held) is decoded and compared, pixel for pixel,
with a render whose frame is drawn from scratch. A stale frame (limits, ticks or labels
changed without the key noticing) would show as different pixels.
"""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from workbench.ui.figures.layers import nice_ceil, nice_floor
from workbench.ui.panels.closed_loop import ClosedLoopPanel
from workbench.ui.panels.compiler import FusionPanel, ShapeEnvelopePanel
from workbench.ui.panels.runtime import BatchingPanel, FairnessPanel, ResidencyPanel
from workbench.ui.panels.serving import ServingPanel

SCRIPTS = {
    ShapeEnvelopePanel: [("median", 300), ("median", 350), ("sigma", 0.6), ("policy", "pad")],
    FusionPanel: [("rate", 1200), ("cores", 2), ("attention", "flash")],
    BatchingPanel: [("max_delay_ms", 2.0), ("max_delay_ms", 4.0), ("max_batch", 8)],
    FairnessPanel: [("batch_weight", 2.0), ("batch_weight", 4.0), ("discipline", "weighted")],
    ResidencyPanel: [("hbm_gib", 28), ("hbm_gib", 36), ("embed_rate", 300), ("dispatch", "load_then_dispatch")],
    ClosedLoopPanel: [("threshold", 0.2), ("scenario", "placement_skew")],
    ServingPanel: [("chunked", True), ("budget", 2048)],
}


def test_nice_limits_by_hand():
    assert [nice_ceil(x) for x in (0.0, 0.9, 1.0, 1.01, 2.2, 3.0, 7.0, 44.0, 0.013)] == \
        [1.0, 1.0, 1.0, 2.0, 2.5, 5.0, 10.0, 50.0, 0.02]
    assert [nice_floor(x) for x in (0.9, 1.0, 1.9, 2.4, 4.99, 7.0, 0.013)] == [0.5, 1.0, 1.0, 2.0, 2.5, 5.0, 0.01]
    assert nice_floor(0.0) == 0.0


def _decoded(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGBA"))


@pytest.mark.parametrize("cls", list(SCRIPTS), ids=lambda c: c.__name__)
def test_a_kept_frame_gives_the_pixels_of_a_fresh_one(cls):
    panel = cls()
    for name, value in SCRIPTS[cls]:
        panel.ctrl[name].value = value
        assert not panel.error, panel.error
        shown = _decoded(panel.image.value)
        fresh = panel.canvas.rgba(reuse=False)
        assert shown.shape == fresh.shape
        assert np.array_equal(shown, fresh), f"{cls.__name__} after {name}={value}: stale frame"


def test_the_frame_is_kept_while_the_axes_hold_and_redrawn_when_they_move():
    panel = FairnessPanel()  # weights move bars and lines; the axes' limits and ticks stay
    drawn = panel.canvas.frames_drawn
    for v in (0.5, 2.0, 4.0):
        panel.ctrl["batch_weight"].value = v
    assert panel.canvas.frames_drawn == drawn
    before = panel.axes[0].get_ylim()
    panel.axes[0].set_ylim(before[0], before[1] * 10)  # a moved axis must bring a new frame
    panel.canvas.png()
    assert panel.canvas.frames_drawn == drawn + 1


def test_the_layers_draw_what_a_plain_savefig_draws():
    """Only drawing order differs (data over spines and ticks): almost every pixel is the same."""
    panel = BatchingPanel()
    panel.ctrl["max_delay_ms"].value = 4.0
    layered = _decoded(panel.canvas.png())
    buf = io.BytesIO()
    panel.fig.savefig(buf, format="png", dpi=100)
    plain = _decoded(buf.getvalue())
    assert layered.shape == plain.shape
    differ = np.any(layered != plain, axis=2).mean()
    assert differ < 0.005, f"{differ:.2%} of pixels differ"


def test_log_labels_thin_out_past_two_and_a_half_decades():
    """1-2-5 labels on a narrow log axis; only powers of ten on a wide one (0.25..5,000 ms crowded before)."""
    from workbench.tail_axes import plain_log
    from workbench.ui.figures.base import new_figure

    fig, (ax,) = new_figure(1)
    ax.set_xscale("log")
    plain_log(ax.xaxis)
    fmt = ax.xaxis.get_major_formatter()
    ax.set_xlim(0.5, 20)
    assert [fmt(v) for v in (0.5, 1, 2, 5, 10, 20)] == ["0.5", "1", "2", "5", "10", "20"]
    ax.set_xlim(0.25, 5000)
    assert [fmt(v) for v in (0.5, 1, 2, 5, 10, 100, 1000, 2000)] == ["", "1", "", "", "10", "100", "1000", ""]


def test_steady_limits_hold_while_the_data_fills_them_and_follow_it_otherwise():
    """Axes hold still across a sweep (the frame is kept) unless the data would fill under 40% of them, as drawn."""
    import matplotlib.pyplot as plt

    from workbench.ui.figures.layers import steady_lim

    fig, (lin, log) = plt.subplots(1, 2)
    log.set_xscale("log")
    steady_lim(lin, "y", 0, 10)  # the first limits are always taken, whatever the defaults
    assert lin.get_ylim() == (0, 10)
    steady_lim(lin, "y", 0, 5)  # fills half: held
    assert lin.get_ylim() == (0, 10)
    steady_lim(lin, "y", 0, 2)  # fills a fifth: follows the data
    assert lin.get_ylim() == (0, 2)
    steady_lim(lin, "y", 0, 5)  # outside: grows
    assert lin.get_ylim() == (0, 5)
    steady_lim(log, "x", 0.25, 50)
    steady_lim(log, "x", 0.25, 10)  # 0.25-10 spans 70% of 0.25-50 in log space: held
    assert log.get_xlim() == (0.25, 50)
    steady_lim(log, "x", 0.25, 1)  # 26%: follows
    assert log.get_xlim() == (0.25, 1)
    plt.close(fig)


def test_bars_that_draw_nothing_are_skipped_and_the_pixels_stay_the_same():
    """Empty bins and bins past the view cost a draw each and draw nothing: skipping them changes no pixel."""
    import matplotlib.pyplot as plt

    from workbench.ui.figures import layers

    fig, ax = plt.subplots()
    ax.bar(range(60), [0] * 10 + list(range(1, 21)) + [0] * 30)
    ax.set_xlim(-0.6, 25.5)  # bins 26-59 lie past the view
    canvas = layers.LayeredCanvas(fig)
    skipped = canvas.rgba(reuse=False)
    blank, layers._blank = layers._blank, lambda a, ax: False
    try:
        drawn = canvas.rgba(reuse=False)
    finally:
        layers._blank = blank
    assert np.array_equal(skipped, drawn)
    assert sum(layers._blank(p, ax) for p in ax.patches) == 44  # 10 + 30 empty, 4 more past the view
    plt.close(fig)

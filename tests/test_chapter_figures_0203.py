"""The pictures of chapters 02 and 03 draw without error, on Figure objects, with labelled axes."""

from __future__ import annotations

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.text import Text

from workbench.analysis import knee as kn
from workbench.analysis import roofline as rl
from workbench.config import Batching
from workbench.models import transformer_block
from workbench.scenario import load_scenario
from workbench.ui.figures import fusion as ff
from workbench.ui.figures import knee as kf
from workbench.ui.figures import roofline as rf

HW = load_scenario("fusion_memory_bursts").hardware
G = transformer_block(1024, 16)  # chapter 02's block, a full batch at the scenario's median length
DIMS = {"batch": 8, "seq": 512}


def _png(fig) -> bytes:
    data = fig._repr_png_()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return data


def test_fusion_figures():
    el = rl.plan_points(G, "elementwise", DIMS, HW)
    ag = rl.plan_points(G, "aggressive", DIMS, HW)
    fig = ff.fusion_graph(el, ag)
    assert len(fig.axes) == 2 and "7 kernels" in fig.axes[0].get_title() and "3 kernels" in fig.axes[1].get_title()
    _png(fig)
    fig = ff.memory_figure(ag, HW, {"a": rl.bandwidth_timeline(el, HW), "b": rl.bandwidth_timeline(ag, HW)})
    assert all(ax.get_ylabel() for ax in fig.axes)
    names = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    # a fused kernel by its first and last ops, and the tile the compiler chose for it
    assert names == ["ln1..v\n2,048-row tile", "scores..residual1\n512-row tile", "ln2..residual2\n4,096-row tile"]
    _png(fig)
    _no_text_overlaps(fig)


def _no_text_overlaps(fig):
    """No two texts of one axes overlap, tick labels included, and none leaves the figure."""
    renderer = FigureCanvasAgg(fig).get_renderer() if not hasattr(fig.canvas, "get_renderer") else \
        fig.canvas.get_renderer()
    whole = fig.bbox
    for ax in fig.axes:
        ticks = []
        for axis, (lo, hi) in ((ax.xaxis, ax.get_xlim()), (ax.yaxis, ax.get_ylim())):  # the labels drawn
            ticks += [t for t, at in zip(axis.get_ticklabels(), axis.get_ticklocs(), strict=True)
                      if min(lo, hi) <= at <= max(lo, hi)]
        texts = [t for t in (*ax.texts, *ticks, ax.title, ax.xaxis.label, ax.yaxis.label)
                 if t.get_text() and t.get_visible()]
        boxes = [Text.get_window_extent(t, renderer) for t in texts]
        for i, a in enumerate(boxes):
            assert whole.x0 <= a.x0 and a.x1 <= whole.x1 and whole.y0 <= a.y0 and a.y1 <= whole.y1, texts[i]
            for j, b in enumerate(boxes[i + 1:], i + 1):
                assert not a.overlaps(b), (texts[i].get_text(), texts[j].get_text())


def test_roofline_figure():
    fig = rf.roofline_figure({"elementwise": rl.plan_points(G, "elementwise", DIMS, HW)}, HW)
    whole, zoom = fig.axes
    for ax in (whole, zoom):
        assert ax.get_xscale() == "log" and ax.get_yscale() == "log" and "FLOP" in ax.get_xlabel()
    x0, x1 = zoom.get_xlim()
    assert x0 < rl.ridge_point(HW) < x1 and whole.get_xlim()[0] < x0 and x1 < whole.get_xlim()[1]
    _png(fig)


def test_roofline_labels_do_not_overprint():
    """Chapter 02's figure: ten kernels, eight of them crowded on the flat roof (drawn again zoomed in); no two
    labels overlap, none leaves its axes, and no leader line crosses another kernel's label."""
    plans = {level: rl.plan_points(G, level, DIMS, HW) for level in ("elementwise", "aggressive")}
    fig = rf.roofline_figure(plans, HW)
    _png(fig)
    renderer = FigureCanvasAgg(fig).get_renderer() if not hasattr(fig.canvas, "get_renderer") else \
        fig.canvas.get_renderer()
    labelled = []
    for ax in fig.axes:
        notes = list(ax.texts)
        boxes = [Text.get_window_extent(t, renderer) for t in notes]  # the text alone, without a leader line
        frame = ax.get_window_extent(renderer)
        for i, a in enumerate(boxes):
            assert frame.x0 <= a.x0 and a.x1 <= frame.x1 and frame.y0 <= a.y0 and a.y1 <= frame.y1, notes[i]
            for b in boxes[i + 1:]:
                assert not a.overlaps(b), (a, b)
        for note in notes:
            if getattr(note, "arrow_patch", None) is None:
                continue
            path = note.arrow_patch.get_path().transformed(note.arrow_patch.get_transform())
            line = path.interpolated(40).vertices
            for other, box in zip(notes, boxes, strict=True):
                if other is not note:
                    assert not any(box.contains(x, y) for x, y in line), (note.get_text(), other.get_text())
        labelled += [t.get_text() for t in notes]
    # every kernel's label once (the two coinciding norms share one), the ridge on each panel, the zoom's note
    kernels = {rf.kernel_label(p) for pts in plans.values() for p in pts} - {"ln1", "ln2"}
    assert kernels <= set(labelled) and "ln1/ln2" in labelled
    assert sum(t.startswith("ridge") for t in labelled) == 2 and "zoomed at right" in labelled
    _no_text_overlaps(fig)


def test_knee_figure():
    base = load_scenario("batching_knee")
    rates = (200.0, 400.0)
    rows = kn.knee_sweep(base, Batching("none", 1, 0.0), rates, requests=2000)
    fig = kf.knee_figure(rows, kn.theory_waits(rates, 0.0025, 2, 0.09), 800.0, {"none": rows, "also": rows},
                         {"none": 800.0})
    assert all(ax.get_xlabel() and ax.get_ylabel() for ax in fig.axes)
    _png(fig)

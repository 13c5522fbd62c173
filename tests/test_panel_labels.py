"""Every panel's labels are readable: no two texts overlap and none is clipped by the figure's edge.

Each panel is rendered with the Agg backend in its default state and after one change (the grey
baseline kept), and every text matplotlib draws (titles, axis labels, tick labels of the ticks in
view, legend entries, texts placed in the axes, the percentile labels of a survival axis) is measured
with ``get_window_extent(renderer)``. Two boxes may touch (within ``TOUCH`` px) but not overlap; each
must lie inside the figure.
"""

from __future__ import annotations

import itertools

import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.text import Text
from matplotlib.transforms import Bbox

from workbench.ui.panels.closed_loop import ClosedLoopPanel
from workbench.ui.panels.compiler import FusionPanel, ShapeEnvelopePanel
from workbench.ui.panels.runtime import BatchingPanel, FairnessPanel, ResidencyPanel
from workbench.ui.panels.serving import ServingPanel
from workbench.ui.panels.tour import TourDriftPanel

TOUCH = 0.5  # px: boxes closer than this may touch, not overlap

CHANGES = {ShapeEnvelopePanel: ("median", 700), FusionPanel: ("fusion", "elementwise"),
           BatchingPanel: ("max_delay_ms", 8.0), FairnessPanel: ("placement", "pinned"),
           ResidencyPanel: ("hbm_gib", 40), ClosedLoopPanel: ("threshold", 0.3), ServingPanel: ("chunked", True),
           TourDriftPanel: ("drift", True)}


def _in_view(axis, loc: float) -> bool:
    lo, hi = sorted(axis.get_view_interval())
    span = hi - lo
    return lo - 1e-9 * abs(span) <= loc <= hi + 1e-9 * abs(span)


def drawn_texts(fig) -> list[tuple[str, Text]]:
    """(where, text) for every non-empty visible text the figure draws."""
    out: list[tuple[str, Text]] = [("figure", t) for t in fig.texts]
    axes = [*fig.axes, *(c for ax in fig.axes for c in ax.child_axes)]
    for k, ax in enumerate(axes):
        if not ax.get_visible():
            continue
        name = f"axes {k}"
        out += [(f"{name} title", t) for t in (ax.title, ax._left_title, ax._right_title)]  # noqa: SLF001
        out += [(f"{name} text", t) for t in ax.texts]
        if ax.get_legend() is not None and ax.get_legend().get_visible():
            out += [(f"{name} legend", t) for t in ax.get_legend().get_texts()]
        for axis in (ax.xaxis, ax.yaxis):
            if not axis.get_visible():
                continue
            out.append((f"{name} {axis.axis_name} label", axis.label))
            for tick in axis.get_major_ticks():
                if _in_view(axis, tick.get_loc()):
                    out += [(f"{name} {axis.axis_name} tick", t) for t in (tick.label1, tick.label2)]
    return [(w, t) for w, t in out if t.get_visible() and t.get_text().strip()]


def label_problems(fig) -> list[str]:
    """Pairs of texts that overlap, and texts not wholly inside the figure (empty: none)."""
    canvas = fig.canvas if isinstance(fig.canvas, FigureCanvasAgg) else FigureCanvasAgg(fig)  # the Agg backend
    canvas.draw()  # ticks, legends and limits as the PNG shows them
    renderer = canvas.get_renderer()
    boxes = [(f"{w} {t.get_text()!r}", t.get_window_extent(renderer)) for w, t in drawn_texts(fig)]
    page = Bbox.from_bounds(0, 0, *canvas.get_width_height())
    problems = [f"clipped: {name} at {box.bounds}" for name, box in boxes
                if box.x0 < page.x0 - TOUCH or box.y0 < page.y0 - TOUCH
                or box.x1 > page.x1 + TOUCH or box.y1 > page.y1 + TOUCH]
    for (a, ba), (b, bb) in itertools.combinations(boxes, 2):
        w = min(ba.x1, bb.x1) - max(ba.x0, bb.x0)
        h = min(ba.y1, bb.y1) - max(ba.y0, bb.y0)
        if w > TOUCH and h > TOUCH:
            problems.append(f"overlap: {a} and {b}")
    return problems


@pytest.mark.parametrize("cls", list(CHANGES), ids=lambda c: c.__name__)
def test_no_label_overlaps_or_is_clipped(cls):
    panel = cls()
    assert label_problems(panel.fig) == [], f"{cls.__name__}, default state"
    name, value = CHANGES[cls]
    panel.ctrl[name].value = value
    assert not panel.error, panel.error
    assert panel.baseline is not panel.result  # the grey baseline is kept through the change
    assert label_problems(panel.fig) == [], f"{cls.__name__} after {name} = {value!r}"


def test_the_check_sees_an_overlap_and_a_clipped_label():
    from workbench.ui.figures.base import new_figure

    fig, (ax, _) = new_figure(2)
    ax.set_title("a title")
    ax.text(0.5, 1.02, "over the title", transform=ax.transAxes, ha="center")
    ax.text(-0.2, 0.5, "past the left edge", transform=ax.transAxes, ha="right")
    found = label_problems(fig)
    assert any(p.startswith("overlap:") and "over the title" in p for p in found)
    assert any(p.startswith("clipped:") and "past the left edge" in p for p in found)

"""A panel's PNG drawn in two layers: a frame kept between changes, and what moves drawn on top.

Most of a matplotlib draw is the frame: spines, ticks, tick labels and axis labels,
some 30-50 text artists rasterised glyph by glyph. A panel change moves lines, bars,
titles and legends, and the frame only when an axis's limits or ticks change. So the
frame is drawn once into an Agg buffer and copied (``copy_from_bbox``), and each change
restores it and draws the moving artists over it (``draw_artist``): matplotlib's own
blitting, rendered to PNG for an ``ipywidgets.Image`` instead of to a window.

The frame is reused only while its key is unchanged: per axes, its position, limits,
scales, axis labels, tick locators and formatters (and the labels of fixed ones), tick
label size and grid settings. Panels keep the key stable by snapping limits to a 1-2-5
grid (:func:`nice_ceil`, :func:`workbench.ui.figures.base.log_limits`), which also keeps the
axes still while a learner compares runs. :meth:`LayeredCanvas.png` with ``reuse=False``
draws the frame afresh: ``tests/test_layers.py`` proves the two give the same pixels
after every change of every panel's script.
"""

from __future__ import annotations

import io
import math

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.patches import Rectangle
from matplotlib.ticker import FixedFormatter
from PIL import Image

PNG_LEVEL = 1  # zlib level: 1 is 2-3x faster to encode than the default 6, for a PNG ~7 % larger


def nice_ceil(x: float) -> float:
    """The smallest of 1, 2, 2.5, 5 x 10^k at or above ``x`` (1.0 for x <= 0): a linear axis's top."""
    if not x > 0 or not math.isfinite(x):
        return 1.0
    k = math.floor(math.log10(x))
    for m in (1.0, 2.0, 2.5, 5.0, 10.0):
        top = m * 10.0 ** k
        if top >= x * (1 - 1e-12):
            return top
    return 10.0 ** (k + 1)


def nice_floor(x: float) -> float:
    """The largest of 1, 2, 2.5, 5 x 10^k at or below ``x`` (x itself when not positive): a log axis's bottom."""
    if not x > 0 or not math.isfinite(x):
        return x
    k = math.floor(math.log10(x))
    for m in (10.0, 5.0, 2.5, 2.0, 1.0):
        low = m * 10.0 ** k
        if low <= x * (1 + 1e-12):
            return low
    return 10.0 ** k


FILL = 0.4  # an axis shrinks only when the data would fill less than this share of it, as drawn (linear or log)


def steady_lim(ax, which: str, lo: float, hi: float) -> None:
    """Set ``ax``'s x or y limits to (lo, hi), or keep the current ones while they hold the new range and the new range
    fills at least ``FILL`` of them as drawn (in log space on a log axis).

    The axes then hold still while a learner sweeps a control, so runs are compared by eye on the same scale, and the
    panel's frame is reused (a moved axis costs a full draw, 50-100 ms). The first limits a panel sets are always
    taken (``ax`` remembers which of its axes it has set)."""
    done = ax.__dict__.setdefault("_steady_set", set())
    cur_lo, cur_hi = sorted(ax.get_xlim() if which == "x" else ax.get_ylim())
    log = (ax.get_xscale() if which == "x" else ax.get_yscale()) == "log"
    keep = which in done and cur_lo <= lo and hi <= cur_hi
    if keep and log:
        keep = lo > 0 and math.log(hi / lo) >= FILL * math.log(cur_hi / cur_lo)
    elif keep:
        keep = hi - lo >= FILL * (cur_hi - cur_lo)
    if not keep:
        done.add(which)
        (ax.set_xlim if which == "x" else ax.set_ylim)(lo, hi)


def _axis_key(axis) -> tuple:
    fmt = axis.get_major_formatter()
    labels = tuple(fmt.seq) if isinstance(fmt, FixedFormatter) else ()
    kw = axis._major_tick_kw  # noqa: SLF001 - tick label size and grid switch live only here
    return (axis.get_scale(), id(axis.get_major_locator()), id(fmt), labels, axis.label.get_text(),
            axis.get_label_position(), tuple(sorted((k, repr(v)) for k, v in kw.items())),
            axis.get_inverted())


def _frame_key(fig) -> tuple:
    """What the frame's pixels depend on: the figure's own texts, and per axes its frame."""
    texts = tuple((t.get_text(), t.get_position(), t.get_visible()) for t in fig.texts)
    return texts, tuple((ax.get_position().bounds, ax.get_xlim(), ax.get_ylim(), ax.axison, ax.get_visible(),
                  _axis_key(ax.xaxis), _axis_key(ax.yaxis), tuple(ax.get_xticks()), tuple(ax.get_yticks()))
                 for ax in fig.axes)


def moving(ax) -> list:
    """The artists of ``ax`` drawn on every change, in drawing order: data, titles, then the legend."""
    data = sorted((*ax.lines, *ax.patches, *ax.collections, *ax.images, *ax.texts, *ax.tables),
                  key=lambda a: a.get_zorder())  # a stable sort: equal zorders keep their order, as in Axes.draw
    legend = [ax.get_legend()] if ax.get_legend() is not None else []
    return [*data, ax.title, ax._left_title, ax._right_title, *legend]  # noqa: SLF001 - the side titles


def _blank(a, ax) -> bool:
    """Would drawing ``a`` change no pixel? A bar of zero length with no edge, or one wholly outside the view (clipped
    away): a histogram's empty bins and the bins past the axis limits cost a draw each and draw nothing."""
    if not isinstance(a, Rectangle) or a.get_data_transform() != ax.transData:
        return False
    if (a.get_linewidth() == 0 or a.get_edgecolor()[3] == 0) and (a.get_width() == 0 or a.get_height() == 0):
        return True
    if not a.get_clip_on():
        return False
    (x0, x1), (y0, y1) = sorted(ax.get_xlim()), sorted(ax.get_ylim())
    ax0, ax1 = sorted((a.get_x(), a.get_x() + a.get_width()))
    ay0, ay1 = sorted((a.get_y(), a.get_y() + a.get_height()))
    return ax1 < x0 or ax0 > x1 or ay1 < y0 or ay0 > y1


class LayeredCanvas:
    """Render ``fig`` to PNG bytes, keeping the frame between calls while its key holds."""

    def __init__(self, fig):
        self.fig = fig
        self.canvas = FigureCanvasAgg(fig)
        self._key: tuple | None = None
        self._frame = None
        self.frames_drawn = 0  # how often the frame had to be drawn (for tests and benchmarks)

    def png(self, reuse: bool = True) -> bytes:
        """The figure as PNG bytes; ``reuse=False`` draws the frame afresh (the reference)."""
        layers = [(ax, moving(ax)) for ax in self.fig.axes]
        for _, arts in layers:
            for a in arts:
                a.set_animated(True)  # skipped by canvas.draw(): the frame holds none of them
        key = _frame_key(self.fig)
        if not reuse or self._frame is None or key != self._key:
            self.canvas.draw()
            self._frame, self._key = self.canvas.copy_from_bbox(self.fig.bbox), key
            self.frames_drawn += 1
        else:
            self.canvas.restore_region(self._frame)
        for ax, arts in layers:
            for a in arts:
                if a.get_visible() and not _blank(a, ax):
                    ax.draw_artist(a)
        w, h = self.canvas.get_width_height()
        buf = io.BytesIO()
        Image.frombuffer("RGBA", (w, h), self.canvas.buffer_rgba(), "raw", "RGBA", 0, 1).save(
            buf, "png", compress_level=PNG_LEVEL)
        return buf.getvalue()

    def rgba(self, reuse: bool = True):
        """The rendered pixels (height x width x 4, uint8) after :meth:`png`: for comparing two renders."""
        import numpy as np

        self.png(reuse)
        return np.asarray(self.canvas.buffer_rgba()).copy()

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
grid (:func:`nice_ceil`, :func:`workbench.ui.figures.log_limits`), which also keeps the
axes still while a learner compares runs. :meth:`LayeredCanvas.png` with ``reuse=False``
draws the frame afresh: ``tests/test_layers.py`` proves the two give the same pixels
after every change of every panel's script.
"""

from __future__ import annotations

import io
import math

from matplotlib.backends.backend_agg import FigureCanvasAgg
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
                if a.get_visible():
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

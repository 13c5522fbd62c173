"""Latency tails as survival curves: the share of requests slower than x (1 - F), both axes logarithmic.

A linear CDF spends its height on the body: the slowest 1 % of requests, the tail this course is about,
is squeezed into the top hundredth of the plot, so two runs whose p99 differ twofold lie on top of each
other. On a log survival axis every decade of rarer requests gets the same height: p50, p95, p99 and
p99.9 sit at 0.5, 0.05, 0.01 and 0.001 and read as easily as the median (STYLE.md, "tails where they
live"; the static figure :func:`workbench.ui.figures.serving.itl_cdf` draws the same picture).

:class:`SurvivalView` is the one helper every latency panel draws with (chapters 01, 02, 05, 06, 08): the
kept baseline in grey under the current run in blue, each with a dot where it crosses a percentile guide
(dotted, labelled p50 ... p99.9 on the right axis), each run's p99 and p99.9 in the legend above the axes.

How far down: the y axis reaches 1e-4 when the current run has at least ``MIN_BEYOND / 1e-4`` = 200,000
samples (20 or more then lie beyond 1e-4: chapter 08's ~266,000 inter-token gaps), otherwise 1e-3 (a
panel's 50,350 measured requests put 50 beyond it). The axis ends at half that floor, so the last guide
does not sit on the frame; what lies lower is clipped, and the x axis ends where the slowest run leaves
the axis, not at its single slowest sample.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.ticker import NullLocator

from workbench.palette import BASELINE, BASELINE_ALPHA, CURRENT
from workbench.tail_axes import (
    FLOORS,
    PERCENTILES,
    percentile_values,
    plain_log,
    sorted_quantiles,
    survival_floor,
    survival_xy,
)
from workbench.ui.figures.base import log_limits
from workbench.ui.figures.layers import steady_lim

TOP = 1.3  # the y axis's top: a band above survival 1 for the curves' start


def span(lat: np.ndarray, floor: float) -> np.ndarray:
    """The latencies a survival axis down to ``floor / 2`` must hold: the fastest sample, the one at the bottom."""
    if len(lat) == 0:
        return np.zeros(0)
    return np.array([lat[0], float(sorted_quantiles(lat, 1 - floor / 2))])


def _ms(v: float) -> str:
    """A latency in three significant figures, in plain digits past 1,000 (never '1.03e+03')."""
    if not np.isfinite(v):
        return "-"
    return f"{v:,.0f}" if v >= 1000 else f"{v:.3g}"


class SurvivalView:
    """Survival curves of a current run (blue) over a kept baseline (grey), drawn once, moved by :meth:`update`.

    ``current`` and ``baseline`` name the two runs in the legend; :meth:`add_line` puts a panel's own line
    (a mean, a third run) into the same legend. No ``ax.clear`` and no new artists after construction.
    """

    def __init__(self, ax, current: str = "this run", baseline: str = "baseline", xlabel: str = "latency (ms)",
                 ylabel: str = "share slower than x", unit: str = "ms"):
        self.ax, self.names, self.unit = ax, (current, baseline), unit
        (self.base,) = ax.plot([], [], color=BASELINE, alpha=BASELINE_ALPHA, lw=2.4, label=baseline, zorder=2)
        (self.cur,) = ax.plot([], [], color=CURRENT, lw=1.4, label=current, zorder=4)
        (self.base_dots,) = ax.plot([], [], "o", ms=5, mfc="white", mec=BASELINE, mew=1.2, zorder=3)
        (self.cur_dots,) = ax.plot([], [], "o", ms=3.2, color=CURRENT, zorder=5)
        guides = [1 - q / 100 for q in PERCENTILES]
        for y in guides:
            ax.axhline(y, color="#6f6f6f", lw=0.7, ls=(0, (1, 2)), zorder=1)
        ax.set_xscale("log")
        plain_log(ax.xaxis)
        ax.set_yscale("log")
        self.floor = 0.0
        self._set_floor(FLOORS[-1])
        right = ax.secondary_yaxis("right")
        right.set_yticks(guides, [f"p{q:g}" for q in PERCENTILES])
        right.tick_params(labelsize=7, length=2, pad=1)
        right.yaxis.set_minor_locator(NullLocator())
        ax.tick_params(axis="y", labelsize=8)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.25, axis="x")
        self.handles = [self.base, self.cur]
        self._legend()

    def _set_floor(self, floor: float) -> None:
        self.floor = floor
        ticks = [10.0 ** k for k in range(int(round(np.log10(floor))), 1)]
        self.ax.set_yticks(ticks, [f"{t:g}" for t in ticks])
        self.ax.set_ylim(floor / 2, TOP)

    def _legend(self) -> None:
        # above the axes, never over a curve: no corner of a survival plot is empty for every run
        self.legend = self.ax.legend(handles=self.handles, loc="lower left", bbox_to_anchor=(-0.01, 1.0),
                                     ncol=2, fontsize=7, frameon=False, handlelength=1.6, borderaxespad=0.2,
                                     columnspacing=1.0, labelspacing=0.3, borderpad=0.1)

    def add_line(self, line) -> None:
        """Add a line drawn by the panel (its label as the legend's text) below the two runs in the legend."""
        self.handles.append(line)
        self._legend()

    def set_label(self, line, text: str) -> None:
        """Change one legend entry's text in place (the legend is not rebuilt)."""
        line.set_label(text)
        self.legend.get_texts()[self.handles.index(line)].set_text(text)

    def update(self, lat: np.ndarray, base: np.ndarray | None = None, others: Sequence[np.ndarray] = (),
               values: Sequence[float] = ()) -> None:
        """Redraw with sorted latencies of this run and of the baseline (None: the baseline is this run).

        ``others`` are further sorted runs the panel draws (their span is kept in view), ``values`` single
        latencies it marks (a mean)."""
        base = np.zeros(0) if base is None else base
        floor = survival_floor(len(lat))
        if floor != self.floor:
            self._set_floor(floor)
        guides = 1 - np.array(PERCENTILES) / 100
        pc, pb = percentile_values(lat), percentile_values(base)
        self.cur.set_data(*survival_xy(lat))
        self.base.set_data(*survival_xy(base))
        self.cur_dots.set_data(pc, guides)
        self.base_dots.set_data(pb if len(base) else [], guides if len(base) else [])
        for line, p, name in ((self.cur, pc, self.names[0]), (self.base, pb, self.names[1])):
            self.set_label(line, f"{name}: p99 {_ms(p[2])}, p99.9 {_ms(p[3])} {self.unit}" if np.isfinite(p[2])
                           else f"{name}: this run")
        arrays = [span(a, floor) for a in (lat, base, *others)]
        steady_lim(self.ax, "x", *log_limits(*arrays, np.asarray(values, dtype=float)))

"""Log axes and survival curves: the pieces every latency picture of the project shares.

A latency picture shows the tail where it lives: the share of requests slower than x (1 - F) on a log axis, so
p50, p95, p99 and p99.9 sit a decade apart and read as easily as the median (the panels'
:class:`workbench.ui.figures.survival.SurvivalView`, the chapters' static figures, a drill's evidence figure and
the closed-loop report all draw with these). Plain numbers on log axes (:func:`plain_log`). Matplotlib only, no
pyplot, no state: drawing goes into the axes it is given.
"""

from __future__ import annotations

import math

import numpy as np
from matplotlib.ticker import Formatter, LogLocator, NullFormatter, NullLocator

from workbench.palette import BASELINE, CURRENT

PERCENTILES: tuple[float, ...] = (50.0, 95.0, 99.0, 99.9)  # each marked by a guide at 1 - q / 100
FLOORS: tuple[float, ...] = (1e-4, 1e-3)  # the lowest survival shown, deepest first


class PlainLogFormatter(Formatter):
    """Plain numbers on a log axis ('0.5', '20'; mathtext costs more to render than the data). Ticks sit at
    1-2-5; over more than ``decades`` decades only the powers of ten keep a label, so labels never crowd."""

    def __init__(self, decades: float = 2.5):
        self.decades = decades

    def __call__(self, v: float, pos=None) -> str:
        lo, hi = sorted(self.axis.get_view_interval()) if self.axis is not None else (v, v)
        if lo > 0 and math.log10(hi / lo) > self.decades and v > 0:
            mantissa = v / 10.0 ** math.floor(math.log10(v) + 1e-9)
            if abs(mantissa - 1.0) > 1e-6:
                return ""
        return f"{v:g}"


def plain_log(axis) -> None:
    """Log scale with plain number labels at 1-2-5 ticks (a label on less than a decade; only powers of ten
    past two and a half decades)."""
    axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(PlainLogFormatter())
    axis.set_minor_formatter(NullFormatter())
    axis.set_minor_locator(NullLocator())  # the 1-2-5 majors mark the scale; minor ticks cost a third of a frame


def sorted_quantiles(a: np.ndarray, q) -> np.ndarray:
    """Quantiles ``q`` of an already sorted array by linear interpolation (numpy's default method, without its
    partition of the whole array: a drawing's quantiles of 500,000 gaps in microseconds, not milliseconds)."""
    pos = np.asarray(q, dtype=float) * (len(a) - 1)
    lo = np.floor(pos).astype(np.int64)
    hi = np.minimum(lo + 1, len(a) - 1)
    return a[lo] + (a[hi] - a[lo]) * (pos - lo)


MIN_BEYOND = 20  # samples that must lie beyond a floor for it to be shown


POINTS = 600  # points per curve, at geometric steps of the count above: dense in the tail


def survival_floor(n: int) -> float:
    """The deepest floor of :data:`FLOORS` with at least :data:`MIN_BEYOND` of ``n`` samples beyond it (else 1e-3)."""
    return next((f for f in FLOORS if n * f >= MIN_BEYOND), FLOORS[-1])


def survival_xy(lat: np.ndarray, points: int = POINTS) -> tuple[np.ndarray, np.ndarray]:
    """(latency, share of samples slower) of sorted latencies: ``points`` points, dense in the tail.

    The sample with ``k`` samples at or above it is drawn at ``(k - 0.5) / n`` (a plotting position that
    never reaches 0, so the slowest sample stays on a log axis)."""
    n = len(lat)
    if n == 0:
        return np.zeros(0), np.zeros(0)
    if n <= points:
        above = np.arange(n, 0, -1)  # every sample
    else:
        above = np.unique(np.rint(np.geomspace(1, n, points)).astype(np.int64))[::-1]
    return lat[n - above], (above - 0.5) / n


def percentile_values(lat: np.ndarray) -> np.ndarray:
    """p50, p95, p99 and p99.9 of sorted latencies (numpy's linear method); NaN when there are none."""
    if len(lat) == 0:
        return np.full(len(PERCENTILES), np.nan)
    return sorted_quantiles(lat, np.array(PERCENTILES) / 100)



def draw_survival(ax, runs: dict[str, np.ndarray], xlabel: str) -> None:
    """Survival curves of one or two runs on log-log axes (the first run grey as the baseline, the second in the
    current run's colour), each run's p99 marked on its curve and named in the legend, guides at p50 ... p99.9.

    ``runs`` maps a label to latencies in any one unit (``xlabel`` names it); samples need not be sorted."""
    colours = (BASELINE, CURRENT) if len(runs) == 2 else (CURRENT,) * len(runs)
    n = min((len(v) for v in runs.values()), default=0)
    floor = survival_floor(n)
    for (name, values), colour in zip(runs.items(), colours, strict=True):
        lat = np.sort(np.asarray(values, dtype=float))
        x, y = survival_xy(lat)
        p99 = float(sorted_quantiles(lat, 0.99)) if len(lat) else math.nan
        ax.step(x, y, where="post", color=colour, label=f"{name} (p99 {p99:.3g})")
        ax.plot([p99], [0.01], "o", color=colour, ms=4)
    for q in PERCENTILES:
        ax.axhline(1 - q / 100, color="#cccccc", lw=0.6, ls=":", zorder=0)
        ax.annotate(f"p{q:g}", (1.0, 1 - q / 100), xycoords=("axes fraction", "data"), xytext=(3, 0),
                    textcoords="offset points", va="center", fontsize=7, color="#666666")
    ax.set_xscale("log")
    ax.set_yscale("log")
    plain_log(ax.xaxis)
    ax.set_ylim(floor / 2, 1.3)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("share slower than x")
    ax.legend(fontsize=8, loc="lower left")

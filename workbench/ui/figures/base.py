"""Matplotlib drawing helpers shared by the panels and the notebooks.

Each helper draws into axes it is given (so a panel can keep one figure and redraw it
in place) and every latency view marks p50, p95 and p99, never the mean alone. Each
has a stable text twin (``*_text``) that notebooks print and nbval compares.
"""

from __future__ import annotations

import io

import numpy as np
from matplotlib.figure import Figure

from workbench.analysis.metrics import DRIVERS
from workbench.palette import BASELINE, BASELINE_ALPHA, CAUSES, CURRENT, SECOND, cause_color
from workbench.runtime.trace import Trace
from workbench.tail_axes import plain_log
from workbench.ui.figures.layers import nice_ceil, nice_floor

COLORS = (CURRENT, SECOND, CAUSES["service"], CAUSES["memory_contention"], CAUSES["core_imbalance"], BASELINE)
MARKS = ((50, ":"), (95, "--"), (99, "-"))


DPI = 100


def png(fig) -> bytes:
    """The figure as PNG bytes (for an Image widget or a report)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI)
    return buf.getvalue()


class ShownFigure(Figure):
    """A matplotlib figure that shows itself as a PNG wherever it is displayed (JupyterLab, nbconvert HTML,
    GitHub's renderer), with no pyplot state and no backend switch: library code never calls ``pyplot``."""

    def _repr_png_(self) -> bytes:
        buf = io.BytesIO()
        self.savefig(buf, format="png", dpi=DPI, bbox_inches="tight")  # no label clipped in a notebook
        return buf.getvalue()


def new_figure(ncols: int = 2, width: float = 10.0, height: float = 3.4):
    """A figure with ``ncols`` side-by-side axes (kept by a panel and redrawn; fixed margins, no layout engine)."""
    fig = ShownFigure(figsize=(width, height))
    axes = fig.subplots(1, ncols)
    fig.subplots_adjust(left=0.07, right=0.98, bottom=0.17, top=0.88, wspace=0.45)
    return fig, list(np.atleast_1d(axes))


def latencies_ms(trace: Trace) -> np.ndarray:
    """Sorted latencies (ms) of the measured, completed requests."""
    return np.sort(trace.latency_s[trace.measured & trace.completed]) * 1e3


def latency_text(runs: dict[str, Trace]) -> str:
    """p50 / p95 / p99 (ms) per run."""
    rows = []
    for label, tr in runs.items():
        lat = latencies_ms(tr)
        p = np.percentile(lat, [50, 95, 99]) if len(lat) else [np.nan] * 3
        refused = int((tr.measured & ~tr.completed).sum())
        note = (f" (over completed requests only: {refused} of {int(tr.measured.sum())} refused)"
                if refused else "")
        rows.append(f"{label}: p50 {p[0]:.3f} ms, p95 {p[1]:.3f} ms, p99 {p[2]:.3f} ms{note}")
    return "\n".join(rows)


def tail_drivers(ax, summaries: dict[str, dict]) -> None:
    """Tail-driver shares (queueing, imbalance, contention, residency, fallback, service) per run."""
    ax.clear()
    y = np.arange(len(DRIVERS))
    h = 0.8 / max(len(summaries), 1)
    for i, ((label, s), color) in enumerate(zip(summaries.items(), COLORS, strict=False)):
        ax.barh(y + i * h - 0.4 + h / 2, [s["tail_drivers"][d] for d in DRIVERS], h, label=label, color=color)
    ax.set_yticks(y, [d.replace("_", " ") for d in DRIVERS], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.set_xlabel("share of latency above p95")
    ax.legend(fontsize=8)


def drivers_text(summary: dict, words: bool = False) -> str:
    """The tail drivers as one line (``words``: "memory contention", as the panels print them; the notebooks'
    checked outputs keep the summary's keys)."""
    return "tail drivers: " + ", ".join(f"{d.replace('_', ' ') if words else d} {summary['tail_drivers'][d]:.0%}"
                                        for d in DRIVERS)


def queue_depth(ax, trace: Trace, label: str = "") -> None:
    """Requests waiting over time."""
    t, depth = trace.queue_depth()
    ax.clear()
    ax.step(t, depth, where="post", lw=0.7)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("requests waiting")
    ax.set_title(label, fontsize=9)


def core_timeline(ax, trace: Trace, seconds: float = 0.05) -> None:
    """One row per core: batches as bars over the first ``seconds`` after warm-up."""
    ax.clear()
    t0 = trace.arrival_s[trace.measured][0] if trace.measured.any() else 0.0
    keep = (trace.batch_start_s >= t0) & (trace.batch_start_s < t0 + seconds)
    for k in range(len(trace.core_busy_s)):
        mine = keep & (trace.batch_core == k)
        starts = trace.batch_start_s[mine] - t0
        ax.broken_barh(list(zip(starts * 1e3, (trace.batch_end_s[mine] - trace.batch_start_s[mine]) * 1e3,
                                strict=True)), (k - 0.4, 0.8), color=COLORS[k % len(COLORS)])
    ax.set_yticks(range(len(trace.core_busy_s)), [f"core {k}" for k in range(len(trace.core_busy_s))])
    ax.set_xlabel(f"time (ms), first {seconds * 1e3:.0f} ms after warm-up")


def stream_p99(ax, summary: dict) -> None:
    """Per-stream p50/p95/p99 bars, with Jain's fairness index in the title."""
    ax.clear()
    names = list(summary["streams"])
    x = np.arange(len(names))
    for i, (q, color) in enumerate(zip(("p50", "p95", "p99"), COLORS, strict=False)):
        ax.bar(x + (i - 1) * 0.27, [summary["streams"][n]["latency_s"][q] * 1e3 for n in names], 0.27,
               label=q, color=color)
    ax.set_xticks(x, names)
    ax.set_yscale("log")
    plain_log(ax.yaxis)
    ax.set_ylabel("latency (ms)")
    ax.set_title(f"Jain's fairness index {summary['fairness_jain']:.3f}", fontsize=9)
    ax.legend(fontsize=8)


def status_text(summary: dict) -> str:
    """Refused requests (by reason) and overload, said plainly; empty when neither happened.

    Percentiles are over completed requests only, so a run that refuses most of its
    traffic can show a fine p99: this line is what keeps a panel honest about that.
    """
    lines = []
    measured = summary.get("measured") or summary.get("requests") or 0
    refused = summary.get("refused_share", 0.0)
    if summary.get("rejected"):
        reasons = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in summary.get("rejected_by", {}).items() if v)
        lines.append(f"REFUSED: {refused:.1%} of the {measured} measured requests (reasons over the whole run: "
                     f"{reasons}); the percentiles above are over completed requests only")
    load = summary.get("load") or {}
    if load.get("overloaded"):
        offered, served = load.get("offered_rps"), summary.get("throughput_rps")
        head = (f"arrival rate {offered:.0f} req/s exceeds capacity ~{served:.0f} req/s (what was served); "
                if offered and served else "")
        lines.append("OVERLOADED: " + head + (load.get("note", "").removeprefix("overloaded: ")
                                           or "arrivals outpace service; queues grow without bound"))
    return "\n".join(lines)


def streams_text(summary: dict) -> str:
    """Per-stream p99 and the fairness index."""
    parts = [f"{n} p99 {s['latency_s']['p99'] * 1e3:.3f} ms" for n, s in summary["streams"].items()]
    return "; ".join(parts) + f"; Jain {summary['fairness_jain']:.3f}"


# --- artists drawn once and updated in place (the panels) ---------------------------------


def decimate(x: np.ndarray, y: np.ndarray, slices: int = 1000) -> tuple[np.ndarray, np.ndarray]:
    """A long series cut to ``slices`` slices of equal count, each drawn as its lowest then its highest value
    (at the slice's first and last x): peaks and troughs survive, a 50,000-point line draws as 2,000."""
    n = len(x)
    if n <= 2 * slices:
        return x, y
    start = np.linspace(0, n, slices + 1).astype(np.int64)[:-1]
    end = np.append(start[1:], n) - 1
    xs = np.column_stack([x[start], x[end]]).ravel()
    ys = np.column_stack([np.minimum.reduceat(y, start), np.maximum.reduceat(y, start)]).ravel()
    return xs, ys


def log_limits(*arrays: np.ndarray, pad: float = 1.15) -> tuple[float, float]:
    """Log-axis limits holding every positive value of ``arrays``, padded, then snapped out to a 1-2-5 grid
    (the axes stay still between runs that differ a little, and a panel's frame can be kept)."""
    vals = np.concatenate([a[a > 0] for a in arrays if len(a)] or [np.array([1.0])])
    if len(vals) == 0:
        return 0.1, 10.0
    lo, hi = nice_floor(float(vals.min()) / pad), nice_ceil(float(vals.max()) * pad)
    return (lo, hi) if hi > lo else (lo / 2, lo * 2)


class Bars:
    """Vertical (or, with ``horizontal``, horizontal) bars: current in ``color`` over the previous run in faint grey."""

    def __init__(self, ax, n: int, color: str = CURRENT, horizontal: bool = False, width: float = 0.8,
                 label: str = "this run", previous: str = "baseline"):
        self.ax, self.horizontal = ax, horizontal
        x = np.arange(n)
        draw = ax.barh if horizontal else ax.bar
        self.prev = draw(x, np.zeros(n), width, color=BASELINE, alpha=BASELINE_ALPHA, label=previous, zorder=1)
        self.cur = draw(x, np.zeros(n), width * 0.55, color=color, label=label, zorder=2)

    def update(self, values, prev_values=None) -> None:
        """New bar lengths; the previous run's bars are hidden when there is none."""
        for bars, vals in ((self.cur, values), (self.prev, prev_values)):
            vals = np.zeros(len(bars.patches)) if vals is None else np.asarray(vals, dtype=float)
            for patch, v in zip(bars.patches, vals, strict=True):
                (patch.set_width if self.horizontal else patch.set_height)(float(v))


class DriverBars(Bars):
    """Tail-driver shares (current over previous), one row per driver coloured by cause (the x label names the grey)."""

    def __init__(self, ax, label: str = "this run", previous: str = "baseline"):
        super().__init__(ax, len(DRIVERS), horizontal=True, label=label, previous=previous)
        for patch, d in zip(self.cur.patches, DRIVERS, strict=True):
            patch.set_color(cause_color(d))
        ax.set_yticks(np.arange(len(DRIVERS)), [d.replace("_", " ") for d in DRIVERS], fontsize=8)
        ax.invert_yaxis()
        ax.set_xlim(0, 1)
        ax.set_xlabel(f"share of latency above p95 (grey: {previous})")

    def show(self, summary: dict, previous: dict | None = None) -> None:
        """Bars from two run summaries."""
        self.update([summary["tail_drivers"][d] for d in DRIVERS],
                    None if previous is None else [previous["tail_drivers"][d] for d in DRIVERS])

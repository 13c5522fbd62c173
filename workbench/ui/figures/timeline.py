"""Pictures of one run: a per-core timeline coloured by cause above the queue depth, and its latency tail.

The timeline splits each batch's time on its core into the causes the trace records
(``workbench.runtime.trace``), in the order a core meets them:

* ``reload``: the wait for the model's weights before the batch: queued on the host link, copying
  over it, or waiting out another batch's copy (``batch_reload_s``);
* ``recompile pause``: the core compiling a new bucket for a shape it had not seen
  (the largest ``extra_s`` among the batch's requests);
* ``specialised``: the kernel a compiled bucket would need for the batch's real shape;
* ``padded`` / ``generic fallback``: the time beyond that (``batch_fallback_s`` less the
  pause, which the trace charges there too): the
  work spent on padding when the batch was padded up to a bucket, or the extra time of
  the generic kernel when no bucket fitted;
* ``contention stretch``: what the batch lost to HBM bandwidth shared with other cores
  (observed time minus isolated time, ``Trace.batch_contention_s``).

These are exactly the parts ``workbench.analysis.metrics.tail_drivers`` adds up, so the
area of a colour is the time the matching tail driver counts. Colours come from
``workbench.palette.TIMELINE``.
"""

from __future__ import annotations

import numpy as np
from matplotlib.patches import Patch
from matplotlib.ticker import NullLocator

from workbench.palette import BASELINE, BASELINE_ALPHA, CURRENT, PERCENTILE_STYLES, TIMELINE
from workbench.runtime.trace import Trace
from workbench.tail_axes import plain_log
from workbench.ui.figures.base import COLORS, ShownFigure, latencies_ms, log_limits
from workbench.ui.figures.survival import (
    FLOORS,
    PERCENTILES,
    TOP,
    percentile_values,
    span,
    survival_floor,
    survival_xy,
)

CAUSE_ORDER = ("reload", "recompile pause", "specialised", "padded", "generic fallback", "contention stretch")


def batch_causes(trace: Trace) -> dict[str, np.ndarray]:
    """Seconds of each batch spent on each timeline cause (one array per cause, in dispatch order).

    The parts add up to the batch's time on its core (``batch_end_s - batch_start_s``)
    within float rounding; every part is at least zero.
    """
    nb = len(trace.batch_core)
    pause = np.zeros(nb)
    extra = getattr(trace.service, "extra_s", None)
    if extra is not None and nb:
        ok = trace.batch >= 0
        np.maximum.at(pause, trace.batch[ok], extra[ok])
    kind = np.array(["envelope"] * nb, dtype=object)
    run = (getattr(trace.service, "info", None) or {}).get("run")
    if run is not None and nb:
        pad0, rec0, gen = run.ids()
        kind = np.where(trace.batch_bucket >= gen, "generic",
                        np.where((trace.batch_bucket >= pad0) & (trace.batch_bucket < rec0), "pad", "envelope"))
    # the trace charges a recompile pause to the batch's fallback seconds: what is left is padding or generic
    fallback = np.maximum(trace.batch_fallback_s - pause, 0.0)
    specialised = np.maximum(trace.batch_work_s - trace.batch_reload_s - pause - fallback, 0.0)
    return {
        "reload": trace.batch_reload_s.copy(),
        "recompile pause": pause,
        "specialised": specialised,
        "padded": np.where(kind == "pad", fallback, 0.0),
        "generic fallback": np.where(kind == "generic", fallback, 0.0),
        "contention stretch": trace.batch_contention_s,
    }


def cause_totals_s(trace: Trace, start_s: float = 0.0, seconds: float = np.inf) -> dict[str, float]:
    """Core-seconds per cause over the batches that start in ``[start_s, start_s + seconds)``."""
    keep = (trace.batch_start_s >= start_s) & (trace.batch_start_s < start_s + seconds)
    return {k: float(v[keep].sum()) for k, v in batch_causes(trace).items()}


def first_batch_with(trace: Trace, cause: str) -> float:
    """Start time (s) of the first batch that spends any time on ``cause`` (``nan`` if none does)."""
    part = batch_causes(trace)[cause]
    hit = np.flatnonzero(part > 0)
    return float(trace.batch_start_s[hit[0]]) if len(hit) else float("nan")


def draw_timeline(ax_cores, ax_depth, trace: Trace, start_s: float, seconds: float) -> dict[str, float]:
    """Per-core bars coloured by cause on ``ax_cores``, queue depth on ``ax_depth``; time in ms from ``start_s``.

    Returns the core-seconds per cause drawn (the picture's text twin).
    """
    ax_cores.clear()
    ax_depth.clear()
    parts = batch_causes(trace)
    keep = (trace.batch_end_s > start_s) & (trace.batch_start_s < start_s + seconds)
    cores = len(trace.core_busy_s)
    for k in range(cores):
        mine = np.flatnonzero(keep & (trace.batch_core == k))
        left = (trace.batch_start_s[mine] - start_s) * 1e3
        for cause in CAUSE_ORDER:
            width = parts[cause][mine] * 1e3
            shown = width > 0
            if shown.any():
                ax_cores.broken_barh(list(zip(left[shown], width[shown], strict=True)), (k - 0.4, 0.8),
                                     facecolor=TIMELINE[cause], edgecolor="none")
            left = left + width
        ends = (trace.batch_end_s[mine] - start_s) * 1e3  # thin white gaps: where one batch ends
        ax_cores.vlines(ends, k - 0.4, k + 0.4, color="white", lw=0.4)
    ax_cores.set_yticks(range(cores), [f"core {k}" for k in range(cores)])
    ax_cores.set_ylim(cores - 0.5, -0.5)
    ax_cores.set_xlim(0, seconds * 1e3)
    ax_cores.legend(handles=[Patch(color=TIMELINE[c], label=c) for c in CAUSE_ORDER], ncol=6, fontsize=7,
                    loc="lower left", bbox_to_anchor=(0, 1.0), frameon=False)
    t, depth = trace.queue_depth()
    end = start_s + seconds
    before = np.searchsorted(t, start_s, side="right") - 1
    inside = (t > start_s) & (t < end)
    xs = np.concatenate([[start_s], t[inside], [end]])
    ys = np.concatenate([[depth[before] if before >= 0 else 0], depth[inside]])
    ax_depth.step((xs - start_s) * 1e3, np.append(ys, ys[-1]), where="post", color=CURRENT, lw=1)
    ax_depth.set_xlim(0, seconds * 1e3)
    ax_depth.set_ylim(bottom=0)
    ax_depth.set_ylabel("requests\nwaiting")
    ax_depth.set_xlabel(f"time (ms) from {start_s:.3f} s into the run")
    ax_depth.grid(alpha=0.3)
    return cause_totals_s(trace, start_s, seconds)


def timeline_figure(trace: Trace, start_s: float | None = None, seconds: float = 0.02,
                    width: float = 10.0) -> ShownFigure:
    """The per-core timeline above the queue depth on one time axis (``start_s``: the first measured arrival)."""
    if start_s is None:
        i0 = int(len(trace.arrival_s) * trace.scenario.warmup_fraction)
        start_s = float(trace.arrival_s[min(i0, len(trace.arrival_s) - 1)])
    cores = len(trace.core_busy_s)
    fig = ShownFigure(figsize=(width, 1.2 + 0.45 * cores + 1.4))
    ax_cores, ax_depth = fig.subplots(2, 1, sharex=True, gridspec_kw={"height_ratios": [0.45 * cores + 0.4, 1.2]})
    fig.subplots_adjust(left=0.1, right=0.98, bottom=0.14, top=0.86, hspace=0.12)
    draw_timeline(ax_cores, ax_depth, trace, start_s, seconds)
    return fig


def timeline_text(totals: dict[str, float]) -> str:
    """The core-milliseconds per cause, one line (the timeline's text twin)."""
    return "core time by cause: " + ", ".join(f"{k} {v * 1e3:.2f} ms" for k, v in totals.items())


def percentiles_ms(trace: Trace) -> dict[int, float]:
    """p50 / p95 / p99 latency (ms) of the measured, completed requests (``nan`` when none)."""
    lat = latencies_ms(trace)
    return {q: float(np.percentile(lat, q)) if len(lat) else float("nan") for q, _ in PERCENTILE_STYLES}


def _ms_text(v: float) -> str:
    """Three significant figures, plain digits past 1,000 (the panels' legend format)."""
    return f"{v:,.0f}" if v >= 1000 else f"{v:.3g}"


def draw_cdf(ax, runs: dict[str, Trace]) -> dict[str, dict[float, float]]:
    """Latency survival curves (the share of requests slower than x, 1 - F) on log-log axes, p50 ... p99.9 marked.

    Named for the CDF it replaced: a linear CDF squeezes the slowest 1 % into the top hundredth of the plot.
    Drawn with :func:`workbench.ui.figures.survival.survival_xy` and the panels' guides (a dotted line at
    0.5, 0.05, 0.01, 0.001, labelled on the right axis; each run's dot where it crosses one). Two runs: the
    first is the current run (blue), the second the baseline (grey, wide, under it), as in every panel. More:
    each in its own colour. The y axis reaches 1e-4 when every run has enough samples below it
    (:func:`workbench.ui.figures.survival.survival_floor`), else 1e-3. The legend gives each run's p99 and
    p99.9. Returns each run's p50, p95, p99 and p99.9 in ms (keys 50, 95, 99, 99.9).
    """
    ax.clear()
    named = [(label, latencies_ms(tr)) for label, tr in runs.items()]
    named = [(label, lat) for label, lat in named if len(lat)]
    colours = [CURRENT, BASELINE] if len(named) == 2 else list(COLORS[:-1]) * 2
    floor = max((survival_floor(len(lat)) for _, lat in named), default=FLOORS[-1])  # deep enough for every run
    guides = 1 - np.array(PERCENTILES) / 100
    out: dict[str, dict[float, float]] = {}
    for (label, lat), colour in zip(named, colours, strict=False):
        grey = colour == BASELINE
        p = percentile_values(lat)
        out[label] = {q: float(v) for q, v in zip(PERCENTILES, p, strict=True)}
        ax.plot(*survival_xy(lat), color=colour, lw=2.4 if grey else 1.4, alpha=BASELINE_ALPHA if grey else 1.0,
                zorder=2 if grey else 4, label=f"{label}: p99 {_ms_text(p[2])}, p99.9 {_ms_text(p[3])} ms")
        ax.plot(p, guides, "o", ms=5 if grey else 3.2, mfc="white" if grey else colour, mec=colour,
                zorder=3 if grey else 5)
    for y in guides:
        ax.axhline(y, color="#6f6f6f", lw=0.7, ls=(0, (1, 2)), zorder=1)
    ax.set_xscale("log")
    plain_log(ax.xaxis)
    ax.set_yscale("log")
    ticks = [10.0 ** k for k in range(int(round(np.log10(floor))), 1)]
    ax.set_yticks(ticks, [f"{t:g}" for t in ticks])
    ax.set_ylim(floor / 2, TOP)
    if named:
        ax.set_xlim(*log_limits(*[span(lat, floor) for _, lat in named]))
    right = ax.secondary_yaxis("right")
    right.set_yticks(guides, [f"p{q:g}" for q in PERCENTILES])
    right.tick_params(labelsize=7, length=2, pad=1)
    right.yaxis.set_minor_locator(NullLocator())
    ax.set_xlabel("latency (ms), log scale")
    ax.set_ylabel("share of requests slower than x")
    ax.grid(alpha=0.25, axis="x")
    ax.legend(loc="lower left", fontsize=7, frameon=False)
    return out


def cdf_figure(runs: dict[str, Trace], width: float = 7.0, height: float = 3.6) -> ShownFigure:
    """A figure holding :func:`draw_cdf` of ``runs``: their latency survival curves, log-log (the name is kept
    for the chapters that call it)."""
    fig = ShownFigure(figsize=(width, height))
    ax = fig.subplots(1, 1)
    fig.subplots_adjust(left=0.12, right=0.97, bottom=0.15, top=0.95)
    draw_cdf(ax, runs)
    return fig

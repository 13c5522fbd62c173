"""Chapter 05's pictures: HBM occupancy by model against capacity, loads over the host link, waits for weights.

Numbers come from :mod:`workbench.analysis.residency_stats`. Reloads are drawn in the
palette's ``memory_residency`` colour as thin marks (a window) or counts per bin (the
whole run), never as a band that hides the data under it.
"""

from __future__ import annotations

import numpy as np
from matplotlib.ticker import MaxNLocator

from workbench import palette as pal
from workbench.ui.figures.base import new_figure

GIB = 1 << 30
MODEL_COLORS = ("#0072b2", "#56b4e9", "#f0e442", "#cc79a7")
HOLD_COLOR = "#3d3d3d"  # the naive runtime (dark grey): not a cause, so none of the causes' hues


def occupancy_figure(occ: dict, names: list[str], capacity_bytes: int, counts: tuple, window_s: tuple[float, float]):
    """Left: HBM held by each model (stacked, GiB) in a time window, capacity line, and above it the host link:
    each load's copy as a bar (they queue one after another). Right: loads per bin over the whole run."""
    fig, (ax, ab) = new_figure(2, 10.5, 3.6)
    t0, t1 = window_s
    t, held = occ["t_s"], occ["bytes"] / GIB
    keep = (t >= t0) & (t <= t1)
    i0 = max(int(np.argmax(keep)) - 1, 0)  # the state in force at the window's start
    sel = np.r_[i0, np.flatnonzero(keep)]
    ax.stackplot(t[sel] * 1e3, held[:, sel], step="post", labels=names,
                 colors=MODEL_COLORS[:len(names)], alpha=0.85)
    ax.axhline(capacity_bytes / GIB, color="black", lw=1.2, ls="--", label=f"HBM {capacity_bytes / GIB:.0f} GiB")
    seen = (occ["copy_spans_s"][:, 1] >= t0) & (occ["copy_spans_s"][:, 0] <= t1)
    spans, which = occ["copy_spans_s"][seen], occ["copy_model"][seen]
    top = held.sum(0).max()
    for k, ((b, e), m) in enumerate(zip(spans, which)):  # alternate two heights: back-to-back copies stay apart
        y = top * (1.05 + 0.07 * (k % 2))
        ax.plot([b * 1e3, e * 1e3], [y, y], lw=3, solid_capstyle="butt", color=pal.CAUSES["memory_residency"],
                label=f"copy over the host link ({len(spans)})" if k == 0 else None)
        ax.text((b + e) / 2 * 1e3, y + top * 0.015, names[m], ha="center", va="bottom", fontsize=7)
    ax.set_xlim(t0 * 1e3, t1 * 1e3)
    ax.set_ylim(0, top * 1.3)
    ax.set_xlabel("time (ms)")
    ax.set_ylabel("HBM held by weights (GiB)")
    ax.set_title("HBM occupancy by model (a window of the run)", fontsize=9)
    ax.legend(fontsize=7, loc="lower right", ncol=2)
    centres, n = counts
    width = float(centres[1] - centres[0]) if len(centres) > 1 else 1.0
    ab.bar(centres, n, width * 0.9, color=pal.CAUSES["memory_residency"])  # whole loads, not a rate
    ab.yaxis.set_major_locator(MaxNLocator(integer=True))
    ab.set_xlabel("time (s)")
    ab.set_ylabel(f"loads started per {width:.2g} s")
    ab.set_title(f"loads over the whole run: {int(n.sum())} in all", fontsize=9)
    return fig


def reload_cost_figure(rows: dict[str, float]):
    """Horizontal bars (ms): one load as bytes / link bandwidth, and what batches waited for weights in the run
    (rows whose label names a load or a wait are drawn in the residency colour)."""
    fig, (ax,) = new_figure(1, 6.5, 2.8)
    labels = list(rows)
    v = [rows[k] * 1e3 for k in labels]
    colors = [pal.CAUSES["memory_residency"] if ("load" in k or "wait" in k) else pal.CAUSES["service"]
              for k in labels]
    bars = ax.barh(labels, v, color=colors)
    ax.bar_label(bars, fmt="%.1f ms", fontsize=8)
    ax.set_xlabel("time (ms)")
    ax.set_xlim(0, max(v) * 1.25)
    ax.invert_yaxis()
    ax.set_title("waits for weights, in the run (ms)", fontsize=9)
    fig.subplots_adjust(left=0.45, right=0.97)
    return fig


def dispatch_figure(cmp: dict[str, dict], baseline_ms: dict[str, float]):
    """Left: p99 per stream (ms, log) with room for all three models (grey), under ``hold`` and under
    ``load_then_dispatch`` (from ``residency_stats.compare_dispatch``). Right: the tail's drivers under each."""
    fig, (ax, ad) = new_figure(2, 10.5, 3.4)
    streams = list(cmp["hold"]["p99_s"])
    x = np.arange(len(streams))
    runs = [("room for all (36 GiB)", [baseline_ms.get(s, np.nan) for s in streams], pal.BASELINE),
            ("hold", [cmp["hold"]["p99_s"][s] * 1e3 for s in streams], HOLD_COLOR),
            ("load_then_dispatch", [cmp["load_then_dispatch"]["p99_s"][s] * 1e3 for s in streams], pal.CURRENT)]
    for i, (label, v, color) in enumerate(runs):
        bars = ax.bar(x + (i - 1) * 0.27, v, 0.27, color=color, label=label)
        ax.bar_label(bars, fmt="%.0f", fontsize=7)
    ax.set_yscale("log")
    ax.set_ylim(1, 3e4)  # room above the bars for the legend
    ax.set_xticks(x, streams)
    ax.set_ylabel("p99 latency (ms)")
    ax.legend(fontsize=7, loc="upper left", ncol=3)
    ax.set_title("p99 per stream, 32 GiB, embed at 0.5 req/s", fontsize=9)
    names = list(cmp)
    left = np.zeros(len(names))
    for cause in ("queueing", "memory_residency", "service"):
        share = np.array([cmp[n]["tail_drivers"][cause] for n in names])
        ad.barh(names, share, left=left, color=pal.CAUSES[cause], label=cause.replace("_", " "))
        left += share
    ad.set_xlim(0, 1)
    ad.set_xlabel("share of the tail's latency (requests above p95)")
    ad.invert_yaxis()
    ad.legend(fontsize=8, loc="lower right")
    ad.set_title("what the tail is made of", fontsize=9)
    fig.subplots_adjust(wspace=0.45)
    return fig

"""The envelope picture: the live length histogram, the buckets' edges, and the share outside them shaded."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from workbench.analysis.envelope_stats import measured_shares
from workbench.compiler.envelope import Bucket
from workbench.palette import BASELINE, CURRENT, TIMELINE
from workbench.tail_axes import plain_log
from workbench.ui.figures.base import ShownFigure

OUTSIDE = TIMELINE["generic fallback"]  # what an out-of-envelope shape runs when the policy is fallback


def draw_envelope(ax, lengths: np.ndarray, buckets: Sequence[Bucket], label: str = "") -> dict[str, float]:
    """Histogram of ``lengths`` (log bins) with each bucket's range marked and the outside shaded.

    Returns :func:`workbench.analysis.envelope_stats.measured_shares` (the picture's text twin).
    """
    ax.clear()
    v = np.asarray(lengths)
    lo, hi = max(1, int(v.min()) // 2), int(v.max()) * 2
    bins = np.geomspace(lo, hi, 60)
    inside = np.zeros(len(v), dtype=bool)
    for b in buckets:
        inside |= (v >= b.min) & (v <= b.max)
    ax.hist(v[inside], bins=bins, color=CURRENT, alpha=0.9, label="inside a bucket")
    ax.hist(v[~inside], bins=bins, color=OUTSIDE, alpha=0.9, label="outside every bucket")
    edges = [lo] + [x for b in buckets for x in (b.min - 0.5, b.max + 0.5)] + [hi]
    for a, z in zip(edges[::2], edges[1::2], strict=True):  # the spans no bucket holds
        if z > a:
            ax.axvspan(a, z, color=OUTSIDE, alpha=0.08, lw=0)
    for b in buckets:
        ax.axvline(b.max + 0.5, color=BASELINE, lw=1, ls="--")
        ax.annotate(f"{b.max}", (b.max + 0.5, 1.0), xycoords=("data", "axes fraction"), fontsize=7,
                    ha="center", va="bottom", color="dimgrey")
    shares = measured_shares(v, buckets)
    out = shares["below"] + shares["gap"] + shares["beyond"]
    ax.set_xscale("log")
    plain_log(ax.xaxis)
    ax.set_xlim(lo, hi)
    ax.set_xlabel("sequence length (tokens), log scale; dashed: bucket upper edges")
    ax.set_ylabel("requests")
    ax.set_title(f"{label}{': ' if label else ''}{out:.1%} outside the envelope (shaded)", fontsize=9, pad=12)
    ax.legend(fontsize=8, loc="upper left")
    return shares


def envelope_figure(runs: dict[str, tuple[np.ndarray, Sequence[Bucket]]], width: float = 10.0,
                    height: float = 3.2) -> ShownFigure:
    """One :func:`draw_envelope` per run, side by side."""
    fig = ShownFigure(figsize=(width, height))
    axes = np.atleast_1d(fig.subplots(1, len(runs)))
    fig.subplots_adjust(left=0.07, right=0.98, bottom=0.17, top=0.85, wspace=0.3)
    for ax, (label, (lengths, buckets)) in zip(axes, runs.items(), strict=True):
        draw_envelope(ax, lengths, buckets, label)
    return fig


def tail_step_figure(slow_share: Sequence[float], mean_ms: Sequence[float], p99_ms: Sequence[float],
                     width: float = 6.5, height: float = 3.2) -> ShownFigure:
    """Mean and p99 (ms) against the share of requests on the slow path, with the 1% line where p99 steps.

    The points are runs the caller made (the share is each run's measured fallback share);
    the figure draws no model of its own.
    """
    fig = ShownFigure(figsize=(width, height))
    ax = fig.subplots(1, 1)
    fig.subplots_adjust(left=0.12, right=0.97, bottom=0.17, top=0.88)
    x = 100 * np.asarray(slow_share, dtype=float)
    ax.plot(x, p99_ms, "o-", color=CURRENT, label="p99")
    ax.plot(x, mean_ms, "s:", color="k", label="mean")
    ax.axvline(1.0, color=BASELINE, lw=1, ls="--")
    ax.annotate("1%: the share above p99", (1.0, 1.0), xycoords=("data", "axes fraction"), fontsize=7,
                ha="left", va="bottom", color="dimgrey")
    ax.fill_betweenx([0, 1], 1.0, max(float(x.max()), 1.0) * 1.05, transform=ax.get_xaxis_transform(),
                     color=OUTSIDE, alpha=0.06, lw=0)
    ax.set_xlim(0, max(float(x.max()), 1.0) * 1.05)
    ax.set_ylim(0, max(p99_ms) * 1.15)
    ax.set_xlabel("requests on the generic fallback (% of measured)")
    ax.set_ylabel("latency (ms)")
    ax.set_title("p99 steps when the slow slice passes 1%; the mean only creeps", fontsize=9, pad=12)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
    return fig

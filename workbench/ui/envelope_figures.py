"""The envelope picture: the live length histogram, the buckets' edges, and the share outside them shaded."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from workbench.analysis.envelope_stats import measured_shares
from workbench.compiler.envelope import Bucket
from workbench.ui.figures import ShownFigure, plain_log
from workbench.ui.palette import BASELINE, CURRENT, TIMELINE

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

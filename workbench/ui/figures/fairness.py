"""Chapter 04's pictures: Cobham against the simulator, Jain beside per-stream p99, per-core busy share.

Each function takes numbers computed by :mod:`workbench.analysis.fairness` and returns a
figure (``workbench.ui.figures.base.new_figure``, shown as PNG in a notebook). Colours come
from :mod:`workbench.palette`: the high-priority stream is ``CURRENT`` blue, the
second stream ``SECOND`` vermillion; under pinning core i serves stream i, so cores take
the same two colours.
"""

from __future__ import annotations

import numpy as np

from workbench import palette as pal
from workbench.tail_axes import plain_log
from workbench.ui.figures.base import new_figure

STREAM_COLORS = (pal.CURRENT, pal.SECOND)


def cobham_figure(data: dict):
    """Per-class mean queue wait (ms) against load: simulated (dots) and Cobham's formula (lines)."""
    fig, (ax,) = new_figure(1, 6.0, 3.6)
    loads = np.asarray(data["loads"])
    sim, cob = np.asarray(data["sim"]) * 1e3, np.asarray(data["cobham"]) * 1e3
    for k, name in enumerate(data["classes"]):
        ax.plot(loads, cob[:, k], "-", color=STREAM_COLORS[k], label=f"{name}: Cobham")
        ax.plot(loads, sim[:, k], "o", color=STREAM_COLORS[k], mfc="none", label=f"{name}: simulated")
    ax.set_yscale("log")
    plain_log(ax.yaxis)
    ax.set_xlabel("utilisation of the two cores (offered load)")
    ax.set_ylabel("mean queue wait (ms)")
    ax.set_title("strict priority: per-class mean wait, simulated vs Cobham", fontsize=9)
    ax.legend(fontsize=8, loc="upper left")
    ax.grid(alpha=0.3, which="both")
    return fig


def jain_vs_p99_figure(rows: list[dict]):
    """Left: per-stream p99 (ms) under each policy. Right: Jain's index under the same policies."""
    fig, (ax, aj) = new_figure(2, 10.0, 3.6)
    labels = [r["label"] for r in rows]
    names = list(rows[0]["p99_s"])
    x = np.arange(len(rows))
    width = 0.8 / len(names)
    for k, n in enumerate(names):
        v = [r["p99_s"][n] * 1e3 for r in rows]
        bars = ax.bar(x + (k - (len(names) - 1) / 2) * width, v, width, color=STREAM_COLORS[k % 2], label=n)
        ax.bar_label(bars, fmt="%.0f", fontsize=7)
    ax.set_xticks(x, labels, fontsize=8)
    ax.set_ylabel("p99 latency (ms)")
    ax.set_title("per-stream p99: the policies differ", fontsize=9)
    ax.legend(fontsize=8)
    j = [r["jain"] for r in rows]
    bars = aj.bar(x, j, 0.6, color=pal.BASELINE)
    aj.bar_label(bars, fmt="%.3f", fontsize=8)
    aj.set_xticks(x, labels, fontsize=8)
    aj.set_ylim(0, 1.1)
    aj.axhline(1.0, color="black", lw=0.8, ls=":")
    aj.set_ylabel("Jain's index (throughput / weight)")
    aj.set_title("Jain's index: what it reads under the same policies", fontsize=9)
    return fig


def core_busy_figure(rows: list[dict]):
    """Per-core busy share under each placement, with each run's p99 and an overload mark."""
    fig, (ax,) = new_figure(1, 6.5, 3.6)
    x = np.arange(len(rows))
    cores = len(rows[0]["busy"])
    width = 0.8 / cores
    for k in range(cores):
        v = [r["busy"][k] for r in rows]
        ax.bar(x + (k - (cores - 1) / 2) * width, v, width, label=f"core {k}",
               color=STREAM_COLORS[k % 2])  # pinned: core i serves stream i
    ax.axhline(1.0, color="black", lw=0.8, ls=":")
    ticks = [f"{r['placement']}\np99 {r['p99_s'] * 1e3:,.0f} ms" + ("\nOVERLOADED" if r["overloaded"] else "")
             for r in rows]
    ax.set_xticks(x, ticks, fontsize=8)
    ax.set_ylim(0, 1.15)
    ax.set_ylabel("busy share of the run")
    ax.set_title("per-core busy share by placement (dotted: a core's capacity)", fontsize=9)
    ax.legend(fontsize=8, loc="upper right")
    return fig

"""Pictures of token-level serving runs: the iterations, the KV cache filling, inter-token gaps, and a model's
iteration times on the GPU presets.

Each function draws on given axes (or returns a :class:`~workbench.ui.figures.base.ShownFigure`),
reads only a :class:`~workbench.serving.engine.ServingTrace` (or, for :func:`gpu_phases`, the times
:func:`workbench.analysis.serving_study.phase_curves` computed), and uses the shared palette:
prefill green, decode light green, preemptions vermillion, the compared run in grey.
"""

from __future__ import annotations

import numpy as np
from matplotlib.ticker import FixedLocator, FuncFormatter

from workbench.palette import BASELINE, BASELINE_ALPHA, CURRENT, TOKEN_PHASES
from workbench.serving.engine import ServingTrace
from workbench.serving.metrics import itl_s
from workbench.tail_axes import plain_log
from workbench.ui.figures.base import COLORS, MARKS, log_limits, new_figure


def busiest_window(tr: ServingTrace, seconds: float) -> tuple[float, float]:
    """The ``seconds``-long window (starting at an iteration) holding the most prompt tokens."""
    starts, pre = tr.it_start_s, np.cumsum(tr.it_prefill_tokens)
    ends = np.searchsorted(starts, starts + seconds)
    k = int(np.argmax(pre[np.minimum(ends, len(pre)) - 1] - np.concatenate([[0], pre[:-1]])))
    last = min(int(ends[k]), len(starts)) - 1  # stretch the window to the end of its last iteration
    return float(starts[k]), float(max(starts[k] + seconds, tr.it_end_s[last]))


def iterations(ax, tr: ServingTrace, t0: float, t1: float) -> None:
    """One bar per iteration in [t0, t1): width its duration, height its tokens (prompt tokens over decodes)."""
    m = (tr.it_start_s >= t0) & (tr.it_start_s < t1)
    x, w = (tr.it_start_s[m] - t0) * 1e3, (tr.it_end_s[m] - tr.it_start_s[m]) * 1e3
    dec, pre = tr.it_decodes[m], tr.it_prefill_tokens[m]
    ax.bar(x, dec, width=w, align="edge", color=TOKEN_PHASES["decode"], label="decode tokens (one per sequence)",
           linewidth=0)
    ax.bar(x, pre, width=w, bottom=dec, align="edge", color=TOKEN_PHASES["prefill"], label="prompt tokens",
           linewidth=0)
    hit = tr.it_preemptions[m] > 0
    if hit.any():
        ax.plot(x[hit], (dec + pre)[hit] * 1.05 + 1, "v", color=TOKEN_PHASES["preemption"], ms=5,
                label="preemption")
    ax.set_yscale("symlog", linthresh=16)
    ax.yaxis.set_major_locator(FixedLocator([0, 4, 16, 64, 256, 1024, 4096, 16384, 65536]))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.set_xlim(0, (t1 - t0) * 1e3)
    ax.set_ylim(0, float((dec + pre).max(initial=16)) * 16)  # a band above the tallest bar for the legend
    ax.set_xlabel(f"time from {t0:.3f} s (ms)")
    ax.set_ylabel("tokens in the iteration")
    ax.legend(loc="upper center", fontsize=7, ncol=3, frameon=False, columnspacing=1.0, handlelength=1.4)
    ax.grid(alpha=0.3, axis="y")


def kv_fill(ax, tr: ServingTrace, other: ServingTrace | None = None) -> None:
    """KV blocks held as a share of the cache over the run, preemptions as ticks (``other`` faint grey)."""
    for run, color, alpha, label in ((other, BASELINE, BASELINE_ALPHA, "compared run"), (tr, CURRENT, 1.0, "this run")):
        if run is None:
            continue
        ax.step(run.it_end_s, run.it_blocks_used / run.run.kv.blocks, where="post", color=color, alpha=alpha, lw=1.0,
                label=f"{label} ({run.run.kv.blocks:,} blocks)")
    t = tr.it_start_s[tr.it_preemptions > 0]
    if len(t):
        ax.plot(t, np.full(len(t), 0.02), "|", color=TOKEN_PHASES["preemption"], ms=8,
                label=f"preemptions ({int(tr.preemptions.sum())})")
    kv_axes(ax)


def kv_axes(ax) -> None:
    """The KV picture's frame, once its lines are drawn: the capacity line, limits, labels, legend, grid."""
    ax.axhline(1.0, color="k", ls="--", lw=0.8)
    ax.set_ylim(0, 1.25)  # a band above the capacity line for the legend, clear of the data
    ax.set_yticks([0, 0.2, 0.4, 0.6, 0.8, 1.0])
    ax.set_xlabel("time (s)")
    ax.set_ylabel("share of KV blocks held")
    ax.legend(loc="upper center", fontsize=7, ncol=3, frameon=False)
    ax.grid(alpha=0.3)


def itl_cdf(ax, tr: ServingTrace, other: ServingTrace | None = None,
            labels: tuple[str, str] = ("this run", "compared run")) -> None:
    """The tail of the inter-token gaps: the share of gaps longer than x (log-log), so p99.9 and the longest
    stall are as visible as the median; p50/p95/p99 of this run marked; ``other`` in faint grey."""
    cur = np.sort(itl_s(tr)) * 1e3
    prev = np.sort(itl_s(other)) * 1e3 if other is not None else np.zeros(0)
    for gaps, style in ((prev, {"color": BASELINE, "alpha": BASELINE_ALPHA, "lw": 2.2, "label": labels[1]}),
                        (cur, {"color": CURRENT, "lw": 1.4, "label": labels[0]})):
        if len(gaps):
            n = len(gaps)  # points at geometric steps of the count above: dense in the tail, where it matters
            idx = n - np.unique(np.geomspace(1, n, 2000).astype(np.int64))
            ax.step(gaps[idx], (n - idx - 0.5) / n, where="post", **style)
    for q, ls in MARKS:
        ax.axvline(float(np.percentile(cur, q)), color=CURRENT, ls=ls, lw=0.8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    plain_log(ax.xaxis)
    ax.set_xlim(*log_limits(cur, prev))
    n = max(len(cur), len(prev), 2)
    ax.set_ylim(0.5 / n, 1.5)
    ax.set_xlabel("gap between two tokens (ms)\np50 dotted, p95 dashed, p99 solid")
    ax.set_ylabel("share of gaps longer than x")
    ax.legend(loc="lower left", fontsize=8)
    ax.grid(alpha=0.3, which="both")


def serving_picture(tr: ServingTrace, window_s: float = 0.05):
    """Iterations in the busiest window beside the KV cache over the run."""
    fig, (a, b) = new_figure(2, 11.0, 3.6)
    iterations(a, tr, *busiest_window(tr, window_s))
    kv_fill(b, tr)
    return fig


def gpu_phases(decode_ax, prefill_ax, curves: dict) -> None:
    """Per GPU preset (``curves`` from :func:`workbench.analysis.serving_study.phase_curves`): a decode iteration's
    time over its batch (``decode_ax``) and one prefill's over its prompt length (``prefill_ax``), log-log; the
    fitted time solid with dots, the roofline dashed in the same colour."""
    for ax, phase, x_key, xlabel in ((decode_ax, "decode", "batches", "sequences in the decode iteration"),
                                     (prefill_ax, "prefill", "prompts", "prompt tokens (one prefill)")):
        values = []
        for (name, c), color in zip(curves.items(), COLORS, strict=False):
            x = np.asarray(c[x_key], dtype=float)
            fit, roof = np.asarray(c[f"{phase}_fitted_s"]) * 1e3, np.asarray(c[f"{phase}_roofline_s"]) * 1e3
            ax.plot(x, fit, "o-", color=color, lw=1.4, ms=3.5, label=f"{name}: fitted")
            ax.plot(x, roof, "--", color=color, lw=1.0, alpha=0.8, label=f"{name}: roofline")
            values += [fit, roof]
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.set_yscale("log")
        plain_log(ax.yaxis)
        ax.set_ylim(*log_limits(*values))
        ax.set_xlabel(xlabel)
        ax.set_ylabel(f"{phase} iteration (ms)")
        ax.grid(alpha=0.3, which="both")
    decode_ax.legend(loc="upper left", fontsize=7, ncol=2, frameon=False)

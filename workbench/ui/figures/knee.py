"""The knee of the latency-throughput curve: simulator sweeps against the queueing formulas.

Drawing only: the sweeps come from :func:`workbench.analysis.knee.knee_sweep`, the
curves from :func:`workbench.analysis.knee.theory_waits`, the batch cost from
:func:`workbench.analysis.knee.plan_batch_seconds` and :func:`workbench.analysis.knee.affine_fit`.
"""

from __future__ import annotations

import numpy as np

from workbench import palette
from workbench.tail_axes import plain_log
from workbench.ui.figures.base import new_figure

_THEORY_STYLES = {"M/M/c": ":", "G/G/c (Allen-Cunneen)": "--"}


def wait_vs_load(ax, rows: list[dict], theory: dict[str, list[float]], capacity_rps: float) -> None:
    """Mean queue wait (ms) against offered load: simulator points, formula curves, the capacity line."""
    ax.clear()
    rates = [r["rate"] for r in rows]
    for name, waits in theory.items():
        ax.plot(rates, finite(waits) * 1e3, ls=_THEORY_STYLES.get(name, "-."), color="k", lw=1.2, label=name)
    ax.plot(rates, [r["wait_mean_s"] * 1e3 for r in rows], "o", color=palette.CURRENT, label="simulator")
    ax.axvline(capacity_rps, color=palette.CAUSES["queueing"], lw=1.2, label=f"capacity {capacity_rps:.0f} req/s")
    ax.set_yscale("log")
    plain_log(ax.yaxis)
    ax.set_xlabel("offered load (req/s)")
    ax.set_ylabel("mean queue wait (ms)")
    ax.set_title("no batching: the knee is 1 / (1 - utilisation)", fontsize=9)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8, loc="upper left")


OFF_SCALE_S = 1.0  # s: a p99 this long is an overloaded run, drawn at the axis's top edge


def p99_vs_throughput(ax, curves: dict[str, list[dict]], capacities: dict[str, float] | None = None) -> None:
    """p99 latency (ms) against achieved throughput, one curve per batching policy (first grey, last blue)."""
    ax.clear()
    n = len(curves)
    others = [palette.SECOND, palette.CAUSES["core_imbalance"], palette.CAUSES["service"]]
    # the y axis stops at ten times the worst stable p99: an overloaded point (p99 in seconds) is drawn at the top
    # edge as a triangle with its value, so it does not squash every stable curve into the bottom of the axis
    stable = [r["p99_s"] * 1e3 for rows in curves.values() for r in rows if r["p99_s"] < OFF_SCALE_S]
    top = 10 * max(stable, default=100.0)
    for i, (label, rows) in enumerate(curves.items()):
        color = palette.BASELINE if i == 0 else palette.CURRENT if i == n - 1 else others[(i - 1) % len(others)]
        x = [r["throughput"] for r in rows]
        y = [min(r["p99_s"] * 1e3, top) for r in rows]
        ax.plot(x, y, "o-", color=color, label=label)
        off = [(xi, r["p99_s"]) for xi, r in zip(x, rows, strict=True) if r["p99_s"] * 1e3 > top]
        if off:
            ax.plot([xi for xi, _ in off], [top] * len(off), "^", color=color, ms=9, clip_on=False)
            ax.annotate("off scale, overloaded: p99 " + ", ".join(f"{p:.1f}" for _, p in off) + " s",
                        (off[0][0], top), xytext=(8, -12), textcoords="offset points", fontsize=7, color=color)
        if capacities and label in capacities:
            ax.axvline(capacities[label], color=color, ls=":", lw=1)
    ax.set_yscale("log")
    ax.set_ylim(top=top)
    plain_log(ax.yaxis)
    ax.set_xlabel("throughput (req/s); dotted: the capacity at max batch")
    ax.set_ylabel("p99 latency (ms)")
    ax.set_title("the knee: where more load buys latency, not throughput", fontsize=9)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8, loc="upper left")


def knee_figure(rows: list[dict], theory: dict[str, list[float]], capacity_rps: float,
                curves: dict[str, list[dict]], capacities: dict[str, float] | None = None):
    """Left: the unbatched wait against the formulas; right: p99 against throughput per batching policy."""
    fig, axes = new_figure(2, 11.0, 3.8)
    wait_vs_load(axes[0], rows, theory, capacity_rps)
    p99_vs_throughput(axes[1], curves, capacities)
    return fig


def finite(values: list[float]) -> np.ndarray:
    """The values as an array with infinities (overload) masked to NaN, so a curve stops at capacity."""
    a = np.asarray(values, dtype=float)
    return np.where(np.isfinite(a), a, np.nan)


def batch_cost_figure(batches: tuple[int, ...], seconds: list[float], fit: tuple[float, float]):
    """Left: time per batch (ms) against batch size; right: time per request (ms). Points: the plan; grey: the fit."""
    fig, axes = new_figure(2, 10.0, 3.2)
    b = np.asarray(batches, dtype=float)
    t = np.asarray(seconds, dtype=float) * 1e3
    grid = np.linspace(b.min(), b.max(), 200)
    base, per_item = fit[0] * 1e3, fit[1] * 1e3
    left, right = axes
    left.plot(grid, base + per_item * grid, color=palette.BASELINE, lw=1.5,
              label=f"fit: {base:.3f} + {per_item:.4f} x batch ms")
    left.plot(b, t, "o", color=palette.CURRENT, label="compiled plan")
    left.set_xlabel("batch size (requests)")
    left.set_ylabel("time per batch (ms)")
    left.set_title("a batch costs more as it grows ...", fontsize=9)
    right.plot(grid, base / grid + per_item, color=palette.BASELINE, lw=1.5, label="fit / batch")
    right.plot(b, t / b, "o", color=palette.CURRENT, label="compiled plan")
    right.axhline(per_item, color=palette.BASELINE, ls=":", lw=1, label=f"floor: {per_item:.4f} ms per request")
    right.set_xlabel("batch size (requests)")
    right.set_ylabel("time per request (ms)")
    right.set_ylim(bottom=0)
    right.set_title("... but each request costs less", fontsize=9)
    for ax in axes:
        ax.set_xscale("log", base=2)
        ax.set_xticks(b, [f"{int(v)}" for v in b])
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="upper left" if ax is left else "upper right")
    return fig

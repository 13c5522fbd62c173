"""The plan's kernels on a roofline: log-log FLOP/s against FLOP per HBM byte, ridge point marked.

Drawing only: intensities, bounds and the roof come from :mod:`workbench.analysis.roofline`.
"""

from __future__ import annotations

import numpy as np

from workbench.analysis.roofline import KernelPoint, attainable_flops, ridge_point
from workbench.hardware import Hardware
from workbench.ui import palette
from workbench.ui.figures import new_figure, plain_log


def roofline(ax, plans: dict[str, tuple[KernelPoint, ...]], hw: Hardware, label_kernels: bool = True) -> None:
    """The roof of one core, and each plan's kernels as points (first plan grey, the last blue).

    A point's x is its intensity (FLOP / HBM byte, spills included) and its y the FLOP/s it
    achieves over its time; a kernel under the roof by a wide margin is held back by launch
    overhead or padding, one on the slanted roof by bandwidth, one on the flat roof by compute.
    """
    ax.clear()
    xs = [p.intensity for pts in plans.values() for p in pts if np.isfinite(p.intensity) and p.intensity > 0]
    lo = min([ridge_point(hw) / 100, *xs]) / 2
    hi = max([ridge_point(hw) * 10, *xs]) * 2
    grid = np.geomspace(lo, hi, 200)
    ax.plot(grid, [attainable_flops(x, hw) / 1e12 for x in grid], color="k", lw=1.5, label="roof (one core)")
    r = ridge_point(hw)
    ax.axvline(r, color="k", ls=":", lw=1)
    ax.annotate(f"ridge {r:.0f} FLOP/B", (r, hw.peak_flops_per_core / 1e12), xytext=(6, -14),
                textcoords="offset points", fontsize=8)
    styles = [(palette.BASELINE, "s"), (palette.SECOND, "^"), (palette.CURRENT, "o")]
    n = len(plans)
    for i, (label, pts) in enumerate(plans.items()):
        color, marker = styles[-1] if i == n - 1 else styles[min(i, 1)]
        good = [p for p in pts if np.isfinite(p.intensity) and p.intensity > 0]
        ax.scatter([p.intensity for p in good], [p.achieved_flops / 1e12 for p in good], color=color,
                   marker=marker, s=36, zorder=3, label=label,
                   edgecolors=[palette.CAUSES["memory_contention"] if p.cost.spill_bytes else color for p in good],
                   linewidths=[2.0 if p.cost.spill_bytes else 0.5 for p in good])
        if label_kernels:
            for p in good:
                ax.annotate(p.kernel.name.split("_", 1)[-1], (p.intensity, p.achieved_flops / 1e12),
                            xytext=(4, 3), textcoords="offset points", fontsize=7, color=color)
    ax.set_xscale("log")
    ax.set_yscale("log")
    plain_log(ax.xaxis)
    plain_log(ax.yaxis)
    ax.set_xlabel("arithmetic intensity (FLOP per HBM byte)")
    ax.set_ylabel("achieved (TFLOP/s)")
    ax.set_title("kernels on the roofline; orange rim: the kernel spills", fontsize=9)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8, loc="lower right")


def roofline_figure(plans: dict[str, tuple[KernelPoint, ...]], hw: Hardware):
    """A one-panel figure of :func:`roofline`."""
    fig, (ax,) = new_figure(1, 7.0, 4.2)
    fig.subplots_adjust(left=0.1, bottom=0.13)
    roofline(ax, plans, hw)
    return fig

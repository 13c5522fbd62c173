"""The chips of the course side by side: their spec table as text, and one kernel's time split on each.

Both read :mod:`workbench.analysis.regimes` (which reads the presets of :mod:`workbench.hardware`), so no
figure here is typed by hand. The split figure draws, per chip, the three terms the regimes compare
(compute, HBM traffic, launch overhead) on one log time axis; the largest names the regime.
"""

from __future__ import annotations

import numpy as np
from matplotlib.patches import Patch

from workbench.analysis.regimes import REGIMES, RegimeSplit
from workbench.palette import CAUSES, TIMELINE
from workbench.tail_axes import plain_log
from workbench.ui.figures.base import new_figure

KIB, MIB, GIB = 2**10, 2**20, 2**30
# compute is the kernels' own work (service green), HBM traffic the memory colour, overhead the queueing blue
REGIME_COLORS: dict[str, str] = {"compute": CAUSES["service"], "memory": TIMELINE["contention stretch"],
                                 "overhead": CAUSES["queueing"]}


def _sram(b: float) -> str:
    return f"{b / MIB:.1f} MiB" if b >= MIB else f"{b / KIB:.0f} KiB"


def spec_table(rows: list[dict]) -> str:
    """A fixed-width table of :func:`workbench.analysis.regimes.chip_specs` rows (the spec table's text)."""
    head = (f"{'preset':<17}{'cores':>5}{'TFLOP/s':>9}{'/core':>7}{'HBM GB/s':>10}{'ridge':>7}"
            f"{'SRAM/core':>11}{'HBM':>8}{'launch':>8}{'host link':>11}")
    units = (f"{'':<17}{'':>5}{'chip':>9}{'':>7}{'':>10}{'F/B':>7}{'':>11}{'GiB':>8}{'µs':>8}{'GB/s':>11}")
    lines = [head, units]
    for r in rows:
        lines.append(f"{r['name']:<17}{r['cores']:>5}{r['peak_flops'] / 1e12:>9.1f}"
                     f"{r['peak_flops_per_core'] / 1e12:>7.1f}"
                     f"{r['hbm_bytes_per_s'] / 1e9:>10,.0f}{r['ridge_flop_per_byte']:>7.0f}"
                     f"{_sram(r['sram_bytes_per_core']):>11}{r['hbm_bytes'] / GIB:>8.0f}{r['launch_s'] * 1e6:>8.0f}"
                     f"{r['host_link_bytes_per_s'] / 1e9:>11.1f}")
    return "\n".join(lines)


def split_text(splits: dict[str, RegimeSplit]) -> str:
    """One line per chip: the three terms in µs and the regime they give."""
    lines = [f"{'preset':<17}{'compute':>9}{'memory':>9}{'launch':>9}   regime (µs)"]
    for name, s in splits.items():
        lines.append(f"{name:<17}{s.compute_s * 1e6:>9.2f}{s.memory_s * 1e6:>9.2f}{s.overhead_s * 1e6:>9.2f}   "
                     f"{s.regime}-bound")
    return "\n".join(lines)


def split_figure(splits: dict[str, RegimeSplit], title: str = ""):
    """Per chip (a row each), the compute, memory and launch terms as bars on one log axis (µs); the largest,
    the regime, drawn solid and the other two faint."""
    fig, (ax,) = new_figure(1, 7.0, 0.5 + 0.42 * len(splits))
    fig.subplots_adjust(left=0.2, right=0.97, bottom=0.45 / (0.5 + 0.42 * len(splits)) + 0.12, top=0.86)
    names = list(splits)
    height = 0.26
    for j, reg in enumerate(REGIMES):
        vals = np.array([getattr(splits[n], ("compute_s", "memory_s", "overhead_s")[j]) * 1e6 for n in names])
        alpha = [1.0 if splits[n].regime == reg else 0.35 for n in names]
        y = np.arange(len(names)) + (j - 1) * height
        for yy, v, a in zip(y, vals, alpha, strict=True):
            ax.barh(yy, v, height=height, color=REGIME_COLORS[reg], alpha=a)
    ax.set_yticks(np.arange(len(names)), [f"{n}: {splits[n].regime}" for n in names], fontsize=8)
    ax.invert_yaxis()
    ax.set_xscale("log")
    plain_log(ax.xaxis)
    ax.set_xlabel("µs (log scale); the longest bar of a chip names its regime")
    ax.legend(handles=[Patch(color=REGIME_COLORS[r], label=f"{r} term") for r in REGIMES],
              loc="lower left", bbox_to_anchor=(0, 1.0), ncol=3, fontsize=8, frameon=False)
    if title:
        ax.set_title(title, fontsize=9, loc="left", pad=18)  # above the legend
    ax.grid(alpha=0.3, axis="x")
    return fig

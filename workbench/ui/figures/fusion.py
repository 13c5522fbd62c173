"""Pictures of fusion: the graph before and after, SRAM working sets against capacity, HBM demand in time.

Drawing only: every number comes from :mod:`workbench.analysis.roofline` (which reads the
cost model). A kernel that spills is drawn with the colour of the cause its bytes
feed, HBM contention (``palette.CAUSES["memory_contention"]``); everything else is the
baseline grey (before) or the current blue (after).
"""

from __future__ import annotations

from matplotlib.patches import FancyBboxPatch

from workbench import palette
from workbench.analysis.roofline import KernelPoint
from workbench.hardware import Hardware
from workbench.tail_axes import plain_log
from workbench.ui.figures.base import new_figure

MIB = 2**20
SPILL = palette.CAUSES["memory_contention"]


def kernel_boxes(ax, points: tuple[KernelPoint, ...], title: str, color: str) -> None:
    """Kernels as boxes in launch order, their ops listed inside; a spilling kernel filled orange."""
    ax.clear()
    n = len(points)
    for i, p in enumerate(points):
        spills = p.cost.spill_bytes > 0
        ops = p.kernel.nodes
        text = "\n".join(ops if len(ops) <= 7 else (*ops[:3], "...", *ops[-3:]))
        box = FancyBboxPatch((i + 0.08, 0.05), 0.84, 0.9, boxstyle="round,pad=0.01",
                             facecolor=SPILL if spills else color, alpha=0.35 if not spills else 0.6,
                             edgecolor=SPILL if spills else color, lw=1.5)
        ax.add_patch(box)
        ax.text(i + 0.5, 0.5, text, ha="center", va="center", fontsize=6 if n > 6 else 7)
        note = f"spill {p.cost.spill_bytes / MIB:.1f} MiB" if spills else "no spill"
        ax.text(i + 0.5, -0.04, note, ha="center", va="top", fontsize=6, color=SPILL if spills else "k")
    ax.set_xlim(0, max(n, 1))
    ax.set_ylim(-0.15, 1.0)
    ax.axis("off")
    ax.set_title(f"{title}: {n} kernels, {n} launches", fontsize=9)


def fusion_graph(before: tuple[KernelPoint, ...], after: tuple[KernelPoint, ...],
                 labels: tuple[str, str] = ("before", "after")):
    """Two rows: the plan before fusion (grey) and after (blue); orange kernels spill."""
    fig = new_figure(1, 10.0, 4.6)[0]
    fig.clear()
    top, bottom = fig.subplots(2, 1, gridspec_kw={"height_ratios": [1, 1]})
    fig.subplots_adjust(left=0.02, right=0.98, top=0.92, bottom=0.06, hspace=0.35)
    kernel_boxes(top, before, labels[0], palette.BASELINE)
    kernel_boxes(bottom, after, labels[1], palette.CURRENT)
    return fig


def kernel_name(p: KernelPoint) -> str:
    """A kernel's name on an axis: its op, its two ops, or its first and last ops."""
    nodes = p.kernel.nodes
    return nodes[0] if len(nodes) == 1 else "+".join(nodes) if len(nodes) == 2 else f"{nodes[0]}..{nodes[-1]}"


def working_set_bars(ax, points: tuple[KernelPoint, ...], hw: Hardware, title: str = "") -> None:
    """Each kernel's per-tile SRAM working set (MiB, log scale) at its chosen tile, against the core's capacity;
    under each bar the kernel and its tile rows."""
    ax.clear()
    cap = hw.sram_bytes_per_core / MIB
    names = [f"{kernel_name(p)}\n{p.cost.tiling.tile_rows:,}-row tile" for p in points]
    sizes = [p.cost.working_set / MIB for p in points]
    colors = [SPILL if p.cost.spill_bytes else palette.CURRENT for p in points]
    ax.bar(range(len(points)), sizes, color=colors)
    ax.axhline(cap, color="k", ls="--", lw=1.2, label=f"SRAM per core {cap:g} MiB")
    ax.set_yscale("log")
    ax.set_ylim(min([*sizes, cap]) / 2, max([*sizes, cap]) * 4)
    plain_log(ax.yaxis)
    crowded = len(points) > 4
    ax.set_xticks(range(len(points)), names, rotation=30 if crowded else 0, ha="right" if crowded else "center",
                  fontsize=7)
    ax.set_ylabel("working set per tile (MiB)")
    ax.set_title(title or "SRAM working set per kernel at its chosen tile (orange: spills)", fontsize=9)
    ax.legend(fontsize=8, loc="upper left")
    ax.grid(alpha=0.3, axis="y")


def bandwidth_demand(ax, timelines: dict[str, tuple[list[float], list[float]]], hw: Hardware) -> None:
    """HBM demand (GB/s) over one batch's time, one step curve per plan (first grey, last blue)."""
    ax.clear()
    n = len(timelines)
    for i, (label, (edges, demand)) in enumerate(timelines.items()):
        color = palette.CURRENT if i == n - 1 else palette.BASELINE
        ys = [d / 1e9 for d in demand]
        ax.stairs(ys, [e * 1e3 for e in edges], color=color, lw=1.6, label=label,
                  alpha=1.0 if i == n - 1 else palette.BASELINE_ALPHA)
    ax.axhline(hw.hbm_bandwidth_bytes_per_s / 1e9, color=SPILL, ls="--", lw=1.2,
               label=f"HBM {hw.hbm_bandwidth_bytes_per_s / 1e9:.0f} GB/s (shared by {hw.cores} cores)")
    ax.set_xlabel("time into the batch (ms), kernels back to back")
    ax.set_ylabel("HBM demand (GB/s)")
    ax.set_title("one core's HBM demand through one batch", fontsize=9)
    ax.set_ylim(0, hw.hbm_bandwidth_bytes_per_s / 1e9 * 1.45)
    ax.legend(fontsize=8, loc="upper right", ncol=2)
    ax.grid(alpha=0.3)


def memory_figure(plan: tuple[KernelPoint, ...], hw: Hardware,
                  timelines: dict[str, tuple[list[float], list[float]]], title: str = ""):
    """One plan's working sets against SRAM beside HBM demand over a batch for each plan in ``timelines``."""
    fig, axes = new_figure(2, 11.0, 3.8)
    fig.subplots_adjust(bottom=0.22 if len(plan) <= 4 else 0.32)
    working_set_bars(axes[0], plan, hw, title)
    bandwidth_demand(axes[1], timelines, hw)
    return fig

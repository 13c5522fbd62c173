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
    labels: list[tuple[float, float, str, str]] = []
    for i, (label, pts) in enumerate(plans.items()):
        color, marker = styles[-1] if i == n - 1 else styles[min(i, 1)]
        good = [p for p in pts if np.isfinite(p.intensity) and p.intensity > 0]
        ax.scatter([p.intensity for p in good], [p.achieved_flops / 1e12 for p in good], color=color,
                   marker=marker, s=36, zorder=3, label=label,
                   edgecolors=[palette.CAUSES["memory_contention"] if p.cost.spill_bytes else color for p in good],
                   linewidths=[2.0 if p.cost.spill_bytes else 0.5 for p in good])
        if label_kernels:
            labels += [(p.intensity, p.achieved_flops / 1e12, kernel_label(p), color) for p in good]
    ax.set_xscale("log")
    ax.set_yscale("log")
    ys = [y for _, y, _, _ in labels] or [hw.peak_flops_per_core / 1e12]
    ax.set_xlim(lo, hi)
    ax.set_ylim(min(attainable_flops(lo, hw) / 1e12, *ys) / 1.5, hw.peak_flops_per_core / 1e12 * 3.0)  # room to label
    place_labels(ax, labels)
    plain_log(ax.xaxis)
    plain_log(ax.yaxis)
    ax.set_xlabel("arithmetic intensity (FLOP per HBM byte)")
    ax.set_ylabel("achieved (TFLOP/s)")
    ax.set_title("kernels on the roofline; orange rim: the kernel spills", fontsize=9)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8, loc="lower right")


def kernel_label(p: KernelPoint) -> str:
    """A kernel's name on the figure: its op, or for a fused kernel its first and last ops and their count."""
    nodes = p.kernel.nodes
    return nodes[0] if len(nodes) <= 2 else f"{nodes[0]}..{nodes[-1]} ({len(nodes)} ops)"


# label offsets tried in turn (points): right-above, right-below, left-above, left-below, further out
_OFFSETS = ((4, 3), (4, -10), (-4, 3), (-4, -10), (4, 12), (4, -19), (-4, 12), (-4, -19), (4, 21), (4, -28),
            (-4, 21), (-4, -28), (4, 30), (4, -37))


def place_labels(ax, labels: list[tuple[float, float, str, str]], fontsize: float = 7) -> None:
    """Label points without overprinting: each label takes the first offset whose box (estimated from the
    text's length) overlaps no label placed before it, else the least covered one; points that coincide share
    one label. Needs the axes' limits and scales set."""
    fig = ax.get_figure()
    px = fig.dpi / 72.0
    placed: list[tuple[float, float, float, float]] = []
    for t in ax.texts:  # annotations already there (the ridge's) are boxes to keep clear of
        ax_x, ax_y = ax.transData.transform(t.xy)
        dx, dy = t.xyann
        placed.append((ax_x + dx * px, ax_y + dy * px, ax_x + dx * px + 0.62 * 8 * px * len(t.get_text()),
                       ax_y + dy * px + 8 * px * 1.3))
    merged: dict[tuple[float, float, str], list] = {}
    for x, y, text, color in labels:  # kernels at the same point share one label: "ln1/ln2"
        key = (round(float(np.log10(x)), 2), round(float(np.log10(y)), 2), color)
        merged.setdefault(key, [x, y, []])[2].append(text)
    joined = [(x, y, "/".join(texts), key[2]) for key, (x, y, texts) in merged.items()]
    def overlap(box) -> float:
        return sum(max(0.0, min(box[2], b[2]) - max(box[0], b[0])) * max(0.0, min(box[3], b[3]) - max(box[1], b[1]))
                   for b in placed)

    for x, y, text, color in sorted(joined, key=lambda t: (t[0], t[1])):
        ax_x, ax_y = ax.transData.transform((x, y))
        w, h = 0.62 * fontsize * px * len(text), fontsize * px * 1.3
        boxes = []
        for dx, dy in _OFFSETS:
            x0, y0 = ax_x + dx * px - (w if dx < 0 else 0), ax_y + dy * px
            boxes.append(((x0, y0, x0 + w, y0 + h), (dx, dy)))
        box, (dx, dy) = min(boxes, key=lambda b: overlap(b[0]))  # the first free offset, else the least covered
        placed.append(box)
        ax.annotate(text, (x, y), xytext=(dx, dy), textcoords="offset points", fontsize=fontsize, color=color,
                    ha="right" if dx < 0 else "left")


def roofline_figure(plans: dict[str, tuple[KernelPoint, ...]], hw: Hardware):
    """A one-panel figure of :func:`roofline`."""
    fig, (ax,) = new_figure(1, 7.0, 4.2)
    fig.subplots_adjust(left=0.1, bottom=0.13)
    roofline(ax, plans, hw)
    return fig

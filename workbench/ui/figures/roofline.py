"""The plan's kernels on a roofline: log-log FLOP/s against FLOP per HBM byte, ridge point marked.

Drawing only: intensities, bounds and the roof come from :mod:`workbench.analysis.roofline`.
"""

from __future__ import annotations

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.patches import Rectangle

from workbench import palette
from workbench.analysis.roofline import KernelPoint, attainable_flops, ridge_point
from workbench.hardware import Hardware
from workbench.tail_axes import plain_log
from workbench.ui.figures.base import new_figure


def roofline(ax, plans: dict[str, tuple[KernelPoint, ...]], hw: Hardware, label_kernels: bool = True,
             window: tuple[float, float, float, float] | None = None,
             unlabelled: tuple[float, float, float, float] | None = None) -> None:
    """The roof of one core, and each plan's kernels as points (first plan grey, the last blue).

    A point's x is its intensity (FLOP / HBM byte, spills included) and its y the FLOP/s it
    achieves over its time; a kernel under the roof by a wide margin is held back by launch
    overhead or padding, one on the slanted roof by bandwidth, one on the flat roof by compute.
    ``window`` (x0, x1, y0, y1; FLOP/byte and TFLOP/s) draws only that part, every point in it labelled;
    ``unlabelled`` leaves the points inside it unlabelled and outlines it (a zoom drawn beside).
    """
    ax.clear()
    r = ridge_point(hw)
    peak = hw.peak_flops_per_core / 1e12
    xs = [p.intensity for pts in plans.values() for p in pts if np.isfinite(p.intensity) and p.intensity > 0]
    lo, hi = (window[0], window[1]) if window else (min([r / 100, *xs]) / 2, max([r * 10, *xs]) * 2)
    grid = np.geomspace(lo, hi, 200)
    ax.plot(grid, [attainable_flops(x, hw) / 1e12 for x in grid], color="k", lw=1.5, label="roof (one core)")
    ax.axvline(r, color="k", ls=":", lw=1)
    styles = [(palette.BASELINE, "s"), (palette.SECOND, "^"), (palette.CURRENT, "o")]
    n = len(plans)
    labels: list[tuple[float, float, str, str]] = []

    def within(box, x: float, y: float) -> bool:
        return box is not None and box[0] <= x <= box[1] and box[2] <= y <= box[3]

    for i, (label, pts) in enumerate(plans.items()):
        color, marker = styles[-1] if i == n - 1 else styles[min(i, 1)]
        good = [p for p in pts if np.isfinite(p.intensity) and p.intensity > 0]
        ax.scatter([p.intensity for p in good], [p.achieved_flops / 1e12 for p in good], color=color,
                   marker=marker, s=36, zorder=3, label=label,
                   edgecolors=[palette.CAUSES["memory_contention"] if p.cost.spill_bytes else color for p in good],
                   linewidths=[2.0 if p.cost.spill_bytes else 0.5 for p in good])
        if label_kernels:
            labels += [(p.intensity, p.achieved_flops / 1e12, kernel_label(p), color) for p in good
                       if (window is None or within(window, p.intensity, p.achieved_flops / 1e12))
                       and not within(unlabelled, p.intensity, p.achieved_flops / 1e12)]
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    if window:
        ax.set_ylim(window[2], window[3])
    else:
        ys = [p.achieved_flops / 1e12 for pts in plans.values() for p in pts if p.achieved_flops > 0] or [peak]
        ax.set_ylim(min(attainable_flops(lo, hw) / 1e12, *ys) / 1.5, peak * 3.0)  # room to label
    bottom = ax.get_ylim()[0]
    ax.annotate(f"ridge {r:.0f} FLOP/B", (r, bottom), xytext=(4, 4), textcoords="offset points", fontsize=8,
                va="bottom")  # at the foot of the axes, under the roof and clear of the kernels on it
    if unlabelled is not None:
        x0, x1, y0, y1 = unlabelled
        ax.add_patch(Rectangle((x0, y0), x1 - x0, y1 - y0, fill=False, ls="--", lw=0.8, ec="0.4", zorder=1))
        ax.annotate("zoomed at right", (x1, y0), xytext=(0, -3), textcoords="offset points", fontsize=7,
                    color="0.3", ha="right", va="top")
    lines = [ax.transData.transform((x, attainable_flops(x, hw) / 1e12)) for x in np.geomspace(lo, hi, 400)]
    lines += [ax.transData.transform((r, y)) for y in np.geomspace(*ax.get_ylim(), 200)]
    place_labels(ax, labels, avoid=[tuple(pt) for pt in lines])  # labels keep off the roof and the ridge line
    plain_log(ax.xaxis)
    plain_log(ax.yaxis)
    ax.set_xlabel("arithmetic intensity (FLOP per HBM byte)")
    ax.set_ylabel("achieved (TFLOP/s)")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8, loc="upper left")  # above the slanted roof, where no kernel can be


def kernel_label(p: KernelPoint) -> str:
    """A kernel's name on the figure: its op, or for a fused kernel its first and last ops and their count."""
    nodes = p.kernel.nodes
    return nodes[0] if len(nodes) <= 2 else f"{nodes[0]}..{nodes[-1]} ({len(nodes)} ops)"


# label offsets tried in turn (points): right-above, right-below, left-above, left-below, then one line further
# out each round, up to ten lines away (a label more than a line away gets a leader line)
_OFFSETS = tuple((dx, dy) for k in range(10) for dx in (4, -4) for dy in (3 + 10 * k, -10 - 10 * k))
_MARKER_PT = 4.0  # half the side of the box kept clear around each point (points)
_LEADER_FROM = 12  # a label offset further than this (points, vertically) gets a leader line
_OVERLAP_WEIGHT = 100.0  # a square pixel of label over label, marker or frame edge costs the most
_CROSSING_PX2 = 400.0  # a leader line across a label costs less than four square pixels of overlap
_LINE_SAMPLE = 100.0  # each sample of a drawn line (the roof, the ridge) under a label


def _corner(bb, dx: float, dy: float) -> tuple[tuple[float, float], tuple[float, float]]:
    """The corner of a label's box nearest its point (its leader line starts there), in pixels and as the
    annotation's ``relpos``: the left end of a label to the right of its point, the bottom of one above it."""
    rx, ry = (0.0 if dx >= 0 else 1.0), (0.0 if dy >= 0 else 1.0)
    return (bb.x0 + rx * bb.width, bb.y0 + ry * bb.height), (rx, ry)


def _segment(start, point, n: int = 24) -> list[tuple[float, float]]:
    """Pixels along a leader line from ``start`` (a label's corner) to ``point``."""
    (x0, y0), (x1, y1) = start, point
    return [(x0 + (x1 - x0) * t, y0 + (y1 - y0) * t) for t in np.linspace(0.0, 1.0, n)[1:]]


def place_labels(ax, labels: list[tuple[float, float, str, str]], fontsize: float = 7,
                 avoid: list[tuple[float, float]] = ()) -> None:
    """Label points without overprinting. Points are labelled right to left; each label takes the first offset
    whose drawn box (measured by the renderer) overlaps no label placed before it, no point's marker and no
    annotation already there, stays inside the axes, covers none of the pixels in ``avoid`` (samples along lines
    drawn there), and whose leader line (drawn from its corner nearest the point, if it is far enough to need
    one) crosses no placed label and is crossed by none; else the cheapest (``cover``). Points that coincide
    share one label. Needs the axes' limits and scales set."""
    fig = ax.get_figure()
    canvas = fig.canvas if hasattr(fig.canvas, "get_renderer") else FigureCanvasAgg(fig)  # to measure text
    renderer = canvas.get_renderer()
    px = fig.dpi / 72.0
    frame = ax.get_window_extent(renderer)
    placed = [t.get_window_extent(renderer) for t in ax.texts]  # annotations already there (the ridge's)
    leaders: list[list[tuple[float, float]]] = []  # pixels along the leader lines drawn so far
    merged: dict[tuple[float, float, str], list] = {}
    for x, y, text, color in labels:  # kernels at the same point share one label: "ln1/ln2"
        key = (round(float(np.log10(x)), 2), round(float(np.log10(y)), 2), color)
        merged.setdefault(key, [x, y, []])[2].append(text)
    joined = [(x, y, "/".join(texts), key[2]) for key, (x, y, texts) in merged.items()]
    r = _MARKER_PT * px
    centres = [tuple(ax.transData.transform((x, y))) for x, y, _, _ in joined]
    markers = [(cx - r, cy - r, cx + r, cy + r) for cx, cy in centres]

    def area(a, b) -> float:
        """Overlap of two (x0, y0, x1, y1) boxes, in square pixels."""
        return max(0.0, min(a[2], b[2]) - max(a[0], b[0])) * max(0.0, min(a[3], b[3]) - max(a[1], b[1]))

    def inside(pt, b) -> bool:
        return b.x0 <= pt[0] <= b.x1 and b.y0 <= pt[1] <= b.y1

    def cover(bb, leader) -> float:
        """The price of a label at ``bb`` with ``leader`` (pixels along its leader line, empty if it has none):
        its square pixels over other labels, over markers or outside the axes, each crossing of its leader line
        with a placed label or of a placed leader line with it, and each sample of a drawn line under it."""
        box = (bb.x0, bb.y0, bb.x1, bb.y1)
        overlap = (bb.width * bb.height - area(box, (frame.x0, frame.y0, frame.x1, frame.y1))
                   + sum(area(box, (b.x0, b.y0, b.x1, b.y1)) for b in placed) + sum(area(box, m) for m in markers))
        crossings = (sum(any(inside(pt, b) for pt in leader) for b in placed)
                     + sum(any(inside(pt, bb) for pt in line) for line in leaders))
        lines = sum(inside(pt, bb) for pt in avoid)
        return _OVERLAP_WEIGHT * overlap + _CROSSING_PX2 * crossings + _LINE_SAMPLE * lines

    # right to left: a label reaches right of its point, so the labels of points further right take the slots
    # nearest the points first and every leader line meets a label only at its own corner (a staircase)
    order = sorted(range(len(joined)), key=lambda i: (-joined[i][0], joined[i][1]))
    for i in order:
        x, y, text, color = joined[i]
        best = None
        for dx, dy in _OFFSETS:
            note = ax.annotate(text, (x, y), xytext=(dx, dy), textcoords="offset points", fontsize=fontsize,
                               color=color, ha="right" if dx < 0 else "left")
            bb = note.get_window_extent(renderer)
            leader = _segment(_corner(bb, dx, dy)[0], centres[i]) if abs(dy) > _LEADER_FROM else []
            c = cover(bb, leader)
            if best is None or c < best[0]:
                if best is not None:
                    best[1].remove()
                best = (c, note, bb, leader)
            else:
                note.remove()
            if c == 0:
                break
        c, note, bb, leader = best
        dx, dy = note.xyann
        if leader:  # far from its point: a thin leader line says whose label it is
            note.remove()
            ax.annotate(text, (x, y), xytext=(dx, dy), textcoords="offset points", fontsize=fontsize, color=color,
                        ha="right" if dx < 0 else "left",
                        arrowprops={"arrowstyle": "-", "lw": 0.5, "color": color, "shrinkA": 0, "shrinkB": 4,
                                    "relpos": _corner(bb, dx, dy)[1]})
            leaders.append(leader)
        placed.append(bb)


def zoom_window(plans: dict[str, tuple[KernelPoint, ...]], hw: Hardware) -> tuple[float, float, float, float]:
    """Around the ridge and the compute-bound kernels: (x0, x1, y0, y1) in FLOP/byte and TFLOP/s."""
    r = ridge_point(hw)
    right = [p.intensity for pts in plans.values() for p in pts if np.isfinite(p.intensity) and p.intensity >= r]
    peak = hw.peak_flops_per_core / 1e12
    return r / 1.6, max([r * 2, *right]) * 1.6, peak / 3, peak * 2.2


def roofline_figure(plans: dict[str, tuple[KernelPoint, ...]], hw: Hardware):
    """Two panels of :func:`roofline`: every kernel (left), and a zoom on the ridge and the compute-bound kernels,
    which crowd the flat roof (right)."""
    fig, (whole, zoom) = new_figure(2, 11.0, 4.4)
    fig.subplots_adjust(left=0.07, right=0.98, bottom=0.13, top=0.9, wspace=0.22)
    window = zoom_window(plans, hw)
    roofline(whole, plans, hw, unlabelled=window)
    whole.set_title("kernels on the roofline; orange rim: the kernel spills", fontsize=9)
    roofline(zoom, plans, hw, window=window)
    zoom.set_title("zoom: the ridge and the compute-bound kernels", fontsize=9)
    zoom.get_legend().remove()
    return fig

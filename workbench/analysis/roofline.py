"""Roofline arithmetic over a compiled plan's kernels: what the fusion chapter puts on the page.

The roofline (Williams, Waterman and Patterson 2009) bounds a kernel's attainable
FLOP/s by ``min(peak, bandwidth x intensity)``, where intensity is FLOPs per HBM byte.
The ridge point ``peak / bandwidth`` (FLOP/byte) splits memory-bound kernels (left)
from compute-bound ones (right). Every number here comes from the workbench's own cost
model (:mod:`workbench.compiler.cost`): this module only arranges it, so a chapter can
print it, assert it, and draw it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from workbench.compiler.cost import SPILL_EFFICIENCY, KernelCost, best_cost, candidates, cost_tiled, footprint
from workbench.compiler.fusion import Kernel, fuse_ops
from workbench.graph import Graph
from workbench.hardware import Hardware


def ridge_point(hw: Hardware) -> float:
    """FLOP per HBM byte at which one core's peak compute and the HBM bandwidth balance."""
    return hw.peak_flops_per_core / hw.hbm_bandwidth_bytes_per_s


def attainable_flops(intensity: float, hw: Hardware) -> float:
    """The roofline: ``min(peak, bandwidth x intensity)``, FLOP/s."""
    return min(hw.peak_flops_per_core, hw.hbm_bandwidth_bytes_per_s * intensity)


def spill_seconds(spill_bytes: float, hw: Hardware) -> float:
    """HBM time of spilled bytes: scattered traffic runs at ``SPILL_EFFICIENCY`` of the bandwidth, s."""
    return spill_bytes / (SPILL_EFFICIENCY * hw.hbm_bandwidth_bytes_per_s)


@dataclass(frozen=True, slots=True)
class KernelPoint:
    """One kernel as the roofline sees it: its cost plus intensity and bound."""

    kernel: Kernel
    cost: KernelCost

    @property
    def intensity(self) -> float:
        """FLOP per HBM byte (spills included, as the cost model counts them)."""
        return self.cost.flops / self.cost.bytes if self.cost.bytes > 0 else math.inf

    @property
    def achieved_flops(self) -> float:
        """FLOP/s the kernel reaches over its time, launch overhead included."""
        return self.cost.flops / self.cost.seconds if self.cost.seconds > 0 else 0.0

    @property
    def bound(self) -> str:
        """'memory' or 'compute': which roof the cost model says limits it."""
        return "memory" if self.cost.memory_bound else "compute"


def plan_points(graph: Graph, level: str, dims: dict[str, int], hw: Hardware, attention: str = "flash",
                max_depth: int = 32) -> tuple[KernelPoint, ...]:
    """Fuse ``graph`` at ``level`` and cost each kernel at its cheapest tiling at ``dims``."""
    kernels = fuse_ops(graph, level, max_depth, attention)
    return tuple(KernelPoint(k, best_cost(graph, k, dims, hw, attention=attention)) for k in kernels)


def totals(points: tuple[KernelPoint, ...]) -> dict[str, float]:
    """Kernels, seconds, HBM bytes, spill bytes and FLOPs summed over a plan (isolated, one batch).

    ``bytes`` is bandwidth-equivalent: a spilled byte counts ``1 / SPILL_EFFICIENCY`` times, as the
    cost model times it (scattered traffic runs at part of the bandwidth); ``physical_bytes`` counts
    every byte that crosses HBM once.
    """
    spill = sum(p.cost.spill_bytes for p in points)
    moved = sum(p.cost.bytes for p in points)
    return {"kernels": len(points), "seconds": sum(p.cost.seconds for p in points),
            "bytes": moved, "physical_bytes": moved - spill * (1 / SPILL_EFFICIENCY - 1), "spill_bytes": spill,
            "flops": sum(p.cost.flops for p in points),
            "largest_working_set": max((p.cost.working_set for p in points), default=0.0)}


@dataclass(frozen=True, slots=True)
class TilingRow:
    """One candidate tiling of one kernel, with where its HBM bytes go."""

    cost: KernelCost
    weight_bytes: float  # HBM bytes of weight reads (once if stationary, once per tile if streamed)
    chosen: bool

    @property
    def spill_traffic(self) -> float:
        """HBM bytes the spill costs, at its efficiency (what the roofline charges)."""
        return self.cost.spill_bytes / SPILL_EFFICIENCY


def tiling_trade(graph: Graph, kernel: Kernel, dims: dict[str, int], hw: Hardware,
                 attention: str = "flash") -> tuple[TilingRow, ...]:
    """Every tiling the compiler weighs for ``kernel``: working set, spill, weight re-reads, time.

    The compiler keeps the fastest (then the fewest bytes): a bigger tile reads streamed
    weights fewer times but may overflow SRAM and spill. Spill is priced, not forbidden.
    """
    f = footprint(graph, kernel, dims, attention)
    best = best_cost(graph, kernel, dims, hw, attention=attention)
    rows = []
    for t in candidates(f, hw):
        c = cost_tiled(f, kernel.name, hw, t)
        tiles = math.ceil(f.tokens / min(t.tile_rows, f.tokens))
        weights = f.weight_bytes * (1 if t.weights == "stationary" else tiles)
        rows.append(TilingRow(c, weights, c.tiling == best.tiling))
    return tuple(rows)


def depth_sweep(graph: Graph, dims: dict[str, int], hw: Hardware, depths: tuple[int, ...],
                attention: str = "flash") -> dict[int, dict[str, float]]:
    """Aggressive fusion capped at each ``max_depth``: the plan's totals at ``dims`` per depth."""
    return {d: totals(plan_points(graph, "aggressive", dims, hw, attention, d)) for d in depths}


def bandwidth_timeline(points: tuple[KernelPoint, ...], hw: Hardware) -> tuple[list[float], list[float]]:
    """One batch through a plan's kernels in order: step edges (s) and HBM demand (bytes/s) per step.

    Each kernel draws ``bytes / seconds`` over its isolated time (launch included), so a
    memory-bound kernel sits at the full bandwidth and a compute-bound one well under it.
    """
    edges, demand, t = [0.0], [], 0.0
    for p in points:
        t += p.cost.seconds
        edges.append(t)
        demand.append(min(p.cost.bytes / p.cost.seconds, hw.hbm_bandwidth_bytes_per_s) if p.cost.seconds else 0.0)
    return edges, demand

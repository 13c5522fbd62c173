"""Compute-, memory- or overhead-bound: the three regimes a kernel's time falls in, named once for the course.

After Horace He, "Making Deep Learning Go Brrrr From First Principles" (2022): a kernel's time goes to one
of three things, and the fix depends on which.

* **compute-bound**: the matrix units are the limit, time = FLOPs / peak FLOP/s;
* **memory-bandwidth-bound**: moving bytes to and from HBM is the limit, time = bytes / HBM bandwidth;
* **overhead-bound**: neither; the fixed cost of launching or dispatching the kernel (and the host work
  around it) is larger than both.

The cost model (:mod:`workbench.compiler.cost`) prices a kernel at ``launch + max(compute, memory)``, so the
regime is whichever of the three terms is largest: overhead-bound means the launch is more than half the
kernel's time. The boundary between the first two is the ridge point, peak FLOP/s over HBM bandwidth in
FLOP per byte (:func:`workbench.analysis.roofline.ridge_point`): a kernel whose intensity (FLOPs per HBM
byte) lies below it is memory-bound. Every number here comes from a :class:`~workbench.hardware.Hardware`
preset and the library's own kernel costs; this module only arranges them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from workbench.analysis.roofline import plan_points, ridge_point
from workbench.compiler.cost import KernelCost
from workbench.graph import Graph
from workbench.hardware import PRESETS, Hardware

REGIMES: tuple[str, ...] = ("compute", "memory", "overhead")  # ties go to the earlier name
CHIPS: tuple[str, ...] = ("generic-4core", "edge-2core", "datacenter-8core", "h100-sxm", "a100-sxm", "a40",
                          "inferentia2")  # generic presets first, then the real chips


@dataclass(frozen=True, slots=True)
class RegimeSplit:
    """A kernel's time as the three terms the regimes compare."""

    compute_s: float  # s: FLOPs (padded to the matrix unit's rows) / one core's peak FLOP/s
    memory_s: float  # s: HBM bytes / HBM bandwidth, alone on the chip
    overhead_s: float  # s: launch / dispatch, paid whatever the kernel does

    @property
    def seconds(self) -> float:
        """The cost model's time: ``overhead + max(compute, memory)`` (s)."""
        return self.overhead_s + max(self.compute_s, self.memory_s)

    @property
    def regime(self) -> str:
        """'compute', 'memory' or 'overhead': the largest of the three terms."""
        terms = (self.compute_s, self.memory_s, self.overhead_s)
        return REGIMES[terms.index(max(terms))]

    @property
    def headroom(self) -> float:
        """How far the regime's term lies above the next largest (a ratio >= 1): near 1, a small change flips it."""
        terms = sorted((self.compute_s, self.memory_s, self.overhead_s), reverse=True)
        return terms[0] / terms[1] if terms[1] > 0 else float("inf")


def split(flops: float, hbm_bytes: float, hw: Hardware) -> RegimeSplit:
    """The three terms of a kernel of ``flops`` FLOPs moving ``hbm_bytes`` bytes on one core of ``hw``."""
    return RegimeSplit(flops / hw.peak_flops_per_core, hbm_bytes / hw.hbm_bandwidth_bytes_per_s, hw.launch_s)


def split_cost(cost: KernelCost, hw: Hardware) -> RegimeSplit:
    """The three terms of a kernel the cost model priced on ``hw`` (its padded compute and spilled bytes kept)."""
    return RegimeSplit(cost.compute_s, cost.memory_s, hw.launch_s)


def regime(flops: float, hbm_bytes: float, hw: Hardware) -> str:
    """'compute', 'memory' or 'overhead' for a kernel of ``flops`` FLOPs and ``hbm_bytes`` bytes on ``hw``."""
    return split(flops, hbm_bytes, hw).regime


def break_even_flops(hw: Hardware) -> float:
    """FLOPs below which a kernel cannot be compute-bound on ``hw``: the launch time's worth of peak compute."""
    return hw.launch_s * hw.peak_flops_per_core


def chip_specs(names: tuple[str, ...] = CHIPS) -> list[dict[str, Any]]:
    """One row per preset: cores, peak FLOP/s (per core and chip), HBM bandwidth, ridge point (one core alone
    on the HBM, FLOP/byte), SRAM per core, HBM capacity, launch overhead and host link, in SI units."""
    rows = []
    for name in names:
        hw = PRESETS[name]
        rows.append({"name": name, "cores": hw.cores, "peak_flops_per_core": hw.peak_flops_per_core,
                     "peak_flops": hw.cores * hw.peak_flops_per_core,
                     "hbm_bytes_per_s": hw.hbm_bandwidth_bytes_per_s, "ridge_flop_per_byte": ridge_point(hw),
                     "sram_bytes_per_core": hw.sram_bytes_per_core, "hbm_bytes": hw.hbm_capacity_bytes,
                     "launch_s": hw.launch_s, "host_link_bytes_per_s": hw.host_link_bytes_per_s})
    return rows


def kernel_on_chips(graph: Graph, kernel: str, dims: dict[str, int], names: tuple[str, ...] = CHIPS,
                    level: str = "elementwise") -> dict[str, tuple[KernelCost, RegimeSplit]]:
    """The kernel named ``kernel`` of ``graph`` fused at ``level``, costed at ``dims`` on each preset of ``names``
    at its cheapest tiling: its cost and its regime split, per preset."""
    out = {}
    for name in names:
        hw = PRESETS[name]
        (point,) = [p for p in plan_points(graph, level, dims, hw) if p.kernel.name == kernel]
        out[name] = (point.cost, split_cost(point.cost, hw))
    return out

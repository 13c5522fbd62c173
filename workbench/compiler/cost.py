"""Roofline cost model of a kernel at a concrete shape: ``launch + max(compute, memory)``.

For a kernel with F FLOPs over R output rows, run in row tiles of T rows:

* compute time = F / (peak * eff), eff = R / (ceil(R / T) * T) * T / (T + FILL_ROWS):
  the last tile's padding, and the pipeline fill of a systolic array (small tiles waste
  it);
* memory time = bytes / HBM bandwidth, where bytes = activations read and written once
  + weights (once if ``stationary`` in SRAM, once per tile if ``streamed``) + spills;
* a kernel whose materialised intermediates (plus stationary weights) exceed the core's
  SRAM spills the overflow: written out and read back, at ``SPILL_EFFICIENCY`` of the
  streaming bandwidth (spills are scattered, not streamed), so it costs
  ``2 * overflow / SPILL_EFFICIENCY`` bytes of HBM time.

Each kernel is tagged compute- or memory-bound by the larger term. A batch's
memory-bound share (time in memory-bound kernels over total time) is what the runtime
uses for HBM contention. An optional :class:`~workbench.compiler.calibrate.Calibration`
rescales each kernel by its master op's fitted factor, the way profiling-based
serving simulators correct an analytic model with measured kernel times.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from workbench.compiler.fusion import Kernel
from workbench.graph import Graph, Op, concrete
from workbench.hardware import Hardware

FILL_ROWS = 32  # rows a systolic array needs to fill its pipeline (a 32-deep array)
SPILL_EFFICIENCY = 0.5  # share of streaming bandwidth that scattered spill traffic achieves


@dataclass(frozen=True, slots=True)
class Tiling:
    """How a kernel is laid out on a core: row tile and weight residency."""

    tile_rows: int = 128
    weights: str = "stationary"  # stationary (held in SRAM) | streamed (re-read per tile)

    def __str__(self) -> str:
        return f"{self.tile_rows}r/{self.weights}"


@dataclass(frozen=True, slots=True)
class KernelCost:
    """A kernel's cost at one shape."""

    name: str
    flops: float
    bytes: float  # HBM bytes moved, spills included at their efficiency
    spill_bytes: float  # raw bytes spilled (written + read back)
    working_set: float  # bytes of materialised intermediates (+ stationary weights)
    compute_s: float
    memory_s: float
    seconds: float  # launch + max(compute, memory), calibrated if a calibration is given

    @property
    def memory_bound(self) -> bool:
        """Whether HBM bandwidth limits this kernel."""
        return self.memory_s > self.compute_s


def kernel_shape_facts(graph: Graph, k: Kernel, dims: dict[str, int]) -> tuple[float, float, float, float, int]:
    """(FLOPs, activation bytes, weight bytes, materialised bytes, output rows) of a kernel."""
    flops = sum(graph.node(m).flops(graph, dims) for m in k.nodes)
    act, weights = 0.0, 0.0
    for i in k.inputs:
        n = graph.node(i)
        if n.op == Op.PARAM:
            weights += n.bytes(dims)
        else:
            act += n.bytes(dims)
    act += sum(graph.node(o).bytes(dims) for o in k.outputs)
    materialised = float(sum(graph.node(m).bytes(dims) for m in k.materialised))
    out_shape = concrete(graph.node(k.outputs[0] if k.outputs else k.nodes[-1]).shape, dims)
    rows = math.prod(out_shape[:-1]) if len(out_shape) > 1 else 1
    return flops, act, weights, materialised, rows


class FactsPolynomial:
    """A kernel's shape facts as exact polynomials in (batch, d): degree <= 1 in batch, <= 2 in d.

    Every op here has FLOPs and tensor sizes that are sums of products of dims, with the
    per-request dim at most squared (attention scores, image area) and batch at most
    linear, so six evaluations pin the coefficients down and later evaluations cost a
    dot product instead of a walk over the graph.
    """

    POINTS = [(b, d) for b in (1, 2) for d in (1, 2, 3)]

    def __init__(self, graph: Graph, k: Kernel, dim: str):
        basis = np.array([[b**i * d**j for i in (0, 1) for j in (0, 1, 2)] for b, d in self.POINTS], dtype=float)
        values = np.array([kernel_shape_facts(graph, k, {"batch": b, dim: d}) for b, d in self.POINTS], dtype=float)
        self.coef = np.linalg.solve(basis, values)  # (6 monomials, 5 facts)

    def __call__(self, batch: int, d: int) -> tuple[float, float, float, float, int]:
        m = np.array([batch**i * d**j for i in (0, 1) for j in (0, 1, 2)], dtype=float)
        f = m @ self.coef
        return float(round(f[0])), float(round(f[1])), float(round(f[2])), float(round(f[3])), int(round(f[4]))


def cost_kernel(graph: Graph, k: Kernel, dims: dict[str, int], hw: Hardware, tiling: Tiling,
                calibration=None, facts: tuple | None = None) -> KernelCost:
    """The roofline cost of kernel ``k`` at ``dims`` with ``tiling`` on ``hw`` (``facts`` if already known)."""
    flops, act, weights, materialised, rows = facts or kernel_shape_facts(graph, k, dims)
    t = tiling.tile_rows
    tiles = math.ceil(rows / t)
    eff = rows / (tiles * t) * t / (t + FILL_ROWS)
    if tiling.weights == "stationary":
        weight_traffic, resident = weights, weights
    else:
        weight_traffic, resident = weights * tiles, 0.0
    working_set = materialised + resident
    overflow = max(0.0, working_set - hw.sram_bytes_per_core)
    spill = 2.0 * overflow
    moved = act + weight_traffic + spill / SPILL_EFFICIENCY
    compute_s = flops / (hw.peak_flops_per_core * eff)
    memory_s = moved / hw.hbm_bandwidth_bytes_per_s
    seconds = hw.launch_s + max(compute_s, memory_s)
    if calibration is not None:
        seconds = calibration.adjust(graph.node(k.nodes[0]).op, seconds)
    return KernelCost(k.name, flops, moved, spill, working_set, compute_s, memory_s, seconds)


TILE_CANDIDATES = (32, 64, 128, 256, 512, 1024)


def choose_layout(graph: Graph, kernels: tuple[Kernel, ...], dims: dict[str, int], hw: Hardware,
                  calibration=None) -> tuple[Tiling, ...]:
    """Per kernel, the cheapest tiling from the candidate set at ``dims`` (a pure function).

    Stationary weights are a candidate only if the weights and one tile of activations
    fit the core's SRAM; among equal costs the smaller tile wins (less SRAM held).
    """
    chosen = []
    for k in kernels:
        flops, act, weights, materialised, rows = kernel_shape_facts(graph, k, dims)
        row_bytes = act / max(rows, 1)
        best: tuple[float, Tiling] | None = None
        for t in TILE_CANDIDATES:
            for mode in ("stationary", "streamed") if weights else ("stationary",):
                held = (weights if mode == "stationary" else 0.0) + t * row_bytes
                if held > hw.sram_bytes_per_core and not (mode == "streamed" and t == TILE_CANDIDATES[0]):
                    continue
                tiling = Tiling(t, mode)
                s = cost_kernel(graph, k, dims, hw, tiling, calibration).seconds
                if best is None or s < best[0]:
                    best = (s, tiling)
        chosen.append(best[1] if best else Tiling(TILE_CANDIDATES[0], "streamed"))
    return tuple(chosen)

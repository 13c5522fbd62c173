"""Roofline cost model of a fused kernel at a concrete shape, tile by tile.

A kernel runs over its token rows (the product of the symbolic dims of its tensors:
batch x seq for a transformer, batch x hw x hw for a conv) in row tiles of T rows.
Its on-chip working set is what ONE tile needs (Williams et al.'s roofline, with the
tiled IO analysis of FlashAttention, Dao et al. 2022, and Rabe & Staats 2021):

* a row tensor (3-D ``[b, s, F]``, a conv's NHWC map): ``T x F`` elements, the whole
  width (the modelled compiler keeps each intermediate's full-width row tile, as XLA's or
  TVM's fusion of a GEMM chain does; it does not block the reduction dim of a chain);
* a per-head tensor ``[b, h, s, dh]``: one head at a time, ``T x dh``; K and V (the right
  operands of a batch-matmul) always come from HBM (the fusion pass ends a kernel before
  a batch-matmul whose K or V it made): key blocks of one head, re-read once per query tile;
* a score tensor ``[b, h, s, s]`` made and used inside the kernel: one ``T x KEY_BLOCK``
  block of one head (online softmax, ``attention="flash"``, and any kernel without a
  softmax: an elementwise epilogue works on its matmul's output tile); with
  ``attention="naive"`` (a naive compiler) a kernel that runs the softmax holds the whole
  ``s x s`` matrix of one (batch, head); one that crosses HBM streams full rows of a head;
* weights: all of them resident (``stationary``, read once) or streamed: the matmul that reads a
  weight stages it in double-buffered ``WEIGHT_BLOCK x WEIGHT_BLOCK`` tiles while it runs (64 KiB in
  bf16, whatever the weight's shape), and every weight is re-read once per row tile.

Tensors are freed after their last use inside the kernel (an elementwise op, a softmax
or a norm overwrites its input in place), so the working set is the peak over the kernel's
ops. A tile that does not fit spills its overflow, at ``SPILL_EFFICIENCY`` of the streaming
bandwidth, so HBM traffic grows smoothly with the overflow. At each op the overflow is
priced the way a tiled kernel would move it: the part of it that does not scale with the
tile (a whole score matrix) is written once per sequence and read back once per query tile;
the rest is written and read back once per tile; both recur per head only at an op inside
the head loop (a per-head output). The kernel's spill is the worst op's.

Time is ``launch + max(FLOPs / peak, bytes / bandwidth)``; compute pads the rows only to
the matrix unit's granularity (``Hardware.mma_rows``). Each kernel carries its bytes and
its isolated time, so its bandwidth demand is ``bytes / (time x bandwidth)`` in [0, 1]:
launch time demands none. :func:`choose_tiling` picks, per kernel and per concrete
shape, the cheapest (tile, weight residency); more SRAM or bandwidth can only keep or
lower that minimum. An optional :class:`~workbench.compiler.calibrate.Calibration`
rescales each kernel by its master op's fitted factor.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from workbench.compiler.fusion import Kernel
from workbench.graph import DTYPE_BYTES, Graph, Op, Pattern, concrete
from workbench.hardware import Hardware

SPILL_EFFICIENCY = 0.5  # share of streaming bandwidth that scattered spill traffic achieves
KEY_BLOCK = 128  # keys per block of flash attention's inner loop
WEIGHT_BLOCK = 128  # rows and columns of a staged tile of a streamed weight (double-buffered)
TILE_CANDIDATES = (16, 32, 64, 128, 256, 512, 1024, 2048, 4096)
ATTENTION = ("flash", "naive")


@dataclass(frozen=True, slots=True)
class Tiling:
    """How a kernel is laid out on a core: row tile and weight residency."""

    tile_rows: int = 128
    weights: str = "stationary"  # stationary (held in SRAM) | streamed (re-read per tile)

    def __str__(self) -> str:
        return f"{self.tile_rows}r/{self.weights}"


@dataclass(frozen=True, slots=True)
class KernelCost:
    """A kernel's cost at one shape and tiling."""

    name: str
    flops: float
    bytes: float  # HBM bytes moved (spills counted at their efficiency)
    spill_bytes: float  # raw bytes spilled (written + read back)
    working_set: float  # bytes one tile needs on chip (peak over the kernel's ops)
    compute_s: float
    memory_s: float  # bytes / HBM bandwidth, alone on the chip
    seconds: float  # launch + max(compute, memory), calibrated if a calibration is given
    tiling: Tiling = Tiling()

    @property
    def demand(self) -> float:
        """Share of the HBM bandwidth the kernel draws over its isolated time (0..1)."""
        return min(self.memory_s / self.seconds, 1.0) if self.seconds > 0 else 0.0

    @property
    def memory_bound(self) -> bool:
        """Whether HBM bandwidth limits this kernel (its memory time exceeds its compute time)."""
        return self.memory_s > self.compute_s


@dataclass(frozen=True, slots=True)
class Footprint:
    """A kernel's shape facts: what is fixed, and what each tile size adds."""

    flops: float
    tokens: int  # token rows the kernel runs over
    heads: int  # a per-head kernel loops over heads inside each row tile
    seq: int  # tokens per sequence (a query tile never spans two)
    in_bytes: float  # activations read once
    kv_bytes: float  # activations re-read once per query tile (K, V from HBM)
    out_bytes: float
    weight_bytes: float
    stage_at: tuple[float, ...]  # per op position: SRAM for the double-buffered blocks of the weight it streams
    fixed: tuple[float, ...]  # per op position: bytes live that do not scale with the tile
    per_row: tuple[float, ...]  # per op position: bytes live per tile row
    in_head_loop: tuple[bool, ...]  # per op position: its output is per head (it recurs once per head)

    @property
    def stage_bytes(self) -> float:
        """The largest staging buffer of any op (streamed weights)."""
        return max(self.stage_at, default=0.0)

    def resident(self, p: int, stationary: bool) -> float:
        """Weight bytes on chip at op position ``p``: every weight if held, else the staging blocks of its op's."""
        return self.weight_bytes if stationary else self.stage_at[p]

    def working_set(self, t: int, stationary: bool) -> float:
        """Peak bytes on chip for tile ``t`` (weights resident or staged)."""
        return max(f + t * r + self.resident(p, stationary)
                   for p, (f, r) in enumerate(zip(self.fixed, self.per_row, strict=True)))


def head_tensors(graph: Graph) -> frozenset[str]:
    """The 4-D per-head tensors ``[b, h, s, x]``: made by a head split or a batch-matmul, or from one."""
    heads: set[str] = set()
    for n in graph.nodes:
        if len(n.shape) != 4 or n.op in (Op.CONV2D, Op.INPUT, Op.PARAM):
            continue
        if n.op in (Op.SPLIT_HEADS, Op.BATCH_MATMUL) or any(i in heads for i in n.inputs):
            heads.add(n.name)
    for n in graph.nodes:  # inputs read by a batch-matmul are per-head too
        if n.op == Op.BATCH_MATMUL:
            heads.update(i for i in n.inputs if len(graph.node(i).shape) == 4)
    return frozenset(heads)


def _rows(shape: tuple[int, ...], per_head: bool) -> int:
    """Token rows of a concrete tensor: every dim but the last, and but the heads of a per-head one."""
    rows = math.prod(shape[:-1]) if len(shape) > 1 else 1
    return rows // shape[1] if per_head else rows


def row_caps(graph: Graph, k) -> dict[str, int]:
    """Tensors of kernel ``k`` a tile holds only part of a row of (elements per row), the way a GEMM is tiled.

    A matmul streams its ``K x N`` weight in ``WEIGHT_BLOCK``-square tiles and keeps the narrower side of
    its row tile on chip:

    * ``K <= N`` (an up-projection): the input row panel is held whole and the output is made one output
      tile of ``WEIGHT_BLOCK`` columns at a time, unless something inside the kernel reduces over it (then
      it is held whole); its elementwise epilogues work on the same tile;
    * ``K > N`` (a down-projection): the output row accumulates whole, and an input read from HBM by this
      matmul alone streams along ``K`` in double-buffered blocks (``2 x WEIGHT_BLOCK`` elements per row).

    An intermediate made inside the kernel and read by a matmul or a reduction there stays whole: a fused GEMM
    chain (up-projection, activation, down-projection) keeps its d_ff-wide row tile on chip.
    """
    inside = set(k.nodes)
    readers: dict[str, list] = {}
    for m in k.nodes:
        for i in graph.node(m).inputs:
            readers.setdefault(i, []).append(graph.node(m))
    whole: set[str] = set()  # read whole-row: by a reduction or matmul, or through an epilogue that is
    for m in reversed(k.nodes):
        if any(r.pattern >= Pattern.REDUCTION or r.name in whole for r in readers.get(m, ())):
            whole.add(m)
    caps: dict[str, int] = {}
    tiled: set[str] = set()
    for m in k.nodes:
        node = graph.node(m)
        if node.op == Op.MATMUL:
            a, w = node.inputs
            width_in, width_out = graph.node(w).shape
            if width_in > width_out:  # the output accumulates whole, the input may stream along K
                if a not in inside and len(readers[a]) == 1 and len(graph.node(a).shape) == 3:
                    caps[a] = 2 * WEIGHT_BLOCK
                continue
        made = node.op == Op.MATMUL or (node.pattern <= Pattern.INJECTIVE
                                        and any(i in tiled for i in node.inputs if i in inside))
        if made and m not in whole:
            tiled.add(m)
            caps[m] = WEIGHT_BLOCK
    return caps


def _tensor_tile(shape: tuple[int, ...], size: int, item: int, per_head: bool, rhs: bool, inside: bool,
                 output: bool, naive: bool, cap: int = 0) -> tuple[float, float]:
    """(bytes held whatever the tile, bytes per tile row) of one tensor of a kernel (``naive``: the kernel runs a
    softmax and materialises its whole score matrices; ``cap``: elements per row a tile holds, 0 for all,
    :func:`row_caps`)."""
    width = size / max(_rows(shape, per_head), 1)  # bytes per token row, every head
    heads = shape[1] if per_head else 1
    if per_head and shape[3] == shape[2] and not rhs:  # scores [b, h, s, s]
        if not inside or output:  # streamed through HBM: full rows of one head
            return 0.0, float(shape[3] * item)
        if naive:  # the whole matrix of one (batch, head)
            return float(shape[2] * shape[3] * item), 0.0
        return 0.0, float(min(shape[3], KEY_BLOCK) * item)  # one block of one head (online softmax, an epilogue)
    if rhs:  # K, V from HBM: key blocks of one head, re-read per query tile
        return min(shape[2], KEY_BLOCK) * width / heads, 0.0
    if per_head:  # one head at a time
        width = width / heads
    return 0.0, min(width, float(cap * item)) if cap else width


def last_reads(graph: Graph, k) -> tuple[dict[str, int], set[str]]:
    """Each tensor's last reader in kernel ``k`` (its position among ``k.nodes``), and the tensors a batch-matmul
    in the kernel reads as its right operand."""
    last: dict[str, int] = {}
    rhs: set[str] = set()
    for pos_m, m in enumerate(k.nodes):
        node = graph.node(m)
        for pos, i in enumerate(node.inputs):
            last[i] = pos_m
            if node.op == Op.BATCH_MATMUL and pos == 1:
                rhs.add(i)
    return last, rhs


def first_reads(graph: Graph, k) -> dict[str, int]:
    """Each input of kernel ``k`` (a tensor it reads from HBM) -> the position of its first reader: it is loaded
    there, not at the kernel's start (a residual read by the last op is loaded in the epilogue)."""
    first: dict[str, int] = {}
    for p, m in enumerate(k.nodes):
        for i in graph.node(m).inputs:
            first.setdefault(i, p)
    return first


def live_at(graph: Graph, k, p: int, first: dict[str, int], last: dict[str, int], order: dict[str, int],
            tensors) -> list[str]:
    """The activations of ``tensors`` on chip at op position ``p``: its output; an input from HBM from its first
    reader until its last; one made inside after it is made and until its last reader; and a matmul's inputs
    at the matmul itself (an elementwise op, a softmax or a norm overwrites its input in place)."""
    node = graph.node(k.nodes[p])
    in_place = node.op not in (Op.MATMUL, Op.BATCH_MATMUL, Op.CONV2D)  # same-shape ops overwrite their input
    return [t for t in tensors
            if t == k.nodes[p]
            or ((order[t] < p if t in order else first.get(t, p + 1) <= p) and last.get(t, -1) > p)
            or (t in node.inputs and last.get(t, -1) == p and not in_place)]


def footprint(graph: Graph, k: Kernel, dims: dict[str, int], attention: str = "flash") -> Footprint:
    """Per-tile SRAM needs and HBM traffic facts of kernel ``k`` at concrete ``dims``."""
    inside = set(k.nodes)
    order = {m: i for i, m in enumerate(k.nodes)}
    heads_of = head_tensors(graph)
    last, rhs = last_reads(graph, k)  # rhs: tensors a batch-matmul in the kernel reads as its right operand
    naive = attention == "naive" and any(graph.node(m).op == Op.SOFTMAX for m in k.nodes)
    caps = row_caps(graph, k)
    master = concrete(graph.node(k.nodes[0]).shape, dims)
    tokens = _rows(master, k.nodes[0] in heads_of)
    seq = next((concrete(graph.node(t).shape, dims)[2] for t in (*k.inputs, *k.nodes) if t in heads_of), tokens)
    flops = sum(graph.node(m).flops(graph, dims) for m in k.nodes)
    weight_bytes = in_bytes = kv_bytes = 0.0
    stage_of: dict[str, float] = {}  # per weight: its double-buffered staging blocks
    fixed_of: dict[str, float] = {}
    row_of: dict[str, float] = {}
    for name in (*k.inputs, *k.nodes):
        node = graph.node(name)
        shape, size, item = concrete(node.shape, dims), node.bytes(dims), DTYPE_BYTES[node.dtype]
        if node.op == Op.PARAM:
            weight_bytes += size
            if len(shape) >= 2:
                stage_of[name] = float(min(size, 2 * WEIGHT_BLOCK * WEIGHT_BLOCK * item))
            continue
        per_head = name in heads_of
        fixed, per_row = _tensor_tile(shape, size, item, per_head, name in rhs, name in inside,
                                      name in k.outputs, naive, caps.get(name, 0))
        if name not in inside:
            if name in rhs:
                kv_bytes += size
            else:
                in_bytes += size
        fixed_of[name], row_of[name] = fixed, per_row
    out_bytes = float(sum(graph.node(o).bytes(dims) for o in k.outputs))
    first = first_reads(graph, k)
    fixed_at, row_at, stage_at = [], [], []
    for p, m in enumerate(k.nodes):
        node = graph.node(m)
        live = live_at(graph, k, p, first, last, order, fixed_of)
        fixed_at.append(sum(fixed_of[t] for t in live))
        row_at.append(sum(row_of[t] for t in live))
        stage_at.append(sum(stage_of.get(i, 0.0) for i in node.inputs))
    heads = max((concrete(graph.node(t).shape, dims)[1] for t in (*k.inputs, *k.nodes) if t in heads_of), default=1)
    return Footprint(flops, tokens, heads, seq, in_bytes, kv_bytes, out_bytes, weight_bytes, tuple(stage_at),
                     tuple(fixed_at), tuple(row_at), tuple(m in heads_of for m in k.nodes))


def spill_bytes(f: Footprint, t: int, stationary: bool, sram: float) -> float:
    """Raw bytes a tiling of ``t`` rows spills (written and read back): the worst op's overflow, priced as a
    tiled kernel moves it (module docstring)."""
    tiles = math.ceil(f.tokens / t)
    query_tiles = math.ceil(f.seq / min(t, f.seq))
    seqs = max(f.tokens // f.seq, 1)
    worst = 0.0
    for p, (fixed, per_row, in_loop) in enumerate(zip(f.fixed, f.per_row, f.in_head_loop, strict=True)):
        overflow = max(0.0, fixed + t * per_row + f.resident(p, stationary) - sram)
        held = min(overflow, fixed)  # the tile-independent part: written once per sequence, read per query tile
        moved = held * seqs * (1 + query_tiles) + 2.0 * (overflow - held) * tiles
        worst = max(worst, moved * (f.heads if in_loop else 1))
    return worst


def cost_tiled(f: Footprint, name: str, hw: Hardware, tiling: Tiling, adjust=None) -> KernelCost:
    """Cost of a kernel with facts ``f`` under ``tiling`` (``adjust``: a calibration, seconds -> seconds)."""
    t = min(tiling.tile_rows, f.tokens)
    stationary = tiling.weights == "stationary"
    tiles = math.ceil(f.tokens / t)
    query_tiles = math.ceil(f.seq / min(t, f.seq))
    ws = f.working_set(t, stationary)
    spill = spill_bytes(f, t, stationary, hw.sram_bytes_per_core)
    weights = f.weight_bytes * (1 if stationary else tiles)
    moved = f.in_bytes + f.kv_bytes * query_tiles + f.out_bytes + weights + spill / SPILL_EFFICIENCY
    g = hw.mma_rows
    padded = math.ceil(f.tokens / g) * g
    compute_s = f.flops * padded / f.tokens / hw.peak_flops_per_core
    memory_s = moved / hw.hbm_bandwidth_bytes_per_s
    seconds = hw.launch_s + max(compute_s, memory_s)
    if adjust is not None:
        seconds = adjust(seconds)
    return KernelCost(name, f.flops, moved, spill, ws, compute_s, memory_s, seconds, tiling)


def _adjuster(graph: Graph, k: Kernel, calibration):
    if calibration is None:
        return None
    op = graph.node(k.nodes[0]).op
    return lambda seconds: calibration.adjust(op, seconds)


def cost_kernel(graph: Graph, k: Kernel, dims: dict[str, int], hw: Hardware, tiling: Tiling,
                calibration=None, attention: str = "flash") -> KernelCost:
    """The roofline cost of kernel ``k`` at ``dims`` with ``tiling`` on ``hw``."""
    return cost_tiled(footprint(graph, k, dims, attention), k.name, hw, tiling, _adjuster(graph, k, calibration))


def candidates(f: Footprint, hw: Hardware) -> list[Tiling]:
    """Tilings worth trying: tiles up to the kernel's rows; stationary only if the weights fit."""
    out = []
    for t in TILE_CANDIDATES:
        modes = ["streamed"] if f.weight_bytes else ["stationary"]
        if f.weight_bytes and f.weight_bytes <= hw.sram_bytes_per_core:
            modes.append("stationary")
        out.extend(Tiling(t, m) for m in modes)
        if t >= f.tokens:
            break
    return out


def best_cost(graph: Graph, k: Kernel, dims: dict[str, int], hw: Hardware, calibration=None,
              attention: str = "flash") -> KernelCost:
    """The cheapest tiling of kernel ``k`` at ``dims`` (ties: the smaller tile, fewer bytes on chip)."""
    f = footprint(graph, k, dims, attention)
    adjust = _adjuster(graph, k, calibration)
    costs = [cost_tiled(f, k.name, hw, t, adjust) for t in candidates(f, hw)]
    return min(costs, key=lambda c: (c.seconds, c.bytes, c.working_set))


def choose_layout(graph: Graph, kernels: tuple[Kernel, ...], dims: dict[str, int], hw: Hardware,
                  calibration=None, attention: str = "flash") -> tuple[Tiling, ...]:
    """Per kernel, the cheapest tiling at ``dims`` (a pure function)."""
    return tuple(best_cost(graph, k, dims, hw, calibration, attention).tiling for k in kernels)

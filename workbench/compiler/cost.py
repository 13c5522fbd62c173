"""Roofline cost model of a fused kernel at a concrete shape, tile by tile.

A kernel runs over its token rows (the product of the symbolic dims of its tensors:
batch x seq for a transformer, batch x hw x hw for a conv) in row tiles of T rows.
Its on-chip working set is what ONE tile needs (Williams et al.'s roofline, with the
tiled IO analysis of FlashAttention, Dao et al. 2022, and Rabe & Staats 2021):

* a row tensor (3-D ``[b, s, F]``, a conv's NHWC map): ``T x F`` elements;
* a per-head tensor ``[b, h, s, dh]``: one head at a time, ``T x dh``; but a per-head
  tensor that a batch-matmul inside the kernel reads as its right operand (K, V) needs
  the whole sequence of every head once it is made in the kernel (``s x h x dh``);
  read from HBM it is streamed in key blocks and re-read once per query tile;
* a score tensor ``[b, h, s, s]`` made and used inside the kernel: with
  ``attention="flash"`` (online softmax) one ``T x KEY_BLOCK`` block of one head; with
  ``"naive"`` the whole ``s x s`` matrix of one (batch, head), which is what materialising
  the scores costs; one that crosses HBM (unfused attention) streams full rows of a head;
* weights: all of them resident (``stationary``, read once) or a double-buffered
  staging block per weight (``streamed``, every weight re-read once per row tile).

Tensors are freed after their last use inside the kernel (an elementwise op, a softmax
or a norm overwrites its input in place), so the working set is the peak over the kernel's ops. A tile that does not fit
spills its overflow: written out and read back each time the peak recurs (once per tile,
and per head in a kernel that loops over heads), at ``SPILL_EFFICIENCY``
of the streaming bandwidth, so HBM traffic grows smoothly with the overflow.

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
from workbench.graph import DTYPE_BYTES, Graph, Op, concrete
from workbench.hardware import Hardware

SPILL_EFFICIENCY = 0.5  # share of streaming bandwidth that scattered spill traffic achieves
KEY_BLOCK = 128  # keys per block of flash attention's inner loop
WEIGHT_BLOCK = 128  # columns per staged block of a streamed weight (double-buffered)
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
    heads: int  # a per-head kernel loops over heads inside each row tile: its peak recurs per head
    seq: int  # tokens per sequence (a query tile never spans two)
    in_bytes: float  # activations read once
    kv_bytes: float  # activations re-read once per query tile (K, V from HBM)
    out_bytes: float
    weight_bytes: float
    stage_bytes: float  # SRAM for double-buffered blocks of streamed weights
    fixed: tuple[float, ...]  # per op position: bytes live that do not scale with the tile
    per_row: tuple[float, ...]  # per op position: bytes live per tile row

    def working_set(self, t: int, stationary: bool) -> float:
        """Peak bytes on chip for tile ``t`` (weights resident or staged)."""
        peak = max(f + t * r for f, r in zip(self.fixed, self.per_row, strict=True))
        return peak + (self.weight_bytes if stationary else self.stage_bytes)


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


def _tensor_tile(shape: tuple[int, ...], size: int, item: int, per_head: bool, rhs: bool, inside: bool,
                 output: bool, attention: str) -> tuple[float, float]:
    """(bytes held whatever the tile, bytes per tile row) of one tensor of a kernel."""
    width = size / max(_rows(shape, per_head), 1)  # bytes per token row, every head
    heads = shape[1] if per_head else 1
    if per_head and shape[3] == shape[2] and not rhs:  # scores [b, h, s, s]
        if not inside or output:  # streamed through HBM: full rows of one head
            return 0.0, float(shape[3] * item)
        if attention == "naive":  # the whole matrix of one (batch, head)
            return float(shape[2] * shape[3] * item), 0.0
        return 0.0, float(min(shape[3], KEY_BLOCK) * item)  # one block of one head, online softmax
    if rhs and inside:  # K, V made here: the whole sequence, every head
        return shape[2] * width, 0.0
    if rhs:  # K, V from HBM: key blocks of one head, re-read per query tile
        return min(shape[2], KEY_BLOCK) * width / heads, 0.0
    if per_head:  # one head at a time
        return 0.0, width / heads
    return 0.0, width


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


def footprint(graph: Graph, k: Kernel, dims: dict[str, int], attention: str = "flash") -> Footprint:
    """Per-tile SRAM needs and HBM traffic facts of kernel ``k`` at concrete ``dims``."""
    inside = set(k.nodes)
    order = {m: i for i, m in enumerate(k.nodes)}
    heads_of = head_tensors(graph)
    last, rhs = last_reads(graph, k)  # rhs: tensors a batch-matmul in the kernel reads as its right operand
    master = concrete(graph.node(k.nodes[0]).shape, dims)
    tokens = _rows(master, k.nodes[0] in heads_of)
    seq = next((concrete(graph.node(t).shape, dims)[2] for t in (*k.inputs, *k.nodes) if t in heads_of), tokens)
    flops = sum(graph.node(m).flops(graph, dims) for m in k.nodes)
    weight_bytes = stage = in_bytes = kv_bytes = 0.0
    fixed_of: dict[str, float] = {}
    row_of: dict[str, float] = {}
    for name in (*k.inputs, *k.nodes):
        node = graph.node(name)
        shape, size, item = concrete(node.shape, dims), node.bytes(dims), DTYPE_BYTES[node.dtype]
        if node.op == Op.PARAM:
            weight_bytes += size
            if len(shape) >= 2:
                stage = max(stage, 2.0 * WEIGHT_BLOCK * math.prod(shape[:-1]) * item)
            continue
        per_head = name in heads_of
        fixed, per_row = _tensor_tile(shape, size, item, per_head, name in rhs, name in inside,
                                      name in k.outputs, attention)
        if name not in inside:
            if name in rhs:
                kv_bytes += size
            else:
                in_bytes += size
        fixed_of[name], row_of[name] = fixed, per_row
    out_bytes = float(sum(graph.node(o).bytes(dims) for o in k.outputs))
    fixed_at, row_at = [], []
    for p, m in enumerate(k.nodes):
        node = graph.node(m)
        in_place = node.op not in (Op.MATMUL, Op.BATCH_MATMUL, Op.CONV2D)  # same-shape ops overwrite their input
        live = [t for t in fixed_of
                if t == m
                or ((t not in inside or order[t] < p) and last.get(t, -1) > p)
                or (t in node.inputs and last.get(t, -1) == p and not in_place)]
        fixed_at.append(sum(fixed_of[t] for t in live))
        row_at.append(sum(row_of[t] for t in live))
    heads = max((concrete(graph.node(t).shape, dims)[1] for t in (*k.inputs, *k.nodes) if t in heads_of), default=1)
    return Footprint(flops, tokens, heads, seq, in_bytes, kv_bytes, out_bytes, weight_bytes, stage,
                     tuple(fixed_at), tuple(row_at))


def cost_tiled(f: Footprint, name: str, hw: Hardware, tiling: Tiling, adjust=None) -> KernelCost:
    """Cost of a kernel with facts ``f`` under ``tiling`` (``adjust``: a calibration, seconds -> seconds)."""
    t = min(tiling.tile_rows, f.tokens)
    stationary = tiling.weights == "stationary"
    tiles = math.ceil(f.tokens / t)
    query_tiles = math.ceil(f.seq / min(t, f.seq))
    ws = f.working_set(t, stationary)
    overflow = max(0.0, ws - hw.sram_bytes_per_core)
    spill = 2.0 * overflow * tiles * f.heads  # out and back each time the peak recurs
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

"""A mapping's kernels flattened for the compiled cost model: shape-free integer and float tables.

:mod:`workbench.compiler.cost` is the readable model: :func:`~workbench.compiler.cost.footprint`
walks the graph for every kernel at every shape. Here the walk is done once per mapping:
:func:`flatten` records each kernel's structure (tensors with symbolic shapes coded as
integers, which tensors are live at each op, what each op's FLOPs are made of) in flat
arrays, which :mod:`workbench.compiler.cost_table` (compiled) evaluates at any (batch, shape).
Kept apart from the kernels so that a plan flattens its mappings without importing numba
(the kernels may run from the ahead-of-time build, :mod:`workbench.aot`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from workbench.compiler import cost
from workbench.graph import DTYPE_BYTES, Graph, Op

BATCH, VALUE = -1, -2  # codes of the symbolic dims in a flattened shape (literal dims are >= 1)
FLOP_NONE, FLOP_ELEM, FLOP_MATMUL, FLOP_CONV = 0, 1, 2, 3
_ELEM = {Op.ADD: 1, Op.MUL: 1, Op.GELU: 8, Op.RELU: 1, Op.BIAS_ADD: 1, Op.SOFTMAX: 5, Op.LAYERNORM: 8, Op.ROPE: 6,
         Op.GLU: 5}  # FLOPs per output element, as the op table's (graph.OPS)


class Flat(NamedTuple):
    """A mapping's kernels as flat integer and float tables (what ``cost_table.kernel_costs`` reads)."""

    ti: np.ndarray  # int64 [tensors, 11]: shape codes x4, ndim, item bytes, param, per_head, rhs, inside, row cap
    tout: np.ndarray  # int64 [tensors]: 1 if the tensor is one of its kernel's outputs
    ki: np.ndarray  # int64 [kernels, 10]: tensors from/to, master, seq source, ops from/to, tile rows, stationary,
    #                specialised, runs a softmax
    ops: np.ndarray  # int64 [ops, 4]: FLOP kind, element factor, output tensor, first input tensor
    ops_in1: np.ndarray  # int64 [ops]: second input tensor (conv weights), -1 if none
    live: np.ndarray  # int64: for each op position, the live tensors' indices (offsets in ``live_at``)
    live_at: np.ndarray  # int64 [ops + 1]
    fit: np.ndarray  # float64 [kernels, 2]: calibration (a, b) of seconds -> a + b * seconds


def _code(d, dim: str) -> int:
    if isinstance(d, int):
        return d
    return BATCH if d == "batch" else VALUE if d == dim else -3


def flatten(graph: Graph, kernels, tilings, dim: str, attention: str, calibration=None,
            specialised: bool = True) -> Flat:
    """The structure of ``kernels`` (shape-free) as the tables ``cost_table.kernel_costs`` evaluates."""
    heads_of = cost.head_tensors(graph)
    ti, tout, ki, ops, ops_in1, live, live_at, fit = [], [], [], [], [], [], [0], []
    for k, tiling in zip(kernels, tilings, strict=True):
        inside, order = set(k.nodes), {m: i for i, m in enumerate(k.nodes)}
        last, rhs = cost.last_reads(graph, k)
        first = cost.first_reads(graph, k)
        caps = cost.row_caps(graph, k)
        names = (*k.inputs, *k.nodes)
        index = {}
        t0 = len(ti)
        for name in names:
            node = graph.node(name)
            codes = [_code(d, dim) for d in node.shape] + [1] * (4 - len(node.shape))
            index[name] = len(ti)
            ti.append([*codes, len(node.shape), DTYPE_BYTES[node.dtype], int(node.op == Op.PARAM),
                       int(name in heads_of), int(name in rhs), int(name in inside), caps.get(name, 0)])
            tout.append(int(name in k.outputs))
        seq_src = next((index[t] for t in names if t in heads_of), -1)
        o0 = len(ops)
        activations = [t for t in names if graph.node(t).op != Op.PARAM]
        for p, m in enumerate(k.nodes):
            node = graph.node(m)
            kind = (FLOP_ELEM if node.op in _ELEM else FLOP_MATMUL if node.op in (Op.MATMUL, Op.BATCH_MATMUL)
                    else FLOP_CONV if node.op == Op.CONV2D else FLOP_NONE)
            ins = [index[i] for i in node.inputs]
            ops.append([kind, _ELEM.get(node.op, 0), index[m], ins[0] if ins else -1])
            ops_in1.append(ins[1] if len(ins) > 1 else -1)
            live.extend(index[t] for t in cost.live_at(graph, k, p, first, last, order, activations))
            live_at.append(len(live))
        ki.append([t0, len(ti), index[k.nodes[0]], seq_src, o0, len(ops), tiling.tile_rows,
                   int(tiling.weights == "stationary"), int(specialised),
                   int(any(graph.node(m).op == Op.SOFTMAX for m in k.nodes))])
        a, b = (0.0, 1.0) if calibration is None else calibration.fits.get(graph.node(k.nodes[0]).op, (0.0, 1.0))
        fit.append([a, b])
    if any(c == -3 for row in ti for c in row[:4]):
        raise ValueError(f"a shape uses a symbolic dim other than batch and {dim!r}")
    return Flat(_ints(ti, 11), _ints(tout), _ints(ki, 10), _ints(ops, 4), _ints(ops_in1), _ints(live),
                _ints(live_at), np.array(fit, dtype=np.float64).reshape(-1, 2))


def _ints(rows: list, width: int = 0) -> np.ndarray:
    a = np.array(rows, dtype=np.int64)
    return a.reshape(-1, width) if width else a


TILES = np.array(cost.TILE_CANDIDATES, dtype=np.int64)


def scratch(flat: Flat) -> tuple[np.ndarray, np.ndarray]:
    """The scratch ``kernel_costs`` needs for every kernel of ``flat``: int64 [2, 4] and float64 [6, n], n the
    kernels' most ops and most tensors (at least 1)."""
    ki = flat.ki
    n = max(1, int((ki[:, 5] - ki[:, 4]).max(initial=1)), int((ki[:, 1] - ki[:, 0]).max(initial=1)))
    return np.empty((2, 4), np.int64), np.empty((6, n))

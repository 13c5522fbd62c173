"""The graph IR: tensors with static or symbolic dims, ops classified by fusion pattern.

One immutable node type (``Node``, a frozen dataclass changed only with
``dataclasses.replace``) in a ``Graph`` kept in topological order. Every op kind sits
in :data:`OPS` with its fusion pattern on TVM's ordered scale (``OpPatternKind``:
elementwise < broadcast < injective < reduction < output-elementwise-fusable <
opaque), its shape rule and its FLOP count, so passes read the classification from
the table, never decide it themselves. :func:`verify` re-derives every shape from the
rules and is run where the IR enters and leaves the compiler.

Dims are ints (static) or strings (symbolic: ``batch``, ``seq``, ``hw``); two dims
match when they are the same int or the same symbol. ``bind`` gives concrete shapes.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum, IntEnum

from workbench.errors import ConfigError

Dim = int | str
Shape = tuple[Dim, ...]


class Pattern(IntEnum):
    """Fusion pattern kinds, ordered: a rule reads ``kind <= Pattern.INJECTIVE``."""

    ELEMWISE = 0
    BROADCAST = 1
    INJECTIVE = 2
    REDUCTION = 3
    OUT_EWISE_FUSABLE = 4
    OPAQUE = 5


DTYPE_BYTES = {"bf16": 2, "fp16": 2, "fp32": 4, "int8": 1}


class GraphError(ConfigError):
    """An ill-formed graph: names the node, what it expected and what it got."""


def _same(a: Dim, b: Dim) -> bool:
    return a == b


def _need(ok: bool, node: str, what: str, got: object) -> None:
    if not ok:
        raise GraphError(f"node {node}", got, f"expected {what}")


# --- shape rules: (node name, input shapes, attrs) -> output shape ----------------------

def _elementwise(n: str, s: list[Shape], a: dict) -> Shape:
    _need(all(len(x) == len(s[0]) and all(map(_same, x, s[0])) for x in s), n,
          "inputs of the same shape", s)
    return s[0]


def _bias(n: str, s: list[Shape], a: dict) -> Shape:
    _need(len(s) == 2 and len(s[1]) == 1 and _same(s[0][-1], s[1][0]), n, "x [..., N] and bias [N]", s)
    return s[0]


def _unary(n: str, s: list[Shape], a: dict) -> Shape:
    _need(len(s) == 1, n, "one input", s)
    return s[0]


def _matmul(n: str, s: list[Shape], a: dict) -> Shape:
    _need(len(s) == 2 and len(s[1]) == 2 and _same(s[0][-1], s[1][0]), n, "x [..., K] and w [K, N]", s)
    return (*s[0][:-1], s[1][1])


def _batch_matmul(n: str, s: list[Shape], a: dict) -> Shape:
    x, y = s
    k_y = y[-1] if a.get("transpose_b") else y[-2]
    n_y = y[-2] if a.get("transpose_b") else y[-1]
    _need(len(x) == len(y) == 4 and all(map(_same, x[:2], y[:2])) and _same(x[-1], k_y), n,
          "a [b, h, m, k] and b [b, h, k, n] (or [b, h, n, k] transposed)", s)
    return (*x[:3], n_y)


def _conv2d(n: str, s: list[Shape], a: dict) -> Shape:
    x, w = s
    _need(len(x) == 4 and len(w) == 4 and _same(x[3], w[2]), n, "x [b, h, w, cin] and w [k, k, cin, cout]", s)
    return (*x[:3], w[3])


def _glu(n: str, s: list[Shape], a: dict) -> Shape:
    (x,) = s
    _need(len(s) == 1 and isinstance(x[-1], int) and x[-1] % 2 == 0, n, "x [..., 2F] (gate and up side by side)", s)
    return (*x[:-1], x[-1] // 2)


def _split_heads(n: str, s: list[Shape], a: dict) -> Shape:
    (x,) = s
    heads, parts = a["heads"], a.get("parts", 1)
    _need(len(x) == 3 and isinstance(x[2], int) and x[2] % (heads * parts) == 0, n,
          f"x [b, s, D] with D divisible by heads x parts = {heads * parts}", s)
    return (x[0], heads, x[1], x[2] // (heads * parts))


def _merge_heads(n: str, s: list[Shape], a: dict) -> Shape:
    (x,) = s
    _need(len(x) == 4 and isinstance(x[1], int) and isinstance(x[3], int), n, "x [b, h, s, dh]", s)
    return (x[0], x[2], x[1] * x[3])


def _numel(shape: tuple[int, ...]) -> int:
    return math.prod(shape)


@dataclass(frozen=True, slots=True)
class OpInfo:
    """One row of the op table."""

    pattern: Pattern
    shape: Callable[[str, list[Shape], dict], Shape] | None
    flops: Callable[[list[tuple[int, ...]], tuple[int, ...], dict], float]  # FLOP at concrete shapes


class Op(Enum):
    """Op kinds; their classification lives in :data:`OPS`."""

    INPUT = "input"
    PARAM = "param"
    ADD = "add"
    MUL = "mul"
    GELU = "gelu"
    RELU = "relu"
    BIAS_ADD = "bias_add"
    SPLIT_HEADS = "split_heads"
    MERGE_HEADS = "merge_heads"
    SOFTMAX = "softmax"
    LAYERNORM = "layernorm"
    ROPE = "rope"
    GLU = "glu"
    MATMUL = "matmul"
    BATCH_MATMUL = "batch_matmul"
    CONV2D = "conv2d"


def _per_elem(k: float) -> Callable:
    return lambda ins, out, a: k * _numel(out)


OPS: dict[Op, OpInfo] = {
    Op.INPUT: OpInfo(Pattern.OPAQUE, None, lambda ins, out, a: 0.0),
    Op.PARAM: OpInfo(Pattern.OPAQUE, None, lambda ins, out, a: 0.0),
    Op.ADD: OpInfo(Pattern.ELEMWISE, _elementwise, _per_elem(1)),
    Op.MUL: OpInfo(Pattern.ELEMWISE, _unary, _per_elem(1)),  # by a scalar attr
    Op.GELU: OpInfo(Pattern.ELEMWISE, _unary, _per_elem(8)),  # tanh approximation
    Op.RELU: OpInfo(Pattern.ELEMWISE, _unary, _per_elem(1)),
    Op.BIAS_ADD: OpInfo(Pattern.BROADCAST, _bias, _per_elem(1)),
    Op.SPLIT_HEADS: OpInfo(Pattern.INJECTIVE, _split_heads, lambda ins, out, a: 0.0),
    Op.MERGE_HEADS: OpInfo(Pattern.INJECTIVE, _merge_heads, lambda ins, out, a: 0.0),
    Op.SOFTMAX: OpInfo(Pattern.REDUCTION, _unary, _per_elem(5)),  # max, sub, exp, sum, div
    Op.LAYERNORM: OpInfo(Pattern.REDUCTION, _unary, _per_elem(8)),  # mean, var, normalise, scale, shift
    Op.ROPE: OpInfo(Pattern.ELEMWISE, _unary, _per_elem(6)),  # rotary embedding: two multiply-adds per pair
    # SwiGLU: silu(gate) x up from [.., 2F] to [.., F]; each output from a fixed pair of inputs (TVM: injective)
    Op.GLU: OpInfo(Pattern.INJECTIVE, _glu, _per_elem(5)),
    Op.MATMUL: OpInfo(Pattern.OUT_EWISE_FUSABLE, _matmul, lambda ins, out, a: 2.0 * _numel(out) * ins[0][-1]),
    Op.BATCH_MATMUL: OpInfo(Pattern.OUT_EWISE_FUSABLE, _batch_matmul,
                            lambda ins, out, a: 2.0 * _numel(out) * ins[0][-1]),
    Op.CONV2D: OpInfo(Pattern.OUT_EWISE_FUSABLE, _conv2d,
                      lambda ins, out, a: 2.0 * _numel(out) * ins[1][0] * ins[1][1] * ins[1][2]),
}


@dataclass(frozen=True, slots=True)
class Node:
    """One op and the tensor it produces."""

    name: str
    op: Op
    inputs: tuple[str, ...]
    shape: Shape
    dtype: str = "bf16"
    attrs: tuple[tuple[str, object], ...] = ()

    @property
    def pattern(self) -> Pattern:
        """The op's fusion pattern (from the op table)."""
        return OPS[self.op].pattern

    @property
    def is_compute(self) -> bool:
        """Not a graph input or a parameter."""
        return self.op not in (Op.INPUT, Op.PARAM)

    def bytes(self, dims: dict[str, int]) -> int:
        """Size of the produced tensor at concrete dims (bytes)."""
        return _numel(concrete(self.shape, dims)) * DTYPE_BYTES[self.dtype]

    def flops(self, graph: Graph, dims: dict[str, int]) -> float:
        """FLOPs of this op at concrete dims."""
        ins = [concrete(graph.node(i).shape, dims) for i in self.inputs]
        return OPS[self.op].flops(ins, concrete(self.shape, dims), dict(self.attrs))


def concrete(shape: Shape, dims: dict[str, int]) -> tuple[int, ...]:
    """A shape with its symbolic dims bound."""
    try:
        return tuple(d if isinstance(d, int) else dims[d] for d in shape)
    except KeyError as e:
        raise ConfigError("dims", dims, f"no value for the symbolic dim {e.args[0]!r}") from None


@dataclass(frozen=True, slots=True)
class Graph:
    """Nodes in topological order and the names of the outputs."""

    name: str
    nodes: tuple[Node, ...]
    outputs: tuple[str, ...]
    index: dict[str, Node] = field(init=False, repr=False, compare=False)  # derived: name -> node

    def __post_init__(self) -> None:
        object.__setattr__(self, "index", {n.name: n for n in self.nodes})

    def node(self, name: str) -> Node:
        """The node called ``name``."""
        try:
            return self.index[name]
        except KeyError:
            raise GraphError("node", name, f"not in graph {self.name}") from None

    def consumers(self) -> dict[str, list[str]]:
        """For every node, the compute nodes that read it."""
        out: dict[str, list[str]] = {n.name: [] for n in self.nodes}
        for n in self.nodes:
            for i in n.inputs:
                out[i].append(n.name)
        return out

    @property
    def symbols(self) -> tuple[str, ...]:
        """The symbolic dims the graph uses, in first-use order."""
        seen: dict[str, None] = {}
        for n in self.nodes:
            for d in n.shape:
                if isinstance(d, str):
                    seen[d] = None
        return tuple(seen)

    def compute_nodes(self) -> list[Node]:
        """The nodes that do work."""
        return [n for n in self.nodes if n.is_compute]


def verify(graph: Graph) -> Graph:
    """Check names, order and every shape against the op table; return the graph."""
    seen: set[str] = set()
    for n in graph.nodes:
        _need(n.name not in seen, n.name, "a unique node name", n.name)
        _need(n.dtype in DTYPE_BYTES, n.name, f"a dtype in {sorted(DTYPE_BYTES)}", n.dtype)
        for i in n.inputs:
            _need(i in seen, n.name, "inputs defined before use", i)
        rule = OPS[n.op].shape
        if rule is None:
            _need(not n.inputs, n.name, "no inputs for an input or a parameter", n.inputs)
            _need(all(isinstance(d, str) or d > 0 for d in n.shape), n.name, "dims > 0", n.shape)
        else:
            expected = rule(n.name, [graph.node(i).shape for i in n.inputs], dict(n.attrs))
            _need(len(expected) == len(n.shape) and all(map(_same, expected, n.shape)), n.name,
                  f"shape {expected}", n.shape)
        seen.add(n.name)
    for o in graph.outputs:
        _need(o in seen, "outputs", "names of nodes", o)
    return graph


class Builder:
    """Builds a graph op by op, deriving each shape from the op table's rule."""

    def __init__(self, name: str, dtype: str = "bf16"):
        self.name, self.dtype = name, dtype
        self.nodes: list[Node] = []
        self.shapes: dict[str, Shape] = {}

    def add(self, name: str, op: Op, inputs: tuple[str, ...] = (), shape: Shape = (), **attrs: object) -> str:
        """Append a node; its shape comes from the rule unless it is an input or a parameter."""
        rule = OPS[op].shape
        if rule is not None:
            shape = rule(name, [self.shapes[i] for i in inputs], attrs)
        self.nodes.append(Node(name, op, tuple(inputs), tuple(shape), self.dtype, tuple(sorted(attrs.items()))))
        self.shapes[name] = tuple(shape)
        return name

    def build(self, outputs: tuple[str, ...]) -> Graph:
        """The finished, verified graph."""
        return verify(Graph(self.name, tuple(self.nodes), tuple(outputs)))

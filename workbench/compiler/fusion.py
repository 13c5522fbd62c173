"""Fusion by op pattern: partition a graph into kernels (TVM's FuseOps, simplified).

Levels:

* ``none``: one kernel per op.
* ``elementwise``: an elementwise, broadcast or injective op joins the kernel of the
  op that produces its input: chains of cheap ops, and epilogues of matmuls, convs and
  reductions (``matmul -> bias -> gelu`` is one kernel).
* ``aggressive``: any non-opaque op may join its producer's kernel, across reductions
  and matmuls too: GEMM chains and their epilogues (a norm into the next projection, the
  MLP's up-projection, activation and down-projection) and the attention core (scores,
  softmax, context, the output projection) each become one kernel.

With ``attention="flash"`` (the default) the attention core (scores, scale, softmax,
context) is one tiled kernel at every level but ``none``, whatever the level fuses around
it, as serving stacks run FlashAttention whatever their compiler fuses (torch.compile
matches scaled-dot-product attention to it; XLA rewrites it to cuDNN's fused attention).
With ``"naive"`` the level alone decides: ``elementwise`` leaves the core unfused (score
matrices cross HBM), ``aggressive`` fuses it and the cost model holds whole score matrices
(a naive compiler, kept to show why fused attention must tile).

A kernel ends where a real compiler ends it (XLA and TVM do not fuse a producer into a
consumer that reduces over the producer's rows; Triton and FlashAttention kernels take Q,
K and V from HBM): a batch-matmul never joins the kernel that produces its right operand
(K or V), because every query tile needs that operand for every earlier row of the
sequence. K and V are then kernel outputs, and no whole-sequence tensor is held on chip.

An edge producer -> consumer is a fusion candidate only if the producer feeds nothing
else, or feeds only injective/elementwise ops (the three head splits of ``qkv``): a
tensor read by a reduction or matmul elsewhere is a boundary, so the residual stream
separates the attention and MLP sub-blocks. ``max_depth`` caps the ops per kernel.
A fusion that would make two kernels depend on each other is refused.

A kernel's *materialised* intermediates are the tensors it produces and reads again
inside itself with a reduction or a matmul: a row tile of each sits in on-chip SRAM while
it is read (an elementwise epilogue works in place on its producer's tile). The cost model
sizes them per tile and charges spills when a tile exceeds SRAM.
"""

from __future__ import annotations

from dataclasses import dataclass

from workbench.errors import check_one_of
from workbench.graph import Graph, Op, Pattern

FUSION_LEVELS = ("none", "elementwise", "aggressive")
ATTENTION = ("flash", "naive")


@dataclass(frozen=True, slots=True)
class Kernel:
    """A fused group of ops, launched once."""

    name: str
    nodes: tuple[str, ...]  # topological order; nodes[0] is the master op
    inputs: tuple[str, ...]  # tensors read from HBM: graph inputs, parameters, other kernels' outputs
    outputs: tuple[str, ...]  # tensors written to HBM
    materialised: tuple[str, ...]  # internal tensors a reduction or matmul in the kernel reads (a tile on chip)
    pattern: Pattern  # the highest pattern among its ops


def _fusable(level: str, producer_group_pattern: Pattern, consumer: Pattern) -> bool:
    if level == "none" or producer_group_pattern == Pattern.OPAQUE or consumer == Pattern.OPAQUE:
        return False
    if level == "elementwise":
        return consumer <= Pattern.INJECTIVE
    return True


def _sequence_wide(graph: Graph, node, group_of: dict[str, int], g: int) -> bool:
    """Whether ``node`` is a batch-matmul whose right operand (K, V: the whole sequence) group ``g`` produces."""
    return node.op == Op.BATCH_MATMUL and group_of.get(node.inputs[1]) == g


def attention_cores(graph: Graph) -> dict[str, str]:
    """Each op of an attention core (scores batch-matmul, its elementwise scaling, softmax, context
    batch-matmul) mapped to the core's first op."""
    nodes = {n.name: n for n in graph.nodes}
    cores: dict[str, str] = {}
    for n in graph.nodes:
        if n.op != Op.BATCH_MATMUL or nodes[n.inputs[0]].op != Op.SOFTMAX:
            continue
        chain = [n.name, n.inputs[0]]
        m = nodes[nodes[n.inputs[0]].inputs[0]]
        while m.pattern <= Pattern.BROADCAST and len(m.inputs) == 1:
            chain.append(m.name)
            m = nodes[m.inputs[0]]
        if m.op == Op.BATCH_MATMUL:
            cores.update({c: m.name for c in (m.name, *chain)})
    return cores


def fuse_ops(graph: Graph, level: str = "elementwise", max_depth: int = 32,
             attention: str = "flash") -> tuple[Kernel, ...]:
    """Partition ``graph`` into kernels at a fusion level (a pure function)."""
    check_one_of("fusion", level, FUSION_LEVELS)
    check_one_of("attention", attention, ATTENTION)
    cores = attention_cores(graph) if attention == "flash" and level != "none" else {}
    consumers = graph.consumers()
    pattern = {n.name: n.pattern for n in graph.nodes}
    group_of: dict[str, int] = {}
    groups: list[list[str]] = []
    deps: list[set[int]] = []  # groups each group reads from

    def reaches(src: int, dst: int) -> bool:
        stack, seen = [src], set()
        while stack:
            g = stack.pop()
            if g == dst:
                return True
            seen.add(g)
            stack.extend(d for d in range(len(groups)) if src != d and g in deps[d] and d not in seen)
        return False

    for node in graph.compute_nodes():
        target = -1
        head = cores.get(node.name, node.name)
        if head != node.name:  # inside an attention core: its kernel, whatever the level
            target = group_of[head]
        for i in node.inputs if target < 0 else ():
            g = group_of.get(i)
            if g is None or len(groups[g]) >= max_depth:
                continue
            readers = consumers[i]
            shared = len(readers) > 1 and any(pattern[r] > Pattern.INJECTIVE for r in readers)
            group_pattern = max(pattern[m] for m in groups[g])
            if shared or not _fusable(level, group_pattern, node.pattern):
                continue
            if _sequence_wide(graph, node, group_of, g):
                continue
            others = {group_of[j] for j in node.inputs if j in group_of and group_of[j] != g}
            if any(reaches(g, h) for h in others):  # h already depends on g: fusing would close a cycle
                continue
            target = g
            break
        if target < 0:
            target = len(groups)
            groups.append([])
            deps.append(set())
        groups[target].append(node.name)
        group_of[node.name] = target
        deps[target].update(group_of[j] for j in node.inputs if j in group_of and group_of[j] != target)
    return tuple(_kernel(graph, f"k{idx}_{members[0]}", members, consumers) for idx, members in enumerate(groups))


def _kernel(graph: Graph, name: str, members: list[str], consumers: dict[str, list[str]]) -> Kernel:
    inside = set(members)
    inputs: dict[str, None] = {}
    for m in members:
        for i in graph.node(m).inputs:
            if i not in inside:
                inputs[i] = None
    outputs = tuple(m for m in members
                    if m in graph.outputs or any(c not in inside for c in consumers[m]))
    materialised = tuple(m for m in members
                         if any(c in inside and graph.node(c).pattern >= Pattern.REDUCTION for c in consumers[m]))
    return Kernel(name, tuple(members), tuple(inputs), outputs, materialised,
                  max(graph.node(m).pattern for m in members))

"""The time of one serving iteration: the compiler's plan for the dense layers, a paged-attention kernel for the
KV, the embedding and the LM head, each timed by the roofline and the fitted efficiency law.

The model is described as its published config describes it (:class:`~workbench.serving.config.Decoder`:
layers, width, query and KV heads, MLP width, gated or not, vocabulary). One iteration of ``T`` new tokens
(prefill chunks plus one per running decode) costs, per layer:

- **dense kernels**: :func:`~workbench.models.decoder_layer` (norms, QKV projection and its rotary embedding,
  output projection, residual adds, the MLP) is fused by the compiler at the run's fusion level, every kernel
  tiled for ``T`` rows and costed by the compiler's roofline (FLOPs with the rows padded to the matrix unit,
  HBM bytes with spills and re-read weights), then timed by the efficiency law of its kind
  (:mod:`workbench.serving.efficiency`: what share of peak a GEMM, a norm or an elementwise kernel reaches,
  and its fixed time on the device). On a multi-core NPU (``cores > 1``) the layer runs tensor-parallel over
  the cores, split as Megatron-LM splits it, every core's shard at once, each moving its bytes through the
  one HBM (memory time x ``cores``); **a GPU is one core** (its SMs run one kernel together).
- **two all-reduces** of the row-split projections' partial sums through HBM (``(3 x cores + 1) x T x
  d_model`` bf16 elements in all); none on one core.
- **attention over the paged KV cache** (a hand-written kernel, as vLLM's paged attention and FlashAttention
  are, not a compiled one): a query token at position ``p`` reads ``p`` keys and values: ``4 x d_model x p``
  FLOPs; the sequences' cached K and V (``2 x kv_heads x head_dim`` bf16 per token: grouped-query attention
  reads fewer) are read once and the new tokens' written; timed by the GEMM law.

and once per iteration, with a vocabulary: the embedding lookup of the ``T`` tokens and, for every sequence
in the iteration (a decode's next token, a prompt's first), the final norm and the LM head (``d_model x
vocab``, split by columns over the cores).

**Launches.** Eager execution pays one launch per kernel (``launch_s`` each); with ``cuda_graphs`` (the
default) an iteration of at most ``GRAPH_MAX_TOKENS`` tokens replays a captured graph: one launch for the whole
iteration, as vLLM captures batches up to its largest capture size (512 by default; decode batches, and mixed
chunked-prefill batches under its piecewise graphs); larger iterations (long prefills) run eagerly.

Compiled shape buckets pad the dense kernels' rows (attention runs at the real token count); an iteration past
every bucket runs the compiler's generic fallback mapping (unfused, one fixed tiling) ``generic_slowdown`` times
slower.

**Tensor parallelism over GPUs** (:class:`~workbench.serving.config.Parallel`, ``tensor = N > 1``): one
replica's layers are split over ``N`` GPUs as Megatron-LM splits them, and every figure above is one GPU's:
the dense kernels are one shard's (the layer graph split ``cores x N`` ways; each GPU streams its shard from its
own HBM, so the memory time is not multiplied by ``N``), attention runs ``1 / N`` of the query heads and reads
``1 / N`` of the KV heads (a KV head is replicated when ``N`` exceeds their count), the LM head is split by
vocabulary columns over all ``N x cores`` shards and the embedding table by rows (its lookup still writes every
token's row on every GPU). Each layer then all-reduces the iteration's ``T x d_model`` bf16 activations twice
over the link (after the attention output projection and after the MLP down projection), each a ring all-reduce
of ``2 (N-1)/N x bytes / link_bytes_per_s + 2 (N-1) x link_latency_s``, added to the iteration's time: vLLM's
default runs them on the compute stream, between the layer's kernels, so they are not overlapped with compute.
The embedding's all-reduce and the logits' gather (once per iteration, not per layer) are left out. Weights and
KV bytes per token are per GPU.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field

from workbench.compiler.cost import choose_layout
from workbench.compiler.fusion import fuse_ops
from workbench.compiler.mapping import GENERIC_TILING, CompileOptions, Mapping
from workbench.compiler.plan import Plan
from workbench.graph import DTYPE_BYTES, Op
from workbench.hardware import Hardware
from workbench.models import decoder_layer
from workbench.serving.config import Decoder, Parallel
from workbench.serving.efficiency import KINDS, LAWS, EfficiencyLaw, kernel_kind, reduction_depth

ITEM = DTYPE_BYTES["bf16"]  # bytes per element of activations, weights and KV
TUNE_ROWS = 16  # the shape the shown layout is chosen at; the plan re-tiles for every row count it meets
HEAD_KERNELS = 3  # embedding lookup, final norm, LM head
GRAPH_MAX_TOKENS = 512  # tokens of the largest captured graph (vLLM's default max capture size)
ONE_GPU = Parallel()  # no tensor parallelism: the whole layer on one GPU


def kv_bytes_per_token(model: Decoder) -> float:
    """K and V of one token across all layers (bytes, bf16): ``2 x kv_heads x head_dim`` per layer."""
    return 2.0 * model.kv_width * ITEM * model.layers


@dataclass(frozen=True)
class IterationCost:
    """Prices iterations of ``model`` on ``hw``: :meth:`seconds` for a batch's token counts and contexts."""

    model: Decoder
    hw: Hardware
    plan: Plan  # the layer shard's plan: graph, hardware, fusion; costs memoised per row count
    mapping: Mapping  # the fused, shape-specialised kernels
    law: EfficiencyLaw = LAWS["fitted"]
    cuda_graphs: bool = True  # iterations of at most GRAPH_MAX_TOKENS tokens replay a graph: one launch each
    parallel: Parallel = ONE_GPU  # tensor parallelism over GPUs and the link between them
    _dense: dict = field(default_factory=dict, compare=False, repr=False)  # (rows, generic) -> s, a memo
    _head: dict = field(default_factory=dict, compare=False, repr=False)  # sequences -> s, a memo
    _facts: dict = field(default_factory=dict, compare=False, repr=False)  # generic -> (kind, K) per kernel

    @classmethod
    def of(cls, model: Decoder, hw: Hardware, fusion: str = "elementwise", generic_slowdown: float = 1.5,
           efficiency: str = "fitted", cuda_graphs: bool = True, parallel: Parallel = ONE_GPU) -> IterationCost:
        """The cost model of ``model`` on ``hw``, the layer fused at ``fusion``, the fallback ``generic_slowdown``
        times slower, kernels timed by the ``efficiency`` law (``fitted`` or ``ideal``), split over ``parallel``'s
        GPUs (memoised: the costs are pure functions of these)."""
        return _cost_model(model, hw, fusion, float(generic_slowdown), efficiency, bool(cuda_graphs), parallel)

    @classmethod
    def of_run(cls, run) -> IterationCost:
        """The cost model a :class:`~workbench.serving.engine.ServingRun` prices its iterations with."""
        return cls.of(run.model, run.hardware, run.buckets.fusion, run.buckets.generic_slowdown, run.efficiency,
                      run.cuda_graphs, run.parallel)

    @property
    def tensor(self) -> int:
        """GPUs one replica's layers are split over."""
        return self.parallel.tensor

    @property
    def weight_bytes(self) -> float:
        """Bytes of the model's weights on one GPU: every core's shard of every layer, the GPU's share of the
        embedding and of the LM head (the whole model on one GPU)."""
        one = {"batch": 1, "seq": 1}
        shard = sum(n.bytes(one) for n in self.plan.graph.nodes if n.op == Op.PARAM)
        vocab = -(-self.model.vocab // self.tensor)
        return float(shard * self.hw.cores * self.model.layers + 2 * vocab * self.model.d_model * ITEM)

    def kernels_per_layer(self, generic: bool = False) -> int:
        """Kernel launches one layer of an eager iteration pays: the compiled kernels, the two all-reduces (with
        more than one core, and again over the link with more than one GPU) and the attention kernel."""
        mapping = self.plan.generic if generic else self.mapping
        return len(mapping.kernels) + (2 if self.hw.cores > 1 else 0) + (2 if self.tensor > 1 else 0) + 1

    def launches_per_layer(self) -> int:
        """:meth:`kernels_per_layer` of the specialised plan (an eager iteration's launches per layer)."""
        return self.kernels_per_layer(False)

    def launches(self, generic: bool = False, tokens: int = GRAPH_MAX_TOKENS + 1) -> int:
        """Launches an iteration of ``tokens`` tokens pays: one if it replays a captured graph, else one per
        kernel."""
        if self.cuda_graphs and tokens <= GRAPH_MAX_TOKENS:
            return 1
        return self.model.layers * self.kernels_per_layer(generic) + (HEAD_KERNELS if self.model.vocab else 0)

    @property
    def kv_heads_per_gpu(self) -> int:
        """KV heads one GPU holds: ``kv_heads / tensor``, at least one (replicated past that, as vLLM does)."""
        return max(1, self.model.kv_heads // self.tensor)

    def kv_bytes_per_token(self) -> float:
        """K and V of one token across all layers on one GPU (bytes): what a KV block of ``block_size`` tokens holds
        per token."""
        if self.tensor == 1:
            return kv_bytes_per_token(self.model)
        return 2.0 * self.kv_heads_per_gpu * self.model.head_dim * ITEM * self.model.layers

    def kernels(self, rows: int, generic: bool = False):
        """The dense kernels of one layer shard at ``rows`` rows: the compiler's :class:`KernelCost` each."""
        return self.plan.kernel_costs(self.plan.generic if generic else self.mapping, 1, rows)

    def _kinds(self, generic: bool) -> list[tuple[str, float]]:
        facts = self._facts.get(generic)
        if facts is None:
            g = self.plan.graph
            facts = []
            for k in (self.plan.generic if generic else self.mapping).kernels:
                nodes = [g.node(m) for m in k.nodes]
                depth = reduction_depth(g.node(n.inputs[1]).shape for n in nodes if n.op == Op.MATMUL)
                facts.append((kernel_kind(n.op for n in nodes), depth))
            self._facts[generic] = facts
        return facts

    def dense_seconds(self, rows: int, generic: bool = False) -> float:
        """One layer's dense kernels at ``rows`` rows on every core at once, on the device (s, launches apart)."""
        key = (rows, generic)
        s = self._dense.get(key)
        if s is None:
            n, law = self.hw.cores, self.law
            s = 0.0
            for c, (kind, depth) in zip(self.kernels(rows, generic), self._kinds(generic), strict=True):
                s += law.kernel_seconds(kind, c.compute_s, n * c.memory_s, depth)
            if generic:
                s *= self.plan.options.generic_slowdown
            self._dense[key] = s
        return s

    def dense_tables(self):
        """What the compiled loop prices :meth:`dense_seconds` from (memoised): the layer shard's kernels, the
        specialised then the generic, as the compiler's flat cost tables (:func:`~workbench.compiler.cost_flat.flatten`;
        a generic kernel keeps its one tiling), and each kernel's (index of its law kind in ``KINDS``, reduction
        depth) as a float64 [kernels, 2] array."""
        tables = self._facts.get("flat")
        if tables is None:
            import numpy as np

            from workbench.compiler.cost_flat import flatten

            spec, generic = self.mapping, self.plan.generic
            flat = flatten(self.plan.graph, (*spec.kernels, *generic.kernels), (*spec.tilings, *generic.tilings),
                           self.plan.dim, self.plan.options.attention, self.plan.calibration)
            flat.ki[len(spec.kernels):, 8] = 0  # not specialised: the generic fallback's tiling at every shape
            kd = np.array([(KINDS.index(kind), depth) for kind, depth in (*self._kinds(False), *self._kinds(True))],
                          dtype=np.float64).reshape(-1, 2)
            tables = self._facts["flat"] = (flat, kd)
        return tables

    def reduce_seconds(self, tokens: int) -> float:
        """One layer's two all-reduces of ``tokens`` rows through HBM, on the device (s); none on one core."""
        n = self.hw.cores
        if n == 1:
            return 0.0
        return 2 * ((3 * n + 1) * tokens * self.model.d_model * ITEM / self.hw.hbm_bandwidth_bytes_per_s)

    def attention_terms(self, tokens: int, keys: float, cached: float) -> tuple[float, float]:
        """One layer's paged attention at peak: (compute s, memory s) on one GPU (its share of the heads).

        ``keys``: the sum over new tokens of the keys each attends to; ``cached``: the tokens
        already in the KV cache that the batch's sequences read.
        """
        hw, m = self.hw, self.model
        width = m.kv_width if self.tensor == 1 else self.kv_heads_per_gpu * m.head_dim
        return (4.0 * m.d_model * keys / (hw.cores * self.tensor * hw.peak_flops_per_core),
                2.0 * width * ITEM * (cached + tokens) / hw.hbm_bandwidth_bytes_per_s)

    def attention_seconds(self, tokens: int, keys: float, cached: float) -> float:
        """One layer's paged attention on the device (s): its roofline terms through the GEMM law."""
        c, m = self.attention_terms(tokens, keys, cached)
        return self.law.gemm_seconds(c, m, 0.0)

    def head_seconds(self, seqs: int) -> float:
        """The final norm and the LM head for ``seqs`` sequences' next tokens, on the device (s); 0 without a
        vocabulary. The head is split by columns over the cores, which stream their shards at once."""
        s = self._head.get(seqs)
        if s is None:
            s = 0.0
            if self.model.vocab and seqs > 0:
                hw, d, law, n = self.hw, self.model.d_model, self.law, self.hw.cores
                cols = -(-self.model.vocab // (n * self.tensor))
                rows = math.ceil(seqs / hw.mma_rows) * hw.mma_rows
                compute = 2.0 * rows * d * cols / hw.peak_flops_per_core
                memory = (d * cols + seqs * (d + cols)) * ITEM / hw.hbm_bandwidth_bytes_per_s
                norm = 2.0 * seqs * d * ITEM / hw.hbm_bandwidth_bytes_per_s
                s = law.kernel_seconds("norm", 0.0, norm) + law.gemm_seconds(compute, n * memory, float(d))
            self._head[seqs] = s
        return s

    def link_seconds(self, tokens: int) -> float:
        """Every layer's two ring all-reduces of ``tokens`` rows of ``d_model`` bf16 over the link between GPUs (s,
        the whole iteration's); 0 on one GPU."""
        if self.tensor == 1:
            return 0.0
        return self.model.layers * 2 * self.parallel.allreduce_seconds(tokens * self.model.d_model * ITEM)

    def embed_seconds(self, tokens: int) -> float:
        """The embedding lookup of ``tokens`` tokens (rows gathered and written), on the device (s); 0 without a
        vocabulary."""
        if not self.model.vocab:
            return 0.0
        return self.law.kernel_seconds("elementwise", 0.0,
                                       2.0 * tokens * self.model.d_model * ITEM / self.hw.hbm_bandwidth_bytes_per_s)

    def seconds(self, tokens: int, keys: float, cached: float, rows: int | None = None, generic: bool = False,
                seqs: int = 0) -> float:
        """One iteration of ``tokens`` new tokens from ``seqs`` sequences (s): every layer's dense kernels at
        ``rows`` (default ``tokens``; a bucket's padded size), its all-reduces and its paged attention, the
        embedding and the LM head (``seqs`` rows), the all-reduces over the link between GPUs, and its launches
        (one if it replays a captured graph)."""
        if tokens <= 0:
            return 0.0
        layer = (self.dense_seconds(rows or tokens, generic) + self.reduce_seconds(tokens)
                 + self.attention_seconds(tokens, keys, cached))
        device = self.model.layers * layer + self.head_seconds(seqs) + self.embed_seconds(tokens)
        return device + self.link_seconds(tokens) + self.launches(generic, tokens) * self.hw.launch_s

    def pricer(self):
        """:meth:`seconds` with its constants bound once (the loop calls it every iteration): equal bit for bit."""
        dense_memo, dense, head_memo, head = self._dense, self.dense_seconds, self._head, self.head_seconds
        reduce, attention, embed, launches = self.reduce_seconds, self.attention_seconds, self.embed_seconds, \
            self.launches
        link = self.link_seconds
        layers, launch = self.model.layers, self.hw.launch_s

        def seconds(tokens: int, keys: float, cached: float, rows: int | None = None, generic: bool = False,
                    seqs: int = 0) -> float:
            if tokens <= 0:
                return 0.0
            key = (rows or tokens, generic)
            s = dense_memo.get(key)
            if s is None:
                s = dense(*key)
            h = head_memo.get(seqs)
            if h is None:
                h = head(seqs)
            layer = s + reduce(tokens) + attention(tokens, keys, cached)
            return layers * layer + h + embed(tokens) + link(tokens) + launches(generic, tokens) * launch

        return seconds

    def prefill_seconds(self, prompt: int, start: int = 0) -> float:
        """One sequence's prefill of positions ``start .. prompt - 1`` alone in an iteration."""
        n = prompt - start
        return self.seconds(n, causal_keys(start, n), start, seqs=1)

    def decode_seconds(self, context: int) -> float:
        """One sequence's decode step alone, with ``context`` tokens already cached."""
        return self.seconds(1, context + 1, context, seqs=1)


@functools.lru_cache(maxsize=32)
def _cost_model(model: Decoder, hw: Hardware, fusion: str, generic_slowdown: float, efficiency: str,
                cuda_graphs: bool, parallel: Parallel) -> IterationCost:
    # one GPU's shard of the layer: split over its cores and over the GPUs of the replica
    graph = decoder_layer(model.d_model, model.heads, model.d_ff, model.kv_heads, model.gated_mlp,
                          hw.cores * parallel.tensor)
    options = CompileOptions(fusion=fusion, generic_slowdown=generic_slowdown)
    kernels = fuse_ops(graph, fusion)
    mapping = Mapping(kernels, choose_layout(graph, kernels, {"batch": 1, "seq": TUNE_ROWS}, hw))
    singles = fuse_ops(graph, "none")
    generic = Mapping(singles, (GENERIC_TILING,) * len(singles), specialised=False)
    return IterationCost(model, hw, Plan(graph, hw, options, "seq", (), generic), mapping, LAWS[efficiency],
                         cuda_graphs, parallel)


def causal_keys(start: int, n: int) -> float:
    """Sum over ``n`` new tokens at positions ``start .. start + n - 1`` of the keys each attends to (itself too)."""
    return n * start + n * (n + 1) / 2

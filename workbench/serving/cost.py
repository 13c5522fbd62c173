"""The time of one serving iteration: the compiler's plan for the dense layers, a paged-attention roofline for the KV.

The decoder runs **tensor-parallel** over the chip's cores, split the way Megatron-LM splits
a transformer layer (Shoeybi et al. 2019): the QKV and MLP up-projections by columns, the
attention output and MLP down-projections by rows, so each core holds ``1/cores`` of every
layer's weights. One iteration of ``T`` new tokens (prefill chunks plus one per running
decode) costs, per layer:

- **dense kernels**: :func:`~workbench.models.layer_shard`, one core's share of the layer as a graph, is fused
  by the compiler (:func:`~workbench.compiler.fusion.fuse_ops` at the run's fusion level)
  and every kernel is tiled for ``T`` rows and costed by the compiler's roofline model
  (:meth:`~workbench.compiler.plan.Plan.phases`: weights, activations, spills, launch). All
  cores run the same kernel on their own shard at once, so each draws ``1/cores`` of HBM:
  a kernel lasts ``launch + max(compute, cores x memory)``, the runtime's max-min sharing
  for equal demands. A decode iteration of a few tokens is memory-bound on the weights; a
  prefill of hundreds of tokens is compute-bound.
- **two all-reduces** of the row-split projections' partial sums, through HBM (each core
  writes its partial, reads the slices it reduces, writes its reduced slice, reads the whole
  sum: ``(3 x cores + 1) x T x d_model`` bf16 elements in all), one launch each; none on one core.
- **attention over the paged KV cache** (a hand-written kernel, as vLLM's paged attention,
  not a compiled one): a query token at position ``p`` reads ``p`` keys and values:
  ``4 x d_model x p`` FLOPs; the sequences' cached K and V (``2 x d_model`` bf16 per token)
  are read once, the new tokens' written; ``max(FLOPs / chip peak, bytes / bandwidth)`` plus
  one launch.

Compiled shape buckets pad the dense kernels' rows (the attention kernel runs at the real
token count); an iteration past every bucket runs the compiler's generic fallback mapping
(unfused, one fixed tiling) ``generic_slowdown`` times slower.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

from workbench.compiler.cost import choose_layout
from workbench.compiler.fusion import fuse_ops
from workbench.compiler.plan import GENERIC_TILING, CompileOptions, Mapping, Plan
from workbench.graph import DTYPE_BYTES, Op
from workbench.hardware import Hardware
from workbench.models import layer_shard
from workbench.serving.config import Decoder

ITEM = DTYPE_BYTES["bf16"]  # bytes per element of activations, weights and KV
TUNE_ROWS = 16  # the shape the shown layout is chosen at; the plan re-tiles for every row count it meets


def kv_bytes_per_token(model: Decoder) -> float:
    """K and V of one token across all layers (bytes, bf16)."""
    return 2.0 * model.d_model * ITEM * model.layers


@dataclass(frozen=True)
class IterationCost:
    """Prices iterations of ``model`` on ``hw``: :meth:`seconds` for a batch's token counts and contexts."""

    model: Decoder
    hw: Hardware
    plan: Plan  # the layer shard's plan: graph, hardware, fusion; costs memoised per row count
    mapping: Mapping  # the fused, shape-specialised kernels
    _dense: dict = field(default_factory=dict, compare=False, repr=False)  # (rows, generic) -> s, a memo

    @classmethod
    def of(cls, model: Decoder, hw: Hardware, fusion: str = "elementwise",
           generic_slowdown: float = 1.5) -> IterationCost:
        """The cost model of ``model`` on ``hw``, the layer fused at ``fusion``, the fallback ``generic_slowdown``
        times slower than its roofline (memoised: the costs are pure functions of these)."""
        return _cost_model(model, hw, fusion, float(generic_slowdown))

    @classmethod
    def of_run(cls, run) -> IterationCost:
        """The cost model a :class:`~workbench.serving.engine.ServingRun` prices its iterations with."""
        return cls.of(run.model, run.hardware, run.buckets.fusion, run.buckets.generic_slowdown)

    @property
    def weight_bytes(self) -> float:
        """Bytes of all the decoder's weights (every core's shard, every layer)."""
        one = {"batch": 1, "seq": 1}
        shard = sum(n.bytes(one) for n in self.plan.graph.nodes if n.op == Op.PARAM)
        return float(shard * self.hw.cores * self.model.layers)

    def launches_per_layer(self) -> int:
        """Kernel launches one layer of an iteration pays: the compiled kernels, the two all-reduces (with more
        than one core) and the attention kernel."""
        return len(self.mapping.kernels) + (2 if self.hw.cores > 1 else 0) + 1

    def kv_bytes_per_token(self) -> float:
        """K and V of one token across all layers (bytes): what a KV block of ``block_size`` tokens holds per token."""
        return kv_bytes_per_token(self.model)

    def kernels(self, rows: int, generic: bool = False):
        """The dense kernels of one layer shard at ``rows`` rows: the compiler's :class:`KernelCost` each."""
        return self.plan.kernel_costs(self.plan.generic if generic else self.mapping, 1, rows)

    def dense_seconds(self, rows: int, generic: bool = False) -> float:
        """One layer's dense kernels at ``rows`` rows on every core at once (s), shared HBM included."""
        key = (rows, generic)
        s = self._dense.get(key)
        if s is None:
            launch, n = self.hw.launch_s, self.hw.cores
            phases = self.plan.phases(self.plan.generic if generic else self.mapping, 1, rows)
            s = sum(launch + max(t - launch, n * u * t) for t, u in phases)
            if generic:
                s *= self.plan.options.generic_slowdown
            self._dense[key] = s
        return s

    def reduce_seconds(self, tokens: int) -> float:
        """One layer's two all-reduces of ``tokens`` rows through HBM (s); none on one core."""
        n = self.hw.cores
        if n == 1:
            return 0.0
        moved = (3 * n + 1) * tokens * self.model.d_model * ITEM
        return 2 * (self.hw.launch_s + moved / self.hw.hbm_bandwidth_bytes_per_s)

    def attention_terms(self, tokens: int, keys: float, cached: float) -> tuple[float, float]:
        """One layer's paged attention: (compute s, memory s) on the whole chip.

        ``keys``: the sum over new tokens of the keys each attends to; ``cached``: the tokens
        already in the KV cache that the batch's sequences read.
        """
        hw, d = self.hw, self.model.d_model
        return (4.0 * d * keys / (hw.cores * hw.peak_flops_per_core),
                2.0 * d * ITEM * (cached + tokens) / hw.hbm_bandwidth_bytes_per_s)

    def seconds(self, tokens: int, keys: float, cached: float, rows: int | None = None,
                generic: bool = False) -> float:
        """One iteration of ``tokens`` new tokens (s): every layer's dense kernels at ``rows`` (default
        ``tokens``; a bucket's padded size), its all-reduces and its paged attention."""
        if tokens <= 0:
            return 0.0
        c, m = self.attention_terms(tokens, keys, cached)
        layer = (self.dense_seconds(rows or tokens, generic) + self.reduce_seconds(tokens)
                 + max(c, m) + self.hw.launch_s)
        return self.model.layers * layer

    def pricer(self):
        """:meth:`seconds` with its constants bound once (the loop calls it every iteration): equal bit for bit."""
        dense_memo, dense = self._dense, self.dense_seconds
        hw, d, layers = self.hw, self.model.d_model, self.model.layers
        att_f, peak = 4.0 * d, hw.cores * hw.peak_flops_per_core
        kv, bw, launch = 2.0 * d * ITEM, hw.hbm_bandwidth_bytes_per_s, hw.launch_s
        parts, shared = 3 * hw.cores + 1, hw.cores > 1  # the all-reduces, as reduce_seconds moves them

        def seconds(tokens: int, keys: float, cached: float, rows: int | None = None, generic: bool = False) -> float:
            if tokens <= 0:
                return 0.0
            key = (rows or tokens, generic)
            s = dense_memo.get(key)
            if s is None:
                s = dense(*key)
            reduce = 2 * (launch + parts * tokens * d * ITEM / bw) if shared else 0.0
            layer = s + reduce + max(att_f * keys / peak, kv * (cached + tokens) / bw) + launch
            return layers * layer

        return seconds

    def prefill_seconds(self, prompt: int, start: int = 0) -> float:
        """One sequence's prefill of positions ``start .. prompt - 1`` alone in an iteration."""
        n = prompt - start
        return self.seconds(n, causal_keys(start, n), start)

    def decode_seconds(self, context: int) -> float:
        """One sequence's decode step alone, with ``context`` tokens already cached."""
        return self.seconds(1, context + 1, context)


@functools.lru_cache(maxsize=32)
def _cost_model(model: Decoder, hw: Hardware, fusion: str, generic_slowdown: float) -> IterationCost:
    graph = layer_shard(model.d_model, model.d_ff, hw.cores)
    options = CompileOptions(fusion=fusion, generic_slowdown=generic_slowdown)
    kernels = fuse_ops(graph, fusion)
    mapping = Mapping(kernels, choose_layout(graph, kernels, {"batch": 1, "seq": TUNE_ROWS}, hw))
    singles = fuse_ops(graph, "none")
    generic = Mapping(singles, (GENERIC_TILING,) * len(singles), specialised=False)
    return IterationCost(model, hw, Plan(graph, hw, options, "seq", (), generic), mapping)


def causal_keys(start: int, n: int) -> float:
    """Sum over ``n`` new tokens at positions ``start .. start + n - 1`` of the keys each attends to (itself too)."""
    return n * start + n * (n + 1) / 2

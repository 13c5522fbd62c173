"""The time of one serving iteration: a roofline over the decoder's layers, from the transformer block's IR.

One iteration is one pass of every sequence in the batch through all ``layers`` blocks,
on the whole chip (``cores x peak`` FLOP/s, one shared HBM). Per block, two phases run
one after the other, each at ``max(FLOPs / peak, bytes / bandwidth)`` (the roofline):

- **linear** (QKV, output projection, MLP): ``2 x params`` FLOPs per token, token rows padded
  to the matrix unit (``mma_rows``); bytes = the block's weights, read once per iteration
  however many tokens share them, plus each token's activations in and out. This is why
  a decode iteration of a few sequences is memory-bound (weights dominate) and a prefill
  of hundreds of tokens is compute-bound: the ridge is ``peak / bandwidth`` FLOP per byte.
- **attention** over the KV cache: a query token at position ``p`` (causal) reads ``p`` keys
  and values: ``4 x d_model x p`` FLOPs; each sequence's cached K and V
  (``2 x d_model x 2`` bytes per token, bf16) are read once per iteration, and the new
  tokens' K and V written.

Launches: a fixed number of kernels per block, each ``launch_s``. The weights' parameter
counts and bytes come from :func:`workbench.models.transformer_block`'s graph, so the
serving model and the compiler describe the same block.
"""

from __future__ import annotations

from dataclasses import dataclass

from workbench.graph import DTYPE_BYTES, Op
from workbench.hardware import Hardware
from workbench.models import transformer_block
from workbench.serving.config import Decoder

KERNELS_PER_LAYER = 6  # qkv, attention, output projection, two MLP matmuls, the fused norms and adds


@dataclass(frozen=True)
class BlockFacts:
    """Per-block quantities of the decoder, read from the transformer block's graph."""

    weight_bytes: float  # bytes of every parameter of one block
    linear_flops_per_token: float  # FLOPs of the block's matmuls for one token
    act_bytes_per_token: float  # activations read and written per token (block input, output, residual)
    kv_bytes_per_token: float  # K and V of one token in one block (bytes)
    attn_flops_per_key: float  # FLOPs of one query token against one cached key (QK^T and PV)


def block_facts(model: Decoder) -> BlockFacts:
    """The per-block facts of ``model``, from the IR of one transformer block (bf16)."""
    g = transformer_block(model.d_model, model.heads, model.d_ff)
    one = {"batch": 1, "seq": 1}
    weights = sum(n.bytes(one) for n in g.nodes if n.op == Op.PARAM)
    linear = sum(n.flops(g, one) for n in g.nodes if n.op == Op.MATMUL)
    item = DTYPE_BYTES["bf16"]
    return BlockFacts(weight_bytes=float(weights), linear_flops_per_token=float(linear),
                      act_bytes_per_token=3.0 * model.d_model * item, kv_bytes_per_token=2.0 * model.d_model * item,
                      attn_flops_per_key=4.0 * model.d_model)


@dataclass(frozen=True)
class IterationCost:
    """Prices iterations of ``model`` on ``hw``: :meth:`seconds` for a batch's token counts and contexts."""

    model: Decoder
    hw: Hardware
    facts: BlockFacts

    @classmethod
    def of(cls, model: Decoder, hw: Hardware) -> IterationCost:
        """The cost model of ``model`` on ``hw``."""
        return cls(model, hw, block_facts(model))

    @property
    def weight_bytes(self) -> float:
        """Bytes of all the decoder's weights."""
        return self.facts.weight_bytes * self.model.layers

    def kv_bytes_per_token(self) -> float:
        """K and V of one token across all layers (bytes): what a KV block of ``block_size`` tokens holds per token."""
        return self.facts.kv_bytes_per_token * self.model.layers

    def phase_terms(self, tokens: int, keys: float, cached: float) -> tuple[float, float, float, float]:
        """Per layer, in s: (linear compute, linear memory, attention compute, attention memory) of one iteration.

        ``tokens`` new tokens (prefill chunks plus one per decode), ``keys`` the sum over new tokens of
        the keys each attends to, ``cached`` the tokens already in the KV cache that the batch's
        sequences read (each sequence's context before this iteration).
        """
        f, hw = self.facts, self.hw
        peak = hw.cores * hw.peak_flops_per_core
        bw = hw.hbm_bandwidth_bytes_per_s
        padded = -(-tokens // hw.mma_rows) * hw.mma_rows
        return (f.linear_flops_per_token * padded / peak, (f.weight_bytes + f.act_bytes_per_token * tokens) / bw,
                f.attn_flops_per_key * keys / peak, f.kv_bytes_per_token * (cached + tokens) / bw)

    def seconds(self, tokens: int, keys: float, cached: float) -> float:
        """One iteration (see :meth:`phase_terms`): each phase at the larger of its two terms, plus launches."""
        if tokens <= 0:
            return 0.0
        lc, lm, ac, am = self.phase_terms(tokens, keys, cached)
        return self.model.layers * (max(lc, lm) + max(ac, am) + KERNELS_PER_LAYER * self.hw.launch_s)

    def pricer(self):
        """:meth:`seconds` with its constants bound once (the loop calls it every iteration): equal bit for bit."""
        f, hw = self.facts, self.hw
        peak = hw.cores * hw.peak_flops_per_core
        bw = hw.hbm_bandwidth_bytes_per_s
        g = hw.mma_rows
        lin_f, w, act = f.linear_flops_per_token, f.weight_bytes, f.act_bytes_per_token
        att_f, kvb = f.attn_flops_per_key, f.kv_bytes_per_token
        layers, launches = self.model.layers, KERNELS_PER_LAYER * hw.launch_s

        def seconds(tokens: int, keys: float, cached: float) -> float:
            if tokens <= 0:
                return 0.0
            padded = -(-tokens // g) * g
            linear = max(lin_f * padded / peak, (w + act * tokens) / bw)
            attention = max(att_f * keys / peak, kvb * (cached + tokens) / bw)
            return layers * (linear + attention + launches)

        return seconds

    def prefill_seconds(self, prompt: int, start: int = 0) -> float:
        """One sequence's prefill of positions ``start .. prompt - 1`` alone in an iteration."""
        n = prompt - start
        return self.seconds(n, causal_keys(start, n), start)

    def decode_seconds(self, context: int) -> float:
        """One sequence's decode step alone, with ``context`` tokens already cached."""
        return self.seconds(1, context + 1, context)


def causal_keys(start: int, n: int) -> float:
    """Sum over ``n`` new tokens at positions ``start .. start + n - 1`` of the keys each attends to (itself too)."""
    return n * start + n * (n + 1) / 2

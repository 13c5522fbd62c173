"""What a token-level serving run is configured by: the scheduler, the paged KV cache, the decoder, the tenants.

Names follow the serving systems this models (vLLM's ``max_num_batched_tokens`` and
``max_num_seqs``, its block size, watermark and preemption modes). Every value is checked
on construction; a bad one raises :class:`~workbench.errors.ConfigError` naming the key,
the value and why.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from workbench.errors import check, check_one_of
from workbench.limits import PRIORITY, check_int_range, check_range

POLICIES = ("fcfs", "priority")
OUT_OF_ENVELOPE = ("fallback", "recompile")
BATCHING = ("continuous", "request")
PREEMPTION = ("recompute", "swap")


@dataclass(frozen=True)
class SchedulerConfig:
    """The iteration scheduler.

    ``batching``: ``continuous`` (iteration-level, the way Orca and vLLM schedule: finished
    sequences leave at once, new ones join the next iteration) or ``request`` (a batch of
    requests is formed when the chip is idle and runs until its longest output is done).
    ``chunked_prefill``: split a long prompt across iterations under the token budget, with
    running decodes scheduled first; without it a prefill iteration runs prompts only and
    every running decode waits for it.
    """

    max_num_batched_tokens: int = 2048  # tokens one iteration may process (prefill tokens + one per decode)
    max_num_seqs: int = 64  # sequences in one iteration
    policy: str = "fcfs"  # fcfs or priority (lower stream priority number first)
    batching: str = "continuous"
    chunked_prefill: bool = False

    def __post_init__(self) -> None:
        check_int_range("serving.max_num_batched_tokens", self.max_num_batched_tokens, 1, 1 << 22,
                        "tokens per iteration")
        check_int_range("serving.max_num_seqs", self.max_num_seqs, 1, 1 << 16, "sequences per iteration")
        check_one_of("serving.policy", self.policy, POLICIES)
        check_one_of("serving.batching", self.batching, BATCHING)
        check(isinstance(self.chunked_prefill, bool), "serving.chunked_prefill", self.chunked_prefill,
              "must be true or false")


@dataclass(frozen=True)
class KVConfig:
    """The paged KV cache in HBM: ``blocks`` blocks of ``block_size`` tokens each (``0``: as many as fit
    ``gpu_memory_utilization`` of HBM beside the weights and activations, resolved by the run).

    A new sequence is admitted only if, after its prompt's blocks are taken, at least
    ``watermark`` of all blocks stay free (head-room for running decodes). When a decode
    finds no free block, the latest-scheduled running sequence is preempted: ``recompute``
    drops its KV and redoes its prefill later; ``swap`` copies its KV to host memory over
    a link of ``swap_bandwidth_bytes_per_s`` and back when blocks free up.
    """

    block_size: int = 16  # tokens per block
    blocks: int = 4096  # 0 ("auto" in a scenario file): what fits gpu_memory_utilization of HBM
    watermark: float = 0.01  # share of blocks kept free when admitting a new sequence
    preemption: str = "recompute"
    swap_bandwidth_bytes_per_s: float = 32e9  # host link, each way (PCIe 4 x16 class; PCIe 5 x16 is ~64 GB/s)
    gpu_memory_utilization: float = 0.9  # share of HBM weights, activations and an "auto" cache may take (vLLM's)

    def __post_init__(self) -> None:
        check_int_range("serving.kv.block_size", self.block_size, 1, 4096, "tokens per block")
        check_int_range("serving.kv.blocks", self.blocks, 0, 1 << 26, 'KV blocks (0: "auto")')
        check_range("serving.kv.gpu_memory_utilization", self.gpu_memory_utilization, 0.05, 1.0)
        check_range("serving.kv.watermark", self.watermark, 0.0, 0.5)
        check_one_of("serving.kv.preemption", self.preemption, PREEMPTION)
        check_range("serving.kv.swap_bandwidth_bytes_per_s", self.swap_bandwidth_bytes_per_s, 1e6, 1e15, "bytes/s")

    @property
    def capacity_tokens(self) -> int:
        """Tokens the cache holds when every block is full."""
        return self.blocks * self.block_size

    def blocks_for(self, tokens: int) -> int:
        """Blocks a sequence of ``tokens`` tokens occupies."""
        return -(-tokens // self.block_size)


@dataclass(frozen=True)
class TokenBuckets:
    """The compiled plan of the decoder layer: its fusion level and the iteration sizes it specialised for
    (as vLLM captures CUDA graphs for chosen batch sizes).

    An iteration of ``T`` tokens runs the plan of the smallest bucket ``>= T``, paying its padded
    rows in compute. Past the largest bucket it meets ``out_of_envelope``: ``fallback`` runs the
    generic, unspecialised kernels (``generic_slowdown`` times the time), ``recompile`` pauses
    ``recompile_pause_s`` the first time a size is seen and adds a bucket at the next power of
    two, up to ``recompile_limit`` recompiles, then falls back. No buckets: every size is exact.
    """

    sizes: tuple[int, ...] = ()
    out_of_envelope: str = "fallback"
    generic_slowdown: float = 1.5
    recompile_pause_s: float = 0.25  # s
    recompile_limit: int = 8
    fusion: str = "elementwise"  # none | elementwise | aggressive: how the compiler fuses the layer's dense ops

    def __post_init__(self) -> None:
        check_one_of("serving.buckets.fusion", self.fusion, ("none", "elementwise", "aggressive"))
        check(all(isinstance(b, int) and not isinstance(b, bool) and 1 <= b <= 1 << 22 for b in self.sizes)
              and list(self.sizes) == sorted(set(self.sizes)), "serving.buckets.sizes", list(self.sizes),
              "must be increasing whole numbers of tokens in [1, 4,194,304]")
        check_one_of("serving.buckets.out_of_envelope", self.out_of_envelope, OUT_OF_ENVELOPE)
        check_range("serving.buckets.generic_slowdown", self.generic_slowdown, 1.0, 1000.0)
        check_range("serving.buckets.recompile_pause_s", self.recompile_pause_s, 0.0, 1e4, "s")
        check_int_range("serving.buckets.recompile_limit", self.recompile_limit, 0, 1024)


@dataclass(frozen=True)
class Decoder:
    """A decoder-only language model as its published config describes it (Hugging Face ``config.json``):
    ``layers`` (``num_hidden_layers``) pre-norm blocks of width ``d_model`` (``hidden_size``), ``heads``
    (``num_attention_heads``) query heads and ``kv_heads`` (``num_key_value_heads``; 0: as many as ``heads``,
    plain multi-head attention; fewer: grouped-query attention), an MLP of ``d_ff`` (``intermediate_size``),
    gated (SwiGLU, three d_model x d_ff matrices: Llama, Mistral) or not (GELU: GPT-2), and a vocabulary of
    ``vocab`` tokens (``vocab_size``; 0 leaves out the embedding lookup and the LM head)."""

    layers: int = 24
    d_model: int = 2048
    heads: int = 16
    d_ff: int = 8192
    kv_heads: int = 0  # 0: as many as heads
    gated_mlp: bool = False
    vocab: int = 0

    def __post_init__(self) -> None:
        check_int_range("serving.model.layers", self.layers, 1, 512)
        check_int_range("serving.model.d_model", self.d_model, 16, 65536)
        check_int_range("serving.model.heads", self.heads, 1, 1024)
        check_int_range("serving.model.d_ff", self.d_ff, 16, 262144)
        check_int_range("serving.model.kv_heads", self.kv_heads, 0, 1024)
        check_int_range("serving.model.vocab", self.vocab, 0, 1 << 22)
        check(isinstance(self.gated_mlp, bool), "serving.model.gated_mlp", self.gated_mlp, "must be true or false")
        check(self.d_model % self.heads == 0, "serving.model.heads", self.heads,
              f"must divide d_model ({self.d_model})")
        if self.kv_heads == 0:
            object.__setattr__(self, "kv_heads", self.heads)
        check(self.heads % self.kv_heads == 0, "serving.model.kv_heads", self.kv_heads,
              f"must divide heads ({self.heads}): each KV head serves a whole group of query heads")

    @property
    def head_dim(self) -> int:
        """Width of one attention head."""
        return self.d_model // self.heads

    @property
    def kv_width(self) -> int:
        """Width of K (and of V) per token in one layer: ``kv_heads x head_dim``."""
        return self.kv_heads * self.head_dim

    @property
    def parameters(self) -> int:
        """Weights of the whole model (norm gains left out): attention, MLP, embedding and LM head."""
        attention = self.d_model * (self.d_model + 2 * self.kv_width) + self.d_model * self.d_model
        mlp = (3 if self.gated_mlp else 2) * self.d_model * self.d_ff + (0 if self.gated_mlp else self.d_ff)
        return self.layers * (attention + mlp) + 2 * self.vocab * self.d_model


@dataclass(frozen=True)
class LengthLaw:
    """A token length: lognormal with this median and sigma, rounded, clipped to [1, ``max``].

    With ``drift_to``, the median moves linearly from ``median`` to ``drift_to`` between
    ``drift_start_s`` and ``drift_end_s`` of arrival time (a step when they are equal), as a
    stream's shapes drift in request mode.
    """

    median: float
    sigma: float = 0.0
    max: int = 4096
    drift_to: float | None = None  # the median after the drift (tokens)
    drift_start_s: float = 0.0
    drift_end_s: float = 0.0

    def __post_init__(self) -> None:
        check_range("median", self.median, 1.0, 1e6, "tokens")
        check_range("sigma", self.sigma, 0.0, 4.0)
        check_int_range("max", self.max, 1, 1 << 20, "tokens")
        check(self.max >= math.floor(self.median), "max", self.max, f"must be >= the median ({self.median})")
        if self.drift_to is not None:
            check_range("drift_to", self.drift_to, 1.0, 1e6, "tokens")
            check(self.max >= math.floor(self.drift_to), "max", self.max, f"must be >= drift_to ({self.drift_to})")
            check_range("drift_start_s", self.drift_start_s, 0.0, 1e9, "s")
            check_range("drift_end_s", self.drift_end_s, 0.0, 1e9, "s")
            check(self.drift_end_s >= self.drift_start_s, "drift_end_s", self.drift_end_s, "must be >= drift_start_s")

    def median_at(self, t_s):
        """The median at arrival times ``t_s`` (s): the base, the drifted value, or linearly between."""
        import numpy as np

        t = np.asarray(t_s, dtype=float)
        if self.drift_to is None:
            return np.full(t.shape, self.median)
        if self.drift_end_s == self.drift_start_s:
            share = (t >= self.drift_start_s).astype(float)
        else:
            share = np.clip((t - self.drift_start_s) / (self.drift_end_s - self.drift_start_s), 0.0, 1.0)
        return self.median + share * (self.drift_to - self.median)


@dataclass(frozen=True)
class Surge:
    """A bounded traffic surge: every tenant's arrival rate times ``factor`` from ``start_s`` to ``end_s`` (s of
    arrival time), as normal before and after. ``factor = 1``: no surge."""

    factor: float = 1.0
    start_s: float = 0.0
    end_s: float = 0.0

    def __post_init__(self) -> None:
        check_range("serving.surge.factor", self.factor, 1.0, 1000.0)
        check_range("serving.surge.start_s", self.start_s, 0.0, 1e9, "s")
        check_range("serving.surge.end_s", self.end_s, 0.0, 1e9, "s")
        check(self.end_s >= self.start_s, "serving.surge.end_s", self.end_s, "must be >= start_s")

    @property
    def active(self) -> bool:
        """Whether there is a surge at all."""
        return self.factor > 1.0 and self.end_s > self.start_s

    def warp(self, base_s: np.ndarray) -> np.ndarray:
        """Arrival times of a Poisson stream of the normal rate (``base_s``) moved onto the surged clock: the
        stream's cumulative intensity is inverted, so ``factor`` times as many arrivals fall in the window."""
        if not self.active:
            return base_s
        span = self.end_s - self.start_s
        inside = self.start_s + (base_s - self.start_s) / self.factor
        after = base_s - (self.factor - 1.0) * span
        return np.where(base_s <= self.start_s, base_s,
                        np.where(base_s <= self.start_s + self.factor * span, inside, after))


@dataclass(frozen=True)
class Tenant:
    """A stream of generation requests: Poisson arrivals, prompt and output lengths, a priority, and how well a
    speculative draft model predicts its text (``acceptance``: the probability that the target model accepts
    each draft token; only read when speculative decoding is on)."""

    name: str
    rate: float  # requests/s
    prompt: LengthLaw
    output: LengthLaw
    priority: int = 0  # lower runs first under the priority policy
    acceptance: float = 0.8  # probability the target accepts each draft token (what a distribution shift moves)

    def __post_init__(self) -> None:
        check_range(f"serving.tenants.{self.name}.rate", self.rate, 1e-6, 1e7, "requests/s")
        check_int_range(f"serving.tenants.{self.name}.priority", self.priority, *PRIORITY)  # as request mode's
        check_range(f"serving.tenants.{self.name}.acceptance", self.acceptance, 0.0, 1.0, "(a probability)")


@dataclass(frozen=True)
class Parallel:
    """Tensor parallelism over GPUs (Megatron-LM's split, as vLLM's ``tensor_parallel_size``): one replica's
    layers split over ``tensor`` GPUs that all-reduce their partial sums over a link.

    ``link_bytes_per_s`` is the NCCL ring all-reduce *bus* bandwidth of the slowest link in the ring (what
    nccl-tests reports as busbw): about 370 GB/s on H100 NVLink4, ~20 % protocol overhead under the 450 GB/s
    line rate (NCCL's maintainer, NVIDIA/nccl-tests issue 212); about 20 GB/s when the ring falls back to PCIe
    through the host (nccl-tests issue 178). ``link_latency_s`` is the time of one ring step.
    """

    tensor: int = 1  # GPUs one replica's layers are split over
    link_bytes_per_s: float = 370e9  # bytes/s: ring all-reduce bus bandwidth (NVLink4 on H100)
    link_latency_s: float = 1.5e-6  # s per ring step

    def __post_init__(self) -> None:
        check_int_range("serving.parallel.tensor", self.tensor, 1, 64, "GPUs per replica")
        check_range("serving.parallel.link_bytes_per_s", self.link_bytes_per_s, 1e6, 1e15, "bytes/s")
        check_range("serving.parallel.link_latency_s", self.link_latency_s, 0.0, 1e-2, "s")

    def allreduce_seconds(self, nbytes: float) -> float:
        """One ring all-reduce of ``nbytes`` bytes over ``tensor`` GPUs (s): ``2 (N-1)/N x bytes / bus bandwidth
        + 2 (N-1) x step latency`` (a reduce-scatter and an all-gather of ``N - 1`` steps each); 0 for one GPU."""
        n = self.tensor
        if n == 1:
            return 0.0
        return 2.0 * (n - 1) / n * nbytes / self.link_bytes_per_s + 2 * (n - 1) * self.link_latency_s


DRAFT = Decoder(layers=8, d_model=2048, heads=32, d_ff=8192, kv_heads=8, gated_mlp=True, vocab=128256)


@dataclass(frozen=True)
class Speculative:
    """Speculative decoding with a draft model (Leviathan et al., ICML 2023; vLLM's ``num_speculative_tokens``).

    Every decode step of a speculating sequence, the ``draft`` model proposes ``tokens`` (k) tokens, one
    after another, and the target verifies them and one more position in one pass; the tokens up to the
    first rejection are kept, plus the target's own next token. ``tokens = 0``: off. ``min_acceptance``: an
    adaptive runtime guard; a sequence whose observed acceptance over its last ``warmup`` proposals falls
    below it stops speculating (0: never).
    """

    tokens: int = 0  # k: draft tokens proposed per decode step (0: off)
    draft: Decoder = DRAFT  # the draft model (must share the target's vocabulary)
    min_acceptance: float = 0.0  # stop speculating for a sequence whose observed acceptance falls below this
    warmup: int = 8  # proposals a sequence makes before the guard judges it (and the window it judges)

    def __post_init__(self) -> None:
        check_int_range("serving.speculative.tokens", self.tokens, 0, 16, "draft tokens per step")
        check(isinstance(self.draft, Decoder), "serving.speculative.draft", self.draft, "must be a model table")
        check_range("serving.speculative.min_acceptance", self.min_acceptance, 0.0, 1.0, "(a probability)")
        check_int_range("serving.speculative.warmup", self.warmup, 1, 100_000, "proposals")

    @property
    def on(self) -> bool:
        """Whether any sequence speculates."""
        return self.tokens > 0

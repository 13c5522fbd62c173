"""A token-level serving run: what it is (:class:`ServingRun`), and the checks that refuse one before it starts.

A run is refused when its trace would not fit memory (:func:`check_memory`), when the model cannot be split or
speculated as asked (:func:`check_parallel`, :func:`check_speculative`), or when it could never finish or never
fit HBM (:func:`check_run`); ``blocks = "auto"`` sizes the KV cache as vLLM does (:func:`auto_blocks`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from workbench.errors import ConfigError, check, check_one_of
from workbench.hardware import Hardware
from workbench.limits import (
    GIB,
    MAX_TOKEN_REQUESTS,
    SEED,
    TOKEN_BYTES_PER_REQUEST,
    TOKEN_BYTES_PER_STEP,
    TOKEN_RUN_BYTES,
    check_int_range,
    token_run_bytes,
)
from workbench.serving.config import (
    Decoder,
    KVConfig,
    Parallel,
    SchedulerConfig,
    Speculative,
    Surge,
    Tenant,
    TokenBuckets,
)
from workbench.serving.cost import ITEM, IterationCost, kv_bytes_per_token
from workbench.serving.efficiency import LAWS
from workbench.serving.workload import draw


@dataclass(frozen=True)
class ServingRun:
    """Everything a token-level run needs."""

    tenants: tuple[Tenant, ...]
    requests: int = 2000
    seed: int = 1
    scheduler: SchedulerConfig = SchedulerConfig()
    kv: KVConfig = KVConfig()
    model: Decoder = Decoder()
    hardware: Hardware = Hardware()
    buckets: TokenBuckets = TokenBuckets()
    efficiency: str = "fitted"  # fitted: kernels at the measured share of peak (serving.efficiency); ideal: roofline
    cuda_graphs: bool = True  # iterations of at most 512 tokens replay a captured graph (one launch per iteration)
    surge: Surge = Surge()  # a bounded window in which every tenant's rate is multiplied
    parallel: Parallel = Parallel()  # tensor parallelism over GPUs (tensor = 1: one GPU, no link)
    speculative: Speculative = Speculative()  # speculative decoding with a draft model (tokens = 0: off)

    def __post_init__(self) -> None:
        check_int_range("requests", self.requests, 1, MAX_TOKEN_REQUESTS, "a run's token columns stay in memory")
        check_int_range("seed", self.seed, *SEED)  # as request mode (workbench.config.Scenario)
        check_memory(self)
        check_one_of("serving.efficiency", self.efficiency, tuple(LAWS))
        check(isinstance(self.cuda_graphs, bool), "serving.cuda_graphs", self.cuda_graphs, "must be true or false")
        check_parallel(self.model, self.parallel)
        check_speculative(self)
        if self.kv.blocks == 0:  # "auto": what fits beside the weights and activations
            object.__setattr__(self, "kv", dataclasses.replace(self.kv, blocks=auto_blocks(self)))



def check_parallel(model: Decoder, parallel: Parallel) -> None:
    """Refuse a split the model cannot take: every GPU runs whole query heads, and whole KV heads (or one KV head
    replicated, when there are more GPUs than KV heads), as vLLM requires."""
    t = parallel.tensor
    check(model.heads % t == 0, "serving.parallel.tensor", t,
          f"must divide the model's query heads ({model.heads}): each GPU runs whole heads")
    check(model.kv_heads % t == 0 or t % model.kv_heads == 0, "serving.parallel.tensor", t,
          f"must divide the model's KV heads ({model.kv_heads}) or be a multiple of them (each GPU holds whole "
          "KV heads, one replicated past that)")


def check_speculative(run: ServingRun) -> None:
    """Refuse speculation the run cannot do: a draft of another vocabulary, or request-level batching."""
    spec = run.speculative
    if not spec.on:
        return
    check(spec.draft.vocab == run.model.vocab, "serving.speculative.draft.vocab", spec.draft.vocab,
          f"must be the target's vocabulary ({run.model.vocab}): the target verifies the draft's tokens")
    check(run.scheduler.batching == "continuous", "serving.speculative.tokens", spec.tokens,
          "speculative decoding needs continuous batching (request-level batching reserves whole outputs)")


def activation_bytes(run: ServingRun) -> float:
    """Peak activation memory of one iteration on one GPU (bytes), as vLLM profiles it with a dummy forward pass
    at the token budget: every token's widest live rows of one layer (the residual stream, the GPU's share of QKV
    and of the MLP's hidden rows, gate and up side by side when gated) and the fp32 logits of every sequence."""
    m, cfg, t = run.model, run.scheduler, run.parallel.tensor
    hidden = -(-((2 if m.gated_mlp else 1) * m.d_ff + m.d_ff) // t)
    rows = 2 * m.d_model + -(-(m.d_model + 2 * m.kv_width) // t) + hidden
    return float(cfg.max_num_batched_tokens * rows * ITEM + cfg.max_num_seqs * m.vocab * 4)


def draft_weight_bytes(run: ServingRun) -> float:
    """Bytes of the speculative draft model's weights (0 without speculation): unsplit, on every GPU."""
    return float(run.speculative.draft.parameters * ITEM) if run.speculative.on else 0.0


def kv_budget_bytes(run: ServingRun, share: float = 1.0) -> float:
    """HBM left for the KV cache on one GPU: ``share`` of the capacity minus the weights (the draft's too) and the
    peak activations."""
    cost = IterationCost.of_run(run)
    return (run.hardware.hbm_capacity_bytes * share - cost.weight_bytes - activation_bytes(run)
            - draft_weight_bytes(run))


def auto_blocks(run: ServingRun) -> int:
    """KV blocks that fit ``gpu_memory_utilization`` of HBM beside the weights and activations (vLLM's sizing)."""
    block = run.kv.block_size * kv_bytes_per_token_of(run)
    budget = kv_budget_bytes(run, run.kv.gpu_memory_utilization)
    if budget < block:
        raise ConfigError("serving.kv.blocks", "auto",
                          f"no room for a KV block: {run.kv.gpu_memory_utilization:.0%} of "
                          f"{run.hardware.hbm_capacity_bytes / 2**30:.1f} GiB of HBM holds less than the weights "
                          f"({IterationCost.of_run(run).weight_bytes / 2**30:.2f} GiB) and the activations "
                          f"({activation_bytes(run) / 2**30:.2f} GiB) plus one block")
    return min(int(budget // block), 1 << 26)


def kv_bytes_per_token_of(run: ServingRun) -> float:
    """K and V of one token across all layers of the run's model on one GPU (bytes), and of the draft model's
    when speculating (a block holds both caches' rows for its tokens)."""
    own = IterationCost.of_run(run).kv_bytes_per_token()
    return own + kv_bytes_per_token(run.speculative.draft) if run.speculative.on else own


def check_run(run: ServingRun) -> None:
    """Refuse a run that could never finish (a sequence the KV cache or the token budget can never hold) or
    never fit (a KV cache bigger than HBM leaves beside the weights and activations)."""
    kv, cfg = run.kv, run.scheduler
    cache = kv.blocks * kv.block_size * kv_bytes_per_token_of(run)
    room = kv_budget_bytes(run)
    if cache > room:
        cost = IterationCost.of_run(run)
        raise ConfigError("serving.kv.blocks", kv.blocks,
                          f"{kv.blocks:,} blocks of {kv.block_size} tokens need {cache / 2**30:.2f} GiB, but "
                          f"{run.hardware.hbm_capacity_bytes / 2**30:.1f} GiB of HBM holds "
                          f"{max(room, 0) / 2**30:.2f} GiB beside the weights ({cost.weight_bytes / 2**30:.2f} GiB) "
                          f"and the activations ({activation_bytes(run) / 2**30:.2f} GiB); use fewer or "
                          'blocks = "auto"')
    longest = max(t.prompt.max + t.output.max for t in run.tenants)
    room = kv.blocks - int(kv.watermark * kv.blocks)
    ahead = run.speculative.tokens  # a speculating decode reserves k + 1 slots past its cached tokens
    if kv.blocks_for(longest + ahead) > room:
        raise ConfigError("serving.kv.blocks", kv.blocks,
                          f"a sequence of up to {longest + ahead:,} tokens (longest prompt + output"
                          f"{' + draft lookahead' if ahead else ''}) needs {kv.blocks_for(longest + ahead):,} "
                          f"blocks of {kv.block_size}, more than the {room:,} the cache can give one sequence")
    prompt = max(t.prompt.max for t in run.tenants)
    if not cfg.chunked_prefill and prompt > cfg.max_num_batched_tokens:
        raise ConfigError("serving.max_num_batched_tokens", cfg.max_num_batched_tokens,
                          f"a prompt of up to {prompt:,} tokens must fit one iteration without chunked prefill")
    if not cfg.chunked_prefill and cfg.batching == "continuous" and longest - 1 > cfg.max_num_batched_tokens:
        # as vLLM asks max_num_batched_tokens >= max_model_len without chunked prefill: a preempted
        # sequence is prefilled again as one prompt of everything it holds
        raise ConfigError("serving.max_num_batched_tokens", cfg.max_num_batched_tokens,
                          f"without chunked prefill it must hold the longest sequence ({longest - 1:,} tokens of "
                          "prompt and output, prefilled again after a preemption); raise it or chunk prefills")


def worst_steps(run: ServingRun) -> int:
    """The most steps (:data:`workbench.limits.TOKEN_BYTES_PER_STEP`) the run can take, from its laws' maxima alone:
    every request of the longest output and the longest prompt (in chunks of ``max_num_batched_tokens``)."""
    budget = run.scheduler.max_num_batched_tokens
    return run.requests * max(t.output.max + t.prompt.max // budget for t in run.tenants)


def drawn_counts(run: ServingRun) -> tuple[int, int]:
    """The run's output tokens and prefill chunks from its drawn workload (request lengths only: nothing per token
    is allocated): its prompt tokens in chunks of ``max_num_batched_tokens`` are what iterations that emit
    nothing can prefill, preemptions aside."""
    req = draw(run.tenants, run.requests, run.seed, run.surge)
    return int(req.output.sum()), int(req.prompt.sum()) // run.scheduler.max_num_batched_tokens


def drawn_steps(run: ServingRun) -> int:
    """The run's steps (:data:`workbench.limits.TOKEN_BYTES_PER_STEP`) from its drawn workload."""
    return sum(drawn_counts(run))


def check_memory(run: ServingRun) -> None:
    """Refuse, before anything per token is allocated, a run whose trace would not fit ``TOKEN_RUN_BYTES``.

    Why a cap and not streamed summaries: both loops write every output token's emission time into one
    column (the compiled kernel takes it as an argument), the ITL percentiles are exact over every gap, and
    the iteration rows feed the summary, the Chrome trace and the plots; streaming them would change the kernel
    and every reader of a trace, and a sketch the figures of every normal run. So a run keeps its exact
    columns, and the memory they need is bounded up front (:func:`workbench.limits.token_run_bytes`). The bound
    from the laws' maxima (:func:`worst_steps`) decides at no cost; a run it would refuse has its lengths drawn
    (:func:`drawn_steps`: O(requests), prefix-stable and seeded, so the decision is the same every time) and the
    exact count decides, so a long-tailed law clipped far above its median is not refused for tokens it never
    draws. Requests too many even at one token each are refused without drawing.
    """
    n = run.requests
    if token_run_bytes(n, worst_steps(run)) <= TOKEN_RUN_BYTES:
        return
    cap = f"a token run may take at most {TOKEN_RUN_BYTES / GIB:g} GiB ({TOKEN_BYTES_PER_REQUEST} bytes per " \
          f"request and {TOKEN_BYTES_PER_STEP} per output token or prefill chunk: each token's time and, at worst, " \
          "an iteration row of its own)"
    if token_run_bytes(n, n) > TOKEN_RUN_BYTES:
        raise ConfigError("requests", n, f"{n:,} requests of at least one output token each need at least "
                          f"{token_run_bytes(n, n) / GIB:,.2f} GiB, but {cap}")
    (out, chunks), budget = drawn_counts(run), run.scheduler.max_num_batched_tokens
    need = token_run_bytes(n, out + chunks)
    if need > TOKEN_RUN_BYTES:
        raise ConfigError("requests", n, f"{n:,} requests draw {out:,} output tokens"
                          + (f" and {chunks:,} prefill chunks of {budget:,} tokens" if chunks else "")
                          + f", up to {need / GIB:,.2f} GiB, but {cap}; use fewer requests or shorter outputs")

"""The token-level serving loop: iterations, one after another, each priced by the roofline.

Time advances iteration by iteration (an iteration is one forward pass of a batch of
sequences). Before each, arrivals up to the current time join the waiting queue and the
scheduler builds the batch; the iteration lasts :meth:`IterationCost.seconds` of its
token counts, plus any KV swap traffic over the host link. When nothing can run, time
jumps to the next arrival. The trace keeps every request's first-token and finish
times, every token's emission time, and one row per iteration.

Two features run in this loop only (the compiled loop refuses them; ``loop="auto"`` picks this one):
tensor parallelism over GPUs (``[serving.parallel]``: priced by :class:`IterationCost`, the all-reduces
over the link kept per iteration) and speculative decoding (``[serving.speculative]``:
:mod:`workbench.serving.speculative`).
"""

from __future__ import annotations

import dataclasses
from array import array
from dataclasses import dataclass

import numpy as np

from workbench import aot
from workbench.errors import ConfigError, check, check_one_of
from workbench.hardware import Hardware
from workbench.limits import MAX_TOKEN_REQUESTS, SEED, check_int_range
from workbench.serving.buckets import BucketState
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
from workbench.serving.cost import ITEM, IterationCost, causal_keys, kv_bytes_per_token
from workbench.serving.efficiency import LAWS
from workbench.serving.scheduler import scheduler_for
from workbench.serving.speculative import Speculator
from workbench.serving.state import ServingState
from workbench.serving.workload import TokenRequests, check_memory, draw


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


@dataclass(frozen=True)
class ServingTrace:
    """A finished run. Times in seconds from the start."""

    run: ServingRun
    requests: TokenRequests
    first_token_s: np.ndarray  # per request
    finish_s: np.ndarray  # per request
    preemptions: np.ndarray  # per request
    token_offset: np.ndarray  # request i's tokens are token_s[token_offset[i]:token_offset[i + 1]]
    token_s: np.ndarray  # emission time of every output token
    it_start_s: np.ndarray  # per iteration
    it_end_s: np.ndarray
    it_prefill_tokens: np.ndarray  # prompt tokens processed (chunks included)
    it_decodes: np.ndarray  # decode steps (one token each)
    it_seqs: np.ndarray  # sequences in the iteration
    it_running: np.ndarray  # sequences holding KV on the chip during it (some may wait out a prefill iteration)
    it_blocks_used: np.ndarray  # KV blocks held at the end of the iteration
    it_preemptions: np.ndarray  # sequences preempted while building it
    it_swap_s: np.ndarray  # host-link time for swaps in it
    admit_s: np.ndarray  # per request: when it was first admitted to the chip
    it_pause_s: np.ndarray  # per iteration: recompile pause before it ran
    buckets: dict  # iterations by plan outcome (exact, padded, fallback), padding share, recompiles
    it_link_s: np.ndarray  # per iteration: all-reduces over the link between GPUs (s; 0 on one GPU)
    it_draft_s: np.ndarray  # per iteration: the draft model's steps (s; 0 without speculation)
    it_spec: np.ndarray  # per iteration: speculating decode steps (among it_decodes)
    it_decode_tokens: np.ndarray  # per iteration: tokens the decode steps emitted (it_decodes without speculation)
    spec_proposed: np.ndarray  # per request: draft tokens proposed
    spec_accepted: np.ndarray  # per request: draft tokens accepted
    spec_judged: np.ndarray  # per request: draft tokens judged (up to and including the first rejection)
    spec_stopped: np.ndarray  # per request: the acceptance guard stopped its speculation (bool)


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


LOOPS = ("auto", "compiled", "aot", "jit", "python")  # aot, jit: the compiled loop from that build


def simulate_tokens(run: ServingRun, loop: str = "auto") -> ServingTrace:
    """Run ``run`` to the last token of every request (deterministic for its seed).

    ``loop``: ``python`` runs the readable loop below (the reference); ``compiled`` (and ``auto``
    where it can run: built ahead of time, or numba installed) the same loop compiled
    (:mod:`workbench.serving.compiled`), equal bit for bit; ``aot`` and ``jit`` the compiled
    loop from that build (:func:`workbench.aot.kernel`). A run with tensor parallelism over GPUs or
    speculative decoding (:func:`python_only`) runs the readable loop under ``auto``; the compiled
    loops refuse it with a ``ValueError``.
    """
    check_run(run)
    if loop not in LOOPS:
        raise ValueError(f"loop must be one of {LOOPS}, not {loop!r}")
    only = python_only(run)
    if only and loop in ("compiled", "aot", "jit"):
        raise ValueError(f"the compiled loop does not implement {' or '.join(only)}: run this with "
                         "loop='python' (or 'auto', which picks it)")
    if loop in ("compiled", "aot", "jit") or (loop == "auto" and aot.available() and not only):
        from workbench.serving.compiled import simulate_compiled

        return simulate_compiled(run, loop if loop in ("aot", "jit") else "auto")
    return _simulate_python(run)


def python_only(run: ServingRun) -> list[str]:
    """The features of ``run`` only the readable loop implements (none: the compiled loop can run it)."""
    return ((["tensor parallelism over GPUs ([serving.parallel] tensor > 1)"] if run.parallel.tensor > 1 else [])
            + (["speculative decoding ([serving.speculative] tokens > 0)"] if run.speculative.on else []))


def _simulate_python(run: ServingRun) -> ServingTrace:
    """The readable loop: iterations one after another, the scheduler's batch, its price, its tokens."""
    req = draw(run.tenants, run.requests, run.seed, run.surge)
    cost = IterationCost.of_run(run)
    state = ServingState(req, run.kv, run.scheduler.policy, kv_bytes_per_token_of(run))
    sched = scheduler_for(run.scheduler)
    spec = Speculator(run, state, req.tenant) if run.speculative.on else None
    swap_bw = run.kv.swap_bandwidth_bytes_per_s
    arrival = state.arrival
    rows = array("d")  # the iteration rows, flat: 8 bytes a value (a list of tuples takes ~4x that)
    price, record, decoded, prefilled, link = cost.pricer(), rows.extend, state.decoded, state.prefilled, \
        cost.link_seconds
    plan = BucketState(run.buckets)
    place = plan.place
    cached_of = state.cached.__getitem__
    t, nxt, n = 0.0, 0, state.n
    while state.done < n:
        while nxt < n and arrival[nxt] <= t:
            state.arrive(nxt)
            nxt += 1
        if not (state.running or state.waiting or state.swapped):
            t = arrival[nxt]
            continue
        state.preempted_now, state.swap_bytes, state.now = [], 0.0, t
        batch = sched.step(state)
        if not batch:
            if nxt >= n:
                raise RuntimeError("serving loop: nothing can run and nothing will arrive")
            t = max(t, arrival[nxt])
            continue
        decodes, prefills, speculating = batch.decodes, batch.prefills, batch.spec
        ctx = sum(map(cached_of, decodes))  # a decode attends to its context and itself
        tokens, keys, prefill = len(decodes), float(ctx + len(decodes)), 0
        for i, k in prefills:
            start = cached_of(i)
            prefill += k
            keys += causal_keys(start, k)
            ctx += start
        heads, draft_s = len(decodes) + len(prefills), 0.0  # the LM head runs on every position that yields a token
        if speculating:  # the draft's k steps, then k + 1 positions per sequence verified with the rest
            verify, verify_keys, verify_ctx, draft_s = spec.price(state.cached, speculating)
            tokens, keys, ctx, heads = tokens + verify, keys + verify_keys, ctx + verify_ctx, heads + verify
        swap_s = state.swap_bytes / swap_bw
        running = len(state.running)
        rows_priced, generic, pause = place(tokens + prefill)
        t_end = t + pause + draft_s + price(tokens + prefill, keys, float(ctx), rows_priced, generic, heads) + swap_s
        for i, k in prefills:
            prefilled(i, k, t_end)
        decoded(decodes, t_end)
        emitted = len(decodes) + (spec.emit(state, speculating, t_end) if speculating else 0)
        used = state.pool.used
        assert 0 <= used <= state.pool.total
        steps = len(decodes) + len(speculating)
        record((t, t_end, prefill, steps, steps + len(prefills), running, used, len(state.preempted_now), swap_s,
                pause, link(tokens + prefill), draft_s, len(speculating), emitted))
        t = t_end
    it = np.frombuffer(rows, dtype=float).reshape(-1, len(ITERATION_COLUMNS))  # no copy
    k = run.speculative.tokens
    return assemble(run, req, np.array(state.first_s), np.array(state.finish_s),
                    np.array(state.preemptions, dtype=np.int32), np.array(state.offset, dtype=np.int64),
                    np.frombuffer(state.token_s, dtype=float), it, np.array(state.admit_s),
                    plan.summary(len(it), int(it[:, 2].sum() + it[:, 3].sum()) + k * int(it[:, 12].sum())),
                    spec.columns() if spec else None)


# an iteration row: the first ten are what the compiled loop records too
ITERATION_COLUMNS = ("start_s", "end_s", "prefill_tokens", "decodes", "seqs", "running", "blocks_used",
                     "preemptions", "swap_s", "pause_s", "link_s", "draft_s", "spec", "decode_tokens")


def assemble(run: ServingRun, req: TokenRequests, first_s: np.ndarray, finish_s: np.ndarray,
             preemptions: np.ndarray, offset: np.ndarray, token_s: np.ndarray, it: np.ndarray,
             admit_s: np.ndarray, buckets: dict, spec: dict | None = None) -> ServingTrace:
    """The trace of a finished run from its per-request columns and its iteration rows (:data:`ITERATION_COLUMNS`;
    a row of the first ten, as the compiled loop records it, has no link, draft or speculation: its decodes
    emitted one token each), and the per-request speculation counts ``spec`` (none: zeros)."""
    m = len(it)
    decodes = it[:, 3].astype(np.int64)
    if it.shape[1] < len(ITERATION_COLUMNS):  # no copy of the rows: zero columns (their pages untouched until read)
        zeros = np.zeros(m)
        it_link_s, it_draft_s, it_spec, decode_tokens = zeros, zeros, np.zeros(m, np.int64), decodes
    else:
        it_link_s, it_draft_s, it_spec, decode_tokens = it[:, 10], it[:, 11], it[:, 12].astype(np.int64), \
            it[:, 13].astype(np.int64)
    n = len(first_s)
    spec = spec or {"spec_proposed": np.zeros(n, np.int64), "spec_accepted": np.zeros(n, np.int64),
                    "spec_judged": np.zeros(n, np.int64), "spec_stopped": np.zeros(n, bool)}
    return ServingTrace(
        run=run, requests=req, first_token_s=first_s, finish_s=finish_s, preemptions=preemptions,
        token_offset=offset, token_s=token_s,
        it_start_s=it[:, 0], it_end_s=it[:, 1], it_prefill_tokens=it[:, 2].astype(np.int64),
        it_decodes=decodes, it_seqs=it[:, 4].astype(np.int64),
        it_running=it[:, 5].astype(np.int64), it_blocks_used=it[:, 6].astype(np.int64),
        it_preemptions=it[:, 7].astype(np.int64), it_swap_s=it[:, 8], admit_s=admit_s,
        it_pause_s=it[:, 9], buckets=buckets, it_link_s=it_link_s, it_draft_s=it_draft_s, it_spec=it_spec,
        it_decode_tokens=decode_tokens, **spec)

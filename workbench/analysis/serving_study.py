"""The numbers chapter 08 reasons with, computed from the serving model (so the chapter owns no logic).

- :func:`phase_costs`: one iteration's time for a decode batch or a prompt, split into the
  roofline's compute and memory terms, and the batch at which decode stops being memory-bound.
- :func:`kv_bytes`: what the paged KV cache holds per token, per block and in all.
- :func:`swap_vs_recompute`: the two ways back for a preempted sequence, in seconds.
- :func:`variant`: a built-in token scenario with some knobs changed, run and summarised.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from workbench.serving.config import Decoder
from workbench.serving.cost import IterationCost, kv_bytes_per_token
from workbench.serving.engine import ServingTrace, simulate_tokens
from workbench.serving.metrics import summarize_tokens


def linear_terms(cost: IterationCost, tokens: int) -> tuple[float, float]:
    """(compute s, memory s) of the compiled dense kernels of one iteration of ``tokens`` tokens, over all layers.

    Compute: each kernel's FLOPs on one core (the cores work on their shards in parallel); memory:
    each kernel's HBM bytes times the cores that move theirs at once, over the shared bandwidth.
    """
    ks = cost.kernels(tokens)
    n = cost.hw.cores
    return (cost.model.layers * sum(k.compute_s for k in ks), cost.model.layers * sum(n * k.memory_s for k in ks))


def weight_ridge_batch(cost: IterationCost) -> int:
    """The decode batch at the chip's ridge point from the weights alone: a bf16 weight does 2 FLOPs per token
    for its 2 bytes, so a batch of ``T`` tokens does ``T`` FLOP per byte, compute-bound from ``peak / bandwidth``."""
    hw = cost.hw
    return math.ceil(hw.cores * hw.peak_flops_per_core / hw.hbm_bandwidth_bytes_per_s)


def decode_ridge_batch(cost: IterationCost, limit: int = 1 << 14) -> int:
    """The smallest decode batch whose compiled dense kernels are compute-bound (compute time >= HBM time).

    Later than :func:`weight_ridge_batch`: the kernels also move activations, and the row-split
    projections write full-width partial sums, which the weights-only intensity leaves out."""
    for b in range(1, limit + 1):
        c, m = linear_terms(cost, b)
        if c >= m:
            return b
    return limit


def phase_costs(cost: IterationCost, batches: tuple[int, ...] = (1, 8, 32, 64, 128, 256),
                context: int = 500, prompt: int = 1000) -> dict[str, Any]:
    """Decode iterations of ``batches`` sequences at ``context`` tokens each, and one prompt's prefill."""
    decode = []
    for b in batches:
        s = cost.seconds(b, b * (context + 1.0), b * float(context))
        c, m = linear_terms(cost, b)
        kv_read = cost.model.layers * cost.attention_terms(b, b * (context + 1.0), b * float(context))[1]
        decode.append({"batch": b, "iteration_s": s, "per_token_s": s / b, "linear_compute_s": c,
                       "linear_memory_s": m, "kv_read_s": kv_read})
    c, m = linear_terms(cost, prompt)
    return {"decode": decode, "ridge_batch": decode_ridge_batch(cost),
            "prefill": {"tokens": prompt, "seconds": cost.prefill_seconds(prompt), "linear_compute_s": c,
                        "linear_memory_s": m},
            "ridge_flop_per_byte": cost.hw.cores * cost.hw.peak_flops_per_core / cost.hw.hbm_bandwidth_bytes_per_s}


def kv_bytes(model: Decoder, block_size: int, blocks: int) -> dict[str, float]:
    """Bytes of K and V per token (all layers), per block and for the whole cache."""
    per_token = kv_bytes_per_token(model)
    return {"per_token": per_token, "per_block": per_token * block_size, "cache": per_token * block_size * blocks,
            "cache_tokens": float(block_size * blocks)}


def swap_vs_recompute(cost: IterationCost, tokens: int, link_bytes_per_s: float) -> dict[str, float]:
    """A preempted sequence of ``tokens`` cached tokens: swap out and back in over the host link, or recompute."""
    size = cost.kv_bytes_per_token() * tokens
    return {"bytes": size, "swap_s": 2 * size / link_bytes_per_s, "recompute_s": cost.prefill_seconds(tokens)}


def variant(name: str, requests: int | None = None, **changes: Any) -> tuple[ServingTrace, dict]:
    """Built-in token scenario ``name`` with ``changes`` (keys of the scheduler, the KV config, ``load`` as a
    factor on every tenant's rate, ``output_sigma``), run and summarised: (trace, summary)."""
    from workbench.scenario import load_scenario

    sc = load_scenario(name)
    run = sc.run
    sched = {k: changes.pop(k) for k in list(changes) if k in run.scheduler.__dataclass_fields__}
    kv = {k: changes.pop(k) for k in list(changes) if k in run.kv.__dataclass_fields__}
    load, sigma = changes.pop("load", 1.0), changes.pop("output_sigma", None)
    if changes:
        raise KeyError(f"unknown changes: {sorted(changes)}")
    tenants = tuple(dataclasses.replace(t, rate=t.rate * load, output=t.output if sigma is None else
                                        dataclasses.replace(t.output, sigma=sigma)) for t in run.tenants)
    run = dataclasses.replace(run, tenants=tenants, requests=requests or run.requests,
                              scheduler=dataclasses.replace(run.scheduler, **sched),
                              kv=dataclasses.replace(run.kv, **kv))
    tr = simulate_tokens(run)
    return tr, summarize_tokens(tr, sc.ttft_slo_s, sc.tpot_slo_s)



def storm_anatomy(tr: ServingTrace) -> dict[str, float]:
    """Where a preemption storm's time goes: the share of TTFT spent waiting to be admitted to the chip (all
    requests, and the slowest 1 % by TTFT), and the share of the tokens the chip processed that were
    recomputation (prompt and generated tokens prefilled again after a preemption)."""
    import numpy as np

    ttft = tr.first_token_s - tr.requests.arrival_s
    wait = tr.admit_s - tr.requests.arrival_s
    slow = ttft >= np.percentile(ttft, 99)
    processed = int(tr.it_prefill_tokens.sum() + tr.it_decodes.sum())
    redone = int(tr.it_prefill_tokens.sum() - tr.requests.prompt.sum())
    return {"admission_share": float(wait.sum() / ttft.sum()),
            "admission_share_slowest": float(wait[slow].sum() / ttft[slow].sum()),
            "recomputed_share": redone / max(processed, 1)}

"""The numbers chapter 08 reasons with, computed from the serving model (so the chapter owns no logic).

Two prices of the same kernels appear side by side. **The roofline's** (``ideal``): a kernel's compute time at
peak FLOP/s and its memory time at full HBM bandwidth, the bound no kernel beats; the chapter's ridge-point
arithmetic (:func:`weight_ridge_batch`, :func:`linear_terms`, :func:`decode_ridge_batch` unless asked for the
fitted one) is the roofline's.
**The fitted time** (the serving model's default, :mod:`workbench.serving.efficiency`): the same two terms at
the share of peak measured kernels reach, plus each kernel's fixed time on the device; every iteration time,
recompute time and run below is the fitted one unless a key says ``roofline``.

- :func:`kernel_rows`: one layer's compiled kernels at a row count, roofline terms beside the fitted time.
- :func:`phase_costs`: decode iterations and a prompt's prefill, fitted and at the roofline, split into the
  roofline's compute and memory terms, the KV read, and the fixed time; where decode turns compute-bound.
- :func:`kv_bytes`: what the paged KV cache holds per token, per block and in all.
- :func:`swap_vs_recompute`: the two ways back for a preempted sequence, in seconds.
- :func:`gpu_specs`, :func:`gpu_phases`, :func:`phase_curves`, :func:`kv_capacity`: a model on the GPU presets
  (peaks, iteration times, the auto-sized cache).
- :func:`variant`: a built-in token scenario with some knobs changed, run and summarised.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from workbench.graph import Op
from workbench.hardware import GPU_PRESETS, PRESETS
from workbench.serving.config import Decoder
from workbench.serving.cost import IterationCost, kv_bytes_per_token
from workbench.serving.efficiency import kernel_kind, reduction_depth
from workbench.serving.engine import simulate_tokens
from workbench.serving.metrics import summarize_tokens
from workbench.serving.run import ServingRun, activation_bytes
from workbench.serving.trace import ServingTrace


def law_cost(cost: IterationCost, efficiency: str) -> IterationCost:
    """The same model, hardware, fusion and launches priced by another law (``ideal``: the roofline)."""
    opts = cost.plan.options
    return IterationCost.of(cost.model, cost.hw, opts.fusion, opts.generic_slowdown, efficiency, cost.cuda_graphs)


def _kinds(cost: IterationCost) -> list[tuple[str, float]]:
    """(law kind, reduction depth K) of every compiled kernel of the layer, as :class:`IterationCost` reads them
    (``tests/test_serving_figures.py`` checks that the fitted times built on them sum to its dense time)."""
    g = cost.plan.graph
    out = []
    for k in cost.mapping.kernels:
        nodes = [g.node(m) for m in k.nodes]
        depth = reduction_depth(g.node(n.inputs[1]).shape for n in nodes if n.op == Op.MATMUL)
        out.append((kernel_kind(n.op for n in nodes), depth))
    return out


def kernel_rows(cost: IterationCost, tokens: int) -> list[dict[str, Any]]:
    """One layer's compiled dense kernels at ``tokens`` rows: name, law kind, the roofline's compute and memory
    terms (s; memory with every core streaming its shard through the one HBM), the fitted time on the device
    (s, launch apart) and whether the roofline calls it compute-bound. The fitted times sum to
    :meth:`IterationCost.dense_seconds`."""
    n, law = cost.hw.cores, cost.law
    rows = []
    for k, (kind, depth) in zip(cost.kernels(tokens), _kinds(cost), strict=True):
        rows.append({"name": k.name.split("_", 1)[1], "kind": kind, "compute_s": k.compute_s,
                     "memory_s": n * k.memory_s, "fitted_s": law.kernel_seconds(kind, k.compute_s, n * k.memory_s,
                                                                                  depth),
                     "compute_bound": k.compute_s > n * k.memory_s})
    return rows


def linear_terms(cost: IterationCost, tokens: int) -> tuple[float, float]:
    """The roofline's (compute s, memory s) of the compiled dense kernels of one iteration of ``tokens`` tokens,
    over all layers: each kernel's FLOPs at peak on one core (the cores work on their shards in parallel), and
    its HBM bytes times the cores that move theirs at once, over the full shared bandwidth."""
    ks = cost.kernels(tokens)
    n = cost.hw.cores
    return (cost.model.layers * sum(k.compute_s for k in ks), cost.model.layers * sum(n * k.memory_s for k in ks))


def fitted_terms(cost: IterationCost, tokens: int) -> tuple[float, float]:
    """The fitted law's (compute s, memory s) of the same kernels, fixed times left out: a GEMM's compute at the
    measured share of peak FLOP/s with its epilogue term, every kernel's bytes at its kind's share of
    bandwidth (a norm's and an elementwise kernel's time is all memory)."""
    law, n = cost.law, cost.hw.cores
    c_sum = m_sum = 0.0
    for k, (kind, depth) in zip(cost.kernels(tokens), _kinds(cost), strict=True):
        if kind == "gemm":
            c_sum += k.compute_s * (1.0 + (law.gemm_epilogue_k / depth if depth > 0 else 0.0)) / law.gemm_compute
            m_sum += n * k.memory_s / law.gemm_memory
        else:
            m_sum += n * k.memory_s / (law.norm_memory if kind == "norm" else law.elementwise_memory)
    return cost.model.layers * c_sum, cost.model.layers * m_sum


def weight_ridge_batch(cost: IterationCost) -> int:
    """The roofline's decode batch at the chip's ridge point from the weights alone: a bf16 weight does 2 FLOPs
    per token for its 2 bytes, so a batch of ``T`` tokens does ``T`` FLOP per byte, compute-bound from
    ``peak / bandwidth``."""
    hw = cost.hw
    return math.ceil(hw.cores * hw.peak_flops_per_core / hw.hbm_bandwidth_bytes_per_s)


def decode_ridge_batch(cost: IterationCost, limit: int = 1 << 14, fitted: bool = False) -> int:
    """The smallest decode batch whose compiled dense kernels are compute-bound (compute time >= HBM time): at
    the roofline (:func:`linear_terms`), or with ``fitted`` at the measured shares (:func:`fitted_terms`).

    The roofline's is later than :func:`weight_ridge_batch`: the kernels also move activations, and the
    row-split projections write full-width partial sums, which the weights-only intensity leaves out. The
    fitted one is earlier: a GEMM reaches a smaller share of peak FLOP/s than of bandwidth."""
    terms = fitted_terms if fitted else linear_terms
    for b in range(1, limit + 1):
        c, m = terms(cost, b)
        if c >= m:
            return b
    return limit


def fixed_seconds(cost: IterationCost, tokens: int, seqs: int = 0) -> tuple[float, float]:
    """(the kernels' fixed time on the device, the launches) of one iteration of ``tokens`` tokens from ``seqs``
    sequences (s): what the fitted law adds whatever the bytes and FLOPs (every GEMM's ``t0``, every norm's
    and elementwise kernel's), and one launch per captured graph or per kernel."""
    bare_law = dataclasses.replace(cost.law, gemm_fixed_s=0.0, norm_fixed_s=0.0, elementwise_fixed_s=0.0)
    bare = dataclasses.replace(cost, law=bare_law, _dense={}, _head={}, _facts={})
    fixed = cost.seconds(tokens, tokens, 0.0, seqs=seqs) - bare.seconds(tokens, tokens, 0.0, seqs=seqs)
    return fixed, cost.launches(False, tokens) * cost.hw.launch_s


def phase_costs(cost: IterationCost, batches: tuple[int, ...] = (1, 8, 32, 64, 128, 256),
                context: int = 500, prompt: int = 1000) -> dict[str, Any]:
    """Decode iterations of ``batches`` sequences at ``context`` tokens each, and one prompt's prefill.

    Per row: ``iteration_s`` (fitted) and ``roofline_s`` (the ideal law, the same launches), the per-token
    fitted time, the roofline's dense compute and memory terms (:func:`linear_terms`), the roofline's KV read
    (the attention kernel's memory term over every layer), the kernels' fixed time and the launches
    (:func:`fixed_seconds`). ``ridge_batch`` is the roofline's :func:`decode_ridge_batch`, ``ridge_batch_fitted``
    the fitted one."""
    ideal = law_cost(cost, "ideal")
    decode = []
    for b in batches:
        args = (b, b * (context + 1.0), b * float(context))
        s = cost.seconds(*args, seqs=b)
        c, m = linear_terms(cost, b)
        kv_read = cost.model.layers * cost.attention_terms(*args)[1]
        fixed, launch = fixed_seconds(cost, b, b)
        decode.append({"batch": b, "iteration_s": s, "roofline_s": ideal.seconds(*args, seqs=b),
                       "per_token_s": s / b, "linear_compute_s": c, "linear_memory_s": m, "kv_read_s": kv_read,
                       "fixed_s": fixed, "launch_s": launch})
    c, m = linear_terms(cost, prompt)
    fixed, launch = fixed_seconds(cost, prompt, 1)
    return {"decode": decode, "ridge_batch": decode_ridge_batch(cost),
            "ridge_batch_fitted": decode_ridge_batch(cost, fitted=True),
            "prefill": {"tokens": prompt, "seconds": cost.prefill_seconds(prompt),
                        "roofline_s": ideal.prefill_seconds(prompt), "linear_compute_s": c, "linear_memory_s": m,
                        "fixed_s": fixed, "launch_s": launch},
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


def gpu_specs(names: tuple[str, ...] = GPU_PRESETS) -> list[dict[str, Any]]:
    """The data-sheet figures of GPU presets: peak dense bf16 FLOP/s, HBM bandwidth and capacity, on-chip memory
    (L1/shared memory of all SMs) and the ridge point (FLOP per byte of HBM traffic)."""
    out = []
    for name in names:
        hw = PRESETS[name]
        peak = hw.cores * hw.peak_flops_per_core
        out.append({"name": name, "peak_flops": peak, "hbm_bytes_per_s": hw.hbm_bandwidth_bytes_per_s,
                    "hbm_bytes": hw.hbm_capacity_bytes, "onchip_bytes": hw.cores * hw.sram_bytes_per_core,
                    "ridge_flop_per_byte": peak / hw.hbm_bandwidth_bytes_per_s})
    return out


def gpu_phases(model: Decoder, names: tuple[str, ...] = GPU_PRESETS, prompt: int = 512, context: int = 500,
               batches: tuple[int, ...] = (1, 32), fusion: str = "elementwise") -> list[dict[str, Any]]:
    """``model`` on each GPU preset: one ``prompt``-token prefill alone, and a decode iteration of each of
    ``batches`` sequences at ``context`` tokens of context (every sequence's LM head included), each as the
    fitted time (``*_s``) and the roofline's (``*_roofline_s``)."""
    out = []
    for name in names:
        fitted = IterationCost.of(model, PRESETS[name], fusion)
        ideal = law_cost(fitted, "ideal")
        row: dict[str, Any] = {"name": name, "prefill_tokens": prompt, "context": context,
                               "prefill_s": fitted.prefill_seconds(prompt),
                               "prefill_roofline_s": ideal.prefill_seconds(prompt), "decode": {}}
        for b in batches:
            args = (b, b * (context + 1.0), b * float(context))
            row["decode"][b] = {"s": fitted.seconds(*args, seqs=b), "roofline_s": ideal.seconds(*args, seqs=b)}
        out.append(row)
    return out


def phase_curves(model: Decoder, names: tuple[str, ...] = GPU_PRESETS, context: int = 500,
                 batches: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64, 128, 256),
                 prompts: tuple[int, ...] = (64, 128, 256, 512, 1024, 2048), fusion: str = "elementwise"
                 ) -> dict[str, dict[str, Any]]:
    """Per GPU preset, the fitted and roofline times (s) of a decode iteration over ``batches`` (``context``
    tokens each) and of one prefill over ``prompts``: what :func:`workbench.ui.figures.serving.gpu_phases` draws."""
    out = {}
    for name in names:
        fitted = IterationCost.of(model, PRESETS[name], fusion)
        ideal = law_cost(fitted, "ideal")
        curve: dict[str, Any] = {"batches": list(batches), "prompts": list(prompts)}
        for label, c in (("fitted", fitted), ("roofline", ideal)):
            curve[f"decode_{label}_s"] = [c.seconds(b, b * (context + 1.0), b * float(context), seqs=b)
                                          for b in batches]
            curve[f"prefill_{label}_s"] = [c.prefill_seconds(p) for p in prompts]
        out[name] = curve
    return out


def kv_capacity(run: ServingRun, preset: str | None = None) -> dict[str, float]:
    """Where a run's HBM goes: the weights, the peak activations, K and V per token (and what plain multi-head
    attention, one KV head per query head, would need), and the cache's blocks, tokens and bytes. With
    ``preset``, the same run on that hardware preset, its cache sized as ``blocks = "auto"`` sizes it."""
    if preset is not None:
        run = dataclasses.replace(run, hardware=PRESETS[preset], kv=dataclasses.replace(run.kv, blocks=0))
    cost = IterationCost.of_run(run)
    mha = dataclasses.replace(run.model, kv_heads=run.model.heads)
    per_token = cost.kv_bytes_per_token()
    return {"hbm_bytes": float(run.hardware.hbm_capacity_bytes), "weight_bytes": cost.weight_bytes,
            "activation_bytes": activation_bytes(run), "kv_per_token": per_token,
            "kv_per_token_mha": kv_bytes_per_token(mha), "blocks": float(run.kv.blocks),
            "tokens": float(run.kv.capacity_tokens), "cache_bytes": per_token * run.kv.capacity_tokens,
            "gpu_memory_utilization": run.kv.gpu_memory_utilization}


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

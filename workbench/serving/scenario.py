"""The ``[serving]`` section of a scenario file in token mode: tenants, scheduler, KV cache, decoder, SLOs.

A scenario whose ``[serving]`` table says ``mode = "token"`` is a token-level serving run::

    seed = 1
    requests = 2000
    [hardware]                    # as in any scenario
    preset = "generic-4core"
    [serving]
    mode = "token"
    max_num_batched_tokens = 2048
    max_num_seqs = 64
    policy = "fcfs"               # or "priority"
    batching = "continuous"       # or "request"
    chunked_prefill = false
    efficiency = "fitted"         # or "ideal": kernels at the measured share of peak, or at the roofline
    cuda_graphs = true            # iterations of at most 512 tokens replay a captured graph: one launch each
    [serving.kv]
    block_size = 16
    blocks = 4096                 # or "auto": what fits gpu_memory_utilization of HBM beside weights and activations
    gpu_memory_utilization = 0.9
    watermark = 0.01
    preemption = "recompute"      # or "swap"
    swap_bandwidth_bytes_per_s = 32e9
    [serving.model]               # as the model's config.json says it
    layers = 24                   # num_hidden_layers
    d_model = 2048                # hidden_size
    heads = 16                    # num_attention_heads
    kv_heads = 16                 # num_key_value_heads (default: heads)
    d_ff = 8192                   # intermediate_size
    gated_mlp = false             # true for SwiGLU (Llama, Mistral)
    vocab = 0                     # vocab_size (0: no embedding lookup or LM head)
    [serving.buckets]             # optional: the compiled plan (iteration sizes, fusion)
    sizes = [16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192]
    out_of_envelope = "fallback"  # or "recompile"
    fusion = "elementwise"        # or "none", "aggressive": how the layer's dense ops are fused
    [serving.surge]               # optional: every tenant's rate x factor from start_s to end_s of arrival time
    factor = 2.5
    start_s = 10.0
    end_s = 20.0
    [serving.parallel]            # optional: tensor parallelism over GPUs (python loop only)
    tensor = 4                    # GPUs one replica's layers are split over (default 1)
    link_bytes_per_s = 370e9      # ring all-reduce bus bandwidth of the slowest link (NVLink4 on H100)
    link_latency_s = 1.5e-6       # per ring step
    [serving.speculative]         # optional: speculative decoding with a draft model (python loop only)
    tokens = 4                    # k draft tokens per decode step (default 0: off)
    min_acceptance = 0.0          # a sequence whose observed acceptance falls below this stops speculating
    warmup = 8                    # proposals before the guard judges a sequence (and the window it judges)
    [serving.speculative.draft]   # the draft model, keys as [serving.model] (the same vocabulary)
    layers = 8
    d_model = 2048
    heads = 32
    kv_heads = 8
    d_ff = 8192
    gated_mlp = true
    vocab = 128256
    [serving.slo]
    ttft_s = 1.0
    tpot_s = 0.05
    [[serving.tenants]]
    name = "chat"
    rate = 20.0
    priority = 0
    prompt = { median = 300, sigma = 0.6, max = 2000 }   # drift_to, drift_start_s, drift_end_s: a drifting median
    output = { median = 150, sigma = 0.8, max = 1000 }
    acceptance = 0.8              # probability the target accepts each draft token (speculative decoding)

Every key is checked; an error names the file, the dotted key and the value. ``seed`` is an integer in
[0, 2^63 - 1] and a tenant's ``priority`` a 32-bit integer, as in request mode (:mod:`workbench.limits`).
``requests`` is at most 5,000,000, and a run whose trace could need more than 2 GiB is refused before it
starts: 600 bytes per request and 240 per step, a step being an output token or a prefill chunk of
``max_num_batched_tokens`` prompt tokens (each token's emission time and, at worst, an iteration row of its
own). The laws' maxima decide first; a run they would refuse is decided by its drawn lengths
(:func:`workbench.serving.workload.check_memory`), so about 8.9 million output tokens fit a run.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.errors import ConfigError
from workbench.limits import MAX_STREAMS, check_count
from workbench.serving.config import (
    DRAFT,
    Decoder,
    KVConfig,
    LengthLaw,
    Parallel,
    SchedulerConfig,
    Speculative,
    Surge,
    Tenant,
    TokenBuckets,
)

if TYPE_CHECKING:
    from workbench.serving.run import ServingRun

@dataclass(frozen=True)
class ServingScenario:
    """A token-mode scenario: the run, its SLOs for goodput, and its name."""

    run: ServingRun
    ttft_slo_s: float = 1.0
    tpot_slo_s: float = 0.05
    name: str = ""
    description: str = ""


def _length(t, name: str) -> LengthLaw:
    law = t.table(name)
    kw = {"median": law.get("median", "float"), "sigma": law.get("sigma", "float", 0.0),
          "max": law.get("max", "int", 4096), "drift_to": law.get("drift_to", "float", None),
          "drift_start_s": law.get("drift_start_s", "float", 0.0), "drift_end_s": law.get("drift_end_s", "float", 0.0)}
    law.done()
    try:
        return LengthLaw(**kw)
    except ConfigError as e:
        raise e.under(law.prefix) from None


def _blocks(kvt) -> int:
    """``blocks``: a count, or ``"auto"`` (0: what fits ``gpu_memory_utilization`` of HBM, resolved by the run)."""
    value = kvt.data.get("blocks", KVConfig().blocks)
    kvt.seen.add("blocks")
    if value == "auto":
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(kvt.key("blocks"), value, 'must be a whole number of blocks (>= 1) or "auto"')
    return value


MODEL_KEYS = (("layers", "int"), ("d_model", "int"), ("heads", "int"), ("d_ff", "int"), ("kv_heads", "int"),
              ("gated_mlp", "bool"), ("vocab", "int"))


def _decoder(t, default: Decoder) -> Decoder:
    """A model table (``[serving.model]`` or ``[serving.speculative.draft]``), its errors named under its key."""
    kw = {k: t.get(k, kind, getattr(default, k)) for k, kind in MODEL_KEYS}
    if "heads" in t.data and "kv_heads" not in t.data:
        kw["kv_heads"] = 0  # heads given, KV heads not: as many as the heads, as [serving.model] reads it
    t.done()
    try:
        return Decoder(**kw)
    except ConfigError as e:
        raise ConfigError(e.key.replace("serving.model", t.prefix, 1), e.value, e.why) from None


def _parallel(t) -> Parallel:
    d = Parallel()
    p = Parallel(tensor=t.get("tensor", "int", d.tensor),
                 link_bytes_per_s=t.get("link_bytes_per_s", "float", d.link_bytes_per_s),
                 link_latency_s=t.get("link_latency_s", "float", d.link_latency_s))
    t.done()
    return p


def _speculative(t) -> Speculative:
    d = Speculative()
    kw = {"tokens": t.get("tokens", "int", d.tokens), "min_acceptance": t.get("min_acceptance", "float",
                                                                              d.min_acceptance),
          "warmup": t.get("warmup", "int", d.warmup)}
    draft = _decoder(t.table("draft"), DRAFT)
    t.done()
    return Speculative(draft=draft, **kw)


def parse_serving(data: dict[str, Any], source: str, hardware_of, table_of) -> ServingScenario:
    """A token-mode scenario from its parsed TOML (``hardware_of`` and ``table_of`` read the shared parts)."""
    from workbench.serving.run import ServingRun, check_run  # token runs only (start-up of the others)

    try:
        top = table_of(data, "")
        s = top.table("serving")
        s.get("mode", "str")
        sched_fields = {"max_num_batched_tokens": "int", "max_num_seqs": "int", "policy": "str", "batching": "str",
                        "chunked_prefill": "bool"}
        efficiency, graphs = s.get("efficiency", "str", "fitted"), s.get("cuda_graphs", "bool", True)
        d = SchedulerConfig()
        scheduler = SchedulerConfig(**{k: s.get(k, kind, getattr(d, k)) for k, kind in sched_fields.items()})
        kvt, dk = s.table("kv"), KVConfig()
        kv = KVConfig(blocks=_blocks(kvt), **{k: kvt.get(k, kind, getattr(dk, k)) for k, kind in (
            ("block_size", "int"), ("watermark", "float"), ("preemption", "str"),
            ("swap_bandwidth_bytes_per_s", "float"), ("gpu_memory_utilization", "float"))})
        kvt.done()
        mt, dm = s.table("model"), {f.name: f.default for f in dataclasses.fields(Decoder)}
        model = Decoder(**{k: mt.get(k, kind, dm[k]) for k, kind in MODEL_KEYS})
        mt.done()
        parallel, speculative = _parallel(s.table("parallel")), _speculative(s.table("speculative"))
        bt, db = s.table("buckets"), TokenBuckets()
        sizes = tuple(bt.numbers("sizes", "int")) if "sizes" in bt.data else ()
        buckets = TokenBuckets(sizes=sizes, **{k: bt.get(k, kind, getattr(db, k)) for k, kind in (
            ("out_of_envelope", "str"), ("generic_slowdown", "float"), ("recompile_pause_s", "float"),
            ("recompile_limit", "int"), ("fusion", "str"))})
        bt.done()
        st, ds = s.table("surge"), Surge()
        surge = Surge(**{k: st.get(k, "float", getattr(ds, k)) for k in ("factor", "start_s", "end_s")})
        st.done()
        slo = s.table("slo")
        ttft, tpot = slo.get("ttft_s", "float", 1.0), slo.get("tpot_s", "float", 0.05)
        slo.done()
        raw = s.get("tenants", "list", None)
        if not raw:
            raise ConfigError("serving.tenants", raw, "at least one [[serving.tenants]] table is required")
        check_count("serving.tenants", raw, MAX_STREAMS)
        tenants = []
        for i, r in enumerate(raw):
            t = table_of(r, f"serving.tenants[{i}]")
            name = t.get("name", "str")
            tenant = Tenant(name=name, rate=t.get("rate", "float"), prompt=_length(t, "prompt"),
                            output=_length(t, "output"), priority=t.get("priority", "int", 0),
                            acceptance=t.get("acceptance", "float", 0.8))
            t.done()
            tenants.append(tenant)
        s.done()
        run = ServingRun(tenants=tuple(tenants), requests=top.get("requests", "int", 2000),
                         seed=top.get("seed", "int", 0), scheduler=scheduler, kv=kv, model=model, buckets=buckets,
                         hardware=hardware_of(top.table("hardware")), efficiency=efficiency, cuda_graphs=graphs,
                         surge=surge, parallel=parallel, speculative=speculative)
        sc = ServingScenario(run, ttft, tpot, top.get("name", "str", Path(source).stem),
                             top.get("description", "str", ""))
        top.done()
        if not (0 < ttft <= 3600 and 0 < tpot <= 60):
            raise ConfigError("serving.slo", {"ttft_s": ttft, "tpot_s": tpot}, "must be > 0 (at most 3600 s and 60 s)")
        check_run(run)
        return sc
    except ConfigError as e:
        raise e.in_file(source) from None

"""Tensor parallelism over GPUs (``[serving.parallel]``): the price by hand, per-GPU capacity, the reference loop
only, the keys refused by name, and the built-in scenario's three runs (TP = 4 over NVLink, over PCIe, and four
TP = 1 replicas).

Sources for the link figures (cited in the scenario, reproduced in direction and rough size): NCCL's maintainer
gives ~370 GB/s of all-reduce bus bandwidth on H100 NVLink4 (NVIDIA/nccl-tests issue 212), ~20 GB/s when the ring
goes through the host over PCIe (nccl-tests issue 178); the ring all-reduce moves ``2 (N-1)/N`` of the bytes over
each link in ``2 (N-1)`` steps (NCCL's performance notes, PERFORMANCE.md, "bus bandwidth").
"""

from __future__ import annotations

import dataclasses
import tomllib

import numpy as np
import pytest

from workbench.errors import ConfigError
from workbench.hardware import PRESETS, Hardware
from workbench.models import decoder_layer
from workbench.scenario import load_scenario, parse_scenario
from workbench.serving.config import Decoder, KVConfig, LengthLaw, Parallel, SchedulerConfig, Tenant
from workbench.serving.cost import ITEM, ONE_GPU, IterationCost
from workbench.serving.engine import simulate_tokens
from workbench.serving.metrics import summarize_tokens
from workbench.serving.report import format_token_summary
from workbench.serving.run import ServingRun, auto_blocks

CARD = Decoder(layers=4, d_model=1024, heads=16, d_ff=4096, kv_heads=4, gated_mlp=True, vocab=32000)
H100 = PRESETS["h100-sxm"]


def small_run(parallel: Parallel = ONE_GPU, n: int = 300, **kw) -> ServingRun:
    tenants = (Tenant("chat", 40.0, LengthLaw(300, 0.6, 1500), LengthLaw(80, 0.6, 400)),)
    kw = {"model": CARD, "hardware": H100} | kw
    return ServingRun(tenants, requests=n, seed=4, scheduler=SchedulerConfig(2048, 64, chunked_prefill=True),
                      kv=KVConfig(blocks=4096), parallel=parallel, **kw)


def test_the_ring_all_reduce_by_hand():
    p = Parallel(tensor=4, link_bytes_per_s=100e9, link_latency_s=2e-6)
    assert p.allreduce_seconds(8e6) == pytest.approx(2 * 3 / 4 * 8e6 / 100e9 + 6 * 2e-6, rel=1e-15)
    assert Parallel(tensor=1).allreduce_seconds(8e6) == 0.0
    cost = IterationCost.of(CARD, H100, parallel=p)
    tokens = 300
    per_layer = 2 * (2 * 3 / 4 * tokens * CARD.d_model * ITEM / 100e9 + 6 * 2e-6)  # two all-reduces a layer
    assert cost.link_seconds(tokens) == pytest.approx(CARD.layers * per_layer, rel=1e-12)


def test_one_gpus_share_of_every_term_by_hand():
    t = 4
    one, tp = IterationCost.of(CARD, H100), IterationCost.of(CARD, H100, parallel=Parallel(tensor=t))
    # the dense kernels: the layer split four ways, each GPU streaming its shard from its own HBM
    shard = decoder_layer(CARD.d_model, CARD.heads, CARD.d_ff, CARD.kv_heads, CARD.gated_mlp, t)
    assert tp.plan.graph.name == shard.name and len(tp.plan.graph.nodes) == len(shard.nodes)
    rows = 256
    by_hand = sum(tp.law.kernel_seconds(kind, c.compute_s, c.memory_s, depth)
                  for c, (kind, depth) in zip(tp.kernels(rows), tp._kinds(False), strict=True))
    assert tp.dense_seconds(rows) == pytest.approx(by_hand, rel=1e-12)
    assert tp.dense_seconds(rows) < one.dense_seconds(rows)
    # attention: a quarter of the query heads' FLOPs and one KV head of the four per GPU
    c1, m1 = one.attention_terms(rows, 5e5, 4e4)
    c4, m4 = tp.attention_terms(rows, 5e5, 4e4)
    assert c4 == pytest.approx(c1 / t, rel=1e-12) and m4 == pytest.approx(m1 / t, rel=1e-12)
    # the LM head split by columns: a quarter of the vocabulary per GPU
    cols = CARD.vocab // t
    seqs = 64
    compute = 2.0 * 64 * CARD.d_model * cols / H100.peak_flops_per_core
    memory = (CARD.d_model * cols + seqs * (CARD.d_model + cols)) * ITEM / H100.hbm_bandwidth_bytes_per_s
    norm = 2.0 * seqs * CARD.d_model * ITEM / H100.hbm_bandwidth_bytes_per_s
    head = tp.law.kernel_seconds("norm", 0.0, norm) + tp.law.gemm_seconds(compute, memory, float(CARD.d_model))
    assert tp.head_seconds(seqs) == pytest.approx(head, rel=1e-12)
    # the iteration: every layer's pieces plus the link, not overlapped
    keys, cached = 5e5, 4e4
    layer = tp.dense_seconds(rows) + tp.attention_seconds(rows, keys, cached)
    whole = (CARD.layers * layer + tp.head_seconds(seqs) + tp.embed_seconds(rows) + tp.link_seconds(rows)
             + tp.launches(False, rows) * H100.launch_s)
    assert tp.seconds(rows, keys, cached, seqs=seqs) == pytest.approx(whole, rel=1e-12)
    assert tp.pricer()(rows, keys, cached, None, False, seqs) == tp.seconds(rows, keys, cached, seqs=seqs)


def test_weights_and_kv_are_per_gpu_and_the_cache_grows():
    one, tp = IterationCost.of(CARD, H100), IterationCost.of(CARD, H100, parallel=Parallel(tensor=4))
    assert tp.weight_bytes == pytest.approx(one.weight_bytes / 4, rel=0.01)  # norms and ceilings apart
    assert tp.kv_bytes_per_token() == one.kv_bytes_per_token() / 4
    # more GPUs than KV heads: each GPU holds one KV head (replicated), as vLLM does
    eight = IterationCost.of(CARD, H100, parallel=Parallel(tensor=8))
    assert eight.kv_heads_per_gpu == 1 and eight.kv_bytes_per_token() == one.kv_bytes_per_token() / 4
    auto = dataclasses.replace(small_run(), kv=KVConfig(blocks=0))
    assert auto_blocks(dataclasses.replace(auto, parallel=Parallel(tensor=4))) > 4 * auto_blocks(auto)


def differences(a, b) -> list[str]:
    """Names of the trace fields that differ (values, shapes or dtypes)."""
    out = []
    for f in dataclasses.fields(a):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, np.ndarray):
            if x.dtype != y.dtype or x.shape != y.shape or not np.array_equal(x, y, equal_nan=True):
                out.append(f.name)
        elif f.name != "run" and not dataclasses.is_dataclass(x) and x != y:
            out.append(f.name)
    return out


def test_one_gpu_is_the_run_without_the_section_bit_for_bit():
    base = simulate_tokens(small_run(), loop="python")
    same = simulate_tokens(small_run(Parallel(tensor=1, link_bytes_per_s=1e9, link_latency_s=1e-3)), loop="python")
    assert differences(base, same) == [] and float(base.it_link_s.sum()) == 0.0
    assert summarize_tokens(base)["comm_share"] == 0.0 and "parallel" not in summarize_tokens(base)


def test_a_slower_link_slows_every_token_and_its_share_grows():
    fast, slow = (simulate_tokens(small_run(Parallel(4, bw, lat))) for bw, lat in ((370e9, 1.5e-6), (20e9, 4e-6)))
    sf, ss = summarize_tokens(fast), summarize_tokens(slow)
    assert 0 < sf["comm_share"] < ss["comm_share"] < 1
    assert sf["tpot_s"]["p50"] < ss["tpot_s"]["p50"] and sf["ttft_s"]["p99"] < ss["ttft_s"]["p99"]
    assert ss["parallel"]["tensor"] == 4 and ss["parallel"]["link_s"] == pytest.approx(float(slow.it_link_s.sum()))
    text = format_token_summary(ss)
    assert "tensor parallel over 4 GPUs" in text and f"{ss['comm_share']:.1%} of device time" in text


def test_auto_runs_the_reference_loop_and_the_compiled_loops_refuse():
    run = small_run(Parallel(tensor=2), n=60)
    assert summarize_tokens(simulate_tokens(run)) == summarize_tokens(simulate_tokens(run, loop="python"))
    for loop in ("compiled", "aot", "jit"):
        with pytest.raises(ValueError, match="tensor parallelism"):
            simulate_tokens(run, loop=loop)


BASE = """seed = 2
requests = 100
[hardware]
preset = "h100-sxm"
[serving]
mode = "token"
chunked_prefill = true
[serving.kv]
blocks = 2048
[serving.model]
layers = 4
d_model = 1024
heads = 16
kv_heads = 4
d_ff = 4096
[serving.parallel]
tensor = 2
[[serving.tenants]]
name = "chat"
rate = 20.0
prompt = { median = 200, sigma = 0.5, max = 1000 }
output = { median = 50, sigma = 0.5, max = 300 }
"""


@pytest.mark.parametrize("old, new, key", [
    ("tensor = 2", "tensor = 0", "serving.parallel.tensor"),
    ("tensor = 2", "tensor = 3", "serving.parallel.tensor"),  # 16 heads do not split three ways
    ("tensor = 2", "tensor = 65", "serving.parallel.tensor"),
    ("tensor = 2", "tensor = 2.5", "serving.parallel.tensor"),
    ("tensor = 2", "tensor = 2\nlink_bytes_per_s = 0.0", "serving.parallel.link_bytes_per_s"),
    ("tensor = 2", "tensor = 2\nlink_bytes_per_s = nan", "serving.parallel.link_bytes_per_s"),
    ("tensor = 2", "tensor = 2\nlink_latency_s = -1e-6", "serving.parallel.link_latency_s"),
    ("tensor = 2", "tensor = 2\nlinks = 4", "serving.parallel.links"),
    ("kv_heads = 4", "kv_heads = 8", None),  # fine: 8 KV heads split over 2 GPUs
])
def test_bad_parallel_keys_are_named(old, new, key):
    text = BASE.replace(old, new)
    if key is None:
        assert parse_scenario(tomllib.loads(text)).run.parallel.tensor == 2
        return
    with pytest.raises(ConfigError) as e:
        parse_scenario(tomllib.loads(text), "bad.toml")
    assert e.value.key == key and f"{key} = " in str(e.value)


def test_the_tensor_split_must_fit_the_kv_heads():
    with pytest.raises(ConfigError) as e:
        small_run(Parallel(tensor=2), model=Decoder(layers=2, d_model=768, heads=6, d_ff=2048, kv_heads=3))
    assert e.value.key == "serving.parallel.tensor" and "KV heads" in e.value.why
    # a multi-core NPU per GPU: the layer split cores x tensor ways, the on-chip all-reduce kept beside the link
    npu = small_run(Parallel(tensor=2), n=40, hardware=Hardware(cores=2))
    cost = IterationCost.of_run(npu)
    assert cost.reduce_seconds(100) > 0 and cost.link_seconds(100) > 0 and cost.kernels_per_layer() >= 5
    assert simulate_tokens(npu).finish_s.max() > 0


def test_the_built_in_scenario_nvlink_replicas_and_pcie():
    """The three runs llm_tp_link's description reports: TP = 4 over NVLink beats four TP = 1 replicas, which beat
    TP = 4 over PCIe by far; every run stable; the all-reduces' share follows the link."""
    run = load_scenario("llm_tp_link").run
    pcie = dataclasses.replace(run, parallel=Parallel(4, 20e9, 4e-6))
    replica = dataclasses.replace(run, parallel=Parallel(1), kv=dataclasses.replace(run.kv, blocks=0),
                                  tenants=tuple(dataclasses.replace(t, rate=t.rate / 4) for t in run.tenants))
    nv, pc, rp = (summarize_tokens(simulate_tokens(r)) for r in (run, pcie, replica))
    for s in (nv, pc, rp):
        assert not s["load"]["overloaded"] and s["preemptions"] == 0
    for k in ("ttft_s", "itl_s", "tpot_s"):
        assert nv[k]["p99"] < rp[k]["p99"] < pc[k]["p99"]
    assert pc["ttft_s"]["p99"] > 5 * nv["ttft_s"]["p99"] and pc["itl_s"]["p99"] > 5 * nv["itl_s"]["p99"]
    assert pc["ttft_s"]["p99"] > 2.5 * rp["ttft_s"]["p99"] and pc["itl_s"]["p99"] > 4 * rp["itl_s"]["p99"]
    assert 0.1 < nv["comm_share"] < 0.3 < 0.5 < pc["comm_share"] < 0.8 and rp["comm_share"] == 0.0
    assert nv["tokens_per_s"] == pytest.approx(pc["tokens_per_s"], rel=0.03)  # the same load, carried
    assert 4 * rp["tokens_per_s"] == pytest.approx(nv["tokens_per_s"], rel=0.05)

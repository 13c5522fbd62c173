"""The KV cache must fit HBM beside the weights and the activations; ``blocks = "auto"`` sizes it as vLLM does."""

from __future__ import annotations

import math

import pytest

from workbench.errors import ConfigError
from workbench.hardware import GIB, PRESETS, Hardware
from workbench.scenario import load_scenario
from workbench.serving.config import Decoder, KVConfig, LengthLaw, SchedulerConfig, Tenant
from workbench.serving.cost import IterationCost
from workbench.serving.run import ServingRun, activation_bytes, check_run

LLAMA2_7B = Decoder(layers=32, d_model=4096, heads=32, d_ff=11008, gated_mlp=True, vocab=32000)
CHAT = (Tenant("chat", 5.0, LengthLaw(500, 0.5, 2000), LengthLaw(100, 0.5, 500)),)


def run(model=LLAMA2_7B, blocks=1024, hw=None, util=0.9, **sched) -> ServingRun:
    return ServingRun(CHAT, requests=50, model=model, hardware=hw or PRESETS["h100-sxm"],
                      kv=KVConfig(block_size=16, blocks=blocks, gpu_memory_utilization=util),
                      scheduler=SchedulerConfig(max_num_batched_tokens=4096, max_num_seqs=64, chunked_prefill=True,
                                                **sched))


def test_weights_kv_and_activations_of_a_7b_model_by_hand():
    r = run()
    cost = IterationCost.of_run(r)
    # 32 layers of QKV (4096 x 12288), out (4096 x 4096), gate+up (4096 x 22016), down (11008 x 4096); embedding
    # and LM head 32000 x 4096 each; bf16
    per_layer = 4096 * 12288 + 4096 * 4096 + 4096 * 22016 + 11008 * 4096
    assert cost.weight_bytes == 2 * (32 * per_layer + 2 * 32000 * 4096)  # 13.5 GB
    assert LLAMA2_7B.parameters == 32 * per_layer + 2 * 32000 * 4096 == 6_738_149_376
    assert cost.kv_bytes_per_token() == 2 * 4096 * 2 * 32  # 512 KiB a token
    # peak activations at the 4,096-token budget: two residual rows, QKV and the MLP's gate, up and hidden rows,
    # and fp32 logits of 64 sequences
    assert activation_bytes(r) == 4096 * (2 * 4096 + 12288 + 3 * 11008) * 2 + 64 * 32000 * 4


def test_a_cache_larger_than_hbm_leaves_is_refused_with_the_arithmetic():
    tight = Hardware(cores=1, hbm_capacity_bytes=32 * GIB)  # 12.5 GiB of weights on 32 GiB
    with pytest.raises(ConfigError, match=r"serving\.kv\.blocks = 4000.*GiB.*weights.*activations"):
        check_run(run(blocks=4000, hw=tight))  # 4,000 x 16 tokens x 512 KiB = 31.25 GiB
    check_run(run(blocks=2000, hw=tight))  # 15.6 GiB fits beside the weights


def test_auto_blocks_fill_the_utilisation_share_beside_weights_and_activations():
    r = run(blocks=0)
    cost = IterationCost.of_run(r)
    block = 16 * cost.kv_bytes_per_token()
    expected = math.floor((80 * GIB * 0.9 - cost.weight_bytes - activation_bytes(r)) / block)
    assert r.kv.blocks == expected  # about 6,600 blocks: 106k tokens of a 7B model on one H100
    half = run(blocks=0, util=0.5)
    assert half.kv.blocks < r.kv.blocks
    gqa = run(model=Decoder(32, 4096, 32, 14336, kv_heads=8, gated_mlp=True, vocab=128256), blocks=0)
    assert gqa.kv.blocks > 3.5 * r.kv.blocks  # Llama-3-8B's 8 KV heads hold a quarter of the bytes per token
    check_run(r)
    with pytest.raises(ConfigError, match="no room for a KV block"):
        run(blocks=0, hw=Hardware(cores=1, hbm_capacity_bytes=8 * GIB))


def test_the_real_gpu_scenario_sizes_its_cache_itself():
    sc = load_scenario("llm_llama3_8b_h100")
    assert sc.run.hardware == PRESETS["h100-sxm"] and round(sc.run.model.parameters / 1e9, 2) == 8.03
    assert 25_000 < sc.run.kv.blocks < 35_000  # ~29k blocks: 460k tokens of KV cache

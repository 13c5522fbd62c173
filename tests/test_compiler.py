"""Compiler passes against hand-built expectations (TVM's FuseOps tests and tinygrad's kernel counts)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import hand_requests

from workbench.compiler import CompileOptions, compile_plan
from workbench.compiler.cost import Tiling, best_cost, choose_layout, cost_kernel
from workbench.compiler.envelope import (
    FALLBACK,
    HIT,
    PADDED,
    RECOMPILED,
    REJECTED,
    lookup,
    miss_reason,
    miss_reasons,
    parse_envelope,
)
from workbench.compiler.fusion import fuse_ops
from workbench.compiler.pipeline import place_buckets
from workbench.errors import ConfigError
from workbench.graph import Builder, GraphError, Op, verify
from workbench.hardware import MIB, Hardware
from workbench.models import build, conv_block, mlp, transformer_block

HW = Hardware()


def groups(kernels):
    return [k.nodes for k in kernels]


def test_transformer_fusion_levels_match_hand_built_partitions():
    g = transformer_block()
    assert len(fuse_ops(g, "none")) == len(fuse_ops(g, "none", attention="naive")) == 18
    # flash: the attention core is one tiled kernel at every level but none (a serving stack's FlashAttention)
    assert groups(fuse_ops(g, "elementwise")) == [
        ("ln1",), ("qkv", "q", "k", "v"), ("scores", "scale", "softmax", "context", "merge"),
        ("attn_out", "residual1"), ("ln2",), ("up", "up_bias", "gelu"), ("down", "residual2")]
    # naive: the level alone decides; elementwise leaves the score matrices to cross HBM
    assert groups(fuse_ops(g, "elementwise", attention="naive")) == [
        ("ln1",), ("qkv", "q", "k", "v"), ("scores", "scale"), ("softmax",), ("context", "merge"),
        ("attn_out", "residual1"), ("ln2",), ("up", "up_bias", "gelu"), ("down", "residual2")]
    # aggressive: a kernel ends before the batch-matmul that reads the K it made (every query tile needs
    # every earlier row of K and V), so K and V leave the first kernel; the MLP's GEMM chain fuses whole
    for attention in ("flash", "naive"):
        assert groups(fuse_ops(g, "aggressive", attention=attention)) == [
            ("ln1", "qkv", "q", "k", "v"),
            ("scores", "scale", "softmax", "context", "merge", "attn_out", "residual1"),
            ("ln2", "up", "up_bias", "gelu", "down", "residual2")]


def test_conv_and_mlp_kernel_counts():
    assert [len(fuse_ops(conv_block(), lvl)) for lvl in ("none", "elementwise", "aggressive")] == [7, 2, 1]
    assert [len(fuse_ops(mlp(), lvl)) for lvl in ("none", "elementwise", "aggressive")] == [5, 2, 1]
    assert groups(fuse_ops(conv_block(), "elementwise")) == [("conv1", "bias1", "relu1"),
                                                             ("conv2", "bias2", "residual", "relu2")]


def test_kernel_boundaries_inputs_outputs_and_materialised():
    proj, attn, ffn = fuse_ops(transformer_block(), "aggressive")
    assert proj.inputs == ("x", "w_qkv") and proj.outputs == ("q", "k", "v") and proj.materialised == ("ln1",)
    assert attn.inputs == ("q", "k", "v", "w_o", "x") and attn.outputs == ("residual1",)
    # read by a reduction or a matmul inside the kernel: a tile of each sits in SRAM
    assert attn.materialised == ("scale", "softmax", "merge")
    assert ffn.inputs == ("residual1", "w1", "b1", "w2") and ffn.materialised == ("ln2", "gelu")
    plain = fuse_ops(transformer_block(), "elementwise", attention="naive")
    assert all(k.materialised == () for k in plain)
    assert [k.materialised for k in fuse_ops(transformer_block(), "elementwise") if k.materialised] == [
        ("scale", "softmax")]


def test_max_depth_caps_kernels():
    ks = fuse_ops(transformer_block(), "aggressive", max_depth=4)
    assert max(len(k.nodes) for k in ks) <= 4 and len(ks) > 2


def test_fusion_refuses_a_cycle():
    b = Builder("diamond")
    x = b.add("x", Op.INPUT, shape=("batch", 64))
    w = b.add("w", Op.PARAM, shape=(64, 64))
    m1 = b.add("m1", Op.MATMUL, (x, w))
    e1 = b.add("e1", Op.RELU, (m1,))
    e2 = b.add("e2", Op.GELU, (m1,))
    m2 = b.add("m2", Op.MATMUL, (e2, w))
    n = b.add("n", Op.ADD, (e1, m2))
    ks = fuse_ops(b.build((n,)), "elementwise")
    # joining n to m1's kernel would make it read m2's output while m2 reads e2 from it
    assert groups(ks) == [("m1", "e1", "e2"), ("m2", "n")]
    produced = set()
    for k in ks:  # kernels come in an executable order
        assert all(i in produced or i in ("x", "w") for i in k.inputs)
        produced.update(k.outputs)


def test_verifier_names_the_node_and_the_shapes():
    b = Builder("bad")
    x = b.add("x", Op.INPUT, shape=("batch", "seq", 512))
    w = b.add("w", Op.PARAM, shape=(1024, 4096))
    with pytest.raises(GraphError, match="node up"):
        b.add("up", Op.MATMUL, (x, w))
    g = transformer_block()
    broken = g.nodes[:-1] + (g.nodes[-1].__class__("residual2", Op.ADD, ("x", "up"), ("batch", "seq", 1024)),)
    with pytest.raises(GraphError, match="residual2"):
        verify(g.__class__(g.name, broken, g.outputs))


def test_model_params_are_checked():
    with pytest.raises(ConfigError, match="heads"):
        build("transformer_block", {"d_model": 1000, "heads": 16})
    with pytest.raises(ConfigError, match="graph"):
        build("resnet", {})
    with pytest.raises(ConfigError, match="params.width"):
        build("mlp", {"width": 3})


def test_flops_match_the_closed_form():
    d, s, b = 1024, 512, 8
    g = transformer_block(d, 16)
    dims = {"batch": b, "seq": s}
    flops = {n.name: n.flops(g, dims) for n in g.compute_nodes()}
    assert flops["qkv"] == 2 * b * s * d * 3 * d
    assert flops["scores"] == 2 * b * 16 * s * s * (d // 16)
    assert flops["up"] + flops["down"] == 2 * 2 * b * s * d * 4 * d
    assert g.node("scores").bytes(dims) == b * 16 * s * s * 2


BIG = Hardware(sram_bytes_per_core=1024 * MIB)  # everything fits: the minimum traffic


@pytest.mark.parametrize("b,s", [(1, 128), (8, 512), (4, 2048)])
def test_transformer_kernels_flops_and_minimum_bytes_by_hand(b, s):
    d, h, e = 1024, 16, 2  # bf16
    g = transformer_block(d, h)
    dims = {"batch": b, "seq": s}
    proj, attn, ffn = fuse_ops(g, "aggressive")
    tok = b * s
    cp, ca, cf = best_cost(g, proj, dims, BIG), best_cost(g, attn, dims, BIG), best_cost(g, ffn, dims, BIG)
    # ln1 and the QKV projection: reads x and the weight once, writes q, k and v
    assert cp.flops == 8 * tok * d + 2 * tok * d * 3 * d
    assert cp.bytes == tok * d * e + 3 * d * d * e + 3 * tok * d * e
    # attention core, output projection, residual: scores, scale, softmax, context, attn_out, residual
    assert ca.flops == 2 * b * h * s * s * (d // h) + b * h * s * s + 5 * b * h * s * s \
        + 2 * b * h * s * s * (d // h) + 2 * tok * d * d + tok * d
    # reads q, k, v (one query tile per sequence: K and V once), w_o and x, writes residual1: no scores leave
    assert ca.bytes == 3 * tok * d * e + d * d * e + tok * d * e + tok * d * e
    assert cf.flops == 8 * tok * d + 2 * tok * d * 4 * d + tok * 4 * d + 8 * tok * 4 * d + 2 * tok * 4 * d * d + tok * d
    assert cf.bytes == tok * d * e + (d * 4 * d + 4 * d + 4 * d * d) * e + tok * d * e
    assert ca.spill_bytes == cf.spill_bytes == 0


@pytest.mark.parametrize("b,s", [(1, 256), (8, 512)])
def test_unfused_attention_moves_the_scores_by_hand(b, s):
    d, h, e = 1024, 16, 2
    g = transformer_block(d, h)
    dims = {"batch": b, "seq": s}
    ks = {k.nodes[0]: k for k in fuse_ops(g, "elementwise", attention="naive")}
    scores = b * h * s * s * e
    qkv = b * s * d * e  # each of q, k, v
    # scores (+ scale): reads q and k once (k fits whole), writes the scaled scores
    assert best_cost(g, ks["scores"], dims, BIG).bytes == 2 * qkv + scores
    assert best_cost(g, ks["softmax"], dims, BIG).bytes == 2 * scores
    assert best_cost(g, ks["context"], dims, BIG).bytes == scores + qkv + qkv


@pytest.mark.parametrize("b,s", [(1, 64), (16, 256)])
def test_mlp_and_conv_minimum_bytes_by_hand(b, s):
    d, f, e = 512, 2048, 2
    g = mlp(d, f)
    up, down = fuse_ops(g, "elementwise")
    dims = {"batch": b, "seq": s}
    tok = b * s
    assert best_cost(g, up, dims, BIG).bytes == tok * d * e + (d * f + f) * e + tok * f * e
    assert best_cost(g, down, dims, BIG).bytes == tok * f * e + (f * d + d) * e + tok * d * e
    c, k = 64, 3
    conv = conv_block(c, k)
    (only,) = fuse_ops(conv, "aggressive")
    cd = {"batch": b, "hw": 32}
    px = b * 32 * 32
    cc = best_cost(conv, only, cd, BIG)
    assert cc.flops == 2 * (2 * px * c * k * k * c) + 5 * px * c  # two convs; bias, relu, bias, add, relu
    assert cc.bytes == px * c * e + 2 * (k * k * c * c + c) * e + px * c * e


def attention_only(s_dims=("batch", 16, "seq", 64)):
    b = Builder("attention")
    q = b.add("q", Op.INPUT, shape=s_dims)
    k = b.add("k", Op.INPUT, shape=s_dims)
    v = b.add("v", Op.INPUT, shape=s_dims)
    s = b.add("scores", Op.BATCH_MATMUL, (q, k), transpose_b=True)
    p = b.add("softmax", Op.SOFTMAX, (s,))
    return b.build((b.add("context", Op.BATCH_MATMUL, (p, v)),))


def test_flash_attention_io_grows_as_sram_shrinks():
    # K and V from HBM are re-read once per query tile (FlashAttention's Theta(N^2 d^2 / M) traffic)
    g = attention_only()
    (k,) = fuse_ops(g, "aggressive")
    dims = {"batch": 1, "seq": 4096}
    qkv = 16 * 4096 * 64 * 2
    for sram_mib, tile in ((64, 4096), (4, 512), (1, 64)):
        c = cost_kernel(g, k, dims, Hardware(sram_bytes_per_core=sram_mib * MIB), Tiling(tile, "stationary"))
        assert c.working_set < sram_mib * MIB
        assert c.spill_bytes == 0
        assert c.bytes == qkv + qkv + 2 * qkv * (4096 // tile)
    # the tile the model chooses shrinks with SRAM and the traffic grows
    moved = [best_cost(g, k, dims, Hardware(sram_bytes_per_core=m)).bytes for m in (64 * MIB, MIB, MIB // 4)]
    assert moved[0] < moved[1] < moved[2]


def test_naive_attention_spills_its_score_matrix_flash_does_not():
    g = attention_only()
    (k,) = fuse_ops(g, "aggressive")
    dims = {"batch": 1, "seq": 4096}
    hw = Hardware(sram_bytes_per_core=16 * MIB, hbm_bandwidth_bytes_per_s=0.4e12)
    flash = best_cost(g, k, dims, hw, attention="flash")
    naive = best_cost(g, k, dims, hw, attention="naive")
    assert flash.spill_bytes == 0 and flash.working_set < 16 * MIB
    # one head's 4096 x 4096 bf16 scores (32 MiB) alone overflow 16 MiB; the overflow goes out and back
    # once per (query tile, head)
    assert naive.working_set > 32 * MIB
    # what overflows first is the tile-independent matrix: written once per (sequence, head), read back once
    # per query tile of that head, like K and V of a flash kernel; the rest of the overflow goes out and back
    # once per tile, per head
    t = naive.tiling.tile_rows
    overflow = naive.working_set - 16 * MIB
    held = min(overflow, 32 * MIB)
    tiles = math.ceil(4096 / t)
    assert naive.spill_bytes == 16 * (held * (1 + tiles) + 2.0 * (overflow - held) * tiles)
    assert naive.bytes > 30 * flash.bytes and naive.seconds > 1.5 * flash.seconds


def test_spill_grows_smoothly_with_the_overflow():
    g = attention_only()
    (k,) = fuse_ops(g, "aggressive")
    dims = {"batch": 1, "seq": 2048}  # one head's naive scores: 8 MiB
    spills = np.array([cost_kernel(g, k, dims, Hardware(sram_bytes_per_core=m * MIB // 4), Tiling(256, "stationary"),
                          attention="naive").spill_bytes for m in range(20, 48)])
    assert spills[-1] == 0 < spills[0]
    steps = np.diff(spills)
    assert (steps <= 0).all() and np.allclose(steps[spills[1:] > 0], steps[0])  # linear in the overflow


def test_compute_pads_rows_to_the_matrix_unit_only():
    g = mlp(512, 2048)
    up = fuse_ops(g, "elementwise")[0]
    dims = {"batch": 1, "seq": 100}
    exact = cost_kernel(g, up, dims, Hardware(mma_rows=4), Tiling(64, "stationary"))
    padded = cost_kernel(g, up, dims, Hardware(mma_rows=16), Tiling(64, "stationary"))
    assert padded.compute_s == pytest.approx(exact.compute_s * 112 / 100)
    # the row tile does not pad the compute: a tile of 64 or 256 rows computes the same
    other = cost_kernel(g, up, dims, Hardware(mma_rows=16), Tiling(256, "stationary"))
    assert other.compute_s == padded.compute_s


def test_more_sram_or_bandwidth_never_slows_a_kernel():
    g = transformer_block(1024, 16)
    for lvl in ("elementwise", "aggressive"):
        for k in fuse_ops(g, lvl):
            for b, s in ((1, 400), (8, 512), (8, 2048)):
                dims = {"batch": b, "seq": s}
                for att in ("flash", "naive"):
                    by_sram = [best_cost(g, k, dims, Hardware(sram_bytes_per_core=m * MIB), attention=att).seconds
                               for m in (2, 4, 8, 24, 64)]
                    by_bw = [best_cost(g, k, dims, Hardware(hbm_bandwidth_bytes_per_s=x), attention=att).seconds
                             for x in (0.4e12, 0.8e12, 1.6e12, 3.2e12)]
                    assert by_sram == sorted(by_sram, reverse=True) and by_bw == sorted(by_bw, reverse=True)


def test_demand_is_bytes_over_time_and_launch_demands_none():
    g = mlp(1024, 4096)
    k = fuse_ops(g, "none")[2]  # gelu: memory-bound
    c = best_cost(g, k, {"batch": 8, "seq": 512}, HW)
    assert c.memory_bound
    assert c.demand == pytest.approx(c.bytes / HW.hbm_bandwidth_bytes_per_s / c.seconds)
    assert c.demand < 1 and c.seconds == pytest.approx(HW.launch_s + c.memory_s)


def test_layout_keeps_weights_stationary_only_when_they_fit():
    g = mlp(1024, 4096)
    ks = fuse_ops(g, "elementwise")
    dims = {"batch": 8, "seq": 512}
    roomy = choose_layout(g, ks, dims, Hardware(sram_bytes_per_core=64 * MIB))
    tight = choose_layout(g, ks, dims, Hardware(sram_bytes_per_core=4 * MIB))  # 8 MiB of weights per kernel
    assert {t.weights for t in tight} == {"streamed"}
    assert all(t.weights == "stationary" or t.tile_rows >= 4096 for t in roomy)


def test_envelope_parsing_and_errors():
    assert [(b.min, b.opt, b.max) for b in parse_envelope("seq", [128, 256])] == [(1, 128, 128), (129, 256, 256)]
    explicit = parse_envelope("seq", [{"min": 64, "opt": 96, "max": 128}, {"min": 256, "opt": 512, "max": 512}])
    assert explicit[0].opt == 96
    for bad in ([], [256, 128], [0, 4], [{"min": 5, "opt": 4, "max": 6}], ["a"]):
        with pytest.raises(ConfigError, match="envelope.seq"):
            parse_envelope("seq", bad)
    with pytest.raises(ConfigError, match="fusion"):
        CompileOptions(fusion="max")
    with pytest.raises(ConfigError, match="out_of_envelope"):
        CompileOptions(out_of_envelope="ignore")


def plan_for(policy, envelope=(128, 256, 512), limit=8):
    return compile_plan(transformer_block(512, 8), HW, {"seq": list(envelope)},
                        CompileOptions(out_of_envelope=policy, recompile_limit=limit))


def classify(plan, values):
    req = hand_requests(np.arange(len(values), dtype=float))
    req = req.__class__(req.arrival_s, req.stream, {"seq": np.array(values, dtype=np.int64)})
    return plan.classify(req)


def test_lookup_hits_and_policies():
    values = [100, 300, 600, 512, 513]
    reject = classify(plan_for("reject"), values)
    assert reject.bucket.tolist() == [0, 2, -1, 2, -1]
    assert reject.labels["mapping"].tolist() == [HIT, HIT, REJECTED, HIT, REJECTED]
    fb = classify(plan_for("fallback"), values)
    generic = fb.bucket_names.index("generic")
    assert fb.bucket.tolist() == [0, 2, generic, 2, generic]
    assert fb.info["reasons"] == ("seq > 512 (max of the largest bucket)",)
    gap = [{"min": 64, "opt": 128, "max": 128}, {"min": 256, "opt": 512, "max": 512}]
    pad = classify(plan_for("pad", gap), [50, 200, 100, 600])
    assert [pad.bucket_names[b] if b >= 0 else None for b in pad.bucket.tolist()] == \
        ["pad->seq[64..128]", "pad->seq[256..512]", "seq[64..128]", None]
    assert pad.labels["mapping"].tolist() == [PADDED, PADDED, HIT, REJECTED]
    assert set(pad.info["reasons"]) == {"seq < 64 (min of the smallest bucket)",
                                        "seq in the gap (128, 256) between buckets",
                                        "seq > 512 (max of the largest bucket)"}


def test_miss_reasons_per_gap_equal_the_reason_of_each_value():
    """One reason per gap (miss_reasons) gives each missed value the reason, and the numbering, of the plain loop."""
    rng = np.random.default_rng(5)
    envelopes = [[128, 256, 512], [64], [{"min": 64, "opt": 128, "max": 128}, {"min": 256, "opt": 512, "max": 512}],
                 [{"min": 10, "opt": 10, "max": 20}, {"min": 40, "opt": 50, "max": 60}, {"min": 61, "opt": 61,
                                                                                         "max": 90}]]
    for spec in envelopes:
        buckets = parse_envelope("seq", spec)
        for _ in range(20):
            values = np.unique(rng.integers(1, 700, rng.integers(0, 60)))
            missed = values[[lookup(buckets, int(v)) < 0 for v in values.tolist()]] if len(values) else values
            reasons, codes = miss_reasons(buckets, missed)
            plain: list[str] = []
            numbers = []
            for v in missed.tolist():
                r = miss_reason(buckets, v)
                if r not in plain:
                    plain.append(r)
                numbers.append(plain.index(r))
            assert reasons == plain and codes.dtype == np.int16 and codes.tolist() == numbers


def test_recompile_adds_buckets_until_the_limit_then_falls_back():
    c = classify(plan_for("recompile", limit=2), [600, 700, 1500, 3000, 1000])
    names = [c.bucket_names[b] for b in c.bucket.tolist()]
    assert names == ["seq[513..1024]*", "seq[513..1024]*", "seq[1025..2048]*", "generic", "seq[513..1024]*"]
    assert c.labels["mapping"].tolist() == [RECOMPILED, HIT, RECOMPILED, FALLBACK, HIT]
    assert c.extra_s.tolist() == [0.25, 0.0, 0.25, 0.0, 0.0]
    assert "seq: recompile limit (2) reached" in c.info["reasons"]


def test_padding_waste_and_fallback_are_charged_as_mapping_fallback():
    gap = [{"min": 64, "opt": 128, "max": 128}, {"min": 256, "opt": 512, "max": 512}]
    c = classify(plan_for("pad", gap), [200])
    t, _, waste = c.cost(int(c.bucket[0]), 1, 200)
    assert 0 < waste < t
    f = classify(plan_for("fallback"), [600])
    t, _, slow = f.cost(int(f.bucket[0]), 1, 600)
    assert slow > 0.3 * t  # generic kernels at 1.5x over an unfused roofline


def test_plan_predictions_and_trace_of_passes():
    plan = compile_plan(transformer_block(), HW, {"seq": [128, 256, 512]}, CompileOptions(max_batch=4), trace=True)
    assert [name for name, _ in plan.passes] == ["input", "fuse_ops", "choose_layout", "place_buckets", "plan"]
    for b in plan.buckets:
        assert len(b.predicted_s) == 4 and list(b.predicted_s) == sorted(b.predicted_s)
    assert plan.buckets[0].predicted_s[0] < plan.buckets[2].predicted_s[0]
    assert sorted(c for b in plan.buckets for c in b.cores) == [0, 1, 2, 3]  # 3 buckets share 4 cores


def test_static_placement_longest_processing_time_first():
    assert place_buckets([3.0, 1.0, 1.0, 1.0], 2) == ((0,), (1,), (1,), (1,))
    assert place_buckets([3.0, 1.0], 4) == ((0, 1, 2), (3,))

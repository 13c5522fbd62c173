"""Compiler passes against hand-built expectations (TVM's FuseOps tests and tinygrad's kernel counts)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import hand_requests

from workbench.compiler import CompileOptions, compile_plan
from workbench.compiler.cost import Tiling, choose_layout, cost_kernel
from workbench.compiler.envelope import FALLBACK, HIT, PADDED, RECOMPILED, REJECTED, parse_envelope
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
    assert len(fuse_ops(g, "none")) == 18
    assert groups(fuse_ops(g, "elementwise")) == [
        ("ln1",), ("qkv", "q", "k", "v"), ("scores", "scale"), ("softmax",), ("context", "merge"),
        ("attn_out", "residual1"), ("ln2",), ("up", "up_bias", "gelu"), ("down", "residual2")]
    assert groups(fuse_ops(g, "aggressive")) == [
        ("ln1", "qkv", "q", "k", "v", "scores", "scale", "softmax", "context", "merge", "attn_out", "residual1"),
        ("ln2", "up", "up_bias", "gelu", "down", "residual2")]


def test_conv_and_mlp_kernel_counts():
    assert [len(fuse_ops(conv_block(), lvl)) for lvl in ("none", "elementwise", "aggressive")] == [7, 2, 1]
    assert [len(fuse_ops(mlp(), lvl)) for lvl in ("none", "elementwise", "aggressive")] == [5, 2, 1]
    assert groups(fuse_ops(conv_block(), "elementwise")) == [("conv1", "bias1", "relu1"),
                                                             ("conv2", "bias2", "residual", "relu2")]


def test_kernel_boundaries_inputs_outputs_and_materialised():
    attn, ffn = fuse_ops(transformer_block(), "aggressive")
    assert attn.inputs == ("x", "w_qkv", "w_o") and attn.outputs == ("residual1",)
    # read whole by a reduction or a matmul inside the kernel: must sit in SRAM
    assert attn.materialised == ("ln1", "q", "k", "v", "scale", "softmax", "merge")
    assert ffn.inputs == ("residual1", "w1", "b1", "w2") and ffn.materialised == ("ln2", "gelu")
    assert all(k.materialised == () for k in fuse_ops(transformer_block(), "elementwise"))


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


def test_roofline_tags_and_spills():
    g = transformer_block(1024, 16)
    dims = {"batch": 8, "seq": 512}
    none = fuse_ops(g, "none")
    by_name = {k.nodes[0]: k for k in none}
    big_matmul = cost_kernel(g, by_name["up"], dims, HW, Tiling(256, "stationary"))
    softmax = cost_kernel(g, by_name["softmax"], dims, HW, Tiling(256, "stationary"))
    assert not big_matmul.memory_bound and softmax.memory_bound
    assert big_matmul.seconds == pytest.approx(HW.launch_s + big_matmul.compute_s)
    attn = fuse_ops(g, "aggressive")[0]
    small = Hardware(sram_bytes_per_core=8 * MIB)
    c = cost_kernel(g, attn, dims, small, Tiling(256, "streamed"))
    assert c.spill_bytes == pytest.approx(2 * (c.working_set - 8 * MIB))
    assert all(cost_kernel(g, k, dims, small, Tiling(256, "streamed")).spill_bytes == 0 for k in none)


def test_layout_keeps_weights_stationary_only_when_they_fit():
    g = mlp(1024, 4096)
    ks = fuse_ops(g, "elementwise")
    dims = {"batch": 8, "seq": 512}
    roomy = choose_layout(g, ks, dims, Hardware(sram_bytes_per_core=64 * MIB))
    tight = choose_layout(g, ks, dims, Hardware(sram_bytes_per_core=4 * MIB))  # 8 MiB of weights per kernel
    assert {t.weights for t in roomy} == {"stationary"}
    assert {t.weights for t in tight} == {"streamed"}


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

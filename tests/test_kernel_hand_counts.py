"""Every kernel of the transformer block, counted by hand: bytes, spill, working set and time.

The block is ``transformer_block(1024, 16)`` (d_model 1024, 16 heads of 64, d_ff 4096, bf16) on
one core of a chip with 4 MiB of SRAM, 0.8 TB/s of HBM, 50 TFLOP/s and a 10 us launch, at
batch 1 and sequence 512 and 2048, under every plan: no fusion, elementwise fusion and
aggressive fusion, each with flash (tiled) and naive attention. Each kernel is priced at a
stated tiling; the numbers below are written out from how a tiled kernel moves data, not read
from the library:

* a kernel reads its inputs once, K and V once per query tile, writes its outputs once, and
  reads its weights once (held in SRAM) or once per row tile (streamed);
* a tile holds, per row: a whole row of each row tensor it reads or makes (an input from HBM from its first
  reader on: a residual added by the epilogue is loaded there), one head's slice of a
  per-head tensor, one ``128``-column output tile of a matmul output nothing inside reduces over
  (and of its epilogues), a ``256``-column block of a down-projection's streamed input, a
  ``128``-key block of one head's scores (flash), a whole row of scores of one head when they cross
  HBM; and whatever the tile: a ``128``-key block of K and of V, a whole ``s x s`` score matrix of
  one head (naive, in the kernel that runs the softmax), and the weights: every weight if held, or, at
  the matmul that streams it only, its two staged ``128 x 128`` tiles (64 KiB);
* overflow past SRAM: its tile-independent part is written once per sequence and read back once
  per query tile, the rest goes out and back once per tile, each per head inside the head loop;
  spilled bytes count double (half the streaming bandwidth);
* time = launch + max(FLOPs / peak, bytes / bandwidth).

The table gives, per kernel, the working set at its peak op as (bytes per tile row, fixed bytes,
whether that op is inside the head loop); reads, K/V bytes, writes and weights follow from the
shapes. The aggressive plan's last kernel (the MLP's GEMM chain) is the one the fusion case is
about: its d_ff-wide intermediate makes a 12 KiB row, 5 times the elementwise MLP kernels'.
"""

from __future__ import annotations

import math

import pytest

from workbench.compiler.cost import Tiling, best_cost, cost_kernel
from workbench.compiler.fusion import fuse_ops
from workbench.hardware import MIB, Hardware
from workbench.models import transformer_block

D, H, DH, F, E = 1024, 16, 64, 4096, 2  # d_model, heads, head width, d_ff, bytes per element
KIB = 1024
HW = Hardware(cores=4, peak_flops_per_core=50e12, sram_bytes_per_core=4 * MIB, hbm_bandwidth_bytes_per_s=0.8e12,
              launch_s=10e-6, mma_rows=16)
G = transformer_block(D, H)
W_QKV, W_O, W_UP, W_DOWN = D * 3 * D * E, D * D * E, (D * F + F) * E, F * D * E
STAGE = 2 * 128 * 128 * E  # a streamed weight's two staged 128 x 128 tiles, at the matmul that reads it


def flops(s: int) -> dict[str, float]:
    """FLOPs of every op at sequence ``s`` (batch 1)."""
    att = 2 * H * s * s * DH
    return {"ln1": 8 * s * D, "qkv": 2 * s * D * 3 * D, "q": 0, "k": 0, "v": 0, "scores": att, "scale": H * s * s,
            "softmax": 5 * H * s * s, "context": att, "merge": 0, "attn_out": 2 * s * D * D, "residual1": s * D,
            "ln2": 8 * s * D, "up": 2 * s * D * F, "up_bias": s * F, "gelu": 8 * s * F, "down": 2 * s * F * D,
            "residual2": s * D}


def rows(s: int) -> dict[str, int]:
    """Bytes of each activation at sequence ``s``."""
    act, wide, sc = s * D * E, s * F * E, H * s * s * E
    return {"x": act, "ln1": act, "q": act, "k": act, "v": act, "qkv": 3 * act, "scale": sc, "softmax": sc,
            "merge": act, "residual1": act, "ln2": act, "gelu": wide, "residual2": act}


def kernels(s: int, plan: str):
    """Per kernel of ``plan`` at sequence ``s``: (first op, tiling, reads, K/V read per query tile, writes, weight
    bytes, working set at the peak op as (bytes per tile row, fixed bytes besides weights, inside the head loop))."""
    r = rows(s)
    head_row = s * E  # one head's row of scores crossing HBM
    kv_block = 128 * DH * E  # a 128-key block of one head's K or V: 16 KiB
    if plan == "elementwise/flash":
        return [
            ("ln1", Tiling(128, "stationary"), r["x"], 0, r["ln1"], 0, (D * E, 0, False)),
            # the row panel (2 KiB) and one 128-column output tile (256 B) at the matmul, w_qkv staged
            ("qkv", Tiling(128, "streamed"), r["ln1"], 0, r["qkv"], W_QKV, (2 * KIB + 256, 0, False)),
            # at the scores: one head's q row (128 B), a block of scores (256 B), a key block of K and of V; at the
            # merge (outside the head loop) the merged row, 2 KiB: the larger at 512 rows
            ("scores", Tiling(512, "stationary"), r["q"], r["k"] + r["v"], r["merge"], 0, (2 * KIB, 0, False)),
            # w_o (2 MiB) held; the merged row and a 128-column tile of attn_out at the matmul (x, the residual, is
            # loaded by the epilogue, block by block, after it)
            ("attn_out", Tiling(256, "stationary"), r["merge"] + r["x"], 0, r["residual1"], W_O,
             (2 * KIB + 256, 0, False)),
            ("ln2", Tiling(128, "stationary"), r["residual1"], 0, r["ln2"], 0, (D * E, 0, False)),
            ("up", Tiling(256, "streamed"), r["ln2"], 0, r["gelu"], W_UP, (2 * KIB + 256, 0, False)),
            # the down-projection streams its d_ff-wide input in 256-column blocks (512 B) and accumulates its
            # 2 KiB output row; its weight stages 2 x 128 rows; the residual comes in with the epilogue
            ("down", Tiling(512, "streamed"), r["gelu"] + r["residual1"], 0, r["residual2"], W_DOWN,
             (2 * KIB + 512, 0, False)),
        ]
    if plan == "elementwise/naive":
        flash = kernels(s, "elementwise/flash")
        return [
            *flash[:2],
            # scores + scale: no softmax here, so the scores stay one output block; the scaled scores leave as
            # whole rows of one head: that row is the peak
            ("scores", Tiling(128, "stationary"), r["q"], r["k"], r["scale"], 0, (head_row, 0, True)),
            ("softmax", Tiling(128, "stationary"), r["scale"], 0, r["softmax"], 0, (head_row, 0, True)),
            # context + merge: one head's row of probabilities, its context row and a key block of V at the
            # context (peak at 2048); the merged row at the merge (peak at 512)
            ("context", Tiling(128, "stationary"), r["softmax"], r["v"], r["merge"], 0,
             (head_row + DH * E, kv_block, True) if s == 2048 else (2 * KIB, 0, False)),
            *flash[3:],
        ]
    if plan.startswith("aggressive"):
        naive = plan.endswith("naive")
        return [
            ("ln1", Tiling(128, "streamed"), r["x"], 0, r["qkv"], W_QKV, (2 * KIB + 256, 0, False)),
            # flash: the merged row and a tile of attn_out at the output projection, w_o held (x, the residual, loaded
            # by the epilogue); naive at 2048: at the scores, one head's whole s x s matrix, a key block of K (V is
            # loaded by the context, after it) and one head's q row (128 B); at 512 that matrix (512 KiB) is smaller
            # than the output projection's tile
            ("scores", Tiling(256, "stationary"), r["q"] + r["x"], r["k"] + r["v"], r["residual1"], W_O,
             (DH * E, s * s * E + kv_block, True) if naive and s == 2048 else (2 * KIB + 256, 0, False)),
            # the GEMM chain: the residual's row, ln2's row and the whole d_ff-wide intermediate (8 KiB)
            ("ln2", Tiling(256, "streamed"), r["residual1"], 0, r["residual2"], W_UP + W_DOWN,
             (12 * KIB, 0, False)),
        ]
    raise ValueError(plan)


def hand_cost(s: int, tiling: Tiling, reads: float, kv: float, writes: float, weights: float, peak) -> dict:
    """Bytes, spill and working set of one kernel by the rules in the module docstring."""
    per_row, fixed, in_loop = peak
    t = min(tiling.tile_rows, s)
    tiles = math.ceil(s / t)  # batch 1: row tiles = query tiles
    stationary = tiling.weights == "stationary"
    resident = weights if stationary else (STAGE if weights else 0)
    ws = fixed + t * per_row + resident
    overflow = max(0.0, ws - HW.sram_bytes_per_core)
    held = min(overflow, fixed)
    spill = (H if in_loop else 1) * (held * (1 + tiles) + 2 * (overflow - held) * tiles)
    moved = reads + kv * tiles + writes + weights * (1 if stationary else tiles) + spill / 0.5
    return {"bytes": moved, "spill": spill, "ws": ws}


PLANS = ("elementwise/flash", "elementwise/naive", "aggressive/flash", "aggressive/naive")


@pytest.mark.parametrize("s", [512, 2048])
@pytest.mark.parametrize("plan", PLANS)
def test_every_fused_kernel_by_hand(plan, s):
    level, attention = plan.split("/")
    ks = {k.nodes[0]: k for k in fuse_ops(G, level, attention=attention)}
    expected = kernels(s, plan)
    assert [e[0] for e in expected] == list(ks)  # the partition itself (and its order)
    f = flops(s)
    dims = {"batch": 1, "seq": s}
    for first, tiling, reads, kv, writes, weights, peak in expected:
        k = ks[first]
        c = cost_kernel(G, k, dims, HW, tiling, attention=attention)
        hand = hand_cost(s, tiling, reads, kv, writes, weights, peak)
        assert c.flops == sum(f[m] for m in k.nodes), first
        assert c.working_set == hand["ws"], (first, c.working_set, hand["ws"])
        assert c.spill_bytes == pytest.approx(hand["spill"], rel=1e-12), first
        assert c.bytes == pytest.approx(hand["bytes"], rel=1e-12), (first, c.bytes, hand["bytes"])
        assert c.seconds == pytest.approx(HW.launch_s + max(c.flops / HW.peak_flops_per_core,
                                                            hand["bytes"] / HW.hbm_bandwidth_bytes_per_s))
        # the compiler's own choice is never slower than the tiling priced here
        assert best_cost(G, k, dims, HW, attention=attention).seconds <= c.seconds


@pytest.mark.parametrize("s", [512, 2048])
def test_unfused_kernels_by_hand(s):
    """No fusion: 18 kernels, each reads its inputs and writes its output once (4 MiB holds every tile here)."""
    r = rows(s)
    dims = {"batch": 1, "seq": s}
    big = Hardware(cores=4, peak_flops_per_core=50e12, sram_bytes_per_core=64 * MIB,
                   hbm_bandwidth_bytes_per_s=0.8e12, launch_s=10e-6)
    weights = {"qkv": W_QKV, "attn_out": W_O, "up": D * F * E, "up_bias": F * E, "down": W_DOWN}
    moved = {"ln1": 2 * r["x"], "qkv": r["ln1"] + r["qkv"], "q": r["qkv"] + r["q"], "k": r["qkv"] + r["k"],
             "v": r["qkv"] + r["v"], "scores": r["q"] + r["k"] + r["scale"], "scale": 2 * r["scale"],
             "softmax": 2 * r["scale"], "context": r["softmax"] + r["v"] + r["q"], "merge": 2 * r["q"],
             "attn_out": 2 * r["merge"], "residual1": 3 * r["x"], "ln2": 2 * r["x"], "up": r["ln2"] + r["gelu"],
             "up_bias": 2 * r["gelu"], "gelu": 2 * r["gelu"], "down": r["gelu"] + r["x"], "residual2": 3 * r["x"]}
    f = flops(s)
    for k in fuse_ops(G, "none"):
        (op,) = k.nodes
        c = best_cost(G, k, dims, big, attention="flash")
        assert c.spill_bytes == 0 and c.flops == f[op]
        assert c.bytes == moved[op] + weights.get(op, 0), op  # every weight fits and is held: read once


def test_the_review_kernel_is_gone_and_the_chain_is_what_spills():
    """The review's aggressive kernel (LN1 + QKV + attention + out-projection at seq 2048 holding K and V of the
    whole sequence on 4 MiB: 1.141 GB, 1,436 us) no longer exists: the projection and the attention are two
    kernels that move Q, K, V and O once plus K/V per query tile, and both are compute-bound. On 2 MiB it is the
    MLP chain that cannot hold its tile."""
    dims = {"batch": 1, "seq": 2048}
    ks = fuse_ops(G, "aggressive")
    assert not any({"qkv", "scores"} <= set(k.nodes) for k in ks)
    costs = {k.nodes[0]: best_cost(G, k, dims, HW) for k in ks}
    proj, attention = costs["ln1"], costs["scores"]
    assert proj.bytes + attention.bytes < 0.16e9
    for c in (proj, attention):
        assert c.seconds == pytest.approx(HW.launch_s + c.compute_s)  # compute-bound
    assert proj.seconds + attention.seconds < 0.75e-3
    tight = Hardware(cores=4, peak_flops_per_core=50e12, sram_bytes_per_core=2 * MIB,
                     hbm_bandwidth_bytes_per_s=0.8e12, launch_s=10e-6)
    chain = best_cost(G, ks[2], dims, tight)
    # its 12 KiB row: 128 rows would need 1.5 MiB, 256 rows 3 MiB; it spills or re-reads 16 MiB of weights once per
    # small tile
    assert chain.spill_bytes > 0 or chain.tiling.tile_rows <= 64
    assert chain.bytes > 3 * (W_UP + W_DOWN)

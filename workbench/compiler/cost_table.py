"""The roofline cost model compiled: a mapping's kernels costed at one (batch, shape) in microseconds.

:mod:`workbench.compiler.cost` is the readable model: :func:`~workbench.compiler.cost.footprint`
walks the graph for every kernel at every shape, then :func:`~workbench.compiler.cost.best_cost`
tries each tiling. The runtime asks the plan for a batch's cost the first time it meets a
(bucket, batch size, shape), so a cold plan paid that walk thousands of times (a 50k-request
``shape_drift`` run: 1.8 s cold against 0.05 s warm).

Here the walk is done once per mapping (:func:`~workbench.compiler.cost_flat.flatten`, flat
tables), and :func:`kernel_costs`, compiled with numba, evaluates footprint, every candidate
tiling and the choice of the cheapest with the same float operations in the same order as the
reference, so a plan's costs are the same bit for bit whichever path made them
(``tests/test_cost_table.py``). It is an entry point of the ahead-of-time build
(:mod:`workbench.aot`): its argument types are fixed there.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from workbench.compiler.cost import KEY_BLOCK, SPILL_EFFICIENCY, WEIGHT_BLOCK
from workbench.compiler.cost_flat import BATCH, FLOP_CONV, FLOP_ELEM, FLOP_MATMUL, VALUE


@njit(cache=True, _nrt=False)
def _dims(ti, i, batch, value, out):
    for j in range(4):
        c = ti[i, j]
        out[j] = batch if c == BATCH else value if c == VALUE else c


@njit(cache=True, _nrt=False)
def _prod(s, n):
    p = 1
    for j in range(n):
        p *= s[j]
    return p


@njit(cache=True, _nrt=False)
def _rows(s, ndim, per_head):
    rows = _prod(s, ndim - 1) if ndim > 1 else 1
    return rows // s[1] if per_head else rows


@njit(cache=True, _nrt=False)
def _footprint(ti, tout, ki, ops, ops_in1, live, live_at, k, batch, value, naive, fixed, per_row,  # noqa: C901
               loop, stg, s, s2, tf, tr):
    """footprint() of kernel ``k``; fills ``fixed``/``per_row``/``loop`` (1.0 inside the head loop)/``stg`` (the
    staging blocks of the weight the op streams) per op position, returns the scalars.

    ``s``, ``s2`` (int64, 4) and ``tf``, ``tr`` (float64, the kernel's tensors) are scratch.
    """
    t0, t1 = ki[k, 0], ki[k, 1]
    naive = naive and ki[k, 9] == 1  # only a kernel that runs the softmax holds whole score matrices
    for i in range(t1 - t0):
        tf[i], tr[i] = 0.0, 0.0
    _dims(ti, ki[k, 2], batch, value, s)
    tokens = _rows(s, ti[ki[k, 2], 4], ti[ki[k, 2], 7] == 1)
    seq = tokens
    if ki[k, 3] >= 0:
        _dims(ti, ki[k, 3], batch, value, s)
        seq = s[2]
    flops = 0.0
    for o in range(ki[k, 4], ki[k, 5]):
        _dims(ti, ops[o, 2], batch, value, s)
        numel = _prod(s, ti[ops[o, 2], 4])
        if ops[o, 0] == FLOP_ELEM:
            flops += ops[o, 1] * numel
        elif ops[o, 0] == FLOP_MATMUL:
            _dims(ti, ops[o, 3], batch, value, s2)
            flops += 2.0 * numel * s2[ti[ops[o, 3], 4] - 1]
        elif ops[o, 0] == FLOP_CONV:
            _dims(ti, ops_in1[o], batch, value, s2)
            flops += 2.0 * numel * s2[0] * s2[1] * s2[2]
    weight = stage = in_b = kv_b = 0.0
    out_b, heads, have_heads = 0, 1, False
    for i in range(t0, t1):
        _dims(ti, i, batch, value, s)
        nd, item = ti[i, 4], ti[i, 5]
        size = _prod(s, nd) * item
        if tout[i] == 1:
            out_b += size
        if ti[i, 6] == 1:  # a weight
            weight += size
            if nd >= 2:
                stage = max(stage, float(min(size, 2 * WEIGHT_BLOCK * WEIGHT_BLOCK * item)))
            continue
        per_head, rhs, inside = ti[i, 7] == 1, ti[i, 8] == 1, ti[i, 9] == 1
        if per_head:
            heads = s[1] if not have_heads else max(heads, s[1])
            have_heads = True
        width = size / max(_rows(s, nd, per_head), 1)
        hd = s[1] if per_head else 1
        f, r = 0.0, width
        if per_head and s[3] == s[2] and not rhs:  # scores [b, h, s, s]
            if not inside or tout[i] == 1:
                f, r = 0.0, float(s[3] * item)
            elif naive:
                f, r = float(s[2] * s[3] * item), 0.0
            else:
                f, r = 0.0, float(min(s[3], KEY_BLOCK) * item)
        elif rhs:
            f, r = min(s[2], KEY_BLOCK) * width / hd, 0.0
        elif per_head:
            f, r = 0.0, width / hd
        if ti[i, 10] > 0:  # a tile holds only part of a row: an output tile, a streamed input (cost.row_caps)
            r = min(r, float(ti[i, 10] * item))
        if not inside:
            if rhs:
                kv_b += size
            else:
                in_b += size
        tf[i - t0], tr[i - t0] = f, r
    for p in range(ki[k, 5] - ki[k, 4]):
        a, b = 0.0, 0.0
        for j in range(live_at[ki[k, 4] + p], live_at[ki[k, 4] + p + 1]):
            a += tf[live[j] - t0]
            b += tr[live[j] - t0]
        fixed[p], per_row[p] = a, b
        loop[p] = 1.0 if ti[ops[ki[k, 4] + p, 2], 7] == 1 else 0.0
        w = ops_in1[ki[k, 4] + p]
        stg[p] = 0.0
        if w >= 0 and ti[w, 6] == 1 and ti[w, 4] >= 2:  # a weight this op streams: its staged tiles
            _dims(ti, w, batch, value, s)
            stg[p] = 0.0 + float(min(_prod(s, ti[w, 4]) * ti[w, 5], 2 * WEIGHT_BLOCK * WEIGHT_BLOCK * ti[w, 5]))
    return flops, tokens, heads, seq, in_b, kv_b, float(out_b), weight, stage


@njit(cache=True, _nrt=False)
def _cost(fp, fixed, per_row, loop, stg, n_pos, tile, stationary, sram, bw, peak, launch, mma, fa, fb):
    """cost_tiled(): (seconds, memory seconds, bytes moved, working set, raw spill bytes) of one tiling."""
    flops, tokens, heads, seq, in_b, kv_b, out_b, weight, stage = fp
    t = min(tile, tokens)
    tiles = math.ceil(tokens / t)
    query_tiles = math.ceil(seq / min(t, seq))
    seqs = max(tokens // seq, 1)
    ws = fixed[0] + t * per_row[0] + (weight if stationary else stg[0])
    for p in range(1, n_pos):
        ws = max(ws, fixed[p] + t * per_row[p] + (weight if stationary else stg[p]))
    spill = 0.0
    for p in range(n_pos):  # spill_bytes(): the worst op's overflow, priced as a tiled kernel moves it
        overflow = max(0.0, fixed[p] + t * per_row[p] + (weight if stationary else stg[p]) - sram)
        held = min(overflow, fixed[p])
        moved = held * seqs * (1 + query_tiles) + 2.0 * (overflow - held) * tiles
        spill = max(spill, moved * (heads if loop[p] == 1.0 else 1))
    weights = weight * (1 if stationary else tiles)
    moved = in_b + kv_b * query_tiles + out_b + weights + spill / SPILL_EFFICIENCY
    padded = math.ceil(tokens / mma) * mma
    compute_s = flops * padded / tokens / peak
    memory_s = moved / bw
    seconds = fa + fb * (launch + max(compute_s, memory_s))
    return seconds, memory_s, moved, ws, spill


@njit(cache=True, _nrt=False)
def kernel_costs(ti, tout, ki, ops, ops_in1, live, live_at, fit, k0, k1, batch, value, naive, sram, bw, peak,
                 launch, mma, tiles, scr_i, scr_f, out):
    """Each kernel's (seconds, memory seconds, raw spill bytes) at (batch, value), kernels ``k0``..``k1`` (one
    mapping of concatenated tables), into ``out[k - k0]``.

    A specialised kernel takes the cheapest candidate tiling (ties: the first, as ``min``
    keeps it); the generic fallback keeps its own. Calibration is ``a + b x seconds``
    (``(0, 1)`` leaves the seconds as they are, bit for bit). Allocation-free (callable from
    the compiled event loop, no NRT): ``scr_i`` int64 [2, 4] and ``scr_f`` float64 [6, n]
    (n >= the kernels' most tensors and most ops, :func:`~workbench.compiler.cost_flat.scratch`)
    are scratch.
    """
    fixed, per_row, tf, tr, loop, stg = scr_f[0], scr_f[1], scr_f[2], scr_f[3], scr_f[4], scr_f[5]
    for k in range(k0, k1):
        fp = _footprint(ti, tout, ki, ops, ops_in1, live, live_at, k, batch, value, naive, fixed, per_row, loop, stg,
                        scr_i[0], scr_i[1], tf, tr)
        n_pos, tokens, weight = ki[k, 5] - ki[k, 4], fp[1], fp[7]
        fa, fb = fit[k, 0], fit[k, 1]
        o = k - k0
        if ki[k, 8] == 0:
            c = _cost(fp, fixed, per_row, loop, stg, n_pos, ki[k, 6], ki[k, 7] == 1, sram, bw, peak, launch, mma,
                      fa, fb)
            out[o, 0], out[o, 1], out[o, 2] = c[0], c[1], c[4]
            continue
        best_s, best_m, best_b, best_w, best_x = np.inf, 0.0, np.inf, np.inf, 0.0
        for t in tiles:
            for mode in range(2):  # streamed first (if weights exist), then stationary (if they fit)
                if mode == 0:
                    stationary = weight == 0.0
                elif weight != 0.0 and weight <= sram:
                    stationary = True
                else:
                    continue
                s, m, b, w, x = _cost(fp, fixed, per_row, loop, stg, n_pos, t, stationary, sram, bw, peak, launch, mma,
                                      fa, fb)
                if s < best_s or (s == best_s and (b < best_b or (b == best_b and w < best_w))):
                    best_s, best_m, best_b, best_w, best_x = s, m, b, w, x
            if t >= tokens:
                break
        out[o, 0], out[o, 1], out[o, 2] = best_s, best_m, best_x

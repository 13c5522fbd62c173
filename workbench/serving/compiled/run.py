"""The compiled serving loop's main loop: arrivals, the scheduler's batch, the bucket, the price, the tokens.

Line for line the ``while`` of :func:`workbench.serving.engine.simulate_tokens`, with the
bucket placement of :class:`workbench.serving.buckets.BucketState` and the price of
:meth:`workbench.serving.cost.IterationCost.pricer`; a row count met for the first time is
priced here too, as :meth:`~workbench.serving.cost.IterationCost.dense_seconds` prices it (the
compiler's cost model compiled, :func:`workbench.compiler.cost_table.kernel_costs`, then the
efficiency law), instead of a return to Python per row count. Layout names in :mod:`.layout`.
"""

from __future__ import annotations

import math

from numba import njit

from workbench.compiler.cost_table import _footprint, kernel_costs
from workbench.serving.compiled import layout as L
from workbench.serving.compiled import loop as K


@njit(cache=True, _nrt=False, inline="always")
def _finish(si, q, g, run, i, t):
    g[L.G_FINISH, i] = t
    q[L.Q_PHASE, i] = L.FINISHED
    K._remove(run, si[L.S_NRUN], q[L.Q_KEY, i])
    si[L.S_NRUN] -= 1
    K._release(si, q, i)
    si[L.S_DONE] += 1


@njit(cache=True, _nrt=False, inline="always")
def _emit(si, q, g, run, token_s, i, t):
    gen = q[L.Q_GEN, i]
    token_s[q[L.Q_OFFSET, i] + gen] = t
    if gen == 0:
        g[L.G_FIRST, i] = t
    q[L.Q_GEN, i] = gen + 1
    if gen + 1 == q[L.Q_OUT, i]:
        _finish(si, q, g, run, i, t)


@njit(cache=True, _nrt=False)
def _place(pi, pf, si, sizes, tokens):
    """(rows priced, generic?, pause s) of an iteration of ``tokens`` tokens (BucketState.place)."""
    if pi[L.P_NSIZES0] == 0:
        si[L.S_HIT] += 1
        return tokens, 0, 0.0
    m = si[L.S_NSIZES]
    k = 0
    while k < m and sizes[k] < tokens:  # bisect_left
        k += 1
    if k < m:
        size = sizes[k]
        if size == tokens:
            si[L.S_HIT] += 1
        else:
            si[L.S_PADDED] += 1
        si[L.S_PAD_TOKENS] += size - tokens
        return size, 0, 0.0
    if pi[L.P_RECOMPILE] and si[L.S_RECOMPILES] < pi[L.P_LIMIT]:
        size = 1
        while size < tokens:  # the next power of two
            size <<= 1
        K._insort(sizes, m, size)
        si[L.S_NSIZES] = m + 1
        si[L.S_RECOMPILES] += 1
        si[L.S_RECOMPILED] += 1
        si[L.S_PAD_TOKENS] += size - tokens
        return size, 0, pf[L.F_PAUSE]
    si[L.S_FALLBACK] += 1
    return tokens, 1, 0.0


@njit(cache=True, _nrt=False, inline="always")
def _gemm(pf, c, m, depth):
    """EfficiencyLaw.gemm_seconds(c, m, depth), the same float operations in the same order."""
    c = c * (1.0 + (pf[L.F_EPILOGUE_K] / depth if depth > 0.0 else 0.0)) / pf[L.F_ETA_C]
    m = m / pf[L.F_ETA_M]
    if pf[L.F_BLEND] <= 0.0:
        return pf[L.F_T0] + max(c, m)
    n = pf[L.F_BLEND]
    top = max(c, m)
    if top <= 0.0:
        return pf[L.F_T0]
    return pf[L.F_T0] + top * ((c / top) ** n + (m / top) ** n) ** (1.0 / n)


@njit(cache=True, _nrt=False, inline="always")
def _price(pi, pf, dense, s, gen, total, seqs, keys, cached):
    """IterationCost.pricer()'s seconds: every layer's dense kernels (``s``), all-reduces and paged attention,
    the embedding and the LM head, then the launches."""
    if total <= 0:
        return 0.0
    bw, d = pf[L.F_BW], pi[L.P_D]
    reduce = 2 * (pi[L.P_PARTS] * total * d * pi[L.P_ITEM] / bw) if pi[L.P_SHARED] else 0.0
    att = _gemm(pf, pf[L.F_ATT] * keys / pf[L.F_PEAK], pf[L.F_KV] * (cached + total) / bw, 0.0)
    layer = s + reduce + att
    embed = pf[L.F_EW_T0] + 2.0 * total * d * pi[L.P_ITEM] / bw / pf[L.F_ETA_EW] if pi[L.P_VOCAB] else 0.0
    if pi[L.P_GRAPHS] and total <= pi[L.P_GRAPH_TOKENS]:
        launches = 1
    else:
        launches = pi[L.P_LAYERS] * (pi[L.P_NK1] if gen else pi[L.P_NK0]) + pi[L.P_HEADK]
    return pi[L.P_LAYERS] * layer + dense[L.D_HEAD, seqs] + embed + launches * pf[L.F_LAUNCH]


@njit(cache=True, _nrt=False)
def _dense(pi, pf, cm, rows, gen):
    """IterationCost.dense_seconds(rows, gen): each dense kernel of one layer shard costed by the compiler's model
    (``kernel_costs``, the cheapest tiling at ``rows`` unless generic), timed by the efficiency law, summed."""
    ti, tout, ki, ops, ops_in1, live, live_at, fit, tiles, scr_i, scr_f, kd, out = cm
    k0, k1 = (pi[L.P_NSPEC], pi[L.P_NALL]) if gen else (0, pi[L.P_NSPEC])
    naive, peak, mma = pi[L.P_NAIVE] == 1, pf[L.F_PEAK_CORE], pi[L.P_MMA]
    s = 0.0
    for k in range(k0, k1):
        kernel_costs(ti, tout, ki, ops, ops_in1, live, live_at, fit, k, k + 1, 1, rows, naive, pi[L.P_SRAM],
                     pf[L.F_BW], peak, pf[L.F_LAUNCH], mma, tiles, scr_i, scr_f, out)
        fp = _footprint(ti, tout, ki, ops, ops_in1, live, live_at, k, 1, rows, naive, scr_f[0], scr_f[1], scr_f[4],
                        scr_f[5], scr_i[0], scr_i[1], scr_f[2], scr_f[3])
        flops, tokens = fp[0], fp[1]
        compute_s = flops * (math.ceil(tokens / mma) * mma) / tokens / peak  # cost_tiled's, whatever the tiling
        memory_s = pi[L.P_CORES] * out[0, 1]
        kind = kd[k, 0]
        if kind == L.GEMM:
            s += _gemm(pf, compute_s, memory_s, kd[k, 1])
        elif kind == L.NORM:
            s += pf[L.F_NORM_T0] + memory_s / pf[L.F_ETA_NORM]
        else:
            s += pf[L.F_EW_T0] + memory_s / pf[L.F_ETA_EW]
    if gen:
        s *= pf[L.F_SLOWDOWN]
    return s


@njit(cache=True, _nrt=False)
def run_tokens(pi, pf, si, sf, q, g, token_s, run, wait, swap, snap, dec, pre, sizes, dense, cm, rows):
    """Run until every request is done (``DONE``) or Python must answer (``NEED_ROOM``); ``cm``: the dense
    kernels' cost model (:func:`_dense`), which prices a row count not yet in ``dense``."""
    n = pi[L.P_N]
    while si[L.S_DONE] < n:
        if si[L.S_PENDING]:  # the built iteration: price it, then its tokens come out
            r, gen = si[L.S_ROWS], si[L.S_GEN]
            s = dense[gen, r]
            if s != s:
                s = _dense(pi, pf, cm, r, gen)
                dense[gen, r] = s
            j = si[L.S_NROWS]
            if j >= rows.shape[1]:
                return L.NEED_ROOM
            t = sf[L.T_NOW]
            tokens, prefill, nd, npre = si[L.S_NDEC], 0, si[L.S_NDEC], si[L.S_NPRE]
            for x in range(npre):
                prefill += pre[1, x]
            total = tokens + prefill
            price = _price(pi, pf, dense, s, gen, total, si[L.S_NDEC] + npre, sf[L.T_KEYS], float(si[L.S_CTX]))
            swap_s = sf[L.T_SWAP_BYTES] / pf[L.F_SWAP_BW]
            t_end = t + sf[L.T_PAUSE] + price + swap_s
            for x in range(npre):  # prefilled
                i, k = pre[0, x], pre[1, x]
                c = q[L.Q_CACHED, i] + k
                q[L.Q_CACHED, i] = c
                if c == q[L.Q_TARGET, i]:
                    q[L.Q_PHASE, i] = L.DECODE
                    _emit(si, q, g, run, token_s, i, t_end)
            for x in range(nd):  # decoded
                i = dec[x]
                q[L.Q_CACHED, i] += 1
                _emit(si, q, g, run, token_s, i, t_end)
            rows[0, j], rows[1, j], rows[2, j], rows[3, j], rows[4, j] = t, t_end, prefill, tokens, tokens + npre
            rows[5, j], rows[6, j], rows[7, j] = si[L.S_RUNNING], si[L.S_USED], si[L.S_PREEMPTED]
            rows[8, j], rows[9, j] = swap_s, sf[L.T_PAUSE]
            si[L.S_NROWS] = j + 1
            si[L.S_PENDING] = 0
            sf[L.T_NOW] = t_end
            continue
        t = sf[L.T_NOW]
        nxt = si[L.S_NXT]
        while nxt < n and g[L.G_ARRIVAL, nxt] <= t:
            K._push(wait, si[L.S_NWAIT], q[L.Q_KEY, nxt])
            si[L.S_NWAIT] += 1
            nxt += 1
        si[L.S_NXT] = nxt
        if si[L.S_NRUN] == 0 and si[L.S_NWAIT] == 0 and si[L.S_NSWAP] == 0:
            sf[L.T_NOW] = g[L.G_ARRIVAL, nxt]
            continue
        si[L.S_PREEMPTED], sf[L.T_SWAP_BYTES] = 0, 0.0
        K._step(pi, pf, si, sf, q, g, run, wait, swap, snap, dec, pre)
        if si[L.S_NDEC] == 0 and si[L.S_NPRE] == 0:
            if nxt >= n:
                return L.STUCK
            sf[L.T_NOW] = max(t, g[L.G_ARRIVAL, nxt])
            continue
        ctx = 0
        for x in range(si[L.S_NDEC]):
            ctx += q[L.Q_CACHED, dec[x]]
        keys = float(ctx + si[L.S_NDEC])
        prefill = 0
        for x in range(si[L.S_NPRE]):
            i, k = pre[0, x], pre[1, x]
            start = q[L.Q_CACHED, i]
            prefill += k
            keys += k * start + k * (k + 1) / 2  # causal_keys(start, k)
            ctx += start
        si[L.S_CTX], sf[L.T_KEYS], si[L.S_RUNNING] = ctx, keys, si[L.S_NRUN]
        r, gen, pause = _place(pi, pf, si, sizes, si[L.S_NDEC] + prefill)
        si[L.S_ROWS], si[L.S_GEN], sf[L.T_PAUSE] = r, gen, pause
        si[L.S_PENDING] = 1
    return L.DONE

"""The compiled serving loop's main loop: arrivals, the scheduler's batch, the bucket, the price, the tokens.

Line for line the ``while`` of :func:`workbench.serving.engine.simulate_tokens`, with the
bucket placement of :class:`workbench.serving.buckets.BucketState` and the price of
:meth:`workbench.serving.cost.IterationCost.pricer`. Layout names in :mod:`.compiled_loop`.
"""

from __future__ import annotations

from numba import njit

from workbench.serving import compiled_loop as K


@njit(cache=True, inline="always")
def _finish(si, q, g, run, i, t):
    g[K.G_FINISH, i] = t
    q[K.Q_PHASE, i] = K.FINISHED
    K._remove(run, si[K.S_NRUN], q[K.Q_KEY, i])
    si[K.S_NRUN] -= 1
    K._release(si, q, i)
    si[K.S_DONE] += 1


@njit(cache=True, inline="always")
def _emit(si, q, g, run, token_s, i, t):
    gen = q[K.Q_GEN, i]
    token_s[q[K.Q_OFFSET, i] + gen] = t
    if gen == 0:
        g[K.G_FIRST, i] = t
    q[K.Q_GEN, i] = gen + 1
    if gen + 1 == q[K.Q_OUT, i]:
        _finish(si, q, g, run, i, t)


@njit(cache=True)
def _place(pi, pf, si, sizes, tokens):
    """(rows priced, generic?, pause s) of an iteration of ``tokens`` tokens (BucketState.place)."""
    if pi[K.P_NSIZES0] == 0:
        si[K.S_HIT] += 1
        return tokens, 0, 0.0
    m = si[K.S_NSIZES]
    k = 0
    while k < m and sizes[k] < tokens:  # bisect_left
        k += 1
    if k < m:
        size = sizes[k]
        if size == tokens:
            si[K.S_HIT] += 1
        else:
            si[K.S_PADDED] += 1
        si[K.S_PAD_TOKENS] += size - tokens
        return size, 0, 0.0
    if pi[K.P_RECOMPILE] and si[K.S_RECOMPILES] < pi[K.P_LIMIT]:
        size = 1
        while size < tokens:  # the next power of two
            size <<= 1
        K._insort(sizes, m, size)
        si[K.S_NSIZES] = m + 1
        si[K.S_RECOMPILES] += 1
        si[K.S_RECOMPILED] += 1
        si[K.S_PAD_TOKENS] += size - tokens
        return size, 0, pf[K.F_PAUSE]
    si[K.S_FALLBACK] += 1
    return tokens, 1, 0.0


@njit(cache=True)
def run_tokens(pi, pf, si, sf, q, g, token_s, run, wait, swap, snap, dec, pre, sizes, dense, rows):
    """Run until every request is done (``DONE``) or Python must answer (``NEED_DENSE``, ``NEED_ROOM``)."""
    n = pi[K.P_N]
    while si[K.S_DONE] < n:
        if si[K.S_PENDING]:  # the built iteration: price it, then its tokens come out
            r, gen = si[K.S_ROWS], si[K.S_GEN]
            s = dense[gen, r]
            if s != s:
                si[K.S_NEED_ROWS], si[K.S_NEED_GEN] = r, gen
                return K.NEED_DENSE
            j = si[K.S_NROWS]
            if j >= rows.shape[0]:
                return K.NEED_ROOM
            t = sf[K.T_NOW]
            tokens, prefill, nd, npre = si[K.S_NDEC], 0, si[K.S_NDEC], si[K.S_NPRE]
            for x in range(npre):
                prefill += pre[1, x]
            total = tokens + prefill
            launch, bw, d = pf[K.F_LAUNCH], pf[K.F_BW], pi[K.P_D]
            reduce = 2 * (launch + pi[K.P_PARTS] * total * d * pi[K.P_ITEM] / bw) if pi[K.P_SHARED] else 0.0
            cached = float(si[K.S_CTX])
            layer = s + reduce + max(pf[K.F_ATT] * sf[K.T_KEYS] / pf[K.F_PEAK], pf[K.F_KV] * (cached + total) / bw) \
                + launch
            price = pi[K.P_LAYERS] * layer if total > 0 else 0.0
            swap_s = sf[K.T_SWAP_BYTES] / pf[K.F_SWAP_BW]
            t_end = t + sf[K.T_PAUSE] + price + swap_s
            for x in range(npre):  # prefilled
                i, k = pre[0, x], pre[1, x]
                c = q[K.Q_CACHED, i] + k
                q[K.Q_CACHED, i] = c
                if c == q[K.Q_TARGET, i]:
                    q[K.Q_PHASE, i] = K.DECODE
                    _emit(si, q, g, run, token_s, i, t_end)
            for x in range(nd):  # decoded
                i = dec[x]
                q[K.Q_CACHED, i] += 1
                _emit(si, q, g, run, token_s, i, t_end)
            rows[j, 0], rows[j, 1], rows[j, 2], rows[j, 3], rows[j, 4] = t, t_end, prefill, tokens, tokens + npre
            rows[j, 5], rows[j, 6], rows[j, 7] = si[K.S_RUNNING], si[K.S_USED], si[K.S_PREEMPTED]
            rows[j, 8], rows[j, 9] = swap_s, sf[K.T_PAUSE]
            si[K.S_NROWS] = j + 1
            si[K.S_PENDING] = 0
            sf[K.T_NOW] = t_end
            continue
        t = sf[K.T_NOW]
        nxt = si[K.S_NXT]
        while nxt < n and g[K.G_ARRIVAL, nxt] <= t:
            K._push(wait, si[K.S_NWAIT], q[K.Q_KEY, nxt])
            si[K.S_NWAIT] += 1
            nxt += 1
        si[K.S_NXT] = nxt
        if si[K.S_NRUN] == 0 and si[K.S_NWAIT] == 0 and si[K.S_NSWAP] == 0:
            sf[K.T_NOW] = g[K.G_ARRIVAL, nxt]
            continue
        si[K.S_PREEMPTED], sf[K.T_SWAP_BYTES] = 0, 0.0
        K._step(pi, pf, si, sf, q, g, run, wait, swap, snap, dec, pre)
        if si[K.S_NDEC] == 0 and si[K.S_NPRE] == 0:
            if nxt >= n:
                return K.STUCK
            sf[K.T_NOW] = max(t, g[K.G_ARRIVAL, nxt])
            continue
        ctx = 0
        for x in range(si[K.S_NDEC]):
            ctx += q[K.Q_CACHED, dec[x]]
        keys = float(ctx + si[K.S_NDEC])
        prefill = 0
        for x in range(si[K.S_NPRE]):
            i, k = pre[0, x], pre[1, x]
            start = q[K.Q_CACHED, i]
            prefill += k
            keys += k * start + k * (k + 1) / 2  # causal_keys(start, k)
            ctx += start
        si[K.S_CTX], sf[K.T_KEYS], si[K.S_RUNNING] = ctx, keys, si[K.S_NRUN]
        r, gen, pause = _place(pi, pf, si, sizes, si[K.S_NDEC] + prefill)
        si[K.S_ROWS], si[K.S_GEN], sf[K.T_PAUSE] = r, gen, pause
        si[K.S_PENDING] = 1
    return K.DONE

"""The token-level serving loop compiled with numba: :func:`workbench.serving.engine.simulate_tokens`, line for line.

The readable loop (engine, scheduler, state, kv, buckets) is the reference; this kernel
runs the same run over flat arrays: a sequence's key is one integer (``priority x n + i``
under the priority policy, ``i`` under fcfs, so integer order is the reference's tuple
order), the waiting and swapped queues are binary heaps of keys, the running set a sorted
array of keys. It leaves to Python only for room for more iteration rows (``NEED_ROOM``:
the iteration is built and waits, recorded on re-entry); a dense-kernel cost not yet in the
table it prices itself (:mod:`.run`). ``tests/test_serving_compiled.py`` proves the
two loops equal, bit for bit.
"""

from __future__ import annotations

from numba import njit

from workbench.serving.compiled.layout import (  # the layout, by name
    DECODE,
    F_BLOCK_BYTES,
    G_ADMIT,
    KEY_INDEX,
    P_BS,
    P_MODE,
    P_SEQS,
    P_SWAP,
    P_TOKENS,
    P_TOTAL,
    P_WATER,
    PREFILL,
    PREFILL_FIRST,
    Q_CACHED,
    Q_GEN,
    Q_HELD,
    Q_KEY,
    Q_OUT,
    Q_PHASE,
    Q_PREEMPT,
    Q_PROMPT,
    Q_TARGET,
    REQUEST,
    S_BSEQ,
    S_BTOK,
    S_NDEC,
    S_NPRE,
    S_NRUN,
    S_NSWAP,
    S_NWAIT,
    S_PREEMPTED,
    S_USED,
    SWAPPED,
    T_NOW,
    T_SWAP_BYTES,
    WAITING,
)


@njit(cache=True, _nrt=False, inline="always")
def _push(h, size, key):
    j = size
    h[j] = key
    while j > 0:
        parent = (j - 1) >> 1
        if h[parent] <= key:
            break
        h[j] = h[parent]
        j = parent
    h[j] = key


@njit(cache=True, _nrt=False, inline="always")
def _pop(h, size):
    """Remove the smallest key of the heap of ``size`` keys (the caller lowers its size)."""
    last = h[size - 1]
    n = size - 1
    j = 0
    while True:
        c = 2 * j + 1
        if c >= n:
            break
        if c + 1 < n and h[c + 1] < h[c]:
            c += 1
        if h[c] >= last:
            break
        h[j] = h[c]
        j = c
    if n > 0:
        h[j] = last


@njit(cache=True, _nrt=False, inline="always")
def _insort(run, size, key):
    j = size
    while j > 0 and run[j - 1] > key:
        run[j] = run[j - 1]
        j -= 1
    run[j] = key


@njit(cache=True, _nrt=False, inline="always")
def _remove(run, size, key):
    lo, hi = 0, size
    while lo < hi:
        mid = (lo + hi) >> 1
        if run[mid] < key:
            lo = mid + 1
        else:
            hi = mid
    for j in range(lo, size - 1):
        run[j] = run[j + 1]


@njit(cache=True, _nrt=False, inline="always")
def _blocks(tokens, bs):
    return -(-tokens // bs)


@njit(cache=True, _nrt=False, inline="always")
def _grow(pi, si, q, i, tokens):
    need = _blocks(tokens, pi[P_BS]) - q[Q_HELD, i]
    if need <= 0:
        return True
    if need > pi[P_TOTAL] - si[S_USED]:
        return False
    q[Q_HELD, i] += need
    si[S_USED] += need
    return True


@njit(cache=True, _nrt=False, inline="always")
def _release(si, q, i):
    held = q[Q_HELD, i]
    si[S_USED] -= held
    q[Q_HELD, i] = 0
    return held


@njit(cache=True, _nrt=False, inline="always")
def _can_admit(pi, si, tokens):
    return (pi[P_TOTAL] - si[S_USED]) - _blocks(tokens, pi[P_BS]) >= pi[P_WATER]


@njit(cache=True, _nrt=False, inline="always")
def _take(si, tokens):
    if tokens > si[S_BTOK] or si[S_BSEQ] < 1:
        return False
    si[S_BTOK] -= tokens
    si[S_BSEQ] -= 1
    return True


@njit(cache=True, _nrt=False, inline="always")
def _start(pi, si, sf, q, g, run, i, tokens):
    _grow(pi, si, q, i, tokens)
    if g[G_ADMIT, i] != g[G_ADMIT, i]:
        g[G_ADMIT, i] = sf[T_NOW]
    q[Q_PHASE, i] = PREFILL
    _insort(run, si[S_NRUN], q[Q_KEY, i])
    si[S_NRUN] += 1


@njit(cache=True, _nrt=False)
def _preempt(pi, pf, si, sf, q, run, wait, swap, v):
    _remove(run, si[S_NRUN], q[Q_KEY, v])
    si[S_NRUN] -= 1
    q[Q_PREEMPT, v] += 1
    si[S_PREEMPTED] += 1
    if pi[P_SWAP]:
        sf[T_SWAP_BYTES] += _release(si, q, v) * pf[F_BLOCK_BYTES]
        q[Q_PHASE, v] = SWAPPED
        _push(swap, si[S_NSWAP], q[Q_KEY, v])
        si[S_NSWAP] += 1
    else:
        _release(si, q, v)
        q[Q_CACHED, v] = 0
        q[Q_TARGET, v] = q[Q_PROMPT, v] + q[Q_GEN, v]
        q[Q_PHASE, v] = WAITING
        _push(wait, si[S_NWAIT], q[Q_KEY, v])
        si[S_NWAIT] += 1


@njit(cache=True, _nrt=False)
def _decodes(pi, pf, si, sf, q, run, wait, swap, snap, dec):
    """Every running decode in scheduling order gets one token and a KV slot, preempting from the back."""
    bs = pi[P_BS]
    m = si[S_NRUN]
    for j in range(m):  # snap[:m] = run[:m], element by element: a slice copy may allocate (NRT)
        snap[j] = run[j]
    room, seats = si[S_BTOK], si[S_BSEQ]
    for j in range(m):
        i = snap[j] & KEY_INDEX
        if q[Q_PHASE, i] != DECODE:
            continue
        if q[Q_CACHED, i] >= q[Q_HELD, i] * bs:
            while not _grow(pi, si, q, i, q[Q_CACHED, i] + 1):
                victim = run[si[S_NRUN] - 1] & KEY_INDEX
                _preempt(pi, pf, si, sf, q, run, wait, swap, victim)
                if victim == i:
                    break
            if q[Q_PHASE, i] != DECODE:
                continue
        if room < 1 or seats < 1:
            break
        room -= 1
        seats -= 1
        dec[si[S_NDEC]] = i
        si[S_NDEC] += 1
    si[S_BTOK], si[S_BSEQ] = room, seats


@njit(cache=True, _nrt=False)
def _swap_ins(pi, pf, si, sf, q, run, swap, dec, pre, chunked):
    if si[S_PREEMPTED] > 0:
        return
    while si[S_NSWAP] > 0:
        i = swap[0] & KEY_INDEX
        if si[S_BSEQ] < 1 or si[S_BTOK] < 1:
            return
        ready = q[Q_CACHED, i] >= q[Q_TARGET, i]
        need = q[Q_CACHED, i] + 1 if ready else q[Q_TARGET, i]  # a prefill needs its whole target, as at admission
        if not _grow(pi, si, q, i, max(need, 1)):
            return
        sf[T_SWAP_BYTES] += q[Q_HELD, i] * pf[F_BLOCK_BYTES]
        q[Q_PHASE, i] = DECODE if ready else PREFILL
        _insort(run, si[S_NRUN], q[Q_KEY, i])
        si[S_NRUN] += 1
        _pop(swap, si[S_NSWAP])
        si[S_NSWAP] -= 1
        if q[Q_PHASE, i] == DECODE:
            _take(si, 1)
            dec[si[S_NDEC]] = i
            si[S_NDEC] += 1
        else:
            k = q[Q_TARGET, i] - q[Q_CACHED, i]
            if chunked:
                k = min(k, si[S_BTOK])
            if _take(si, k):
                pre[0, si[S_NPRE]], pre[1, si[S_NPRE]] = i, k
                si[S_NPRE] += 1


@njit(cache=True, _nrt=False)
def _step(pi, pf, si, sf, q, g, run, wait, swap, snap, dec, pre):  # noqa: C901 - the three policies, as one kernel
    """One iteration's batch, as the configured policy builds it (the scheduler module's ``step``)."""
    mode, seqs = pi[P_MODE], pi[P_SEQS]
    si[S_BTOK], si[S_BSEQ], si[S_NDEC], si[S_NPRE] = pi[P_TOKENS], seqs, 0, 0
    if mode == REQUEST:
        if si[S_NRUN] == 0:
            while si[S_NWAIT] > 0 and si[S_NRUN] < seqs:
                i = wait[0] & KEY_INDEX
                if not _can_admit(pi, si, q[Q_PROMPT, i] + q[Q_OUT, i]):
                    break
                _pop(wait, si[S_NWAIT])
                si[S_NWAIT] -= 1
                _start(pi, si, sf, q, g, run, i, q[Q_PROMPT, i] + q[Q_OUT, i])
        prefilling = False
        for j in range(si[S_NRUN]):
            i = run[j] & KEY_INDEX
            if q[Q_PHASE, i] != PREFILL:
                continue
            prefilling = True
            k = min(q[Q_TARGET, i] - q[Q_CACHED, i], si[S_BTOK])
            if k <= 0 or not _take(si, k):
                break
            pre[0, si[S_NPRE]], pre[1, si[S_NPRE]] = i, k
            si[S_NPRE] += 1
        if not prefilling:
            for j in range(si[S_NRUN]):
                dec[j] = run[j] & KEY_INDEX
            si[S_NDEC] = si[S_NRUN]
        return
    if mode == PREFILL_FIRST:
        if si[S_NSWAP] == 0:
            while si[S_NWAIT] > 0 and si[S_NRUN] < seqs:
                i = wait[0] & KEY_INDEX
                need = q[Q_TARGET, i]
                if need > si[S_BTOK] or si[S_BSEQ] < 1 or not _can_admit(pi, si, need):
                    break
                _pop(wait, si[S_NWAIT])
                si[S_NWAIT] -= 1
                _start(pi, si, sf, q, g, run, i, need)
                _take(si, need)
                pre[0, si[S_NPRE]], pre[1, si[S_NPRE]] = i, need
                si[S_NPRE] += 1
            if si[S_NPRE] > 0:
                return
        _decodes(pi, pf, si, sf, q, run, wait, swap, snap, dec)
        if si[S_NSWAP] > 0:
            _swap_ins(pi, pf, si, sf, q, run, swap, dec, pre, False)
        return
    _decodes(pi, pf, si, sf, q, run, wait, swap, snap, dec)  # chunked prefill: decodes first
    if si[S_NDEC] < si[S_NRUN]:
        for j in range(si[S_NRUN]):
            i = run[j] & KEY_INDEX
            if q[Q_PHASE, i] == PREFILL and si[S_BTOK] > 0:
                k = min(q[Q_TARGET, i] - q[Q_CACHED, i], si[S_BTOK])
                if _take(si, k):
                    pre[0, si[S_NPRE]], pre[1, si[S_NPRE]] = i, k
                    si[S_NPRE] += 1
    if si[S_NSWAP] > 0:
        _swap_ins(pi, pf, si, sf, q, run, swap, dec, pre, True)
    while si[S_NWAIT] > 0 and si[S_NRUN] < seqs and si[S_BTOK] > 0:
        i = wait[0] & KEY_INDEX
        if si[S_BSEQ] < 1 or not _can_admit(pi, si, q[Q_TARGET, i]):
            break
        _pop(wait, si[S_NWAIT])
        si[S_NWAIT] -= 1
        _start(pi, si, sf, q, g, run, i, q[Q_TARGET, i])
        k = min(q[Q_TARGET, i], si[S_BTOK])
        _take(si, k)
        pre[0, si[S_NPRE]], pre[1, si[S_NPRE]] = i, k
        si[S_NPRE] += 1

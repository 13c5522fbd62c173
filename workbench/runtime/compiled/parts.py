"""The compiled loop's leaf parts: the event heap, Python's float sum, batching rules, HBM residency and host link.

Each mirrors a piece of the readable loop (:mod:`workbench.runtime.loop`) or its policies
(:mod:`workbench.runtime.policies`, :mod:`workbench.runtime.residency`) on flat arrays,
operation for operation, so the compiled run equals the reference bit for bit. They are
leaves (they call no compiled function that takes arrays), which keeps them free of
reference counting; none allocates. Layout names in :mod:`.layout`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from workbench.runtime.compiled import layout as L


@njit(cache=True, _nrt=False)
def pack(kind: int, a: int) -> int:
    """One int64 for an event's kind and its core or class."""
    return (a << 1) | kind


@njit(cache=True, _nrt=False, inline="always")
def _put(ht, hq, ci, i: int, t: float, s: int, q: int) -> None:
    """Write entry (t, s, q) at heap slot ``i``; a core's completion keeps its slot in ``ci[C_HPOS]``."""
    ht[i], hq[0, i], hq[1, i] = t, s, q
    if (q & 1) == L.COMPLETE:
        ci[L.C_HPOS, q >> 1] = i


@njit(cache=True, _nrt=False, inline="always")
def _sift(ht, hq, ci, i: int, n: int, t: float, s: int, q: int) -> None:
    """Place the entry (t, s, q) at slot ``i`` of a heap of ``n``, moving it up or down: ordered by (time, seq).
    One loop each way, one copy inlined per caller (a key moved up is already above every child)."""
    while i > 0:
        parent = (i - 1) >> 1
        pt = ht[parent]
        if pt < t or (pt == t and hq[0, parent] < s):
            break
        _put(ht, hq, ci, i, pt, hq[0, parent], hq[1, parent])
        i = parent
    while True:
        c = 2 * i + 1
        if c >= n:
            break
        if c + 1 < n and (ht[c + 1] < ht[c] or (ht[c + 1] == ht[c] and hq[0, c + 1] < hq[0, c])):
            c += 1
        if not (ht[c] < t or (ht[c] == t and hq[0, c] < s)):
            break
        _put(ht, hq, ci, i, ht[c], hq[0, c], hq[1, c])
        i = c
    _put(ht, hq, ci, i, t, s, q)


@njit(cache=True, _nrt=False, inline="always")
def push(ht, hq, si, ci, t: float, payload: int) -> None:
    """Push an event at ``t`` with the next sequence number: the heap orders by (time, seq)."""
    seq = si[L.SEQ] + 1
    si[L.SEQ] = seq
    n = si[L.HSIZE]
    si[L.HSIZE] = n + 1
    _sift(ht, hq, ci, n, n + 1, t, seq, payload)


@njit(cache=True, _nrt=False, inline="always")
def schedule(ht, hq, si, sf, ci, k: int, t: float) -> None:
    """Core ``k``'s completion at ``t``, with the next sequence number, in place of the one it had in the heap.

    The reference loop pushes a new event and skips the old one when it pops it (decrease-key by
    lazy deletion); here the old entry is re-keyed where it lies, so the heap holds one completion
    per core. Events pop in (time, seq) order whatever the heap's layout, so every live event pops
    as in the reference; a superseded one's only trace there is the instant it pops at, which may
    be the run's last (``sf[STALE_MAX]``, read where the blocking curves close).
    """
    seq = si[L.SEQ] + 1
    si[L.SEQ] = seq
    n = si[L.HSIZE]
    i = ci[L.C_HPOS, k]
    if i < 0:  # none in the heap: a push
        i = n
        n += 1
        si[L.HSIZE] = n
    elif ht[i] > sf[L.STALE_MAX]:
        sf[L.STALE_MAX] = ht[i]
    _sift(ht, hq, ci, i, n, t, seq, pack(L.COMPLETE, k))


@njit(cache=True, _nrt=False, inline="always")
def pop(ht, hq, si, ci) -> int:
    """Remove the earliest event; return its payload."""
    p = hq[L.HQ_PAY, 0]
    if (p & 1) == L.COMPLETE:
        ci[L.C_HPOS, p >> 1] = -1
    n = si[L.HSIZE] - 1
    si[L.HSIZE] = n
    if n > 0:  # sift the last entry down from the root
        _sift(ht, hq, ci, 0, n, ht[n], hq[0, n], hq[1, n])
    return p


@njit(cache=True, _nrt=False, inline="always")
def neumaier_add(f: float, c: float, x: float) -> tuple[float, float]:
    """One step of CPython's compensated ``sum`` (3.12+): the new running sum and compensation after adding ``x``."""
    t = f + x
    if abs(f) >= abs(x):
        c += (f - t) + x
    else:
        c += (x - t) + f
    return t, c


@njit(cache=True, _nrt=False, inline="always")
def pysum(cf, row: int, ci, n: int, neumaier: bool) -> float:
    """``sum([cf[row][k] for k in active])`` as CPython computes it (Neumaier-compensated from 3.12)."""
    if n == 0:
        return 0.0
    f = 0.0 + cf[row, ci[L.C_ACT, 0]]
    if not neumaier:
        for i in range(1, n):
            f += cf[row, ci[L.C_ACT, i]]
        return f
    c = 0.0
    for i in range(1, n):
        f, c = neumaier_add(f, c, cf[row, ci[L.C_ACT, i]])
    if c != 0.0 and np.isfinite(c):
        f += c
    return f


@njit(cache=True, _nrt=False, inline="always")
def take(pi, pf, pref, waiting: int, oldest: float, now: float) -> int:
    """How many of ``waiting`` requests leave now (0 = none yet): NoBatching, DynamicBatching, StaticBatching."""
    kind = pi[L.P_BATCH]
    if kind == L.B_NONE:
        return 1
    if waiting >= pi[L.P_MAXB]:
        return pi[L.P_MAXB]
    if kind == L.B_DYNAMIC:
        for j in range(pi[L.P_NPREF]):
            if waiting >= pref[j]:
                return pref[j]
    return waiting if now >= oldest + pf[L.PF_DELAY] else 0


@njit(cache=True, _nrt=False)
def deadline(pi, pf, oldest: float) -> float:
    """When a not-yet-ready class must be looked at again."""
    return L.INF if pi[L.P_BATCH] == L.B_NONE else oldest + pf[L.PF_DELAY]


@njit(cache=True, _nrt=False)
def _evict_until(rres, si, budget: int) -> None:
    """Evict idle models, least recently used first, until at most ``budget`` bytes are resident."""
    while si[L.USED_BYTES] > budget:
        victim, oldest = -1, 0
        for m in range(rres.shape[1]):
            if rres[L.R_RESIDENT, m] and rres[L.R_IN_USE, m] == 0 and (victim < 0 or rres[L.R_STAMP, m] < oldest):
                victim, oldest = m, rres[L.R_STAMP, m]
        if victim < 0:
            return
        rres[L.R_RESIDENT, victim] = 0
        si[L.USED_BYTES] -= rres[L.R_WEIGHTS, victim]
        si[L.EVICTIONS] += 1


@njit(cache=True, _nrt=False)
def acquire(rres, si, sf, capacity: int, link: float, m: int, now: float) -> tuple[float, float]:
    """A batch of model ``m`` asks for its weights at ``now``: (s it waits with HBM idle, s of its own copy);
    (0, 0) when resident and loaded. LRU by stamp; loads queue on one host link."""
    rres[L.R_IN_USE, m] += 1
    si[L.CLOCK] += 1
    if rres[L.R_RESIDENT, m]:
        rres[L.R_STAMP, m] = si[L.CLOCK]
        ready = sf[L.READY0 + m]
        return (ready - now if ready > now else 0.0), 0.0  # another batch's load in flight
    begin, copy = _start_load(rres, si, sf, capacity, link, m, now)
    return begin - now, copy


@njit(cache=True, _nrt=False, inline="always")
def _start_load(rres, si, sf, capacity: int, link: float, m: int, now: float) -> tuple[float, float]:
    """Make room (LRU, idle models only), queue the copy on the link: (when it begins, its seconds)."""
    need = rres[L.R_WEIGHTS, m]
    _evict_until(rres, si, capacity - need)
    if si[L.USED_BYTES] + need > capacity:
        si[L.OVERCOMMITS] += 1
    rres[L.R_RESIDENT, m] = 1
    rres[L.R_STAMP, m] = si[L.CLOCK]
    si[L.USED_BYTES] += need
    si[L.LOADS] += 1
    copy = need / link
    begin = sf[L.LINK_FREE] if sf[L.LINK_FREE] > now else now  # one DMA path: loads queue on it
    sf[L.LINK_FREE] = sf[L.READY0 + m] = begin + copy
    sf[L.LINK_BUSY] += copy
    return begin, copy


@njit(cache=True, _nrt=False)
def load(rres, si, sf, capacity: int, link: float, m: int, now: float) -> float:
    """load_then_dispatch: start loading model ``m`` (not resident) for a batch that stays queued; when its
    weights will be in (s)."""
    si[L.CLOCK] += 1
    begin, copy = _start_load(rres, si, sf, capacity, link, m, now)
    return begin + copy




@njit(cache=True, _nrt=False)
def release(rres, si, capacity: int, m: int) -> None:
    """A batch of model ``m`` finished; an overcommit is paid back as soon as models go idle."""
    rres[L.R_IN_USE, m] -= 1
    if si[L.USED_BYTES] > capacity:
        _evict_until(rres, si, capacity)

"""The compiled loop's queues: heads, batch pops, timeouts, static sealing, placement blocking.

Each (stream, bucket) queue is a slice of one flat array (``qbuf``), its requests in arrival
order between a head and a tail pointer; a batch class is a list of queues (``csr``). The
functions mirror the readable loop line for line: ``heads``, ``pop_batch`` and ``seal`` of
:mod:`workbench.runtime.loop_queues`, ``purge`` of :mod:`workbench.runtime.loop` and ``track`` of
:mod:`workbench.runtime.loop_blocked`. A pop is split in two: :func:`peek_batch`
finds the members (into the scratch ``scr``) without touching the queues, and
:func:`commit_batch` takes them off, so a batch whose cost is not known yet can be
left where it was. Layout names in :mod:`.layout`.
"""

from __future__ import annotations

from numba import njit

from workbench.runtime.compiled import layout as L
from workbench.runtime.compiled.parts import deadline, pack, push, release, take
from workbench.runtime.trace import REJECTED_TIMEOUT


@njit(cache=True, _nrt=False, inline="always")
def heads(rf, qbuf, qt, csr, cqi: int, c: int) -> tuple[float, float]:
    """(best key, oldest arrival) over a class's queue heads."""
    best, oldest = L.INF, L.INF
    for j in range(csr[c], csr[c + 1]):
        q = csr[cqi + j]
        if qt[L.QT_HEAD, q] < qt[L.QT_TAIL, q]:
            h = qbuf[qt[L.QT_HEAD, q]]
            if rf[L.RF_KEY, h] < best:
                best = rf[L.RF_KEY, h]
            if rf[L.RF_ARR, h] < oldest:
                oldest = rf[L.RF_ARR, h]
    return best, oldest


@njit(cache=True, _nrt=False, inline="always")
def peek_batch(rf, ri4, qbuf, qt, csr, cqi: int, scr, mb: int, c: int, m: int) -> int:
    """The ``m`` requests a pop would take into ``scr[:m]`` (queue heads after it from ``scr[mb]``); top key rank."""
    lo, hi = csr[c], csr[c + 1]
    for j in range(lo, hi):
        scr[mb + j - lo] = qt[L.QT_HEAD, csr[cqi + j]]
    top = -1
    for i in range(m):
        bj = 0
        if hi - lo > 1:  # merge the class's queues in key order (the first queue wins a tie)
            bj, bk = -1, L.INF
            for j in range(hi - lo):
                h = scr[mb + j]
                if h < qt[L.QT_TAIL, csr[cqi + lo + j]] and rf[L.RF_KEY, qbuf[h]] < bk:
                    bj, bk = j, rf[L.RF_KEY, qbuf[h]]
        r = qbuf[scr[mb + bj]]
        scr[mb + bj] += 1
        scr[i] = r
        if ri4[L.RI_KRANK, r] > top:
            top = ri4[L.RI_KRANK, r]
    return top


@njit(cache=True, _nrt=False, inline="always")
def commit_batch(online: bool, rf, qt, csr, cqi: int, cli, sf, scr, mb: int, c: int, m: int) -> None:
    """Take the peeked batch off its queues (``pop_batch``'s effects)."""
    lo = csr[c]
    for j in range(lo, csr[c + 1]):
        qt[L.QT_HEAD, csr[cqi + j]] = scr[mb + j - lo]
    cli[L.CL_N, c] -= m
    if online:  # weighted fair queueing: advance the virtual clock
        k = rf[L.RF_KEY, scr[m - 1]]
        if k > sf[L.VIRTUAL]:
            sf[L.VIRTUAL] = k


@njit(cache=True, _nrt=False)
def purge(pi, pf, rf, ri4, qbuf, qt, csr, cli, clf, rres, si, now: float) -> None:
    """Reject requests that have waited longer than the timeout."""
    timeout, cqi = pf[L.PF_TIMEOUT], pi[L.P_CQI]
    for c in range(pi[L.P_NCLS]):
        if cli[L.CL_N, c]:
            for j in range(csr[c], csr[c + 1]):
                q = csr[cqi + j]
                while qt[L.QT_HEAD, q] < qt[L.QT_TAIL, q] and rf[L.RF_ARR, qbuf[qt[L.QT_HEAD, q]]] + timeout < now:
                    r = qbuf[qt[L.QT_HEAD, q]]
                    qt[L.QT_HEAD, q] += 1
                    ri4[L.RI_OUT, r] = REJECTED_TIMEOUT
                    rf[L.RF_REJ, r] = rf[L.RF_ARR, r] + timeout
                    cli[L.CL_N, c] -= 1
                    si[L.WAITING] -= 1
            if cli[L.CL_HOLD, c] and not cli[L.CL_N, c] and cli[L.CL_SBHEAD, c] < 0:  # none left to wait for weights
                cli[L.CL_HOLD, c], clf[L.CF_PARKED, c] = 0, 0.0
                release(rres, si, pi[L.P_CAPACITY], cli[L.CL_MODEL, c])


@njit(cache=True, _nrt=False)
def set_timer(pi, pf, clf, ht, hq, si, sf, ci, c: int, oldest: float) -> None:
    """Push a batching timer for class ``c`` unless one is set for the same deadline."""
    dl = deadline(pi, pf, oldest)
    if clf[L.CF_TIMER, c] != dl:
        clf[L.CF_TIMER, c] = dl
        push(ht, hq, si, ci, dl, pack(L.TIMER, c))


@njit(cache=True, _nrt=False)
def seal(pi, pf, pref, rf, ri4, qbuf, qt, csr, cli, clf, sb, sbt, ht, hq, si, sf, ci, scr, c: int,
         now: float) -> None:
    """Static batching: close forming batches of class ``c`` while full or late (members kept in ``qbuf``)."""
    cqi, mb = pi[L.P_CQI], pi[L.P_MAXB]
    while cli[L.CL_N, c]:
        oldest = heads(rf, qbuf, qt, csr, cqi, c)[1]
        m = take(pi, pf, pref, cli[L.CL_N, c], oldest, now)
        if not m:
            set_timer(pi, pf, clf, ht, hq, si, sf, ci, c, oldest)
            return
        peek_batch(rf, ri4, qbuf, qt, csr, cqi, scr, mb, c, m)
        commit_batch(pi[L.P_ONLINE], rf, qt, csr, cqi, cli, sf, scr, mb, c, m)
        top = si[L.SMEM_TOP]
        for i in range(m):
            qbuf[pi[L.P_SMEM0] + top + i] = scr[i]
        si[L.SMEM_TOP] = top + m
        b = si[L.SB_COUNT]
        si[L.SB_COUNT] = b + 1
        sb[L.SB_OFF, b], sb[L.SB_LEN, b], sb[L.SB_NEXT, b], sbt[b] = pi[L.P_SMEM0] + top, m, -1, now
        if cli[L.CL_SBTAIL, c] >= 0:
            sb[L.SB_NEXT, cli[L.CL_SBTAIL, c]] = b
        else:
            cli[L.CL_SBHEAD, c] = b
        cli[L.CL_SBTAIL, c] = b


@njit(cache=True, _nrt=False, inline="always")
def track_blocked(pi, pf, pref, rf, qbuf, qt, csr, cli, clf, bc, bcur, si, sf) -> None:
    """A ready class with an idle core it may not use is blocked by placement: log each change of state."""
    now, any_idle = sf[L.NOW], si[L.N_IDLE] > 0
    sealed, none, cqi = pi[L.P_BATCH] == L.B_STATIC, pi[L.P_BATCH] == L.B_NONE, pi[L.P_CQI]
    for c in range(pi[L.P_NCLS]):
        if sealed:
            ready = cli[L.CL_SBHEAD, c] >= 0
        else:  # NoBatching takes one at once: no need of the heads
            ready = cli[L.CL_N, c] > 0 and any_idle and (none or take(
                pi, pf, pref, cli[L.CL_N, c], heads(rf, qbuf, qt, csr, cqi, c)[1], now) > 0)
        ready = ready and clf[L.CF_PARK, c] <= now  # a class waiting for its weights is not blocked by placement
        b = 1 if (ready and any_idle) else 0
        if b != cli[L.CL_BLOCKED, c]:
            if b:
                clf[L.CF_SINCE, c] = now
            else:
                clf[L.CF_CUM, c] += now - clf[L.CF_SINCE, c]
            cli[L.CL_BLOCKED, c] = b
            j = si[L.BCOUNT]
            bc[j], bcur[0, j], bcur[1, j] = c, now, clf[L.CF_CUM, c]
            si[L.BCOUNT] = j + 1

"""The compiled dispatcher: start batches on idle cores while some class is ready.

Mirrors ``dispatch`` of :mod:`workbench.runtime.loop`: candidates by placement
(least-loaded: the idle core with the least busy time; round-robin: the core whose turn it
is; pinned: every idle core by index), the best-key ready class among a core's classes,
batching timers armed for classes not ready yet. A batch whose (class, size, shape key)
the service model has not costed yet is only peeked at: the dispatcher returns False with
the miss in ``si`` and leaves every queue as it was, so Python can cost it and the loop can
redo the dispatch at the same instant (timers already armed are not armed twice; a purge
at the same instant finds nothing more). Layout names in :mod:`.layout`.
"""

from __future__ import annotations

from numba import njit

from workbench.runtime.compiled import layout as L
from workbench.runtime.compiled.kernel import start
from workbench.runtime.compiled.parts import load, pack, push, take
from workbench.runtime.compiled.queues import commit_batch, heads, peek_batch, purge, set_timer


@njit(cache=True, _nrt=False, inline="always")
def _choose(pi, pf, pref, rf, qbuf, qt, csr, cli, clf, ht, hq, si, sf, ci, k: int, now: float) -> tuple[int, int]:
    """(class, batch size) core ``k`` would start now, or (-1, 0); arms timers of classes not yet ready."""
    best, best_key, best_m = -1, L.INF, 0
    cqi, kcp, kci = pi[L.P_CQI], pi[L.P_KCP], pi[L.P_KCI]
    for j in range(csr[kcp + k], csr[kcp + k + 1]):
        c = csr[kci + j]
        if clf[L.CF_PARK, c] > now:  # waiting in the queue for its weights
            continue
        w = cli[L.CL_N, c]
        if not w:
            continue
        hk, oldest = heads(rf, qbuf, qt, csr, cqi, c)
        m = take(pi, pf, pref, w, oldest, now)
        if not m:
            set_timer(pi, pf, clf, ht, hq, si, sf, ci, c, oldest)
        elif hk < best_key:
            best, best_key, best_m = c, hk, m
    return best, best_m


@njit(cache=True, _nrt=False, inline="always")
def _choose_sealed(pi, rf, qbuf, csr, cli, clf, sb, k: int, now: float) -> int:
    """The class whose oldest sealed batch has the best key among core ``k``'s classes, or -1."""
    best, best_key = -1, L.INF
    kcp, kci = pi[L.P_KCP], pi[L.P_KCI]
    for j in range(csr[kcp + k], csr[kcp + k + 1]):
        c = csr[kci + j]
        if clf[L.CF_PARK, c] > now:  # waiting in the queue for its weights
            continue
        h = cli[L.CL_SBHEAD, c]
        if h >= 0 and rf[L.RF_KEY, qbuf[sb[L.SB_OFF, h]]] < best_key:
            best, best_key = c, rf[L.RF_KEY, qbuf[sb[L.SB_OFF, h]]]
    return best


@njit(cache=True, _nrt=False)  # a call: load_then_dispatch only, kept out of the loop's inlined body
def _park(pi, pf, cli, clf, rres, ht, hq, si, sf, ci, c: int, now: float) -> bool:
    """load_then_dispatch: unless class ``c``'s weights are in, start their load (or join the one in flight)
    and leave the class queued until they are; True when it was parked (``park`` of the reference loop)."""
    m = cli[L.CL_MODEL, c]
    if rres[L.R_RESIDENT, m]:
        ready = sf[L.READY0 + m]
        if ready <= now:  # usable
            return False
    else:
        ready = load(rres, si, sf, pi[L.P_CAPACITY], pf[L.PF_LINK], m, now)
        push(ht, hq, si, ci, ready, pack(L.TIMER, pi[L.P_NCLS] + m))
    if ready <= now:  # nothing to copy and the link free
        return False
    if not cli[L.CL_HOLD, c]:  # the weights are never evicted while the class waits for them
        cli[L.CL_HOLD, c] = 1
        rres[L.R_IN_USE, m] += 1
    clf[L.CF_PARK, c] = ready
    clf[L.CF_PARKED, c] += ready - now
    clf[L.CF_PCUM, c] += ready - now
    return True


@njit(cache=True, _nrt=False, inline="always")
def _candidates(pi, ci, cf, si) -> tuple[int, int]:
    """The cores to try, as a range of indices (only idle ones are tried)."""
    cores, place = pi[L.P_CORES], pi[L.P_PLACE]
    if place == L.PL_LEAST:  # every class may use every core: only the least-loaded idle one counts
        lo = -1
        for k in range(cores):
            if ci[L.C_IDLE, k] and (lo < 0 or cf[L.K_BUSY, k] < cf[L.K_BUSY, lo]):
                lo = k
        return lo, lo + 1
    if place == L.PL_ROUND:  # only the core whose turn it is
        lo = si[L.TURN]
        return lo, (lo + 1 if ci[L.C_IDLE, lo] else lo)
    return 0, cores  # pinned: every idle core, by index


@njit(cache=True, _nrt=False, inline="always")
def _sealed_members(ri4, qbuf, sb, scr, h: int) -> tuple[int, int]:
    """Copy sealed batch ``h``'s members into ``scr``: (size, top shape-key rank)."""
    off, m = sb[L.SB_OFF, h], sb[L.SB_LEN, h]
    top = -1
    for i in range(m):
        r = qbuf[off + i]
        scr[i] = r
        if ri4[L.RI_KRANK, r] > top:
            top = ri4[L.RI_KRANK, r]
    return m, top


@njit(cache=True, _nrt=False, inline="always")
def dispatch(pi, pf, pref, rf, ri4, extra, qbuf, qt, csr, cli, clf, sb, sbt, bi, bf, ci, cf, todo, ht, hq, slot,
             cmean, cph, ph, rres, fac, scr, si, sf) -> bool:
    """Start batches on idle cores while some class is ready; False when a batch needs a cost not yet known."""
    now, sealed, mb = sf[L.NOW], pi[L.P_BATCH] == L.B_STATIC, pi[L.P_MAXB]
    if pf[L.PF_TIMEOUT]:
        purge(pi, pf, rf, ri4, qbuf, qt, csr, cli, clf, rres, si, now)
    while si[L.N_IDLE]:
        lo, hi = _candidates(pi, ci, cf, si)
        started = False
        for k in range(lo, hi):
            if not ci[L.C_IDLE, k]:
                continue
            h = -1
            if sealed:
                c = _choose_sealed(pi, rf, qbuf, csr, cli, clf, sb, k, now)
                if c < 0:
                    continue
                if pi[L.P_DEFER] and _park(pi, pf, cli, clf, rres, ht, hq, si, sf, ci, c, now):
                    started = True  # look again: the core is still idle
                    break
                h = cli[L.CL_SBHEAD, c]
                m, top = _sealed_members(ri4, qbuf, sb, scr, h)
            else:
                c, m = _choose(pi, pf, pref, rf, qbuf, qt, csr, cli, clf, ht, hq, si, sf, ci, k, now)
                if c < 0:
                    continue
                if pi[L.P_DEFER] and _park(pi, pf, cli, clf, rres, ht, hq, si, sf, ci, c, now):
                    started = True  # look again: the core is still idle
                    break
                top = peek_batch(rf, ri4, qbuf, qt, csr, pi[L.P_CQI], scr, mb, c, m)
            s = slot[c, m, top]
            if s < 0:  # the service model has not costed this batch yet: ask Python, then redo
                si[L.MISS_C], si[L.MISS_S], si[L.MISS_K] = c, m, top
                return False
            t_disp = now
            if sealed:
                t_disp = sbt[h]
                cli[L.CL_SBHEAD, c] = sb[L.SB_NEXT, h]
                if cli[L.CL_SBHEAD, c] < 0:
                    cli[L.CL_SBTAIL, c] = -1
            else:
                commit_batch(pi[L.P_ONLINE], rf, qt, csr, pi[L.P_CQI], cli, sf, scr, mb, c, m)
            start(pi, pf, extra, rf, ri4, cli, clf, bi, bf, ci, cf, todo, ht, hq, cmean, cph, ph, rres, fac, scr, si,
                  sf, k, c, m, t_disp, s, top)
            started = True
            break
        if not started:
            return True
    return True

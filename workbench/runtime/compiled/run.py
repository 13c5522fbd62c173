"""The compiled loop's main loop: events and arrivals in time order, until nothing is left.

Line for line the ``while True`` of :func:`workbench.runtime.loop.run_events`: if the
earliest heap event is no later than the next arrival, every heap event of that instant
(a phase ends, a batch completes, a batching timer fires), then the dispatcher once;
otherwise the next arrival (refused by the plan, refused by a full queue, or queued,
sealed, dispatched). Placement blocking is tracked after each step that may change it.
The heap holds one completion per core, re-keyed in place when the core is re-timed
(:func:`.parts.schedule`); where the reference pops an event and pushes the batch's next
phase, the root is re-keyed. Events pop in the reference's (time, seq) order.

It returns to Python with a status (``NEED_FACTORS``, ``NEED_COST``, ``NEED_ROOM``,
``NEED_COST_ROOM``) only where the run can be resumed exactly: at the top of the loop, or
before a dispatch (``si[RESUME] == REDO_DISPATCH``). Through a compiled plan (a cost book,
``P_BOOK``) a batch not costed yet is costed here (:func:`.costs.cost_batch`) and the
dispatch redone at once, as Python would redo it on re-entry; the loop leaves only when a
cost table is full. Layout names in :mod:`.layout`.
"""

from __future__ import annotations

from numba import njit

from workbench.runtime.compiled import layout as L
from workbench.runtime.compiled.costs import cost_batch
from workbench.runtime.compiled.dispatch import dispatch
from workbench.runtime.compiled.kernel import enter, rebalance
from workbench.runtime.compiled.parts import pop, pysum, release, take
from workbench.runtime.compiled.queues import heads, purge, seal, set_timer, track_blocked
from workbench.runtime.trace import REJECTED_BY_PLAN, REJECTED_QUEUE_FULL


@njit(cache=True, _nrt=False, inline="always")
def _complete(pi, cli, bi, bf, ci, cf, ht, hq, rres, si, sf, a: int, now: float) -> None:
    """Core ``a``'s batch ends (its completion event popped): the core idles, the rest re-timed if HBM was shared."""
    b = ci[L.C_BATCH, a]
    bf[L.BF_END, b] = now
    cf[L.K_BUSY, a] += now - bf[L.BF_START, b]
    ci[L.C_BATCH, a] = -1
    ci[L.C_IDLE, a] = 1  # idle cores are scanned by index: ties go to the lowest
    si[L.N_IDLE] += 1
    if pi[L.P_RES]:
        release(rres, si, pi[L.P_CAPACITY], cli[L.CL_MODEL, bi[L.BI_CLASS, b]])
    if pi[L.P_CORES] > 1:
        na = si[L.N_ACTIVE]
        for i in range(na):  # active.remove(a), keeping the order of the rest
            if ci[L.C_ACT, i] == a:
                for j in range(i, na - 1):
                    ci[L.C_ACT, j] = ci[L.C_ACT, j + 1]
                break
        si[L.N_ACTIVE] = na - 1
        before = sf[L.DEMAND]
        cf[L.K_M, a] = 0.0
        sf[L.DEMAND] = pysum(cf, L.K_M, ci, na - 1, pi[L.P_NEUMAIER])
        if before > 1.0:
            rebalance(ci, cf, ht, hq, si, sf, now)


@njit(cache=True, _nrt=False, inline="always")
def _arrive(pi, pf, pref, rf, ri4, qbuf, qt, csr, cli, clf, sw, sb, sbt, ht, hq, ci, rres, scr, si, sf) -> int:
    """The next arrival: 0 = refused (no tracking), 1 = queued, nothing to start, 2 = queued, dispatch now."""
    r = si[L.NEXT]
    now = rf[L.RF_ARR, r]
    sf[L.NOW] = now
    si[L.NEXT] = r + 1
    q = ri4[L.RI_Q, r]
    if q < 0:
        ri4[L.RI_OUT, r], rf[L.RF_REJ, r] = REJECTED_BY_PLAN, now
        return 0
    if pi[L.P_MAXQ]:
        if pf[L.PF_TIMEOUT]:
            purge(pi, pf, rf, ri4, qbuf, qt, csr, cli, clf, rres, si, now)
        if si[L.WAITING] >= pi[L.P_MAXQ]:
            ri4[L.RI_OUT, r], rf[L.RF_REJ, r] = REJECTED_QUEUE_FULL, now
            return 0
    if pi[L.P_ONLINE]:  # weighted fair queueing: finish tag max(F_s, V) + 1 / w_s
        s = ri4[L.RI_STREAM, r]
        f = sf[L.VIRTUAL] if sf[L.VIRTUAL] > sw[L.SW_FINISH, s] else sw[L.SW_FINISH, s]
        f = f + sw[L.SW_INVW, s]
        sw[L.SW_FINISH, s] = f
        rf[L.RF_KEY, r] = f
    qbuf[qt[L.QT_TAIL, q]] = r
    qt[L.QT_TAIL, q] += 1
    c = qt[L.QT_CLASS, q]
    if pi[L.P_DEFER]:  # the class's waits for weights so far (one may be under way)
        park = clf[L.CF_PARK, c]
        rf[L.RF_WW, r] = clf[L.CF_PCUM, c] - (park - now if park > now else 0.0)
    cli[L.CL_N, c] += 1
    si[L.WAITING] += 1
    sealed = pi[L.P_BATCH] == L.B_STATIC
    if sealed:
        seal(pi, pf, pref, rf, ri4, qbuf, qt, csr, cli, clf, sb, sbt, ht, hq, si, sf, ci, scr, c, now)
    if si[L.N_IDLE]:
        # an arrival changes only its own class: unless that class is now ready, nothing can start
        # (with timeouts, dispatch also purges, so it always runs)
        if sealed or pf[L.PF_TIMEOUT] or pi[L.P_BATCH] == L.B_NONE:  # NoBatching takes one at once
            return 2
        oldest = heads(rf, qbuf, qt, csr, pi[L.P_CQI], c)[1]
        if take(pi, pf, pref, cli[L.CL_N, c], oldest, now):
            return 2
        set_timer(pi, pf, clf, ht, hq, si, sf, ci, c, oldest)
    return 1


@njit(cache=True, _nrt=False, inline="always")
def _events(pi, pf, pref, rf, ri4, qbuf, qt, csr, cli, clf, sb, sbt, bi, bf, ci, cf, todo, ht, hq, rres, scr,
            si, sf) -> bool:
    """Every heap event of the earliest instant; True when a core freed or a timer fired."""
    now = ht[0]
    sf[L.NOW] = now
    changed = False  # only a finished batch or a timer can let the dispatcher start something
    while si[L.HSIZE] and ht[0] == now:
        p = hq[L.HQ_PAY, 0]
        a = p >> 1
        if (p & 1) == L.COMPLETE and pi[L.P_CORES] > 1 and ci[L.C_PI, a] < ci[L.C_PN, a]:
            # the batch's next kernel phase: its event (the root) is re-keyed in place, not popped and pushed
            j = ci[L.C_PI, a]
            ci[L.C_PI, a] = j + 1
            enter(pi[L.P_NEUMAIER], ci, cf, ht, hq, si, sf, a, now, todo[0, a, j], todo[1, a, j])
            continue
        pop(ht, hq, si, ci)
        changed = True
        if (p & 1) == L.COMPLETE:
            _complete(pi, cli, bi, bf, ci, cf, ht, hq, rres, si, sf, a, now)
        elif a < pi[L.P_NCLS] and pi[L.P_BATCH] == L.B_STATIC:  # a batching timer (else a load finished)
            seal(pi, pf, pref, rf, ri4, qbuf, qt, csr, cli, clf, sb, sbt, ht, hq, si, sf, ci, scr, a, now)
    return changed


@njit(cache=True, _nrt=False)
def run_loop(P, R, Q, K, B, C, H, T, W, X, si, sf) -> int:
    """Run until the end (DONE) or until Python must step in; resumable exactly where it returned."""
    pi, pf, pref = P
    rf, ri4, extra = R
    qbuf, qt, csr = Q
    cli, clf, sw, sb, sbt = K
    bi, bf = B
    ci, cf, todo = C
    ht, hq = H
    slot, cmean, cph, ph, _, _, _ = T
    rres, fac, scr, bc, bcur = X
    n, cores, track = pi[L.P_N], pi[L.P_CORES], pi[L.P_TRACK]
    redo = si[L.RESUME] == L.REDO_DISPATCH
    si[L.RESUME] = L.GO_ON
    while True:
        go = True
        if not redo:
            if si[L.FI] + cores > si[L.NF]:  # at most one batch per core starts in one step
                return L.NEED_FACTORS
            if track and si[L.BCOUNT] + 2 * pi[L.P_NCLS] > len(bc):
                return L.NEED_ROOM
            i = si[L.NEXT]
            if si[L.HSIZE] and (i >= n or ht[0] <= rf[L.RF_ARR, i]):
                if not _events(pi, pf, pref, rf, ri4, qbuf, qt, csr, cli, clf, sb, sbt, bi, bf, ci, cf, todo, ht,
                               hq, rres, scr, si, sf):
                    continue  # phase changes only: no core freed, no queue changed
            elif i < n:
                went = _arrive(pi, pf, pref, rf, ri4, qbuf, qt, csr, cli, clf, sw, sb, sbt, ht, hq, ci, rres, scr, si,
                               sf)
                if went == 0:
                    continue
                go = went == 2
            else:
                break
        redo = False
        if go and not dispatch(pi, pf, pref, rf, ri4, extra, qbuf, qt, csr, cli, clf, sb, sbt, bi, bf, ci, cf, todo,
                               ht, hq, slot, cmean, cph, ph, rres, fac, scr, si, sf):
            if pi[L.P_BOOK] and cost_batch(W, T, si, pi[L.P_NEUMAIER] == 1, si[L.MISS_C], si[L.MISS_S],
                                           si[L.MISS_K]):
                redo = True  # dispatch again at the same instant, as a re-entry would
                continue
            si[L.RESUME] = L.REDO_DISPATCH
            return L.NEED_COST_ROOM if pi[L.P_BOOK] else L.NEED_COST
        if track:
            track_blocked(pi, pf, pref, rf, qbuf, qt, csr, cli, clf, bc, bcur, si, sf)
    if track:  # close the curves of classes still blocked at the end (superseded events count as instants)
        end = sf[L.NOW] if sf[L.NOW] >= sf[L.STALE_MAX] else sf[L.STALE_MAX]
        for c in range(pi[L.P_NCLS]):
            if cli[L.CL_BLOCKED, c]:
                j = si[L.BCOUNT]
                bc[j], bcur[0, j], bcur[1, j] = c, end, clf[L.CF_CUM, c] + end - clf[L.CF_SINCE, c]
                si[L.BCOUNT] = j + 1
    return L.DONE

"""The compiled loop's batches on cores: kernel phases sharing HBM, and a batch's start.

Mirrors ``rebalance``, ``enter``, ``follow`` and ``start`` of :mod:`workbench.runtime.loop`:
a batch runs as its sequence of kernel phases (isolated seconds, HBM bandwidth demand);
the phases running at one instant share HBM max-min fairly (water-filling, Massoulie &
Roberts 1999), and a batch whose hungriest phase fits beside every other batch's runs
free to its end with one completion event. Same float operations in the same order as
the reference. These functions are inlined into the main loop (:mod:`.run`).
Layout names in :mod:`.layout`.
"""

from __future__ import annotations

from numba import njit

from workbench.runtime.compiled import layout as L
from workbench.runtime.compiled.parts import acquire, pysum, schedule


@njit(cache=True, _nrt=False, inline="always")
def rebalance(ci, cf, ht, hq, si, sf, now: float) -> None:
    """Share HBM bandwidth max-min fairly among the running phases; re-time those whose rate changed."""
    theta, na = L.INF, si[L.N_ACTIVE]
    if sf[L.DEMAND] > 1.0:  # water-filling: the level at which the capped demands use all of HBM
        nh = 0
        for i in range(na):  # the positive demands, sorted (insertion: a few cores)
            u = cf[L.K_M, ci[L.C_ACT, i]]
            if u > 0.0:
                p = nh
                while p > 0 and cf[L.K_HUNG, p - 1] > u:
                    cf[L.K_HUNG, p] = cf[L.K_HUNG, p - 1]
                    p -= 1
                cf[L.K_HUNG, p] = u
                nh += 1
        left, n_left = 1.0, nh
        for h in range(nh):
            u = cf[L.K_HUNG, h]
            if u * n_left <= left:
                left -= u
                n_left -= 1
            else:
                theta = left / n_left
                break
    for i in range(na):
        k = ci[L.C_ACT, i]
        m = cf[L.K_M, k]
        r = theta / m if m > theta else 1.0
        if r != cf[L.K_RATE, k]:
            cf[L.K_REM, k] -= (now - cf[L.K_LAST, k]) * cf[L.K_RATE, k]
            if cf[L.K_REM, k] < 0.0:
                cf[L.K_REM, k] = 0.0
            cf[L.K_LAST, k], cf[L.K_RATE, k] = now, r
            schedule(ht, hq, si, sf, ci, k, now + cf[L.K_REM, k] / r)


@njit(cache=True, _nrt=False, inline="always")
def enter(neumaier: bool, ci, cf, ht, hq, si, sf, k: int, now: float, dur: float, u: float) -> None:
    """Core ``k`` begins a phase of ``dur`` isolated seconds drawing ``u`` of the bandwidth."""
    before = sf[L.DEMAND]
    cf[L.K_M, k], cf[L.K_REM, k], cf[L.K_LAST, k] = u, dur, now
    sf[L.DEMAND] = pysum(cf, L.K_M, ci, si[L.N_ACTIVE], neumaier)  # summed afresh: no drift
    if before <= 1.0 and sf[L.DEMAND] <= 1.0:  # no sharing before or after: only this phase needs timing
        cf[L.K_RATE, k] = 1.0
        schedule(ht, hq, si, sf, ci, k, now + dur)
    else:
        cf[L.K_RATE, k] = 0.0  # forces a re-time
        rebalance(ci, cf, ht, hq, si, sf, now)


@njit(cache=True, _nrt=False, inline="always")
def follow(ci, cf, todo, ht, hq, si, sf, j: int, now: float) -> None:
    """A free batch becomes phase-tracked: find its phase from the time it has run at full speed."""
    elapsed, acc, i, n = now - cf[L.K_T0, j], 0.0, 0, ci[L.C_PN, j]
    while i < n - 1 and acc + todo[0, j, i] <= elapsed:
        acc += todo[0, j, i]
        i += 1
    ci[L.C_PI, j], ci[L.C_FREE, j] = i + 1, 0
    rem = acc + todo[0, j, i] - elapsed
    cf[L.K_M, j], cf[L.K_REM, j], cf[L.K_LAST, j], cf[L.K_RATE, j] = todo[1, j, i], 0.0 if 0.0 > rem else rem, now, 1.0
    schedule(ht, hq, si, sf, ci, j, now + cf[L.K_REM, j])


@njit(cache=True, _nrt=False, inline="always")
def _phases(pi, ci, cf, todo, ht, hq, cph, ph, si, sf, k: int, slot: int, npre: int, x: float,
            work: float) -> None:
    """The batch's kernel phases after any pause or reload: it runs free, or phase-tracked."""
    now = sf[L.NOW]
    off, n = cph[0, slot], npre + cph[1, slot]
    for i in range(npre, n):
        todo[0, k, i], todo[1, k, i] = ph[0, off + i - npre] * x, ph[1, off + i - npre]
    ci[L.C_PN, k] = n
    peak = todo[1, k, 0]
    for i in range(1, n):
        if todo[1, k, i] > peak:
            peak = todo[1, k, i]
    na, neu = si[L.N_ACTIVE], pi[L.P_NEUMAIER]
    if peak + pysum(cf, L.K_MAX, ci, na, neu) <= 1.0:
        # even at every batch's hungriest phase the demands fit the HBM: no phase can be slowed until
        # the next batch starts, so this one runs free to its end (checked again at every start)
        ci[L.C_FREE, k], ci[L.C_PI, k], cf[L.K_MAX, k], cf[L.K_T0, k], cf[L.K_M, k] = 1, n, peak, now, peak
        ci[L.C_ACT, na] = k
        si[L.N_ACTIVE] = na + 1
        sf[L.DEMAND] = pysum(cf, L.K_M, ci, na + 1, neu)
        schedule(ht, hq, si, sf, ci, k, now + work)
        return
    for i in range(na):
        j = ci[L.C_ACT, i]
        if ci[L.C_FREE, j]:
            follow(ci, cf, todo, ht, hq, si, sf, j, now)
    sf[L.DEMAND] = pysum(cf, L.K_M, ci, na, neu)
    ci[L.C_PI, k] = 1
    cf[L.K_M, k], cf[L.K_MAX, k], ci[L.C_FREE, k] = 0.0, peak, 0
    ci[L.C_ACT, na] = k
    si[L.N_ACTIVE] = na + 1
    enter(neu, ci, cf, ht, hq, si, sf, k, now, todo[0, k, 0], todo[1, k, 0])


@njit(cache=True, _nrt=False)  # a call: load_then_dispatch only, kept out of the loop's inlined body
def _weights_in(pi, pf, rf, cli, clf, bf, rres, scr, si, sf, b: int, c: int, m: int, t: float) -> None:
    """load_then_dispatch: batch ``b`` (``scr[:m]``) of class ``c`` acquires weights already in at ``t``; each
    member's wait for them in the queue, the class's hold ended, the batch's wait recorded."""
    acquire(rres, si, sf, pi[L.P_CAPACITY], pf[L.PF_LINK], cli[L.CL_MODEL, c], t)
    for i in range(m):  # the class's waits for weights since each request arrived
        rf[L.RF_WW, scr[i]] = clf[L.CF_PCUM, c] - rf[L.RF_WW, scr[i]]
    if cli[L.CL_HOLD, c]:  # its hold ends, evicting nothing
        cli[L.CL_HOLD, c] = 0
        rres[L.R_IN_USE, cli[L.CL_MODEL, c]] -= 1
    if clf[L.CF_PARKED, c]:
        bf[L.BF_RELOAD, b] = clf[L.CF_PARKED, c]
        clf[L.CF_PARKED, c] = 0.0


@njit(cache=True, _nrt=False, inline="always")
def start(pi, pf, extra, rf, ri4, cli, clf, bi, bf, ci, cf, todo, ht, hq, cmean, cph, ph, rres, fac, scr, si, sf,
          k: int, c: int, m: int, t_disp: float, slot: int, top: int) -> None:
    """Batch ``scr[:m]`` of class ``c`` starts on core ``k`` (its cost in ``slot``, shape-key rank ``top``)."""
    now = sf[L.NOW]
    x = fac[si[L.FI]]  # one unit-mean factor per batch
    si[L.FI] += 1
    work = cmean[slot] * x
    b = si[L.NBATCH]
    si[L.NBATCH] = b + 1
    npre = 0
    e = 0.0
    if pi[L.P_EXTRA]:
        e = extra[scr[0]]
        for i in range(1, m):
            if extra[scr[i]] > e:
                e = extra[scr[i]]
        if e:
            bf[L.BF_EXTRA, b] = e
            todo[0, k, npre], todo[1, k, npre] = e, 0.0  # a recompile pause: the core compiles, HBM idle
            npre += 1
            work += e
    if pi[L.P_DEFER]:  # its weights are in: it waited for them in the queue, not here
        _weights_in(pi, pf, rf, cli, clf, bf, rres, scr, si, sf, b, c, m, now + e)
    elif pi[L.P_RES]:  # the weights are asked for after any pause
        wait, copy = acquire(rres, si, sf, pi[L.P_CAPACITY], pf[L.PF_LINK], cli[L.CL_MODEL, c], now + e)
        if wait or copy:
            reload = wait + copy
            bf[L.BF_RELOAD, b] = reload
            if wait:  # the link busy with other loads, or another batch's copy: HBM idle
                todo[0, k, npre], todo[1, k, npre] = wait, 0.0
                npre += 1
            if copy:  # the copy writes HBM at the link's rate
                bf[L.BF_COPY, b] = copy
                todo[0, k, npre], todo[1, k, npre] = copy, pf[L.PF_LINK_SHARE]
                npre += 1
            work += reload
    for i in range(m):
        ri4[L.RI_BATCH, scr[i]] = b
    bi[L.BI_CORE, b], bi[L.BI_CLASS, b], bi[L.BI_SIZE, b], bi[L.BI_KEY, b] = k, c, m, top
    bf[L.BF_START, b], bf[L.BF_DISP, b] = now, t_disp
    si[L.WAITING] -= m
    ci[L.C_IDLE, k] = 0
    si[L.N_IDLE] -= 1
    ci[L.C_BATCH, k] = b
    if pi[L.P_PLACE] == L.PL_ROUND:
        si[L.TURN] = (k + 1) % pi[L.P_CORES]
    if pi[L.P_CORES] == 1:
        schedule(ht, hq, si, sf, ci, k, now + work)
        return
    _phases(pi, ci, cf, todo, ht, hq, cph, ph, si, sf, k, slot, npre, x, work)

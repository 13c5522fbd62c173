"""A batch costed inside the compiled loop: the plan's cost of a (class, size, shape key), never leaving numba.

Line for line what the Python side computes for a batch the loop meets first
(:func:`workbench.runtime.loop.batch_cost` through ``PlanRun.cost``/``phases``, ``Plan.phases``,
``Plan.mapping_time`` and ``plan._compiled_phases``), the same float operations in the same
order, from the tables of a :class:`~workbench.compiler.plan.CostBook`:

* the kernels of the bucket's mapping at (size, value), the value floored at a padded
  bucket's min: (seconds, demand = ``min(memory s / s, 1)``) each, and the spill bytes;
* the mapping's isolated time and mean demand (``sum`` as this Python adds floats), times
  the generic slowdown (demand divided by it);
* the fallback seconds: padding waste (against the unpadded value) or the generic mapping
  against the last bucket's (never below zero);
* the mean scaled by the class's model, and the phases scaled the same, adjacent phases of
  equal demand merged.

It writes the cost into the loop's tables (``slot``, ``cmean``, ``cph``, ``ph``), the
unscaled (time, demand, fallback) into ``cinfo`` for the trace, and each mapping evaluated
into ``reci``/``recf`` for the plan's memo; it returns False, writing nothing, when a table
is full (Python grows them).
"""

from __future__ import annotations

from numba import njit

from workbench.compiler import cost_book as CB
from workbench.compiler.cost_table import kernel_costs
from workbench.runtime.compiled import layout as L
from workbench.runtime.compiled.parts import neumaier_add


@njit(cache=True, _nrt=False)
def colsum(out, col: int, n: int, neumaier: bool) -> float:
    """``sum(out[i, col] for i in range(n))`` as CPython computes it (Neumaier-compensated from 3.12)."""
    if n == 0:
        return 0.0
    f = 0.0 + out[0, col]
    if not neumaier:
        for i in range(1, n):
            f += out[i, col]
        return f
    c = 0.0
    for i in range(1, n):
        f, c = neumaier_add(f, c, out[i, col])
    if c != 0.0 and c - c == 0.0:  # finite
        f += c
    return f


@njit(cache=True, _nrt=False)
def _evaluate(W, reci, recf, si, neumaier: bool, mp: int, size: int, value: int, out) -> float:
    """Mapping ``mp`` at (size, value): its kernels' (s, demand, spill, demand x s) into ``out``; its time (s).

    Records (mapping, size, value) -> (time, mean demand, spill bytes) as ``Plan.mapping_time``
    and ``Plan.spill_bytes`` compute them.
    """
    ti, tout, ki, ops, ops_in1, live, live_at, fit, mk, _, _, _, _, _, hwf, hwi, tiles, scr_i, scr_f, _ = W
    k0, k1 = mk[mp, 0], mk[mp, 1]
    kernel_costs(ti, tout, ki, ops, ops_in1, live, live_at, fit, k0, k1, size, value, hwi[CB.HW_NAIVE] == 1,
                 hwi[CB.HW_SRAM], hwf[CB.HW_BW], hwf[CB.HW_PEAK], hwf[CB.HW_LAUNCH], hwi[CB.HW_MMA], tiles, scr_i,
                 scr_f, out)
    n = k1 - k0
    for i in range(n):
        s, m = out[i, 0], out[i, 1]
        u = 0.0
        if s > 0:
            u = m / s
            if 1.0 < u:  # min(m / s, 1.0)
                u = 1.0
        out[i, 1], out[i, 3] = u, u * s
    total = colsum(out, 0, n, neumaier)
    moved = colsum(out, 3, n, neumaier)
    r = si[L.N_REC]
    reci[0, r], reci[1, r], reci[2, r] = mp, size, value
    recf[0, r], recf[1, r], recf[2, r] = total, moved / total if total > 0 else 0.0, colsum(out, 2, n, neumaier)
    si[L.N_REC] = r + 1
    return total


@njit(cache=True, _nrt=False)
def cost_batch(W, T, si, neumaier: bool, c: int, size: int, top: int) -> bool:
    """Cost class ``c``'s batch of ``size`` at shape-key rank ``top`` into the loop's tables; False if one is full."""
    mk, bk, bslow, cb, cscale, keyval, out = W[8], W[9], W[10], W[11], W[12], W[13], W[19]
    slot, cmean, cph, ph, cinfo, reci, recf = T
    j, k = si[L.N_COST], si[L.N_PH]
    b = cb[c]
    mp = bk[b, CB.BK_MAP]
    nk = mk[mp, 1] - mk[mp, 0]
    if j >= len(cmean) or k + nk > ph.shape[1] or si[L.N_REC] + 2 > reci.shape[1]:
        return False
    value, floor, kind, slow = keyval[top], bk[b, CB.BK_FLOOR], bk[b, CB.BK_KIND], bslow[b]
    v = value if value >= floor else floor  # max(value, min)
    main = out[0]
    total = _evaluate(W, reci, recf, si, neumaier, mp, size, v, main)
    t = total * slow
    u = recf[1, si[L.N_REC] - 1] / slow
    fb = 0.0
    if kind == CB.KIND_PAD:  # the padding is waste
        alone = total if v == value else _evaluate(W, reci, recf, si, neumaier, mp, size, value, out[1])
        fb = t - alone
    elif kind == CB.KIND_GENERIC:  # against the last bucket's specialised mapping, never below zero
        fb = t - _evaluate(W, reci, recf, si, neumaier, bk[b, CB.BK_REF], size, value, out[1])
        if 0.0 > fb:
            fb = 0.0
    scale = cscale[c]
    cmean[j] = t * scale
    cinfo[0, j], cinfo[1, j], cinfo[2, j] = t, u, fb
    m = 0  # phases written; adjacent phases of equal demand are one phase
    for i in range(nk):
        d, dem = main[i, 0] * slow, main[i, 1] / slow
        if m and ph[1, k + m - 1] == dem:
            ph[0, k + m - 1] = ph[0, k + m - 1] + d * scale
        else:
            ph[0, k + m], ph[1, k + m] = d * scale, dem
            m += 1
    cph[0, j], cph[1, j] = k, m
    slot[c, size, top] = j
    si[L.N_COST], si[L.N_PH] = j + 1, k + m
    return True

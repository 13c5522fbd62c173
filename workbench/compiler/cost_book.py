"""The cost book's tables, as the compiled event loop reads them: their layout, concatenation, the empty book.

The compiled loop (:mod:`workbench.runtime.compiled`) meets a batch of (class, size, shape
key) whose cost it has not seen a few thousand times in a run of drifting shapes. Instead
of leaving for Python each time (``PlanRun.cost``/``phases`` through the plan's memo), it
costs the batch itself (:func:`workbench.runtime.compiled.costs.cost_batch`) from this
book: the flattened kernels of every mapping the run's buckets use (one set of
:class:`~workbench.compiler.cost_flat.Flat` tables, concatenated, indices shifted), and per
bucket what ``PlanRun._timed`` and ``PlanRun.cost`` decide (which mapping, the padding
floor, the generic slowdown, the mapping the fallback seconds are measured against).
Afterwards ``CostBook.commit`` writes what the loop computed into the plan's memo
(isolated time, demand and spill per (mapping, batch, value)), the values the memo would
have held, so the mapping summary reads them without costing again.

A run's book, :class:`~workbench.compiler.plan.CostBook`, is built beside the run it reads
(:class:`~workbench.compiler.plan.PlanRun`); this module holds what the compiled loop
(:mod:`workbench.runtime.compiled.costs`) and the build (:mod:`workbench.aot`) take of it: the
column and slot names, frozen into the kernel, and the tables' concatenation.
"""

from __future__ import annotations

import numpy as np

from workbench.compiler.cost_flat import TILES, Flat

# per bucket id, int64 ``bk`` columns: mapping index, padding floor (value), kind, reference mapping
BK_MAP, BK_FLOOR, BK_KIND, BK_REF = range(4)
KIND_PLAIN, KIND_PAD, KIND_GENERIC = range(3)  # plain: envelope or recompiled (no fallback seconds)
# hardware: float64 ``hwf`` (bytes/s, FLOP/s, s) and int64 ``hwi`` (rows, 0/1, bytes)
HW_BW, HW_PEAK, HW_LAUNCH = range(3)
HW_MMA, HW_NAIVE, HW_SRAM = range(3)


def concatenate(flats: list[Flat]) -> Flat:
    """One set of tables for several mappings: each mapping's tensor, op and live indices shifted past the last."""
    parts: list[list[np.ndarray]] = [[] for _ in Flat._fields]
    nt = no = nl = 0
    for f in flats:
        ki = f.ki.copy()
        ki[:, :3] += nt
        ki[:, 3] = np.where(ki[:, 3] >= 0, ki[:, 3] + nt, -1)  # the seq source, -1 if none
        ki[:, 4:6] += no
        ops = f.ops.copy()
        ops[:, 2] += nt
        ops[:, 3] = np.where(ops[:, 3] >= 0, ops[:, 3] + nt, -1)
        shifted = (f.ti, f.tout, ki, ops, np.where(f.ops_in1 >= 0, f.ops_in1 + nt, -1), f.live + nt,
                   f.live_at[:-1] + nl, f.fit)
        for p, a in zip(parts, shifted, strict=True):
            p.append(a)
        nt, no, nl = nt + len(f.ti), no + len(f.ops), nl + len(f.live)
    parts[6].append(np.array([nl], np.int64))  # live_at closes with the total
    empty = Flat(np.zeros((0, 11), np.int64), np.zeros(0, np.int64), np.zeros((0, 10), np.int64),
                 np.zeros((0, 4), np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64),
                 np.zeros(0, np.int64), np.zeros((0, 2)))
    return Flat(*(np.concatenate([e] + p).astype(e.dtype) for e, p in zip(empty, parts, strict=True)))


def no_book(keyval: np.ndarray) -> tuple:
    """Tables of the same types as a book's, for a run costed in Python (the compiled loop is one function)."""
    flat = concatenate([])
    return (*flat, np.zeros((0, 2), np.int64), np.zeros((0, 4), np.int64), np.zeros(0), np.zeros(0, np.int64),
            np.zeros(0), keyval.astype(np.int64), np.zeros(3), np.zeros(3, np.int64), TILES,
            np.zeros((2, 4), np.int64), np.zeros((6, 1)), np.zeros((2, 1, 4)))

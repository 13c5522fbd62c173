"""A run's plan costs as tables the compiled event loop reads: every mapping it can run, flattened once.

The compiled loop (:mod:`workbench.runtime.compiled`) meets a batch of (class, size, shape
key) whose cost it has not seen a few thousand times in a run of drifting shapes. Instead
of leaving for Python each time (``PlanRun.cost``/``phases`` through the plan's memo), it
costs the batch itself (:func:`workbench.runtime.compiled.costs.cost_batch`) from this
book: the flattened kernels of every mapping the run's buckets use (one set of
:class:`~workbench.compiler.cost_flat.Flat` tables, concatenated, indices shifted), and per
bucket what :meth:`PlanRun._timed` and :meth:`PlanRun.cost` decide (which mapping, the
padding floor, the generic slowdown, the mapping the fallback seconds are measured
against). Afterwards :meth:`CostBook.commit` writes what the loop computed into the plan's
memo (isolated time, demand and spill per (mapping, batch, value)), the values the memo
would have held, so the mapping summary reads them without costing again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from workbench.compiler.cost_flat import TILES, Flat

if TYPE_CHECKING:
    from workbench.compiler.plan import Mapping, PlanRun

# per bucket id, int64 ``bk`` columns: mapping index, padding floor (value), kind, reference mapping
BK_MAP, BK_FLOOR, BK_KIND, BK_REF = range(4)
KIND_PLAIN, KIND_PAD, KIND_GENERIC = range(3)  # plain: envelope or recompiled (no fallback seconds)
# hardware: float64 ``hwf`` (bytes/s, FLOP/s, s) and int64 ``hwi`` (rows, 0/1, bytes)
HW_BW, HW_PEAK, HW_LAUNCH = range(3)
HW_MMA, HW_NAIVE, HW_SRAM = range(3)


class CostBook:
    """The tables (``tables``, a tuple the compiled loop unpacks) and the mappings they flatten, in order."""

    def __init__(self, run: PlanRun, class_bucket: list[int], class_scale: list[float], keyval: np.ndarray):
        plan = run.plan
        pad0, rec0, gen = run.ids()
        self.plan, self.mappings = plan, []
        index: dict[int, int] = {}
        flats: list[Flat] = []

        def add(mapping: Mapping) -> int:
            if id(mapping) not in index:
                flat = plan._flat(mapping)
                if flat is None:
                    raise LookupError("no compiled cost model")
                index[id(mapping)] = len(flats)
                flats.append(flat)
                self.mappings.append(mapping)
            return index[id(mapping)]

        bk = np.zeros((gen + 1, 4), np.int64)
        slow = np.ones(gen + 1)
        for b in sorted(set(class_bucket)):
            mapping, v, s = run._timed(b, 0)  # the mapping a bucket id runs and its slowdown
            bk[b, BK_MAP] = add(mapping)
            slow[b] = s
            if pad0 <= b < rec0:
                bk[b, BK_FLOOR], bk[b, BK_KIND] = v, KIND_PAD  # max(0, min) is the bucket's min
            elif b >= gen:
                bk[b, BK_KIND], bk[b, BK_REF] = KIND_GENERIC, add(plan.buckets[-1].mapping)
        kernels = [len(f.ki) for f in flats]
        mk = np.zeros((len(flats), 2), np.int64)
        mk[:, 1] = np.cumsum(kernels)
        mk[1:, 0] = mk[:-1, 1]
        hw = plan.hardware
        hwf = np.array([hw.hbm_bandwidth_bytes_per_s, hw.peak_flops_per_core, hw.launch_s], np.float64)
        hwi = np.array([hw.mma_rows, plan.options.attention == "naive", hw.sram_bytes_per_core], np.int64)
        width = max([1] + [int((f.ki[:, 5] - f.ki[:, 4]).max(initial=1)) for f in flats]
                    + [int((f.ki[:, 1] - f.ki[:, 0]).max(initial=1)) for f in flats])
        self.max_kernels = max(kernels, default=1)
        self.tables = (*concatenate(flats), mk, bk, slow, np.array(class_bucket, np.int64),
                       np.array(class_scale, np.float64), keyval.astype(np.int64), hwf, hwi, TILES,
                       np.zeros((2, 4), np.int64), np.zeros((6, width)), np.zeros((2, self.max_kernels, 4)))

    def commit(self, reci: np.ndarray, recf: np.ndarray, n: int) -> None:
        """Write the loop's first ``n`` evaluations into the plan's memo, as ``Plan.mapping_time`` and
        ``Plan.spill_bytes`` keep them: ``reci`` rows (mapping, batch, value), ``recf`` rows (s, demand, bytes)."""
        memo, ids = self.plan._memo, [id(m) for m in self.mappings]
        for (j, batch, value), (total, demand, spill) in zip(reci[:, :n].T.tolist(), recf[:, :n].T.tolist(),
                                                              strict=True):
            memo[("time", ids[j], batch, value)] = total, demand
            memo[("spill", ids[j], batch, value)] = spill


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

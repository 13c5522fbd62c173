"""The compiled loop's Python side: lay the engine's state out as flat arrays, run, answer, assemble.

The compiled loop (:mod:`.run`, built ahead of time or by numba's JIT: :mod:`workbench.aot`)
leaves to Python only for what lives in Python: the service
model's unit-mean factors (drawn in chunks from the engine's generator, the same sequence
as the reference loop's), the cost and phases of a (class, size, shape key) seen for the
first time when the service model is not a compiled plan (the same ``batch_cost`` the
reference loop memoises; a plan's batches are costed inside the loop from its cost book,
:mod:`workbench.compiler.cost_book`), and more room for the placement-blocking curves or
the cost tables. Everything else runs compiled. The result is the reference
loop's :class:`~workbench.runtime.columns.RunColumns`, field for field.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import numpy as np

from workbench.aot import kernel
from workbench.runtime.allocator import release_free_memory
from workbench.runtime.assembly import dense_floats
from workbench.runtime.columns import FACTOR_CHUNK, ResidencyCounts, RunColumns
from workbench.runtime.compiled import kernel_path
from workbench.runtime.compiled import layout as L
from workbench.runtime.no_book import no_book_tables  # cost_book.no_book without importing the compiler
from workbench.runtime.policies import DynamicBatching, Fifo, RoundRobin, StaticBatching, WeightedFair
from workbench.runtime.residency import link_terms
from workbench.runtime.trace import COMPLETED
from workbench.unique import distinct

if TYPE_CHECKING:
    from workbench.runtime.run_setup import RunSetup

i8, i4, f8 = np.int64, np.int32, np.float64
COST_ROOM = 256  # batch costs a cost book's tables hold at first (doubled when full)


class _Run:
    """The arrays of one compiled run, grouped as the numba loop takes them."""

    def __init__(self, e: RunSetup):
        self.e = e
        sc, req, cls = e.scenario, e.requests, e.classification
        n, n_cls, cores, ns = len(req), len(e.class_qs), sc.hardware.cores, len(sc.streams)
        qid = e.qid
        n_acc = int((qid >= 0).sum())
        self.static = static = isinstance(e.batching, StaticBatching)
        batching = isinstance(e.batching, DynamicBatching)
        mb = e.batching.max_batch if batching else 1
        cq_len = [len(qs) for qs in e.class_qs]
        core_classes = [[c for c in range(n_cls) if k in e.class_cores[c]] for k in range(cores)]
        csr = [_ptr(cq_len), _flat(e.class_qs), _ptr([len(cc) for cc in core_classes]), _flat(core_classes)]
        # parameters
        pi = np.zeros(L.N_PI, i8)
        pi[L.P_N], pi[L.P_NCLS], pi[L.P_CORES], pi[L.P_MAXB] = n, n_cls, cores, mb
        pi[L.P_BATCH] = L.B_STATIC if static else L.B_DYNAMIC if batching else L.B_NONE
        pi[L.P_PLACE] = L.PL_LEAST if e.placement.conserving else L.PL_ROUND \
            if isinstance(e.placement, RoundRobin) else L.PL_PINNED
        pi[L.P_ONLINE], pi[L.P_MAXQ] = e.discipline.online, sc.scheduler.max_queue
        pi[L.P_TRACK], pi[L.P_EXTRA] = not e.placement.conserving, cls.extra_s is not None
        pi[L.P_NEUMAIER] = sys.version_info >= (3, 12)  # how this interpreter's sum() adds floats
        pi[L.P_CQI], pi[L.P_KCP], pi[L.P_KCI] = np.cumsum([len(a) for a in csr[:3]])
        pi[L.P_SMEM0] = n_acc
        pref = np.array(e.batching.preferred if batching and not static else (), i8)
        pi[L.P_NPREF] = len(pref)
        pf = np.zeros(L.N_PF, f8)
        pf[L.PF_DELAY] = e.batching.max_delay_s if batching else 0.0
        pf[L.PF_TIMEOUT] = sc.scheduler.timeout_s
        pf[L.PF_LINK], pf[L.PF_LINK_SHARE] = link_terms(sc.hardware)
        # per request
        defer = sc.residency.dispatch == "load_then_dispatch"  # P_DEFER below also needs models
        rf = np.empty((4 if defer else 3, n), f8)  # the weights-wait row only where it is written
        rf[L.RF_ARR], rf[L.RF_REJ] = req.arrival_s, np.nan
        if defer:
            rf[L.RF_WW] = 0.0
        if isinstance(e.discipline, Fifo):
            _fill_index(rf[L.RF_KEY])  # arrival index, in place (no int64 temporary)
        elif e.discipline.online:
            rf[L.RF_KEY] = 0.0
        else:
            keys = getattr(e.discipline, "key_array", None)  # an array where the discipline has one
            rf[L.RF_KEY] = keys(req.stream, sc) if keys else e.discipline.keys(req.stream, sc)
        keyval, krank = (distinct(np.asarray(cls.shape_key))  # no sort (nor copy) of the keys when few
                         if cls.shape_key is not None else (np.zeros(1, i8), np.zeros(n, i4)))
        self.keyval = keyval.astype(i8, copy=False)
        self.scales = [m.service_scale for m in sc.models] or [1.0]
        plan_run = cls.info.get("run")  # a compiled plan's run: its batches are costed inside the loop
        self.book = plan_run.cost_book(e.class_bucket, [self.scales[m] for m in e.class_model], self.keyval) \
            if hasattr(plan_run, "cost_book") else None
        pi[L.P_BOOK] = self.book is not None
        self.W = self.book.tables if self.book is not None else no_book_tables(self.keyval)
        ri4 = np.empty((5, n), i4)
        ri4[L.RI_Q], ri4[L.RI_STREAM], ri4[L.RI_KRANK] = qid, req.stream, krank.ravel()
        ri4[L.RI_BATCH], ri4[L.RI_OUT] = -1, COMPLETED
        extra = np.ascontiguousarray(cls.extra_s, dtype=f8) if cls.extra_s is not None else np.zeros(0, f8)
        self.R = (rf, ri4, extra)
        # queues: each a slice of qbuf, in arrival order; then the sealed batches' members
        nq = len(e.q_class)
        qt = np.zeros((3, nq), i8)
        qt[L.QT_HEAD, 1:] = np.cumsum(np.bincount(qid[qid >= 0], minlength=nq))[:-1]
        qt[L.QT_TAIL], qt[L.QT_CLASS] = qt[L.QT_HEAD], e.q_class
        self.Q = (np.zeros(2 * n_acc if static else n_acc, i4), qt, np.concatenate(csr).astype(i4))
        cli = np.zeros((6, n_cls), i8)
        cli[L.CL_MODEL], cli[L.CL_SBHEAD], cli[L.CL_SBTAIL] = e.class_model, -1, -1
        clf = np.zeros((6, n_cls), f8)
        clf[L.CF_TIMER] = -1.0
        sw = np.zeros((2, ns), f8)
        if isinstance(e.discipline, WeightedFair):
            sw[L.SW_INVW] = e.discipline.inv_w
        n_sb = n_acc if static else 0
        self.K = (cli, clf, sw, np.zeros((3, n_sb), i8), np.zeros(n_sb, f8))
        nb = max(n_acc, 1)  # every batch holds at least one request
        self.B = (np.zeros((4, nb), i4), np.zeros((6, nb), f8))  # int32 indices: half the memory
        ci = np.zeros((7, cores), i8)
        ci[L.C_IDLE], ci[L.C_BATCH], ci[L.C_HPOS] = 1, -1, -1
        cf = np.zeros((8, cores), f8)
        cf[L.K_RATE] = 1.0
        phases = 4 if self.book is None else self.book.max_kernels + 3  # + a recompile pause, a wait for
        # weights and a copy: a book's batches are costed in the loop, which cannot widen ``todo``
        self.C = [ci, cf, np.zeros((2, cores, phases), f8)]
        cap = n_acc + cores + len(sc.models) + 8  # timers <= accepted requests, live completions <= cores, loads
        # in flight <= models (a core's completion is re-keyed in place: none goes stale)
        self.H = (np.zeros(cap, f8), np.zeros((2, cap), i8))
        nc = COST_ROOM if self.book is not None else 16  # room for costs (4 x that phases, 2 x that evaluations)
        self.T = [np.full((n_cls, mb + 1, len(keyval)), -1, i4), np.zeros(nc, f8), np.zeros((2, nc), i8),
                  np.zeros((2, 4 * nc), f8), np.zeros((3, nc), f8), np.zeros((3, 2 * nc), i8),
                  np.zeros((3, 2 * nc), f8)]  # slot, cmean, cph, ph; cinfo, reci, recf (a cost book's)
        si, sf = np.zeros(L.N_SI, i8), np.zeros(L.N_SF + len(sc.models), f8)
        si[L.N_IDLE] = cores
        models = sc.models
        self.res = bool(models) and any(m.weights_bytes for m in models)
        pi[L.P_RES] = self.res
        pi[L.P_DEFER] = self.res and sc.residency.dispatch == "load_then_dispatch"
        rres = np.zeros((4, len(models)), i8)
        if self.res:
            pi[L.P_CAPACITY] = cap_b = sc.hardware.hbm_capacity_bytes
            for m, spec in enumerate(models):  # warm start: load in order while they fit
                rres[L.R_WEIGHTS, m] = spec.weights_bytes
                if si[L.USED_BYTES] + spec.weights_bytes <= cap_b:
                    rres[L.R_RESIDENT, m], rres[L.R_STAMP, m] = 1, m
                    si[L.USED_BYTES] += spec.weights_bytes
            si[L.CLOCK] = len(models)
        room = -(-(n_acc + cores) // FACTOR_CHUNK) * FACTOR_CHUNK  # factors: written only as drawn
        self.X = [rres, np.empty(room, f8), np.zeros(mb + max(cq_len, default=1), i8), np.zeros(256, i4),
                  np.zeros((2, 256), f8)]
        self.P, self.si, self.sf = (pi, pf, pref), si, sf
        self.loop = kernel("run_loop", kernel_path(e))  # the ahead-of-time build, or numba's JIT

    def step(self) -> int:
        """Run the compiled loop until it finishes or asks for something."""
        return self.loop(self.P, self.R, self.Q, self.K, self.B, tuple(self.C), self.H, tuple(self.T), self.W,
                        tuple(self.X), self.si, self.sf)

    def more_factors(self) -> None:
        """Draw the next chunks of unit-mean factors, in order, into the buffer (a quarter more, at least a chunk).

        The buffer is sized once for the most batches the run can start (every batch holds a
        request) and its pages are written only as factors are drawn; it grows in place
        (``realloc``) only past that bound, which the loop's look-ahead of one batch per core
        can reach by a chunk.
        """
        e, fac, have = self.e, self.X[1], int(self.si[L.NF])
        want = have + max(FACTOR_CHUNK, -(-have // 4 // FACTOR_CHUNK) * FACTOR_CHUNK)
        want = max(min(want, len(fac)), have + FACTOR_CHUNK)
        if want > len(fac):
            fac.resize(want, refcheck=False)  # the loop holds no view of it between steps
        for a in range(have, want, FACTOR_CHUNK):
            fac[a:a + FACTOR_CHUNK] = e.model.draw_factors(e.rng, FACTOR_CHUNK)
        self.si[L.NF] = want

    def add_cost(self) -> None:
        """Cost the batch the loop asked about (the reference loop's memoised ``batch_cost``)."""
        from workbench.runtime.loop import batch_cost  # only runs not through a plan's cost book come here

        e, si = self.e, self.si
        c, size, top = int(si[L.MISS_C]), int(si[L.MISS_S]), int(si[L.MISS_K])
        slot, cmean, cph, ph = self.T[:4]
        mean, _, phases = batch_cost(e.classification, e.class_bucket[c], size, int(self.keyval[top]),
                                     self.scales[e.class_model[c]])
        j, k, m = int(si[L.N_COST]), int(si[L.N_PH]), len(phases)
        if j == len(cmean):
            cmean, cph = _grow(cmean), _grow(cph)
        while k + m > ph.shape[1]:
            ph = _grow(ph)
        cmean[j], cph[0, j], cph[1, j] = mean, k, m
        for i, (d, u) in enumerate(phases, start=k):
            ph[0, i], ph[1, i] = d, u
        slot[c, size, top] = j
        si[L.N_COST], si[L.N_PH] = j + 1, k + m
        self.T[1:4] = cmean, cph, ph
        todo = self.C[2]
        if todo.shape[2] < m + 3:  # room for a recompile pause, a wait for weights and a copy before the kernels
            wider = np.zeros((2, todo.shape[1], m + 3), f8)
            wider[:, :, :todo.shape[2]] = todo
            self.C[2] = wider

    def grow_costs(self) -> None:
        """Double the cost tables the loop found full (costs, phases, evaluations recorded for the memo)."""
        si, T = self.si, self.T
        if si[L.N_COST] >= len(T[1]):
            T[1], T[2], T[4] = _grow(T[1]), _grow(T[2]), _grow(T[4])
        while si[L.N_PH] + self.book.max_kernels > T[3].shape[1]:
            T[3] = _grow(T[3])
        if si[L.N_REC] + 2 > T[5].shape[1]:
            T[5], T[6] = _grow(T[5]), _grow(T[6])

    def batch_costs(self, c: np.ndarray, size: np.ndarray, key: np.ndarray) -> tuple[np.ndarray, ...]:
        """(isolated s, mean demand, fallback s) of batches by (class, size, shape key), unscaled, as the loop
        costed them: what ``classification.cost`` gives, read from the tables (a cost book's runs only)."""
        j = self.T[0][c, size, np.searchsorted(self.keyval, key)]
        cinfo = self.T[4]
        return cinfo[0].take(j), cinfo[1].take(j), cinfo[2].take(j)

    def _batch_keys(self, rank: np.ndarray) -> np.ndarray:
        """Each batch's shape key from its rank: untouched zeros without keys, int32 where keys fit."""
        if not self.keyval.any():
            return np.zeros(len(rank), i8)
        keyval = self.keyval.astype(i4) if self.keyval.max() < 2**31 else self.keyval
        return keyval.take(rank)

    def _used_factors(self, nb: int) -> np.ndarray:
        """The factors the run used (one per batch), the unused tail given back to the allocator."""
        fac, self.X[1] = self.X[1], np.zeros(0, f8)
        fac.resize(min(nb, len(fac)), refcheck=False)
        return fac

    def grow_blocks(self) -> None:
        """Double the blocking-curve buffers."""
        self.X[3], self.X[4] = _grow(self.X[3]), _grow(self.X[4])

    def columns(self) -> RunColumns:
        """The run's raw columns, as the reference loop returns them.

        The loop's state is handed over shrunk: each 2-D array is cut in place (``realloc``) to
        the rows the trace keeps (layout puts them first), so the rest is given back before the
        trace is assembled and no row is copied.
        """
        e, si = self.e, self.si
        nb = int(si[L.NBATCH])
        bi, bf = self.B
        rf, ri4, _ = self.R
        self.R = self.B = None  # no view of rf, ri4 or bf may outlive this: they are resized below
        curves = None
        if not e.placement.conserving:
            n = int(si[L.BCOUNT])
            bc, bt, bv = self.X[3][:n], self.X[4][0, :n], self.X[4][1, :n]
            curves = [(np.concatenate(([0.0], bt[bc == c])), np.concatenate(([0.0], bv[bc == c])))
                      for c in range(len(e.class_qs))]
        res = None
        if self.res:
            res = ResidencyCounts(int(si[L.LOADS]), int(si[L.EVICTIONS]), int(si[L.OVERCOMMITS]),
                                  float(self.sf[L.LINK_BUSY]))
        if self.book is not None:  # the plan's memo holds what the loop costed, as if Python had
            self.book.commit(self.T[5], self.T[6], int(si[L.N_REC]))
        outcome = ri4[L.RI_OUT].astype(np.int8)
        extra, reload, copy = (dense_floats(bf[row], nb) for row in (L.BF_EXTRA, L.BF_RELOAD, L.BF_COPY))
        _keep_rows(bf, 3 if self.static else 2)  # start, end (and when sealed, dispatch)
        weights_wait = rf[L.RF_WW].copy() if self.P[0][L.P_DEFER] else None
        kept = _keep_rows(rf, 1)  # the rejection time
        return RunColumns(
            nbatch=nb, b_core=bi[L.BI_CORE, :nb], b_class=bi[L.BI_CLASS, :nb], b_size=bi[L.BI_SIZE, :nb],
            b_key=self._batch_keys(bi[L.BI_KEY, :nb]), b_start=bf[L.BF_START], b_end=bf[L.BF_END],
            b_disp=bf[L.BF_DISP] if self.static else None, req_batch=_keep_rows(ri4, 1)[L.RI_BATCH],
            outcome=outcome, rejected_at=kept[L.RF_REJ], weights_wait=weights_wait,
            factor_chunks=[self._used_factors(nb)], b_extra=extra, b_reload=reload, b_copy=copy,
            busy_s=self.C[1][L.K_BUSY], residency=res, block_curves=curves,
            batch_costs=self.batch_costs if self.book is not None else None)


def _keep_rows(a: np.ndarray, rows: int) -> np.ndarray:
    """The first ``rows`` rows of 2-D ``a``, cut in place by ``realloc`` (the rest given back to the allocator).

    ``a`` must own its data and have no view alive (the loop's state, handed over once).
    """
    a.resize((rows, a.shape[1]), refcheck=False)
    return a


def _fill_index(row: np.ndarray, block: int = 1 << 16) -> None:
    """``row[:] = arange(len(row))``, a block at a time."""
    for a in range(0, len(row), block):
        row[a:a + block] = np.arange(a, min(a + block, len(row)))


def _ptr(lengths: list[int]) -> np.ndarray:
    return np.concatenate(([0], np.cumsum(lengths, dtype=i8))).astype(i4)


def _flat(lists: list[list[int]]) -> np.ndarray:
    return np.array([x for xs in lists for x in xs], dtype=i4)


def _grow(a: np.ndarray) -> np.ndarray:
    """``a`` with its last axis doubled, contents kept."""
    out = np.zeros(a.shape[:-1] + (2 * a.shape[-1],), a.dtype)
    out[..., :a.shape[-1]] = a
    return out


def run_compiled(e: RunSetup) -> RunColumns:
    """The run's columns by the compiled loop (same contract, and same values, as ``loop.run_events``)."""
    run = _Run(e)
    release_free_memory(len(e.requests))  # the set-up's temporaries, before the loop grows
    while True:
        status = run.step()
        if status == L.DONE:
            return run.columns()
        if status == L.NEED_FACTORS:
            run.more_factors()
        elif status == L.NEED_COST:
            run.add_cost()
        elif status == L.NEED_ROOM:
            run.grow_blocks()
        elif status == L.NEED_COST_ROOM:
            run.grow_costs()
        else:
            raise RuntimeError(f"compiled loop: unknown status {status}")

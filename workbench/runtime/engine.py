"""The engine: one simulation run, from a scenario and a service model to a trace.

The engine builds the queues (one per stream and shape bucket) and the batch classes
(requests that may share a batch: same bucket, same model, same eligible cores) as its
set-up (:mod:`workbench.runtime.run_setup`, what every loop reads), then runs one loop
over them, all giving the same trace bit for bit: the general event loop compiled with
numba (:mod:`workbench.runtime.compiled`) when numba is installed and it implements
every policy of the run; else, when the scenario is a single FIFO batch class with
nothing that needs events (no timeouts, no contention, no residency), the exact
recursion of :mod:`workbench.runtime.fastpath`; else the readable general event loop
(:mod:`workbench.runtime.loop`), the reference the other two are tested against.
It assembles the loop's raw columns into a :class:`~workbench.runtime.trace.Trace`.
All state, the seeded generator included, lives on the engine object.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from workbench.config import Scenario
from workbench.runtime import compiled
from workbench.runtime.allocator import release_free_memory
from workbench.runtime.assembly import (
    dense_floats,
    factors,
    imbalance,
    memory_share,
    narrow,
    owned,
    rejections,
    table_column,
)
from workbench.runtime.columns import RunColumns
from workbench.runtime.fastpath import fast_path_applies, run_fifo
from workbench.runtime.residency import link_terms
from workbench.runtime.run_setup import RunSetup
from workbench.runtime.trace import Trace
from workbench.service_model import Requests, ServiceModel
from workbench.unique import distinct


class Engine(RunSetup):
    """One simulation run of a scenario through a service model: its set-up (:class:`RunSetup`), a loop, a trace."""

    def chosen_loop(self) -> str:
        """The loop this run takes: ``compiled``, ``fastpath`` or ``python`` (same trace whichever)."""
        if self.loop in ("auto", "compiled", "aot", "jit") and compiled.compiled_applies(self):
            return "compiled"
        if self.loop in ("auto", "fastpath") and fast_path_applies(self):
            return "fastpath"
        return "python"

    def run(self) -> Trace:
        """Simulate every request to completion or rejection and return the trace."""
        loop = self.chosen_loop()
        if loop == "python":
            from workbench.runtime.loop import run_events  # imported when a run takes it (start-up)

            return self._trace(run_events(self))
        cols = (compiled.run_compiled if loop == "compiled" else run_fifo)(self)
        return self._trace(cols)

    def _trace(self, v: RunColumns) -> Trace:
        """Assemble the columns of a finished run (each column converted once, few temporaries).

        Per-request times and cores are not stored: the trace gathers them from the batch
        columns when read. The loop's buffers are released as they are converted, per-request
        ones first (a lower peak); columns that are zero everywhere stay unwritten zeros
        (:mod:`workbench.runtime.assembly`); batch costs are looked up once per distinct
        (class, size, key) through a dense code table when the codes are few (no sort), else
        ``np.unique``; arithmetic is the same, operation for operation, so the trace is the
        same bit for bit.
        """
        req, f8 = self.requests, np.float64
        n, nb = len(req), v.nbatch
        batch = owned(np.asarray(v.req_batch, dtype=np.int32))
        outcome = owned(np.asarray(v.outcome, dtype=np.int8))
        rejected_s = rejections(v.rejected_at, n)
        v.req_batch = v.outcome = v.rejected_at = None  # the loop's per-request buffers go first
        b_start = owned(np.frombuffer(v.b_start, dtype=f8)[:nb])
        b_end = owned(np.frombuffer(v.b_end, dtype=f8)[:nb])
        b_disp = owned(np.frombuffer(v.b_disp, dtype=f8)[:nb]) if v.b_disp is not None else b_start
        extra, reload, copy = (dense_floats(d, nb) for d in (v.b_extra, v.b_reload, v.b_copy))
        v.b_start = v.b_end = v.b_disp = v.b_extra = v.b_reload = v.b_copy = None
        b_core = narrow(v.b_core, np.int16)
        b_class = narrow(v.b_class, np.int32)
        b_size = narrow(v.b_size, np.int16)
        keys = np.asarray(v.b_key)
        b_key = np.zeros(nb, dtype=np.int64) if not keys.any() else owned(keys.astype(np.int64, copy=False))
        v.b_core = v.b_class = v.b_size = v.b_key = None
        del keys
        scale, mean, mshare, fb, inverse = self._batch_costs(b_class, b_size, b_key, v.batch_costs)
        v.batch_costs = None
        batch_bucket = table_column(self.class_bucket, b_class, np.int16)
        batch_model = table_column(self.class_model, b_class, np.int16)
        imbal = None
        if v.block_curves is not None:
            imbal = imbalance(v.block_curves, batch, b_class, b_disp, req.arrival_s)
        del b_class
        # the batch costs the loop used, rebuilt as columns: factor x mean (class, size) + extras
        x = factors(v.factor_chunks, nb)
        v.factor_chunks = []
        iso = (mean * scale).take(inverse)
        iso *= x
        b_mem = mshare.take(inverse) if mshare.any() or copy.any() else None
        if b_mem is not None:
            b_mem *= iso  # iso x share, in place (the product commutes bit for bit)
        work = iso  # iso + extra + reload, in place: iso is not needed after (adding +0.0 changes no bit)
        del iso
        if extra.any():
            work += extra
        if reload.any() and self.scenario.residency.dispatch == "hold":  # it waited for its weights on its core
            work += reload
        b_mem = memory_share(b_mem, copy, link_terms(self.scenario.hardware)[1], work)
        del copy
        if fb.any():
            b_fb = (fb * scale).take(inverse)
            b_fb *= x
            b_fb += extra
        else:
            b_fb = extra  # 0 x factor + extra is extra, bit for bit
        del x, inverse, extra
        weights_wait = None
        if v.weights_wait is not None:  # load_then_dispatch: per request, s waited in the queue for weights
            weights_wait = np.array(v.weights_wait, dtype=f8)
            weights_wait[batch < 0] = 0.0
            v.weights_wait = None
        res = v.residency
        release_free_memory(n)  # the assembly's temporaries
        return Trace(
            scenario=self.scenario, bucket_names=self.classification.bucket_names,
            arrival_s=req.arrival_s, stream=req.stream, shapes=req.shapes,
            bucket=self.classification.bucket.astype(np.int32, copy=False),
            outcome=outcome, rejected_at=rejected_s,
            batch=batch, imbalance=imbal,
            batch_core=b_core, batch_bucket=batch_bucket, batch_model=batch_model,
            batch_size=b_size, batch_shape_key=b_key, batch_dispatch_s=b_disp,
            batch_start_s=b_start, batch_end_s=b_end, batch_work_s=work,
            batch_reload_s=reload, batch_fallback_s=b_fb, batch_memory_share=b_mem,
            core_busy_s=np.array(v.busy_s, dtype=f8),
            core_batches=np.bincount(b_core, minlength=self.scenario.hardware.cores),
            residency={} if res is None else {"loads": res.loads, "evictions": res.evictions,
                                              "overcommits": res.overcommits, "link_busy_s": res.link_busy_s},
            labels=dict(self.classification.labels), service=self.classification, weights_wait=weights_wait,
        )

    def _batch_costs(self, b_class: np.ndarray, b_size: np.ndarray, b_key: np.ndarray,
                     costed: Callable | None = None) -> tuple[np.ndarray, ...]:
        """Per distinct (class, size, key): (scale, mean, memory share, fallback), and each batch's row.

        ``costed`` (the loop's own costs, as arrays) stands in for the classification's cost when given.
        """
        width_s, width_k = int(b_size.max(initial=0)) + 1, int(b_key.max(initial=0)) + 1
        code = b_class.astype(np.int64)  # one code per (class, size, key): distinct costs are looked up once
        code *= width_s
        code += b_size
        code *= width_k
        code += b_key
        codes, inverse = distinct(code)
        del code
        rows = np.stack([codes // (width_s * width_k), codes // width_k % width_s, codes % width_k])
        scales = [m.service_scale for m in self.scenario.models] or [1.0]
        if costed is not None:
            scale = np.array([scales[m] for m in self.class_model], dtype=np.float64).take(rows[0])
            return scale, *costed(rows[0], rows[1], rows[2]), inverse
        table = np.array([(scales[self.class_model[c]], *self.classification.cost(self.class_bucket[c], s, k))
                          for c, s, k in rows.T.tolist()]).reshape(-1, 4)  # (scale, mean, memory share, fallback)
        scale, mean, mshare, fb = (np.ascontiguousarray(col) for col in table.T)
        return scale, mean, mshare, fb, inverse


def simulate(scenario: Scenario, model: ServiceModel | None = None, requests: Requests | None = None,
             loop: str = "auto") -> Trace:
    """Run ``scenario`` (through ``model``, or its abstract service law) and return the trace.

    ``loop`` picks the event loop (``auto``: the fastest that applies; ``python``: the readable
    reference); every loop gives the same trace.
    """
    return Engine(scenario, model, requests, loop).run()

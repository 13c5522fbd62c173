"""Compile-time mapping metrics of a run through a plan: hit rate, misses, launches, spills, prediction error.

* ``bucket_hit_rate``: the share of measured requests served by a bucket compiled
  ahead of time (the envelope) -- the compile-time mapping accuracy of
  ../shared/DESIGN.md. ``specialised_rate`` also counts buckets added by recompiles.
* ``misses``: out-of-envelope requests by policy outcome and by the bound they broke.
* ``prediction_error``: per bucket, observed batch time (start to end, contention and
  noise included, recompile pauses excluded) over the compiler's prediction (isolated,
  at the bucket's opt), minus one: mean (signed) and mean absolute; split into its
  factors, each as a mean ratio minus one: ``shape`` (isolated time at the batch's real
  shape over the prediction: below zero when live shapes are smaller than opt),
  ``noise`` (kernel-time jitter) and ``contention`` (observed over isolated: HBM
  bandwidth shared with other cores, never below zero). observed / predicted =
  shape x noise x contention, batch by batch.
"""

from __future__ import annotations

import numpy as np

from workbench.compiler.envelope import MISS_KINDS
from workbench.compiler.plan_profile import batch_profiles
from workbench.runtime.trace import Trace
from workbench.unique import distinct, distinct_values


def mapping_summary(trace: Trace) -> dict | None:
    """The mapping metrics, or None when the run had no compiled plan."""
    svc = trace.service
    if svc is None or "run" not in svc.info:
        return None
    run = svc.info["run"]
    reasons = svc.info["reasons"]
    n = len(trace.arrival_s)
    i0 = int(n * trace.scenario.warmup_fraction)  # the measured requests are the suffix from i0
    any_measured = i0 < n
    kinds = run.kind
    bucket = trace.bucket[i0:]
    k = len(run.plan.buckets)
    _, rec0, gen = run.ids()
    hit = (bucket >= 0) & (bucket < k)
    specialised = hit | ((bucket >= rec0) & (bucket < gen))
    missed = ~hit
    mapping = trace.labels["mapping"][i0:][missed]  # the misses only: few, so counting them is cheap
    reason = trace.labels["miss_reason"][i0:]
    by_outcome = {MISS_KINDS[i]: int(np.count_nonzero(mapping == i)) for i in range(1, len(MISS_KINDS))}
    by_outcome["hit_recompiled_bucket"] = int(np.count_nonzero(specialised & missed))
    by_reason = {r: int(np.count_nonzero(reason == i)) for i, r in enumerate(reasons)}
    hit_rate = float(np.count_nonzero(hit) / len(hit)) if any_measured else 0.0
    specialised_rate = float(np.count_nonzero(specialised) / len(hit)) if any_measured else 0.0
    del hit, specialised, missed, mapping, bucket
    # per batch facts, computed once per distinct (bucket, size, key): a 1-D unique of one code
    t0 = trace.arrival_s[i0] if any_measured else 0.0
    measured_batch = trace.batch_start_s >= t0
    uniq, inv = _distinct_batches(trace, measured_batch)
    prof = batch_profiles(run, *uniq)  # run.batch_profile of every distinct batch, as columns
    launches = prof["launches"].take(inv).sum() if len(inv) else 0.0
    spills = prof["spill_bytes"].take(inv).sum() if len(inv) else 0.0
    predicted = prof["predicted_s"].take(inv)
    isolated = prof["isolated_s"].take(inv)
    del inv
    sizes = trace.batch_size[measured_batch]
    served = max(int(sizes.sum()), 1)
    del sizes
    extra = np.zeros(int(measured_batch.sum()))
    observed = trace.batch_end_s[measured_batch]
    observed -= trace.batch_start_s[measured_batch]
    pauses = trace.service.extra_s
    if pauses is not None:  # take recompile pauses out of the observation
        ok = trace.batch >= 0
        per_batch = np.zeros(len(trace.batch_size))
        np.maximum.at(per_batch, trace.batch[ok], pauses[ok])
        extra = per_batch[measured_batch]
        del ok, per_batch
    # each quantity written in place, in the same order of operations as the plain expression
    ratio = observed - extra  # (observed - extra) / predicted - 1
    ratio /= predicted
    ratio -= 1.0
    work = trace.batch_work_s[measured_batch]
    shape = isolated / predicted  # isolated / predicted - 1
    shape -= 1.0
    del predicted
    noisy = work - extra  # work - extra - reload: isolated time with its kernel-time noise
    noisy -= trace.batch_reload_s[measured_batch]
    noise = np.ones_like(noisy)
    np.divide(noisy, isolated, out=noise, where=isolated > 0)
    noise -= 1.0
    del noisy, isolated, extra
    contention = np.ones_like(work)
    np.divide(observed, work, out=contention, where=work > 0)
    contention -= 1.0
    del observed, work
    errors = {}
    names = trace.bucket_names
    b_of = trace.batch_bucket[measured_batch]
    fin = np.isfinite(ratio)

    def split(mask: np.ndarray) -> dict:
        sel = np.flatnonzero(mask)  # gathers by index: the boolean selections, faster on a scattered mask
        r = ratio.take(sel)
        return {"mean": float(r.mean()) if len(r) else 0.0, "mean_abs": float(np.abs(r).mean()) if len(r) else 0.0,
                "batches": int(len(r)), "shape": float(shape.take(sel).mean()) if len(r) else 0.0,
                "noise": float(noise.take(sel).mean()) if len(r) else 0.0,
                "contention": float(contention.take(sel).mean()) if len(r) else 0.0}

    for b in distinct_values(b_of[fin]).tolist():
        errors[names[b]] = split((b_of == b) & fin)
    errors["all"] = split(fin)
    return {
        "bucket_hit_rate": hit_rate,
        "specialised_rate": specialised_rate,
        "misses": {"by_outcome": by_outcome, "by_reason": by_reason},
        "launches_per_request": float(launches / served),
        "spill_bytes_per_request": float(spills / served),
        "prediction_error": errors,
        "buckets": {names[b]: kinds(b) for b in range(len(names))},
    }


def _distinct_batches(trace: Trace, sel: np.ndarray) -> tuple[tuple[list[int], list[int], list[int]], np.ndarray]:
    """The distinct (bucket, size, shape key) of the batches ``sel`` (sorted), as three lists, and each batch's
    row among them.

    One code per batch, found by :func:`~workbench.runtime.assembly.distinct` (a dense table,
    no sort, when the codes are few): the same rows and order as ``np.unique``.
    """
    bb = trace.batch_bucket[sel].astype(np.int64)
    bs = trace.batch_size[sel].astype(np.int64)
    bk = trace.batch_shape_key[sel].astype(np.int64, copy=False)
    if not len(bb):
        return ([], [], []), np.zeros(0, dtype=np.int64)
    if min(bb.min(), bs.min(), bk.min()) < 0:
        rows, inv = np.unique(np.stack([bb, bs, bk]), axis=1, return_inverse=True)
        b, s, k = rows.tolist()
        return (b, s, k), np.asarray(inv, dtype=np.int64).ravel()
    ws, wk = int(bs.max()) + 1, int(bk.max()) + 1
    code = bb  # (bb x ws + bs) x wk + bk, in place
    code *= ws
    code += bs
    code *= wk
    code += bk
    del bs, bk
    codes, inv = distinct(code)
    return ((codes // (ws * wk)).tolist(), (codes // wk % ws).tolist(), (codes % wk).tolist()), inv

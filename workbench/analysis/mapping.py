"""Compile-time mapping metrics of a run through a plan: hit rate, misses, launches, spills, prediction error.

* ``bucket_hit_rate``: the share of measured requests served by a bucket compiled
  ahead of time (the envelope) -- the compile-time mapping accuracy of
  ../shared/DESIGN.md. ``specialised_rate`` also counts buckets added by recompiles.
* ``misses``: out-of-envelope requests by policy outcome and by the bound they broke.
* ``prediction_error``: per bucket, observed batch time (start to end, contention and
  noise included, recompile pauses excluded) over the compiler's prediction (isolated,
  at the bucket's opt), minus one: mean (signed) and mean absolute.
"""

from __future__ import annotations

import numpy as np

from workbench.compiler.envelope import MISS_KINDS
from workbench.runtime.trace import Trace


def mapping_summary(trace: Trace) -> dict | None:
    """The mapping metrics, or None when the run had no compiled plan."""
    svc = trace.service
    if svc is None or "run" not in svc.info:
        return None
    run = svc.info["run"]
    reasons = svc.info["reasons"]
    m = trace.measured
    kinds = run.kind
    bucket = trace.bucket
    k = len(run.plan.buckets)
    _, rec0, gen = run.ids()
    hit = (bucket >= 0) & (bucket < k)
    specialised = hit | ((bucket >= rec0) & (bucket < gen))
    mapping = trace.labels["mapping"]
    reason = trace.labels["miss_reason"]
    by_outcome = {MISS_KINDS[i]: int(((mapping == i) & m & ~hit).sum()) for i in range(1, len(MISS_KINDS))}
    by_outcome["hit_recompiled_bucket"] = int((m & specialised & ~hit).sum())
    by_reason = {r: int(((reason == i) & m).sum()) for i, r in enumerate(reasons)}
    # per batch facts, computed once per distinct (bucket, size, key)
    t0 = trace.arrival_s[m][0] if m.any() else 0.0
    measured_batch = trace.batch_start_s >= t0
    rows = np.stack([trace.batch_bucket, trace.batch_size, trace.batch_shape_key])[:, measured_batch]
    uniq, inv = np.unique(rows, axis=1, return_inverse=True) if rows.shape[1] else (np.zeros((3, 0)), np.zeros(0))
    prof = [run.batch_profile(int(b), int(s), int(v)) for b, s, v in uniq.T.tolist()]
    inv = np.asarray(inv, dtype=np.int64).ravel()
    launches = np.array([p["launches"] for p in prof])[inv] if prof else np.zeros(0)
    spills = np.array([p["spill_bytes"] for p in prof])[inv] if prof else np.zeros(0)
    predicted = np.array([p["predicted_s"] for p in prof])[inv] if prof else np.zeros(0)
    sizes = trace.batch_size[measured_batch]
    served = max(int(sizes.sum()), 1)
    extra = np.zeros(int(measured_batch.sum()))
    observed = (trace.batch_end_s - trace.batch_start_s)[measured_batch]
    pauses = trace.service.extra_s
    if pauses is not None:  # take recompile pauses out of the observation
        ok = trace.batch >= 0
        per_batch = np.zeros(len(trace.batch_size))
        np.maximum.at(per_batch, trace.batch[ok], pauses[ok])
        extra = per_batch[measured_batch]
    ratio = (observed - extra) / predicted - 1.0
    errors = {}
    names = trace.bucket_names
    b_of = trace.batch_bucket[measured_batch]
    for b in np.unique(b_of[np.isfinite(ratio)]).tolist():
        r = ratio[(b_of == b) & np.isfinite(ratio)]
        errors[names[b]] = {"mean": float(r.mean()), "mean_abs": float(np.abs(r).mean()), "batches": int(len(r))}
    fin = ratio[np.isfinite(ratio)]
    errors["all"] = {"mean": float(fin.mean()) if len(fin) else 0.0,
                     "mean_abs": float(np.abs(fin).mean()) if len(fin) else 0.0, "batches": int(len(fin))}
    return {
        "bucket_hit_rate": float(hit[m].mean()) if m.any() else 0.0,
        "specialised_rate": float(specialised[m].mean()) if m.any() else 0.0,
        "misses": {"by_outcome": by_outcome, "by_reason": by_reason},
        "launches_per_request": float(launches.sum() / served),
        "spill_bytes_per_request": float(spills.sum() / served),
        "prediction_error": errors,
        "buckets": {names[b]: kinds(b) for b in range(len(names))},
    }

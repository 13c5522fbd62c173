"""Offline compile profile and runtime telemetry, per bucket, side by side.

The compile profile is what the compiler believed: each bucket's bounds, its predicted
latency per batch size, whether its kernels are compute- or memory-bound, and their
working sets against SRAM. The telemetry is what the run saw: each bucket's share of
traffic, observed service and latency percentiles, and prediction error. Together
they are the first half of the closed-loop mapping report.
"""

from __future__ import annotations

import numpy as np

from workbench.runtime.trace import Trace


def compile_profile(plan) -> list[dict]:
    """Per compiled bucket: bounds, predicted latency per batch size, boundness, working set."""
    rows = []
    sram = plan.hardware.sram_bytes_per_core
    batch = plan.options.compile_batch
    for b in plan.buckets:
        costs = plan.kernel_costs(b.mapping, batch, b.bucket.opt)
        total, demand = plan.mapping_time(b.mapping, batch, b.bucket.opt)
        memory_s = sum(c.seconds for c in costs if c.memory_bound)
        rows.append({
            "bucket": b.bucket.name, "min": b.bucket.min, "opt": b.bucket.opt, "max": b.bucket.max,
            "cores": list(b.cores), "predicted_s": list(b.predicted_s),
            "kernels": len(costs), "memory_bound_share": memory_s / total if total else 0.0,
            "bandwidth_demand": demand,
            "bound": "memory" if memory_s > total / 2 else "compute",
            "max_working_set_bytes": max(c.working_set for c in costs),
            "sram_bytes": sram, "spill_bytes": sum(c.spill_bytes for c in costs),
            "kernel_detail": [{"kernel": c.name, "seconds": c.seconds,
                               "bound": "memory" if c.memory_bound else "compute", "demand": c.demand,
                               "tiling": str(c.tiling), "bytes": c.bytes, "working_set_bytes": c.working_set,
                               "spill_bytes": c.spill_bytes} for c in costs],
        })
    return rows


def _pcts(x: np.ndarray) -> dict[str, float]:
    if len(x) == 0:
        return {"p50": float("nan"), "p99": float("nan")}
    p50, p99 = np.percentile(x, [50, 99])
    return {"p50": float(p50), "p99": float(p99)}


def bucket_telemetry(trace: Trace) -> list[dict]:
    """Per bucket id that saw traffic: share, misses by reason, observed service/latency, prediction error."""
    m = trace.measured
    ok = m & trace.completed
    total = max(int(m.sum()), 1)
    reasons = trace.service.info.get("reasons", ()) if trace.service is not None else ()
    run = trace.service.info.get("run") if trace.service is not None else None
    reason = trace.labels.get("miss_reason")
    service = trace.end_s - trace.start_s
    rows = []
    for b in np.unique(trace.bucket[m]).tolist():
        mine = m & (trace.bucket == b)
        done = ok & (trace.bucket == b)
        row = {
            "bucket": trace.bucket_names[b] if b >= 0 else "refused",
            "kind": run.kind(b) if (run is not None and b >= 0) else ("refused" if b < 0 else "all"),
            "share": float(mine.sum() / total),
            "requests": int(mine.sum()),
            "service_s": _pcts(service[done]),
            "latency_s": _pcts(trace.latency_s[done]),
        }
        if reason is not None:
            row["misses_by_reason"] = {reasons[i]: int(((reason == i) & mine).sum())
                                       for i in np.unique(reason[mine]).tolist() if i >= 0}
        if run is not None and b >= 0:
            batches = np.flatnonzero((trace.batch_bucket == b) & (trace.batch_start_s >= trace.arrival_s[m][0]))
            prof = [run.batch_profile(b, int(s), int(k))
                    for s, k in zip(trace.batch_size[batches], trace.batch_shape_key[batches], strict=True)]
            pred = np.array([p["predicted_s"] for p in prof])
            iso = np.array([p["isolated_s"] for p in prof])
            obs = (trace.batch_end_s - trace.batch_start_s)[batches]
            work = trace.batch_work_s[batches]
            fin = np.isfinite(pred)
            row["prediction_error"] = float(np.mean(obs[fin] / pred[fin] - 1)) if fin.any() else None
            # split: the real shape against opt, and HBM contention against the isolated time
            row["shape_error"] = float(np.mean(iso[fin] / pred[fin] - 1)) if fin.any() else None
            row["contention_error"] = float(np.mean(obs / work - 1)) if len(obs) else None
        rows.append(row)
    return rows

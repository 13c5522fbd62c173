"""The batch profiles of a run's distinct batches at once: :meth:`PlanRun.batch_profile` over columns.

The mapping summary needs, per distinct (bucket, batch size, shape key) of a run, the kernel
launches, the spilled bytes, the compiler's prediction and the isolated time at the real shape.
:meth:`~workbench.compiler.plan.PlanRun.batch_profile` (the readable reference) finds them one
batch at a time through the plan's memo; a drifting run has a few thousand distinct batches
(shape_drift at 200k requests: ~2,100, ~9 ms). :func:`batch_profiles` decides once per bucket
what ``batch_profile`` decides per batch (its mapping, padding floor, kind and slowdown), then
reads each batch's memo entries, which the compiled loop's cost book has already written
(:meth:`~workbench.compiler.plan.CostBook.commit`); a batch the memo lacks is costed
through the plan's own methods, as the reference does. Same operations on the same values:
the columns equal the reference's, bit for bit (``tests/test_plan_profile.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from workbench.compiler.plan import PlanRun

FIELDS = ("launches", "spill_bytes", "predicted_s", "isolated_s")


def batch_profiles(run: PlanRun, bucket: list[int], size: list[int], value: list[int]) -> dict[str, np.ndarray]:
    """``run.batch_profile(b, s, v)`` for every row (b, s, v) of the three lists, as one float64 column per field."""
    n = len(bucket)
    out = {k: np.empty(n) for k in FIELDS}
    rows: dict[int, list[int]] = {}
    for i, b in enumerate(bucket):
        rows.setdefault(b, []).append(i)
    for b, idx in rows.items():
        sizes = [size[i] for i in idx]
        values = [value[i] for i in idx]
        for k, col in _one_bucket(run, b, sizes, values).items():
            out[k][idx] = col
    return out


def _one_bucket(run: PlanRun, b: int, sizes: list[int], values: list[int]) -> dict[str, list[float]]:
    """The profiles of one bucket id's batches (lists in the order given)."""
    plan, memo = run.plan, run.plan._memo
    mapping, floor = run.mapping(b)
    timed, _, slow = run._timed(b, 0)  # the mapping the batch is timed through, and its slowdown
    pad0, rec0, _ = run.ids()
    time_floor = floor if pad0 <= b < rec0 else None  # only a padded batch is timed at its bucket's min
    mid, tid = id(mapping), id(timed)
    shapes = [max(v, floor) for v in values]
    spill = [memo[key] if (key := ("spill", mid, s, v)) in memo else plan.spill_bytes(mapping, s, v)
             for s, v in zip(sizes, shapes, strict=True)]
    timed_at = values if time_floor is None else [max(v, time_floor) for v in values]
    isolated = [(memo[key] if (key := ("time", tid, s, v)) in memo else plan.mapping_time(timed, s, v))[0] * slow
                for s, v in zip(sizes, timed_at, strict=True)]
    return {"launches": [float(len(mapping.kernels))] * len(sizes), "spill_bytes": spill,
            "predicted_s": _predicted(run, b, sizes), "isolated_s": isolated}


def _predicted(run: PlanRun, b: int, sizes: list[int]) -> list[float]:
    """The compiler's prediction per batch size, as ``batch_profile`` takes it (nan: padded or generic)."""
    kind = run.kind(b)
    if kind == "envelope":
        table = run.plan.buckets[b].predicted_s
        return [table[s - 1] if s <= len(table) else run.plan.predict(b, s) for s in sizes]
    if kind == "recompile":
        table = run.extra[b - run.ids()[1]].predicted_s
        return [table[s - 1] if s <= len(table) else float("nan") for s in sizes]
    return [float("nan")] * len(sizes)

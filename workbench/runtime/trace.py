"""The run's trace: columns per request, per batch and per core, and its Chrome export.

Columns (numpy arrays) rather than lists of small objects: they are what plots,
percentiles and exports read, and a million requests stay cheap. The export writes
the Chrome trace event format (JSON) that Perfetto and chrome://tracing open: one
track per core with a slice per batch, and a counter track for the queue depth.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from workbench.config import Scenario
from workbench.runtime.float_keys import orders_as_bits, tagged_sort, tags, untag

COMPLETED, REJECTED_QUEUE_FULL, REJECTED_TIMEOUT, REJECTED_BY_PLAN = 0, 1, 2, 3
OUTCOMES = ("completed", "queue_full", "timeout", "out_of_envelope")


@dataclass(frozen=True)
class Trace:
    """Everything one run produced. Times in seconds from the start of the run."""

    scenario: Scenario
    bucket_names: tuple[str, ...]
    # per request (arrival order)
    arrival_s: np.ndarray  # float64
    stream: np.ndarray  # int32
    shapes: dict[str, np.ndarray]  # dim -> int64
    bucket: np.ndarray  # int32, -1 = refused by the plan
    outcome: np.ndarray  # int8, index into OUTCOMES
    rejected_at: np.ndarray | None  # float64 per request, time of rejection (nan if completed); None: none was
    batch: np.ndarray  # int32, -1 if rejected
    imbalance: np.ndarray | None  # float64 per request, see ``imbalance_s``; None: placement never blocked a core
    # per batch (dispatch order)
    batch_core: np.ndarray  # int16
    batch_bucket: np.ndarray  # int16 (int32 if a value does not fit)
    batch_model: np.ndarray  # int16 (int32 if a value does not fit)
    batch_size: np.ndarray  # int16 (int32 if a value does not fit)
    batch_shape_key: np.ndarray  # int64, the shape the batch was timed at (0 for abstract laws)
    batch_dispatch_s: np.ndarray  # float64
    batch_start_s: np.ndarray  # float64
    batch_end_s: np.ndarray  # float64
    batch_work_s: np.ndarray  # float64, isolated time: service + extra (+ reload under dispatch "hold")
    batch_reload_s: np.ndarray  # float64, s waited for weights: on its core ("hold") or in the queue
    batch_fallback_s: np.ndarray  # float64, part of the service spent in mapping fallback
    batch_memory_share: np.ndarray  # float64, memory-bound share of the work
    # per core
    core_busy_s: np.ndarray  # float64
    core_batches: np.ndarray  # int64
    # residency counters
    residency: dict[str, float] = field(default_factory=dict)  # loads, evictions, overcommits; link_busy_s
    labels: dict[str, np.ndarray] = field(default_factory=dict)  # the service model's extra columns
    service: Any = None  # the run's Classification (cost callable, reasons), for the analysis
    # float64 per request: s it waited in the queue for its model's weights (load_then_dispatch; else None)
    weights_wait: np.ndarray | None = None

    # Per-request times and cores are the batch's, gathered on demand (lean: not stored twice).
    def _gather(self, column: np.ndarray, fill) -> np.ndarray:
        b = self.batch
        if not len(column):
            return np.full(len(b), fill, dtype=column.dtype)
        missed = b < 0
        out = column.take(np.where(missed, 0, b) if missed.any() else b)
        out[missed] = fill
        return out

    @property
    def dispatch_s(self) -> np.ndarray:
        """Left the request queue (s); nan if rejected (a sealed static batch may wait after it)."""
        return self._gather(self.batch_dispatch_s, np.nan)

    @property
    def start_s(self) -> np.ndarray:
        """Its batch started on a core (s); nan if rejected."""
        return self._gather(self.batch_start_s, np.nan)

    @property
    def end_s(self) -> np.ndarray:
        """Its batch completed (s); nan if rejected."""
        return self._gather(self.batch_end_s, np.nan)

    @property
    def core(self) -> np.ndarray:
        """Its batch's core (int16); -1 if rejected."""
        return self._gather(self.batch_core, -1)

    def start_of(self, idx: np.ndarray) -> np.ndarray:
        """Service start (s) of the completed requests ``idx``, gathered for those rows only."""
        return self.batch_start_s.take(self.batch[idx])

    def end_of(self, idx: np.ndarray) -> np.ndarray:
        """Completion (s) of the completed requests ``idx``, gathered for those rows only."""
        return self.batch_end_s.take(self.batch[idx])

    def imbalance_of(self, idx: np.ndarray) -> np.ndarray:
        """Placement-blocked wait (s) of requests ``idx``."""
        return self.imbalance[idx] if self.imbalance is not None else np.zeros(len(idx))

    def weights_wait_of(self, idx: np.ndarray) -> np.ndarray:
        """Seconds requests ``idx`` waited in the queue for their model's weights (0 under ``hold``)."""
        return self.weights_wait[idx] if self.weights_wait is not None else np.zeros(len(idx))

    @property
    def rejected_s(self) -> np.ndarray:
        """Time of rejection (s); nan if completed."""
        return self.rejected_at if self.rejected_at is not None else np.full(len(self.batch), np.nan)

    @property
    def imbalance_s(self) -> np.ndarray:
        """Wait (s) while ready work sat behind busy cores and another idled (placement blocking)."""
        return self.imbalance if self.imbalance is not None else np.zeros(len(self.batch))

    @property
    def reload_queued(self) -> bool:
        """Whether batches waited for their weights in the queue (``load_then_dispatch``), not on a core."""
        return self.scenario.residency.dispatch == "load_then_dispatch"

    @property
    def completed(self) -> np.ndarray:
        """Mask of requests that completed."""
        return self.outcome == COMPLETED

    @property
    def measured(self) -> np.ndarray:
        """Mask of requests past the warm-up share (by arrival order)."""
        m = np.zeros(len(self.arrival_s), dtype=bool)
        m[int(len(m) * self.scenario.warmup_fraction):] = True
        return m

    @property
    def latency_s(self) -> np.ndarray:
        """Arrival to completion (nan for rejected requests)."""
        return self.end_s - self.arrival_s

    @property
    def wait_s(self) -> np.ndarray:
        """Arrival to the start of service (nan for rejected requests)."""
        return self.start_s - self.arrival_s

    @property
    def batch_contention_s(self) -> np.ndarray:
        """Time each batch lost to HBM bandwidth shared with other cores (float rounding ignored)."""
        return self.contention_of(slice(None))

    def contention_of(self, b: np.ndarray | slice) -> np.ndarray:
        """``batch_contention_s[b]``, computed for the batches ``b`` only (the same operations, element by element)."""
        end = self.batch_end_s[b]
        lost = end - self.batch_start_s[b] - self.batch_work_s[b]
        rounding = 16 * np.finfo(float).eps * np.maximum(np.abs(end), 1.0)
        return np.where(lost > rounding, lost, 0.0)

    @property
    def makespan_s(self) -> float:
        """From time 0 to the last completion or rejection."""
        rejected = self.rejected_at  # None when nothing was rejected: no all-NaN column to scan
        ends = [self.batch_end_s.max() if len(self.batch_end_s) else 0.0,
                np.nanmax(rejected) if rejected is not None and np.isfinite(rejected).any() else 0.0]
        return float(max(ends))

    def queue_depth(self) -> tuple[np.ndarray, np.ndarray]:
        """(times, requests waiting after each change): +1 on enqueue, -1 when its service starts or it is refused.
        Depths are int32 (int64 past 2**31 changes): the curve is the summary's largest temporary.

        A request in a sealed static batch that waits for a core is still waiting, so the
        curve obeys Little's law with ``wait_s`` (start - arrival) under every batching policy.

        At equal times an enqueue comes before a leave (a request dispatched the instant it
        arrives was in the queue for no time, never below zero). Each change is one packed key, its
        time's bits and a tag, 0 for an enqueue and 1 for a leave (:mod:`workbench.runtime.float_keys`):
        one sort orders them by time, enqueues first at a tie, and gives the steps and the times back
        unchanged; the same arrays, bit for bit, as :func:`queue_depth_reference`, which runs where a
        time is negative, ``-0.0`` or NaN (the keys would not order as the floats do).
        """
        out = self.outcome
        enq = (out != REJECTED_QUEUE_FULL) & (out != REJECTED_BY_PLAN)
        every = bool(enq.all())
        arrive = self.arrival_s if every else self.arrival_s[enq]
        leave = self.start_s  # waiting until service starts (nan where not served) ...
        served = out == COMPLETED
        if not served.all():  # ... or until it was rejected
            np.copyto(leave, self.rejected_s, where=~served)
        del served
        if not every:
            leave = leave[enq]
        del enq
        if not (orders_as_bits(arrive) and orders_as_bits(leave)):
            return queue_depth_reference(self)
        key = tagged_sort(arrive, leave)  # a leave (tag 1) after the enqueues (tag 0) of its time
        del arrive, leave
        step = tags(key).view(np.int8)  # 0 enqueue, 1 leave
        step *= -2
        step += 1  # +1 enqueue, -1 leave
        depth = np.cumsum(step, dtype=_depth_dtype(len(key)))
        del step
        return untag(key), depth

    def to_chrome(self, path: str | Path, max_batches: int = 200_000) -> int:
        """Write the Chrome trace event JSON; returns the number of batch slices written."""
        names = [s.name for s in self.scenario.streams]
        events: list[dict] = [{"name": "process_name", "ph": "M", "pid": 1, "args": {"name": "accelerator"}}]
        for k in range(len(self.core_busy_s)):
            events.append({"name": "thread_name", "ph": "M", "pid": 1, "tid": k, "args": {"name": f"core {k}"}})
        nb = min(len(self.batch_core), max_batches)
        first_stream = np.full(len(self.batch_core), -1)
        ok = self.batch >= 0
        first_stream[self.batch[ok][::-1]] = self.stream[ok][::-1]
        contention = self.batch_contention_s  # computed once: the property builds a whole column
        for b in range(nb):
            start, end = self.batch_start_s[b], self.batch_end_s[b]
            bucket = self.bucket_names[self.batch_bucket[b]]
            events.append({
                "name": f"{bucket} x{int(self.batch_size[b])}", "cat": names[first_stream[b]], "ph": "X",
                "pid": 1, "tid": int(self.batch_core[b]), "ts": start * 1e6, "dur": (end - start) * 1e6,
                "args": {"batch": b, "size": int(self.batch_size[b]), "bucket": bucket,
                         "isolated_us": self.batch_work_s[b] * 1e6, "reload_us": self.batch_reload_s[b] * 1e6,
                         "contention_us": float(contention[b]) * 1e6}})
        t, depth = self.queue_depth()
        horizon = self.batch_end_s[nb - 1] if nb else 0.0
        keep = t <= horizon
        step = max(1, int(keep.sum()) // 50_000)  # a counter sample every few changes
        for ts, dv in zip(t[keep][::step], depth[keep][::step], strict=True):
            events.append({"name": "queue depth", "ph": "C", "pid": 1, "ts": ts * 1e6, "args": {"waiting": int(dv)}})
        Path(path).write_text(json.dumps({"traceEvents": events, "displayTimeUnit": "ms"}))
        return nb


def queue_depth_reference(trace: Trace) -> tuple[np.ndarray, np.ndarray]:
    """:meth:`Trace.queue_depth` written plainly (one lexsort of both runs): the readable reference."""
    enq = trace.outcome != REJECTED_QUEUE_FULL
    enq &= trace.outcome != REJECTED_BY_PLAN
    leave = np.where(trace.outcome == COMPLETED, trace.start_s, trace.rejected_s)[enq]
    t = np.concatenate([trace.arrival_s[enq], leave])
    d = np.concatenate([np.ones(enq.sum(), dtype=np.int64), -np.ones(enq.sum(), dtype=np.int64)])
    order = np.lexsort((-d, t))  # at equal times, enqueue before leave
    return t[order], np.cumsum(d[order], dtype=_depth_dtype(len(t)))


def _depth_dtype(changes: int) -> type:
    """int32 for a depth curve of fewer than 2**31 changes (its depth cannot exceed them), else int64."""
    return np.int32 if changes < 2**31 else np.int64

"""What an event loop hands back: the raw columns of a run, before assembly into a Trace.

The loops (the general one in :mod:`workbench.runtime.loop`, its compiled form in
:mod:`workbench.runtime.compiled` and the FIFO fast path in :mod:`workbench.runtime.fastpath`)
fill the same fields, so the engine assembles
their traces with the same code and tests can compare them field by field.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

FACTOR_CHUNK = 4096  # unit-mean service factors are drawn in chunks of this many, in batch order


@dataclass(frozen=True, slots=True)
class ResidencyCounts:
    """The residency counters of a run (what the trace keeps of :class:`~workbench.runtime.residency.Residency`)."""

    loads: int
    evictions: int
    overcommits: int
    link_busy_s: float  # s the host link spent copying weights


@dataclass
class RunColumns:
    """Raw per-batch and per-request results of one loop."""

    nbatch: int
    b_core: Any  # sequence of int: core of each batch
    b_class: Any  # sequence of int: batch class of each batch
    b_size: Any  # sequence of int: requests in each batch
    b_key: Any  # sequence of int: shape key each batch was timed at (0 without keys)
    b_start: Any  # float64 buffer (>= nbatch long): s
    b_end: Any  # float64 buffer (>= nbatch long): s
    b_disp: Any | None  # float64 buffer, static batching only: when each batch was sealed
    req_batch: Any  # sequence of int per request: its batch, -1 if rejected
    outcome: Any  # sequence of int per request: index into trace.OUTCOMES
    rejected_at: dict[int, float] | np.ndarray  # request -> time of rejection (s); or per request, nan if not
    factor_chunks: list[np.ndarray]  # unit-mean service factors, one per batch, in batch order
    b_extra: dict[int, float] | np.ndarray  # batch -> extra seconds (recompile pause); or per batch
    b_reload: dict[int, float] | np.ndarray  # batch -> seconds waited for weights; or per batch
    b_copy: dict[int, float] | np.ndarray  # batch -> seconds of its own weights copy (part of b_reload); or per batch
    busy_s: list[float]  # per core
    residency: Any = None  # the Residency object or ResidencyCounts, for its counters
    block_curves: list[tuple[list[float], list[float]]] | None = None  # per class: (t, cumulative blocked s)
    weights_wait: Any = None  # load_then_dispatch: per request, s it waited in the queue for its weights
    # (class, size, shape key) arrays -> (isolated s, mean demand, fallback s) arrays, as the loop costed its
    # batches (the compiled loop through a cost book); None: ask the classification's cost
    batch_costs: Any = None

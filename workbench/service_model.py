"""What a service model is to the runtime: the requests it classifies, and what it answers for them.

The runtime asks a service model (a compiled plan, :class:`workbench.compiler.plan.Plan`, or
an abstract law, :class:`workbench.runtime.service.AbstractLaw`) to classify a run's
:class:`Requests` into a :class:`Classification`, and to draw the unit-mean factors that
multiply batch times (:class:`ServiceModel`). This contract sits below both: the compiler
implements it and the runtime calls it (:mod:`workbench.runtime.service` says what the
fields mean).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np


@dataclass(frozen=True, slots=True)
class Requests:
    """Every arrival of a run, sorted by time: columns, one row per request."""

    arrival_s: np.ndarray  # float64, s, non-decreasing
    stream: np.ndarray  # int32, index into scenario.streams
    shapes: dict[str, np.ndarray]  # dim -> int64 value; 0 where the stream does not set the dim

    def __len__(self) -> int:
        return len(self.arrival_s)


@dataclass(frozen=True, slots=True)
class Classification:
    """Per-request result of a service model's shape lookup, and how to time its batches."""

    bucket: np.ndarray  # int32 bucket index; -1 = refused (out of envelope, policy reject)
    bucket_names: tuple[str, ...]
    cost: Callable[[int, int, int], tuple[float, float, float]]  # (bucket, size, shape key) -> see batch_cost
    # (bucket, size, shape key) -> the batch's phases in order, (isolated s, HBM bandwidth demand 0..1) each;
    # None: one phase, (cost[0], cost[1])
    phases: Callable[[int, int, int], tuple[tuple[float, float], ...]] | None = None
    shape_key: np.ndarray | None = None  # int per request; a batch is timed at its members' largest key
    extra_s: np.ndarray | None = None  # s added to the batch that carries the request (a recompile)
    bucket_cores: tuple[tuple[int, ...], ...] | None = None  # the compiler's static placement per bucket
    labels: dict[str, np.ndarray] = field(default_factory=dict)  # extra per-request trace columns
    info: dict = field(default_factory=dict)  # anything else the analysis may want (reason strings)


class ServiceModel(Protocol):
    """What the runtime needs from anything that times batches."""

    def classify(self, requests: Requests) -> Classification:
        """Bucket every request (may refuse some) and give the cost callable for the run."""
        ...

    def draw_factors(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` unit-mean random factors that multiply the batch time."""
        ...

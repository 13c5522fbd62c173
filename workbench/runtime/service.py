"""Service models: how long a batch takes, and how much of that time is HBM-bound.

The runtime asks a service model for ``classify(requests)``: the shape bucket of
every request (``-1`` = refused), optional per-request shape keys, extra seconds (a
recompile pause), a static placement per bucket and labels for the trace, and the
run's cost callable ``cost(bucket, size, key)``: the mean isolated service time of a
batch (s), its mean HBM bandwidth demand in [0, 1] (bytes / (time x bandwidth): the
share of the HBM it draws while it runs alone), and the part of that time spent in
mapping fallback (padding, generic kernels) (s). A model may also give ``phases``: the
batch as a sequence of (isolated seconds, demand) phases, its kernels in order, which
the runtime shares bandwidth between; without it a batch is one phase.

The actual time of one batch is ``cost(...)[0] * X`` with ``X`` drawn by
``draw_factors`` (E[X] = 1). The abstract laws below give exponential, deterministic
and lognormal ``X`` and let the runtime be checked against queueing theory; the
compiler's plans implement the same protocol. The protocol's types (:class:`Requests`,
:class:`Classification`, ``ServiceModel``) live below both, in :mod:`workbench.service_model`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from workbench.config import Service
from workbench.service_model import Classification, Requests


@dataclass(frozen=True, slots=True)
class AbstractLaw:
    """``(base_s + per_item_s * size) * X``: X exponential, deterministic or lognormal.

    Lognormal X has mean 1 and coefficient of variation ``cv``: log X ~ N(-s^2/2, s^2)
    with s^2 = ln(1 + cv^2). Every request is in one bucket, ``all``.
    """

    service: Service

    def classify(self, requests: Requests) -> Classification:
        """One bucket for every request."""
        return Classification(bucket=np.zeros(len(requests), dtype=np.int32), bucket_names=("all",),
                              cost=self.batch_cost)

    def batch_cost(self, bucket: int, size: int, key: int = 0) -> tuple[float, float, float]:
        """Mean time of a batch of ``size`` and the law's memory share."""
        s = self.service
        return s.base_s + s.per_item_s * size, s.memory_share, 0.0

    def draw_factors(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """Unit-mean factors of the law."""
        law = self.service.law
        if law == "exponential":
            return rng.exponential(1.0, n)
        if law == "deterministic":
            return np.ones(n)
        s2 = math.log1p(self.service.cv**2)
        return rng.lognormal(-s2 / 2, math.sqrt(s2), n)

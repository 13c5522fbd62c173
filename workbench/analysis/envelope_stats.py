"""Shape-envelope arithmetic: how much traffic a set of buckets covers, and what padding wastes.

A request's length (a symbolic dim such as ``seq``) either falls in one of the plan's
buckets (a hit), or outside them all: beyond the largest bucket, below the smallest, or
in a gap between two. For a lognormal length distribution with median ``m`` and spread
``sigma`` the share in ``[lo, hi]`` is ``Phi(ln(hi/m)/sigma) - Phi(ln(lo/m)/sigma)``;
measured shares come from the trace's own lengths. Padding a request of length ``L`` up
to a length ``P`` runs ``P / L`` times the tokens it needs; the waste is ``1 - L / P``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from workbench.compiler.envelope import Bucket


def lognormal_cdf(x: float, median: float, sigma: float) -> float:
    """P(L <= x) for a lognormal length with this median and spread (0 for x <= 0)."""
    if x <= 0:
        return 0.0
    return 0.5 * (1.0 + math.erf(math.log(x / median) / (sigma * math.sqrt(2.0))))


def lognormal_share(lo: float, hi: float, median: float, sigma: float) -> float:
    """P(lo <= L <= hi) for integer lengths: the continuous share of [lo - 0.5, hi + 0.5]."""
    return lognormal_cdf(hi + 0.5, median, sigma) - lognormal_cdf(lo - 0.5, median, sigma)


def predicted_hit_share(buckets: Sequence[Bucket], median: float, sigma: float) -> float:
    """The share of a lognormal length distribution that some bucket holds (the predicted hit rate)."""
    return sum(lognormal_share(b.min, b.max, median, sigma) for b in buckets)


def measured_shares(lengths: np.ndarray, buckets: Sequence[Bucket]) -> dict[str, float]:
    """Share of ``lengths`` per bucket (by name), then ``below``, ``gap`` and ``beyond`` the envelope."""
    v = np.asarray(lengths)
    n = max(len(v), 1)
    out = {b.name: float(np.count_nonzero((v >= b.min) & (v <= b.max)) / n) for b in buckets}
    below = float(np.count_nonzero(v < buckets[0].min) / n)
    beyond = float(np.count_nonzero(v > buckets[-1].max) / n)
    out["below"], out["beyond"] = below, beyond
    out["gap"] = max(1.0 - sum(out.values()), 0.0)
    return out


def padding_factor(length: int, padded_to: int) -> float:
    """How many times the tokens a request needs it runs when padded to ``padded_to`` (>= 1)."""
    if length < 1 or padded_to < length:
        raise ValueError(f"need 1 <= length <= padded_to; got {length}, {padded_to}")
    return padded_to / length


def pad_target(buckets: Sequence[Bucket], length: int, to: str = "min") -> int | None:
    """The length a request is padded to: the smallest bucket that can hold it, at its ``min`` or ``max``.

    ``to="min"`` is this workbench's ``pad`` policy (a shape below a bucket runs at that
    bucket's min); ``to="max"`` is a static compiler that pads every request to its
    bucket's upper edge. ``None`` when no bucket is large enough.
    """
    for b in buckets:
        if length <= b.max:
            return max(length, b.min) if to == "min" else b.max
    return None


def padding_waste(lengths: np.ndarray, buckets: Sequence[Bucket], to: str = "min") -> float:
    """Share of the padded tokens that are padding, over the requests a bucket can hold (0 when none)."""
    targets = [pad_target(buckets, int(v), to) for v in np.asarray(lengths).tolist()]
    real = sum(int(v) for v, t in zip(np.asarray(lengths).tolist(), targets, strict=True) if t is not None)
    padded = sum(t for t in targets if t is not None)
    return 1.0 - real / padded if padded else 0.0


def lognormal_quantile(q: float, median: float, sigma: float) -> float:
    """The length below which a share ``q`` of a lognormal distribution lies: ``median * exp(sigma * z_q)``."""
    from statistics import NormalDist

    if not 0.0 < q < 1.0:
        raise ValueError(f"need 0 < q < 1; got {q}")
    return median * math.exp(sigma * NormalDist().inv_cdf(q))


def slice_quantile(slow_share: float, q: float = 0.99) -> float | None:
    """Where the overall ``q`` quantile falls inside a slow slice that is slower than every other request.

    The top ``1 - q`` of all requests are the slowest; if the slow slice holds a share
    ``s > 1 - q`` they all come from it, so the overall quantile sits at the slice's own
    quantile ``1 - (1 - q) / s`` (a 2% slice puts p99 at the slice's median). ``None``
    when ``s <= 1 - q``: the quantile then lies in the fast body and the slice cannot move it.
    """
    if not 0.0 <= slow_share <= 1.0 or not 0.0 < q < 1.0:
        raise ValueError(f"need 0 <= slow_share <= 1 and 0 < q < 1; got {slow_share}, {q}")
    return 1.0 - (1.0 - q) / slow_share if slow_share > 1.0 - q else None


def mean_with_slice(fast_mean: float, slow_share: float, slowdown: float) -> float:
    """The mean when a share ``s`` of requests takes ``k`` times ``fast_mean``: a factor ``1 + s (k - 1)``."""
    return fast_mean * (1.0 + slow_share * (slowdown - 1.0))

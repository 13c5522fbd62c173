"""How sure a p99 is: a confidence interval for a quantile, and the canary size it implies.

Distribution-free, from order statistics (Hahn and Meeker, *Statistical Intervals*, ch. 5;
David and Nagaraja, *Order Statistics*, 2.5): of ``n`` independent samples, the number that fall
below the true ``q``-quantile is Binomial(n, q), so the ``l``-th and ``u``-th smallest samples
bracket it with probability ``P(l <= B <= u - 1)``, whatever the latency distribution. The
percentile bootstrap (Efron 1979) is the resampling alternative. Both assume independent
requests; a queue near saturation correlates neighbours, and then the seed-to-seed spread is
wider than either interval (06 shows both).

A canary of ``n`` requests sees the interval its ``n`` give. A regression that multiplies the
tail by ``1 + delta`` moves the whole interval up by that factor, so the canary can tell it from
noise once the interval is narrower than the shift: ``hi / lo < 1 + delta``. :func:`canary_requests`
finds the smallest such ``n`` for a given traffic (its latency sample) by bisection.
"""

from __future__ import annotations

import math
from functools import lru_cache
from statistics import NormalDist

import numpy as np


def binom_cdf(k, n: int, p: float) -> np.ndarray:
    """P(B <= k) for B ~ Binomial(n, p), for each ``k`` (array-like), computed from the log pmf (exact to
    rounding for any ``n`` a trace holds)."""
    if n < 0 or not 0.0 < p < 1.0:
        raise ValueError(f"need n >= 0 and 0 < p < 1; got n={n}, p={p}")
    i = np.arange(n + 1)
    logpmf = (math.lgamma(n + 1) - np.array([math.lgamma(j + 1) + math.lgamma(n - j + 1) for j in i])
              + i * math.log(p) + (n - i) * math.log1p(-p))
    cdf = np.minimum(np.cumsum(np.exp(logpmf - logpmf.max())) / np.exp(logpmf - logpmf.max()).sum(), 1.0)
    k = np.asarray(k)
    return np.where(k < 0, 0.0, cdf[np.clip(k, 0, n)])


def min_samples_for_upper_bound(q: float = 0.99, confidence: float = 0.95) -> int:
    """The fewest samples whose largest can be an upper confidence bound for the ``q``-quantile (two-sided):
    all ``n`` fall below it with probability ``q ** n``, which must be at most ``(1 - confidence) / 2``."""
    return math.ceil(math.log((1 - confidence) / 2) / math.log(q))


@lru_cache(maxsize=256)
def order_statistic_ranks(n: int, q: float = 0.99, confidence: float = 0.95) -> tuple[int, int]:
    """1-based ranks ``(l, u)`` of the sorted samples that bracket the ``q``-quantile with at least ``confidence``.

    ``l`` is the largest rank with ``P(B <= l - 1) <= alpha / 2`` and ``u`` the smallest with
    ``P(B <= u - 1) >= 1 - alpha / 2`` (B ~ Binomial(n, q), alpha = 1 - confidence), so the coverage
    ``P(l <= B <= u - 1)`` is at least ``confidence``. Raises when ``n`` is too small for an upper rank.
    """
    if n < min_samples_for_upper_bound(q, confidence):
        raise ValueError(f"{n} samples cannot bound the {q:g}-quantile from above at {confidence:.0%}: need at "
                         f"least {min_samples_for_upper_bound(q, confidence)}")
    alpha = 1 - confidence
    cdf = binom_cdf(np.arange(n + 1), n, q)  # cdf[k] = P(B <= k)
    lo = int(np.searchsorted(cdf, alpha / 2, side="right"))  # ranks l - 1 < lo have cdf <= alpha / 2
    u = int(np.searchsorted(cdf, 1 - alpha / 2, side="left")) + 1
    return max(lo, 1), u


def coverage(n: int, ranks: tuple[int, int], q: float = 0.99) -> float:
    """The probability that the ranks ``(l, u)`` of ``n`` samples bracket the true ``q``-quantile."""
    lo, hi = ranks
    cdf = binom_cdf(np.array([lo - 1, hi - 1]), n, q)
    return float(cdf[1] - cdf[0])


def quantile_ci(samples: np.ndarray, q: float = 0.99, confidence: float = 0.95) -> tuple[float, float]:
    """Distribution-free interval ``(lo, hi)`` for the ``q``-quantile of the population ``samples`` came from."""
    x = np.sort(np.asarray(samples, dtype=float))
    lo, hi = order_statistic_ranks(len(x), q, confidence)
    return float(x[lo - 1]), float(x[hi - 1])


def bootstrap_quantile_ci(samples: np.ndarray, q: float = 0.99, confidence: float = 0.95, resamples: int = 1000,
                          seed: int = 0) -> tuple[float, float]:
    """Percentile-bootstrap interval for the ``q``-quantile: resample with replacement, take each resample's
    quantile (``np.percentile``'s linear rule, as the run summaries do), keep the middle ``confidence`` of them."""
    x = np.asarray(samples, dtype=float)
    rng = np.random.default_rng(seed)
    stats = np.array([np.percentile(x[rng.integers(0, len(x), len(x))], 100 * q) for _ in range(resamples)])
    alpha = 1 - confidence
    lo, hi = np.percentile(stats, [100 * alpha / 2, 100 * (1 - alpha / 2)])
    return float(lo), float(hi)


def expected_interval(traffic: np.ndarray, n: int, q: float = 0.99, confidence: float = 0.95) -> tuple[float, float]:
    """The interval a canary of ``n`` requests drawn from ``traffic`` (a large latency sample) would report, on
    average: its ends sit near the traffic's quantiles at ``q -/+ z sqrt(q (1 - q) / n)`` (the binomial ranks
    of :func:`order_statistic_ranks` over ``n``, by the normal approximation, so the interval narrows smoothly
    and monotonically with ``n`` instead of in whole-rank steps). The approximation holds once ``n (1 - q)`` is
    about 10 or more (1,000 requests for p99); below that it overstates the interval's upper end."""
    if n < min_samples_for_upper_bound(q, confidence):
        raise ValueError(f"{n} requests cannot bound the {q:g}-quantile from above at {confidence:.0%}")
    z = NormalDist().inv_cdf(1 - (1 - confidence) / 2)
    half = z * math.sqrt(q * (1 - q) / n)
    a, b = np.percentile(np.asarray(traffic, dtype=float), [100 * max(q - half, 0.0), 100 * min(q + half, 1.0)])
    return float(a), float(b)


def width_ratio(traffic: np.ndarray, n: int, q: float = 0.99, confidence: float = 0.95) -> float:
    """``hi / lo`` of :func:`expected_interval`: how far apart a canary of ``n`` requests puts its two ends."""
    lo, hi = expected_interval(traffic, n, q, confidence)
    return hi / lo


def canary_requests(traffic: np.ndarray, regression: float = 0.2, q: float = 0.99, confidence: float = 0.95) -> int:
    """The fewest requests at which a canary's expected ``q``-quantile interval is narrower than a regression of
    ``regression`` (0.2: +20 %), ``hi / lo < 1 + regression``: a healthy canary's interval and one shifted up
    by the regression then no longer overlap. Bisection between the fewest samples that bound the quantile and
    the traffic's own size (the ratio never rises with ``n``)."""
    x = np.sort(np.asarray(traffic, dtype=float))
    lo, hi = min_samples_for_upper_bound(q, confidence), len(x)
    if width_ratio(x, hi, q, confidence) >= 1 + regression:
        raise ValueError(f"{len(x)} requests of this traffic cannot resolve a {regression:+.0%} regression of "
                         f"its p{100 * q:g}: measure more")
    while lo < hi:
        mid = (lo + hi) // 2
        if width_ratio(x, mid, q, confidence) < 1 + regression:
            hi = mid
        else:
            lo = mid + 1
    return lo


def detection_rate(traffic: np.ndarray, n: int, regression: float = 0.2, q: float = 0.99, confidence: float = 0.95,
                   trials: int = 400, seed: int = 0) -> dict[str, float]:
    """How often canaries of ``n`` requests drawn from ``traffic`` (with replacement) tell the regression apart:
    ``detected``, the share of trials in which a regressed canary's interval (every latency times
    ``1 + regression``) lies wholly above a healthy control's of the same size; ``false_alarm``, the share in
    which two healthy canaries' intervals do not overlap at all."""
    x = np.asarray(traffic, dtype=float)
    rng = np.random.default_rng(seed)
    detected = false = 0
    for _ in range(trials):
        lo_c, hi_c = quantile_ci(rng.choice(x, n), q, confidence)
        lo_r, _ = quantile_ci(rng.choice(x, n) * (1 + regression), q, confidence)
        lo_h, hi_h = quantile_ci(rng.choice(x, n), q, confidence)
        detected += lo_r > hi_c
        false += lo_h > hi_c or lo_c > hi_h
    return {"detected": detected / trials, "false_alarm": false / trials}


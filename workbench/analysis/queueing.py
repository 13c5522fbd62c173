"""Closed-form queueing results the chapters set beside the simulator's own numbers.

Rates are per second, times in seconds. ``mu`` is one server's service rate
(1 / mean service time) and ``c`` the number of servers (cores). Every formula here is a
textbook result (Little 1961; Erlang 1917; Kingman 1961; Allen and Cunneen's G/G/c
extension; Cobham 1954 for non-preemptive priority); ``tests/test_queueing.py`` checks each
against hand arithmetic and a simulator run.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np


def _check_rates(lam: float, mu: float, c: int) -> None:
    if lam < 0 or mu <= 0 or c < 1 or int(c) != c:
        raise ValueError(f"need lam >= 0, mu > 0 and a whole c >= 1; got lam={lam}, mu={mu}, c={c}")


def utilisation(lam: float, mean_service_s: float, servers: int = 1) -> float:
    """rho = lam * E[S] / c: the share of server time the offered load needs (>= 1: overload)."""
    _check_rates(lam, 1.0 / mean_service_s if mean_service_s > 0 else 0.0, servers)
    return lam * mean_service_s / servers


def little_l(lam: float, mean_time_s: float) -> float:
    """Little's law, L = lam * W: the mean number in the system (or the queue, with W the wait)."""
    return lam * mean_time_s


def little_w(mean_number: float, lam: float) -> float:
    """Little's law read the other way, W = L / lam, seconds."""
    if lam <= 0:
        raise ValueError(f"need an arrival rate above 0; got lam={lam}")
    return mean_number / lam


def erlang_c(lam: float, mu: float, c: int) -> float:
    """M/M/c: the probability that an arrival has to wait (Erlang's C formula); 1.0 at overload."""
    _check_rates(lam, mu, c)
    a = lam / mu  # offered load, erlangs
    if a >= c:
        return 1.0
    term, total = 1.0, 1.0  # a^k / k!, summed for k = 0 .. c-1
    for k in range(1, c):
        term *= a / k
        total += term
    last = term * a / c * c / (c - a)  # a^c / c! * c / (c - a)
    return last / (total + last)


def mmc_wait(lam: float, mu: float, c: int) -> float:
    """M/M/c mean wait in queue, W_q = C(c, a) / (c mu - lam), seconds (inf at overload)."""
    if lam / mu >= c:
        return math.inf
    return erlang_c(lam, mu, c) / (c * mu - lam)


def kingman_wait(rho: float, ca2: float, cs2: float, mean_service_s: float) -> float:
    """Kingman's G/G/1 approximation, W_q ~ rho / (1 - rho) * (ca2 + cs2) / 2 * E[S], seconds.

    ``ca2`` and ``cs2`` are the squared coefficients of variation of the gaps between
    arrivals and of service times (1 for Poisson arrivals and exponential service). The
    factor rho / (1 - rho) is the knee: the wait grows without bound as rho -> 1.
    """
    if rho >= 1:
        return math.inf
    return rho / (1 - rho) * (ca2 + cs2) / 2 * mean_service_s


def allen_cunneen_wait(lam: float, mean_service_s: float, c: int, ca2: float, cs2: float) -> float:
    """G/G/c approximation: the M/M/c wait scaled by (ca2 + cs2) / 2, seconds."""
    return mmc_wait(lam, 1.0 / mean_service_s, c) * (ca2 + cs2) / 2


def cobham_waits(lams: Sequence[float], mu: float, c: int) -> list[float]:
    """Mean queue wait per class under non-preemptive strict priority on M/M/c, seconds.

    Classes are listed highest priority first, all with service rate ``mu``. Cobham's
    formula: W_k = W_0 / ((1 - s_{k-1}) (1 - s_k)), with W_0 = C(c, a) / (c mu) the mean
    residual work an arrival finds ahead of it and s_k = sum_{j<=k} lam_j / (c mu).
    A class whose s_k reaches 1 starves: its wait is infinite.
    """
    lam = float(sum(lams))
    _check_rates(lam, mu, c)
    w0 = erlang_c(lam, mu, c) / (c * mu)
    out, before = [], 0.0
    for lam_k in lams:
        after = before + lam_k / (c * mu)
        out.append(math.inf if after >= 1 else w0 / ((1 - before) * (1 - after)))
        before = after
    return out


def scv(samples: np.ndarray) -> float:
    """Squared coefficient of variation, var / mean^2 (1 for an exponential, 0 for a constant)."""
    x = np.asarray(samples, dtype=float)
    if x.size < 2 or x.mean() == 0:
        raise ValueError(f"need at least two samples with a non-zero mean; got {x.size}")
    return float(x.var() / x.mean() ** 2)

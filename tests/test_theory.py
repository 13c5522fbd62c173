"""The simulator against closed-form queueing theory, at large n.

Tolerances come from the run itself: the measured requests are cut into 20 blocks of
consecutive requests and the spread of the block statistics gives a standard error
(the batch-means method); a result must fall within 4 standard errors of the formula.
The formulas were written by Erlang, Pollaczek, Khinchine and Cobham, not by us.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import scenario

from workbench.config import Scheduler, Service
from workbench.runtime.engine import Engine, simulate
from workbench.runtime.loop import run_events

BLOCKS = 20


def block_se(x: np.ndarray, stat=np.mean) -> float:
    """Standard error of ``stat`` from batch means over consecutive blocks."""
    per_block = [stat(b) for b in np.array_split(x, BLOCKS)]
    return float(np.std(per_block, ddof=1) / math.sqrt(BLOCKS))


def measured(trace, attr="latency_s", stream=None):
    ok = trace.measured & trace.completed
    if stream is not None:
        ok &= trace.stream == stream
    return getattr(trace, attr)[ok]


def assert_close(x: np.ndarray, expected: float, stat=np.mean) -> None:
    value, se = float(stat(x)), block_se(x, stat)
    assert abs(value - expected) < 4 * se, f"{value:.4f} vs theory {expected:.4f} (4 se = {4 * se:.4f})"
    assert se < 0.1 * expected, "the run is too short to say anything"


def erlang_c_wait(lam: float, mu: float, c: int) -> float:
    """M/M/c mean wait in queue (Erlang C)."""
    a = lam / mu
    top = a**c / math.factorial(c) * c / (c - a)
    p_wait = top / (sum(a**k / math.factorial(k) for k in range(c)) + top)
    return p_wait / (c * mu - lam)


def test_mm1_mean_sojourn_and_p99():
    lam, mu = 0.8, 1.0
    tr = simulate(scenario(rates=(lam,), requests=200_000, seed=3, service=Service(base_s=1 / mu)))
    lat = measured(tr)
    assert_close(lat, 1 / (mu - lam))
    # the sojourn time of M/M/1 FIFO is exponential with rate mu - lambda
    assert_close(lat, math.log(100) / (mu - lam), stat=lambda x: np.percentile(x, 99))


def test_mmc_mean_wait_erlang_c():
    lam, mu, c = 3.2, 1.0, 4
    tr = simulate(scenario(rates=(lam,), cores=c, requests=200_000, seed=4, service=Service(base_s=1 / mu)))
    assert_close(measured(tr, "wait_s"), erlang_c_wait(lam, mu, c))


def test_md1_mean_wait_pollaczek_khinchine():
    lam, s = 0.7, 1.0
    tr = simulate(scenario(rates=(lam,), requests=200_000, seed=5, service=Service(law="deterministic", base_s=s)))
    rho = lam * s
    assert_close(measured(tr, "wait_s"), lam * s**2 / (2 * (1 - rho)))


def test_mm1_nonpreemptive_priority_cobham():
    """Two classes, strict non-preemptive priority (general event loop): Cobham's formula per class."""
    lams, mu = (0.3, 0.5), 1.0
    sc = scenario(rates=lams, requests=300_000, seed=6, service=Service(base_s=1 / mu),
                  scheduler=Scheduler(discipline="priority"))
    tr = simulate(sc)
    w0 = sum(lams) * 2 / mu**2 / 2  # sum lambda_i E[S^2] / 2, E[S^2] = 2 / mu^2
    sigma1, sigma2 = lams[0] / mu, sum(lams) / mu
    assert_close(measured(tr, "wait_s", 0), w0 / (1 - sigma1))
    assert_close(measured(tr, "wait_s", 1), w0 / ((1 - sigma1) * (1 - sigma2)))


def test_mm1k_blocking_probability():
    """M/M/1/K: a queue bound of K - 1 waiting requests rejects arrivals with P_K (general loop)."""
    lam, mu, k = 0.9, 1.0, 5
    sc = scenario(rates=(lam,), requests=200_000, seed=8, service=Service(base_s=1 / mu),
                  scheduler=Scheduler(max_queue=k - 1))
    tr = simulate(sc)
    rho = lam / mu
    p_block = (1 - rho) * rho**k / (1 - rho ** (k + 1))
    rejected = (tr.outcome[tr.measured] == 1).astype(float)
    assert_close(rejected, p_block)


@pytest.mark.parametrize("cores", [1, 3])
def test_general_loop_agrees_with_erlang_c(cores):
    """The event loop itself (not the fast path) on M/M/c."""
    lam, mu = 0.75 * cores, 1.0
    e = Engine(scenario(rates=(lam,), cores=cores, requests=100_000, seed=9, service=Service(base_s=1 / mu)))
    tr = e._trace(run_events(e))
    assert_close(measured(tr, "wait_s"), erlang_c_wait(lam, mu, cores))


def cobham_mmc_waits(lams: tuple[float, ...], mu: float, c: int) -> list[float]:
    """M/M/c, non-preemptive priority, equal service rates: the mean wait of each class (Cobham).

    ``W_k = C(c, a) / (c mu) / ((1 - sigma_{k-1}) (1 - sigma_k))``, where ``C`` is the Erlang-C
    probability of waiting at the total load ``a = sum(lams) / mu`` and ``sigma_k`` the
    utilisation of classes 1..k (class 1 served first).
    """
    lam = sum(lams)
    p_wait = erlang_c_wait(lam, mu, c) * (c * mu - lam)  # Erlang C = W_q (c mu - lambda)
    w0, sigma, out = p_wait / (c * mu), 0.0, []
    for rate in lams:
        before, sigma = sigma, sigma + rate / (c * mu)
        out.append(w0 / ((1 - before) * (1 - sigma)))
    return out


@pytest.mark.parametrize("loop", ["auto", "python"])
def test_mm4_nonpreemptive_priority_cobham(loop):
    """Two classes, strict non-preemptive priority on 4 cores (general loop, compiled and Python): Cobham per class."""
    lams, mu, c = (1.2, 2.0), 1.0, 4
    e = Engine(scenario(rates=lams, cores=c, requests=300_000, seed=12, service=Service(base_s=1 / mu),
                        scheduler=Scheduler(discipline="priority")), loop=loop)
    assert e.chosen_loop() != "fastpath"
    tr = e.run()
    for k, expected in enumerate(cobham_mmc_waits(lams, mu, c)):
        assert_close(measured(tr, "wait_s", k), expected)

"""The closed-form queueing module against hand arithmetic and textbook identities."""

import math

import numpy as np
import pytest

from workbench.analysis import queueing as q


def erlang_c_by_factorials(a: float, c: int) -> float:
    """Erlang C written straight from the textbook sum, an independent form."""
    top = a**c / math.factorial(c) * c / (c - a)
    return top / (sum(a**k / math.factorial(k) for k in range(c)) + top)


def test_mm1_by_hand():
    # lam 0.5/s, mu 1/s: P(wait) = rho = 0.5; W_q = rho / (mu - lam) = 1 s
    assert q.erlang_c(0.5, 1.0, 1) == pytest.approx(0.5)
    assert q.mmc_wait(0.5, 1.0, 1) == pytest.approx(1.0)


def test_mm2_by_hand():
    # a = 1 erlang on 2 servers: C = (1/2 * 2) / (1 + 1 + 1) = 1/3; W_q = (1/3) / (2 - 1) s
    assert q.erlang_c(1.0, 1.0, 2) == pytest.approx(1 / 3)
    assert q.mmc_wait(1.0, 1.0, 2) == pytest.approx(1 / 3)


@pytest.mark.parametrize("c", [1, 2, 4, 8, 16])
@pytest.mark.parametrize("rho", [0.1, 0.5, 0.8, 0.95])
def test_erlang_c_matches_the_factorial_form(c, rho):
    assert q.erlang_c(rho * c, 1.0, c) == pytest.approx(erlang_c_by_factorials(rho * c, c), rel=1e-12)


def test_overload_waits_forever():
    assert q.erlang_c(4.0, 1.0, 4) == 1.0
    assert q.mmc_wait(4.0, 1.0, 4) == math.inf
    assert q.kingman_wait(1.0, 1, 1, 1e-3) == math.inf


def test_kingman_is_exact_for_mm1_and_zero_without_variability():
    assert q.kingman_wait(0.5, 1.0, 1.0, 1.0) == pytest.approx(q.mmc_wait(0.5, 1.0, 1))
    assert q.kingman_wait(0.9, 0.0, 0.0, 1.0) == 0.0
    # the knee: from rho 0.5 to 0.9 the wait grows by (0.9/0.1) / (0.5/0.5) = 9x
    assert q.kingman_wait(0.9, 1, 1, 1) / q.kingman_wait(0.5, 1, 1, 1) == pytest.approx(9.0)


def test_allen_cunneen_reduces_to_erlang_c_for_poisson_exponential():
    assert q.allen_cunneen_wait(3.0, 1.0, 4, 1.0, 1.0) == pytest.approx(q.mmc_wait(3.0, 1.0, 4))
    assert q.allen_cunneen_wait(3.0, 1.0, 4, 1.0, 0.0) == pytest.approx(q.mmc_wait(3.0, 1.0, 4) / 2)


def test_cobham_by_hand_and_conservation():
    # M/M/1, lam = 0.2 + 0.3, mu = 1: W_0 = 0.5; W_1 = 0.5 / 0.8; W_2 = 0.5 / (0.8 * 0.5)
    w = q.cobham_waits([0.2, 0.3], 1.0, 1)
    assert w == pytest.approx([0.625, 1.25])
    # work conservation: the rate-weighted mean wait equals FIFO's (same service rate for all)
    for lams, c in [([0.2, 0.3], 1), ([1.0, 1.5, 0.5], 4), ([2.0, 1.0], 4)]:
        w = q.cobham_waits(lams, 1.0, c)
        assert np.dot(lams, w) / sum(lams) == pytest.approx(q.mmc_wait(sum(lams), 1.0, c))


def test_cobham_starves_the_low_class_when_the_high_class_fills_the_servers():
    w = q.cobham_waits([0.5, 0.6], 1.0, 1)  # the top class alone is rho 0.5; both together 1.1
    assert w[0] == pytest.approx(1.0 / 0.5)  # W_0 = 1 (C = 1 at overload, / mu) over (1 - 0)(1 - 0.5)
    assert w[1] == math.inf


def test_little_and_utilisation():
    assert q.utilisation(1500.0, 2e-3, 4) == pytest.approx(0.75)
    assert q.little_l(1000.0, 3e-3) == pytest.approx(3.0)
    assert q.little_w(3.0, 1000.0) == pytest.approx(3e-3)
    assert q.scv(np.array([1.0, 1.0, 1.0])) == 0.0


@pytest.mark.parametrize("bad", [dict(lam=-1.0, mu=1.0, c=1), dict(lam=1.0, mu=0.0, c=1), dict(lam=1.0, mu=1.0, c=0)])
def test_bad_rates_are_refused(bad):
    with pytest.raises(ValueError, match="need lam"):
        q.erlang_c(**bad)

"""workbench.quantiles.percentiles equals np.percentile (its reference), bit for bit."""

from __future__ import annotations

import numpy as np

from workbench.analysis.metrics import PERCENTILES
from workbench.quantiles import percentiles

QS = [list(PERCENTILES.values()), [0.0, 100.0], [50.0], [12.5, 33.3, 66.6, 99.99], [100.0, 0.0, 95.0]]


def _arrays(rng: np.random.Generator):
    for n in (1, 2, 3, 4, 5, 7, 10, 11, 100, 999, 1000, 1001, 20_000):
        yield rng.exponential(1.0, n)
        yield rng.lognormal(0.0, 2.0, n) * 1e-3
        yield np.round(rng.exponential(1.0, n), 1)  # many ties
        yield np.full(n, 0.1)
        yield -rng.standard_normal(n)
        x = rng.exponential(1.0, n)
        x[rng.integers(0, n)] = np.nan
        yield x
    for n in (3, 10, 1001):  # signed zeros: equal, but printed apart
        z = np.round(rng.standard_normal(n), 0) * 0.0  # 0.0 and -0.0 mixed
        yield z
        yield np.concatenate([z, rng.exponential(1.0, n)])
        yield np.abs(z)
    for n in (9, 100, 20_000):  # a long run of the least value: waits of requests served at once, a fixed service
        for share in (0.1, 0.2, 0.5, 0.9, 0.999):
            x = rng.exponential(1.0, n)
            x[rng.random(n) < share] = 0.0
            yield x
            yield np.where(rng.random(n) < share, 2e-3, 2e-3 + rng.exponential(1e-3, n))  # least value not zero
            yield np.where(rng.random(n) < share, 1.0, rng.exponential(1.0, n))  # a run of a middle value
        x = rng.exponential(1.0, n)
        x[rng.random(n) < 0.6] = 0.0
        x[rng.integers(0, n)] = np.nan  # the run, and a NaN
        yield x
        x[rng.integers(0, n)] = np.inf
        yield np.where(np.isnan(x), 1.0, x)  # the run, and an infinity
        yield np.concatenate([np.full(n, -1.5), rng.exponential(1.0, n)])  # a negative least value
    x = rng.exponential(1.0, 5000)
    x[rng.integers(0, 5000, 50)] = np.nan  # many NaNs
    yield x
    yield np.full(7, np.nan)
    yield np.array([np.inf, 1.0, 2.0])
    yield np.array([-np.inf, 1.0, np.inf])


def test_percentiles_equal_numpy_bit_for_bit():
    rng = np.random.default_rng(17)
    with np.errstate(invalid="ignore"):  # inf - inf in the interpolation: numpy warns there too
        _compare(rng)


def _compare(rng: np.random.Generator) -> None:
    for x in _arrays(rng):
        for q in QS:
            want = np.percentile(x, q)
            got = percentiles(x, q)
            assert got.dtype == want.dtype and got.tobytes() == want.tobytes(), (len(x), q)
            y = x.copy()
            assert percentiles(y, q, overwrite=True).tobytes() == want.tobytes()
            assert np.array_equal(np.sort(y), np.sort(x), equal_nan=True)  # only reordered


def test_percentiles_leave_the_input_alone_unless_told():
    x = np.random.default_rng(1).exponential(1.0, 1000)
    before = x.copy()
    percentiles(x, [50.0, 99.0])
    assert x.tobytes() == before.tobytes()

"""Arrival processes and shape distributions: rates, drift, independence of streams."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import scenario

from workbench.config import Arrivals, Drift, ShapeDist, Stream
from workbench.errors import ConfigError
from workbench.runtime.workload import arrival_times, generate, sample_shapes


def test_poisson_rate_and_exponential_gaps():
    t = arrival_times(Arrivals(rate=50.0), np.random.default_rng(1), 100_000)
    gaps = np.diff(t)
    assert abs(1 / gaps.mean() - 50.0) < 50.0 * 4 / np.sqrt(len(gaps))
    assert abs(gaps.std() / gaps.mean() - 1.0) < 0.02  # exponential: cv = 1


def test_onoff_mean_rate_and_burstiness():
    a = Arrivals(process="onoff", rate_on=100.0, rate_off=10.0, mean_on_s=1.0, mean_off_s=3.0)
    t = arrival_times(a, np.random.default_rng(2), 200_000)
    assert abs(len(t) / t[-1] / a.mean_rate - 1) < 0.05  # mean rate (100 + 30) / 4 = 32.5/s
    counts = np.bincount((t // 0.5).astype(int))
    assert counts.var() / counts.mean() > 5  # far burstier than Poisson (index of dispersion 1)


def test_trace_replay_loops():
    a = Arrivals(process="trace", timestamps=(10.0, 11.0, 13.0))
    t = arrival_times(a, np.random.default_rng(0), 7)
    # 0, 1, 3, then the trace again one mean gap (1.5 s) after its end
    assert t.tolist() == [0.0, 1.0, 3.0, 4.5, 5.5, 7.5, 9.0]


def test_generate_merges_streams_in_time_order_with_the_right_shares():
    sc = scenario(rates=(3.0, 1.0), requests=40_000)
    req = generate(sc)
    assert len(req) == 40_000 and (np.diff(req.arrival_s) >= 0).all()
    share = (req.stream == 0).mean()
    assert abs(share - 0.75) < 0.01


def test_streams_draw_independently():
    """Adding a stream does not change another stream's arrivals (common random numbers)."""
    one = generate(scenario(rates=(1.0,), requests=5000))
    two = generate(scenario(rates=(1.0, 1.0), requests=10_000))
    t_first = two.arrival_s[two.stream == 0]
    k = min(len(t_first), len(one.arrival_s)) - 10
    assert np.array_equal(one.arrival_s[:k], t_first[:k])


def test_lognormal_median_and_linear_drift():
    rng = np.random.default_rng(3)
    t = np.linspace(0, 100, 200_000)
    d = ShapeDist(dist="lognormal", median=300, sigma=0.4, drift=Drift(to={"median": 900.0}, start_s=40, end_s=60))
    x = sample_shapes(d, t, rng)
    assert abs(np.median(x[t < 40]) - 300) < 5
    assert abs(np.median(x[t > 60]) - 900) < 12
    mid = (t > 49) & (t < 51)
    assert 560 < np.median(x[mid]) < 640  # halfway along the ramp


def test_categorical_probabilities_and_step_drift():
    rng = np.random.default_rng(4)
    t = np.linspace(0, 10, 100_000)
    d = ShapeDist(dist="categorical", values=(128, 512), probs=(0.9, 0.1),
                  drift=Drift(to={"probs": (0.2, 0.8)}, start_s=5, end_s=5))
    x = sample_shapes(d, t, rng)
    assert abs((x[t < 5] == 512).mean() - 0.1) < 0.01
    assert abs((x[t >= 5] == 512).mean() - 0.8) < 0.01


@pytest.mark.parametrize("kwargs", [
    {"dist": "lognormal", "median": 0.0},
    {"dist": "lognormal", "median": 10, "sigma": -1},
    {"dist": "fixed", "value": -3},
    {"dist": "categorical", "values": ()},
    {"dist": "categorical", "values": (1, 2), "probs": (1.0,)},
    {"dist": "uniform"},
])
def test_bad_shape_distributions_are_refused(kwargs):
    with pytest.raises(ConfigError):
        ShapeDist(**kwargs)


def test_stream_validation():
    with pytest.raises(ConfigError, match="weight"):
        Stream("s", weight=0.0)
    with pytest.raises(ConfigError, match="rate"):
        Arrivals(rate=float("nan"))


def test_one_stream_shortcut_equals_the_general_merge(monkeypatch):
    """A single stream in time order skips the stable sort and the gathers, a single Poisson stream draws only
    what it keeps, two streams merge by tagged keys: the same requests, bit for bit, as the general merge."""
    import dataclasses

    from workbench.runtime import workload
    from workbench.scenario import builtin_scenarios, load_scenario

    cases = [dataclasses.replace(load_scenario(name), requests=n, seed=seed)
             for name in builtin_scenarios("request") for n, seed in ((1, 0), (7, 5), (3000, 3))]
    cases.append(dataclasses.replace(load_scenario("mmc_erlang"), requests=100_003))
    cases.append(dataclasses.replace(load_scenario("priority_two_streams"), requests=100_003, seed=9))
    fast = [generate(sc) for sc in cases]
    monkeypatch.setattr(workload, "_time_order", lambda t, n, one_run: np.argsort(t, kind="stable")[:n])
    monkeypatch.setattr(workload, "_merge_two", lambda times, n: None)  # two streams: the stable argsort
    for sc, r in zip(cases, fast, strict=True):
        ref = workload.merge_streams(sc)
        assert r.arrival_s.tobytes() == ref.arrival_s.tobytes() and r.arrival_s.dtype == ref.arrival_s.dtype
        assert r.stream.dtype == ref.stream.dtype and r.stream.tobytes() == ref.stream.tobytes()
        assert list(r.shapes) == list(ref.shapes)
        for d in r.shapes:
            assert r.shapes[d].dtype == ref.shapes[d].dtype and r.shapes[d].tobytes() == ref.shapes[d].tobytes()


def test_poisson_running_sum_in_place_equals_cumsum():
    from workbench.runtime.workload import _poisson

    for n in (0, 1, 5, 70_001):
        got = _poisson(np.random.default_rng(n), 3.2, n)
        want = np.cumsum(np.random.default_rng(n).exponential(1.0 / 3.2, size=n))
        assert got.dtype == want.dtype and got.tobytes() == want.tobytes()


def test_two_streams_merge_by_keys_equals_the_stable_sort():
    """Equal times across the streams (the first stream's first), zeros, unsorted runs; a negative time: None."""
    from workbench.runtime.workload import _merge_two

    rng = np.random.default_rng(8)
    for _ in range(50):
        a = np.round(rng.uniform(0, 3, int(rng.integers(1, 60))), 1)
        b = np.round(rng.uniform(0, 3, int(rng.integers(1, 60))), 1)
        if rng.random() < 0.7:
            a.sort()
            b.sort()
        n = int(rng.integers(1, len(a) + len(b) + 1))
        t, stream = _merge_two([a, b], n)
        order = np.argsort(np.concatenate([a, b]), kind="stable")[:n]
        assert t.tobytes() == np.concatenate([a, b])[order].tobytes()
        assert stream.dtype == np.int32 and stream.tolist() == (order >= len(a)).astype(int).tolist()
    assert _merge_two([np.array([-1.0, 2.0]), np.array([1.0])], 2) is None
    assert _merge_two([np.array([-0.0, 2.0]), np.array([1.0])], 2) is None
    assert _merge_two([np.array([1.0])], 1) is None

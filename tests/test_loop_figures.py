"""Chapter 06's numbers and pictures: guard margins mirror the guard, noise and windows are deterministic."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from workbench import palette as pal
from workbench.feedback.guard import Effect, closed_loop, guard
from workbench.ui.figures import closed_loop as lf
from workbench.ui.panels.closed_loop import scenario_named, worst_regression


def _effect(p99: float, streams: dict[str, float], rps: float = 100.0) -> Effect:
    return Effect(p99 / 3, p99 / 2, p99, p99 / 3, rps, 1.0, streams)


@pytest.fixture(scope="module")
def tradeoff():
    sc = dataclasses.replace(scenario_named("pinned_tradeoff"), requests=12000)
    return sc, closed_loop(sc, threshold=0.05)


def test_guard_margins_name_every_check_and_agree_with_the_guard():
    before = _effect(0.010, {"a": 0.010, "b": 0.002})
    after = _effect(0.004, {"a": 0.004, "b": 0.0025}, rps=99.0)
    m = lf.guard_margins(before, after)
    assert set(m) == {"p99", "a p99", "b p99", "throughput"}
    assert m["b p99"] == pytest.approx(0.25) and m["p99"] == pytest.approx(-0.6)
    assert m["throughput"] == pytest.approx(0.01)
    assert max(m.values()) == pytest.approx(worst_regression(before, after))
    t = lf.smallest_accepting_threshold(before, after)
    assert t == 0.25 and guard(before, after, t).accepted and not guard(before, after, t - 0.01).accepted


def test_one_stream_has_no_stream_checks():
    assert set(lf.guard_margins(_effect(1.0, {"x": 1.0}), _effect(1.0, {"x": 1.0}))) == {"p99", "throughput"}


def test_noise_is_zero_on_the_same_seed_and_not_on_others(tradeoff):
    sc, _ = tradeoff
    noise = lf.seed_noise(sc, (sc.seed, 1, 2))
    assert noise["rows"][0]["worst"] == 0.0
    assert max(r["worst"] for r in noise["rows"][1:]) > 0.0 and noise["p99_spread"] > 0
    assert lf.seed_noise(sc, (1,))["rows"][0]["worst"] == noise["rows"][1]["worst"]  # deterministic


def test_paired_margins_match_the_loop_on_its_own_seed(tradeoff):
    sc, loop = tradeoff
    (r,) = loop.results
    (m,) = lf.paired_margins(sc, r.action, (sc.seed,))
    assert m == pytest.approx(max(lf.guard_margins(loop.before, r.effect).values()))


def test_windowed_p99_covers_every_window(tradeoff):
    _, loop = tradeoff
    t, p99 = lf.windowed_p99(loop.baseline, 10)
    assert len(t) == len(p99) == 10 and np.all(np.diff(t) > 0) and np.all(np.isfinite(p99))
    ok = loop.baseline.measured & loop.baseline.completed
    assert p99.max() <= loop.baseline.latency_s[ok].max() + 1e-12


def test_figures_draw_in_the_palette(tradeoff):
    sc, loop = tradeoff
    cdf = lf.before_after_cdf(loop.baseline, loop.baseline)
    colors = {line.get_color() for line in cdf.axes[0].lines}
    assert {pal.BASELINE, pal.CURRENT} <= colors and "tab:red" not in colors
    ax = cdf.axes[0]  # the tail on a log scale: survival curves, p50 ... p99.9 guides
    assert ax.get_xscale() == ax.get_yscale() == "log" and ax.get_ylim()[0] < 1e-3
    labels = [line.get_label() for line in ax.get_lines()]
    assert any(lb.startswith("baseline: p99") for lb in labels)
    assert any(lb.startswith("after retuning: p99") for lb in labels)
    tel = lf.telemetry_figure(loop.baseline, loop.baseline, 5)
    assert tel.axes[0].get_ylabel().startswith("p99 per window (ms)")
    g = lf.guard_figure(lf.guard_margins(loop.before, loop.results[0].effect), lf.seed_noise(sc, (1,)), (0.05, 0.2))
    assert len(g.axes) == 2 and "%" in g.axes[0].get_xlabel()
    for fig in (cdf, tel, g):
        assert fig._repr_png_()[:4] == b"\x89PNG"

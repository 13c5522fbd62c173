"""The what-changed line: direction and size of what moved, or "no effect" and why."""

from __future__ import annotations

import copy

from workbench.analysis.metrics import DRIVERS
from workbench.ui.panels.compare import ratio_words, what_changed


def summary(p50_ms=1.0, p99_ms=0.9, drivers=None, util=0.9, refused=0.0, streams=None, **extra):
    shares = dict.fromkeys(DRIVERS, 0.0) | {"service": 1.0} | (drivers or {})
    return {"latency_s": {"p50": p50_ms / 1e3, "p95": p99_ms / 1e3, "p99": p99_ms / 1e3, "mean": p50_ms / 1e3},
            "refused_share": refused, "throughput_rps": 1000.0, "tail_drivers": shares,
            "cores": {"utilization": [util] * 4}, "streams": streams or {}, **extra}


def test_p99_up_names_direction_ratio_and_the_grown_driver():
    before = summary(p99_ms=0.9, drivers={"mapping_fallback": 0.05, "service": 0.95})
    after = summary(p99_ms=2.8, drivers={"mapping_fallback": 0.38, "service": 0.62})
    line = what_changed(before, after, "median")
    assert line.startswith("what changed: p99 x3.1 higher (0.9 -> 2.8 ms)")
    assert "mapping fallback is now 38 % of the tail (was 5 %)" in line
    assert "p50" not in line  # p50 did not move


def test_p99_down_says_lower_and_the_ratio():
    line = what_changed(summary(p99_ms=10.0), summary(p99_ms=2.5), "fusion")
    assert "p99 x4 lower (10 -> 2.5 ms)" in line


def test_small_moves_are_in_percent_and_noise_is_no_effect():
    assert ratio_words("p99", 1e-3, 1.2e-3) == "p99 20 % higher (1 -> 1.2 ms)"
    assert what_changed(summary(p99_ms=1.0), summary(p99_ms=1.03), "x").startswith("no effect: ")


def test_identical_runs_are_no_effect_with_a_reason_from_the_summary():
    s = summary(util=0.06)
    line = what_changed(s, copy.deepcopy(s), "cores")
    assert line == "no effect: cores were 6 % busy, more cores cannot shorten a queue that is empty"
    busy = summary(util=0.9, drivers={"queueing": 0.7, "service": 0.3})
    assert "queueing (70 %)" in what_changed(busy, copy.deepcopy(busy), "sigma")


def test_no_reloads_either_way_and_weights_outside_weighted():
    s = summary(residency={"loads": 0})
    assert "every model already fitted in HBM" in what_changed(s, s, "hbm_gib")
    s = summary(settings={"discipline": "priority"})
    assert what_changed(s, s, "batch_weight") == ("no effect: weights count only under the weighted discipline; "
                                                  "this run uses priority")


def test_refusals_and_streams_that_move_apart_are_named():
    one = {"latency_s": {"p50": 1e-3, "p95": 1e-3, "p99": 1e-3, "mean": 1e-3}}
    ten = {"latency_s": {"p50": 1e-3, "p95": 1e-3, "p99": 10e-3, "mean": 1e-3}}
    before = summary(p99_ms=5.0, streams={"a": one, "b": one})
    after = summary(p99_ms=5.0, refused=0.2, streams={"a": one, "b": ten})
    line = what_changed(before, after, "skew")
    assert "refused 0.0 % -> 20.0 % of requests" in line and "b p99 x10 higher (1 -> 10 ms)" in line
    assert "a p99" not in line


def test_the_loop_says_what_it_now_keeps_or_why_the_guard_did_not_change():
    refused = {"threshold": 0.05, "actions": [], "verdicts": [{"kind": "placement", "accepted": False, "worst": 0.2}]}
    taken = {"threshold": 0.3, "actions": ["placement"],
             "verdicts": [{"kind": "placement", "accepted": True, "worst": 0.2}]}
    line = what_changed(summary(p99_ms=80, loop=refused), summary(p99_ms=3, loop=taken), "threshold")
    assert line.startswith("what changed: the loop now keeps placement (was no action); p99 x27 lower")
    same = dict(refused, threshold=0.1)
    assert what_changed(summary(loop=refused), summary(loop=same), "threshold") == (
        "no effect: every refused action is worse by +20 % or more, above both thresholds (5 % and 10 %), "
        "so the guard refused the same actions")


def test_first_run_has_nothing_to_compare():
    assert what_changed(None, summary(), "").startswith("first run")


def test_reloads_either_way_say_that_hbm_matters_only_when_a_model_more_fits():
    before, after = summary(residency={"loads": 72}), summary(residency={"loads": 70})
    line = what_changed(before, after, "hbm_gib")
    assert line == ("no effect: weights were reloaded before and after (72 and 70 loads): both capacities hold the "
                    "same models, and HBM matters only when one more model fits")

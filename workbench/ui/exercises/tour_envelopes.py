"""Exercise checkers for chapters 00 (the tour) and 01 (shape envelopes).

Each checker runs the library's own model headless (a scenario, or a panel's model
through ``_run``, which never moves the panel's widgets) and answers "right", "not yet:
<hint>" or "not answered yet". ``tests/test_exercises_tour_envelopes.py`` is the instructor's key.
"""

from __future__ import annotations

import dataclasses
from functools import cache
from typing import Any

from workbench.analysis.metrics import summarize
from workbench.ui.exercises.base import _run, _verdict

TOUR_SCENARIO = "shape_drift"


@cache
def tour_summary() -> dict:
    """The summary of chapter 00's run (the built-in ``shape_drift`` scenario, its own seed)."""
    from workbench.pipeline import run_scenario
    from workbench.scenario import load_scenario

    return summarize(run_scenario(load_scenario(TOUR_SCENARIO)))


def _number(x: Any) -> float:
    if isinstance(x, bool) or not isinstance(x, int | float):
        raise TypeError("a number")
    return float(x)


def littles_law_depth(depth: Any) -> str:
    """00, exercise 1: the mean queue depth from throughput x mean wait, within 5% of the measured time average."""
    def test() -> bool:
        measured = tour_summary()["queue_depth"]["mean"]
        return abs(_number(depth) - measured) <= 0.05 * measured

    return _verdict((depth,), "a number of requests", test,
                    "Little's law for the queue alone: L_q = lambda x W_q, with lambda the throughput (req/s) and "
                    "W_q the mean wait (s), not the mean latency")


def core_utilisation(rho: Any) -> str:
    """00, exercise 2: mean core utilisation from batches per second x mean batch time / cores, within 3%."""
    def test() -> bool:
        s = tour_summary()
        measured = sum(s["cores"]["utilization"]) / len(s["cores"]["utilization"])
        return abs(_number(rho) - measured) <= 0.03 * measured

    return _verdict((rho,), "a share between 0 and 1", test,
                    "the cores serve batches, not requests: batches per second = throughput / mean batch size; "
                    "then multiply by the mean batch time (s) and divide by the number of cores")


def tour_envelope(bounds: Any) -> str:
    """00, exercise 3: upper bounds for at most 4 buckets that hit >= 99% of shape_drift's requests."""
    def test() -> bool:
        from workbench.pipeline import run_scenario
        from workbench.scenario import load_scenario

        if not (isinstance(bounds, list | tuple) and 1 <= len(bounds) <= 4
                and all(isinstance(b, int) and not isinstance(b, bool) for b in bounds)):
            raise ValueError("a list of at most 4 whole numbers")
        sc = load_scenario(TOUR_SCENARIO)
        sc = dataclasses.replace(sc, model=dataclasses.replace(sc.model, envelope={"seq": list(bounds)}))
        return summarize(run_scenario(sc))["bucket_hit_rate"] >= 0.99

    return _verdict((bounds,), "a list of at most 4 increasing upper bounds, e.g. [128, 256, 512]", test,
                    "the drift ends at median 900 with spread 0.5: the largest bucket must reach past that "
                    "distribution's 99th percentile, median x exp(0.5 x 2.33)")


PAD_MEDIAN, SLICE_MEDIAN = 272, 288  # 01, exercises 1 and 4: medians the chapter does not print


def padded_share(panel, share: Any) -> str:
    """01, exercise 1: the share of measured requests ``pad`` pads with the gap envelope at median 272, spread 0.4
    (section 4 prints the share at median 200; this one the learner computes)."""
    def test() -> bool:
        s = _run(panel, median=PAD_MEDIAN, sigma=0.4, drift_to=PAD_MEDIAN, envelope="gap: 64-128, 256-512",
                 policy="pad")
        measured = s["misses"]["by_outcome"]["padded"] / s["measured"]
        return abs(_number(share) - measured) <= 0.02

    return _verdict((share,), "a share between 0 and 1", test,
                    "pad pads the lengths that fall in the gap between the buckets (129 to 255 tokens) and the "
                    "few below 64; lengths past 512 have no bucket to pad into")


P99_BUDGET_S = 1.5e-3  # 01, exercise 2: the p99 target at median 600 (the plain 3-bucket fallback gives 2.2 ms)


def envelope_for_median_600(panel, policy: Any, envelope: Any) -> str:
    """01, exercise 2: at median 600 (no drift), a policy and an envelope that refuse nothing, p99 under 1.5 ms."""
    def test() -> bool:
        if policy not in panel.ctrl["policy"].options or envelope not in panel.ctrl["envelope"].options:
            raise ValueError("a policy and an envelope from the panel's lists")
        s = _run(panel, median=600, drift_to=600, policy=policy, envelope=envelope)
        return s["rejected"] == 0 and s["latency_s"]["p99"] < P99_BUDGET_S

    return _verdict((policy, envelope), "a policy and an envelope from the panel's lists", test,
                    "reject and pad refuse the lengths past the largest bucket, and the generic fallback runs "
                    "nearly 2x slower than a specialised kernel: either cover the lengths with buckets or let each "
                    "new shape get one")


def p99_inside_slow_slice(panel, position: Any) -> str:
    """01, exercise 4: at median 288 (spread 0.4, no drift, fallback), the quantile of the fallback requests'
    latencies at which the overall p99 sits, 1 - 0.01 / share, within 0.05."""
    def test() -> bool:
        from workbench.analysis.envelope_stats import slice_quantile

        s = _run(panel, median=SLICE_MEDIAN, sigma=0.4, drift_to=SLICE_MEDIAN, envelope="128 / 256 / 512",
                 policy="fallback")
        expected = slice_quantile(s["misses"]["by_outcome"]["fallback"] / s["measured"])
        x = _number(position)
        if not 0.0 <= x <= 1.0:
            raise ValueError("a share between 0 and 1")
        return expected is not None and abs(x - expected) <= 0.05

    return _verdict((position,), "a share between 0 and 1", test,
                    "first the share of requests past 512 tokens (the lognormal tail beyond 512 at median 288, "
                    "sigma 0.4); the slowest 1% of all requests all come from that slice, so p99 sits 0.01 / "
                    "share from the top of it")


def recompile_budget_runs_out(panel, median: Any, sigma: Any, drift_to: Any, envelope: Any) -> str:
    """01, exercise 3: panel settings under which ``recompile`` spends its budget and some requests fall back."""
    def test() -> bool:
        if envelope not in panel.ctrl["envelope"].options:
            raise ValueError("an envelope from the panel's list")
        for name, value in (("median", median), ("sigma", sigma), ("drift_to", drift_to)):
            c = panel.ctrl[name]
            if not c.min <= _number(value) <= c.max:
                raise ValueError(f"{name} within the slider's range {c.min}..{c.max}")
        s = _run(panel, median=int(median), sigma=float(sigma), drift_to=int(drift_to), envelope=envelope,
                 policy="recompile")
        return any("recompile limit" in k and v > 0 for k, v in s["misses"]["by_reason"].items())

    return _verdict((median, sigma, drift_to, envelope), "three slider values and an envelope from the list", test,
                    "each recompile adds one bucket reaching the next power of two, so lengths past 512 alone need "
                    "8 recompiles only beyond 131,072 tokens: give the traffic more uncovered ranges to visit")


def envelope_for_drift(panel, policy: Any, envelope: Any) -> str:
    """01, exercise 2: with the median at 600 tokens, a policy and an envelope that refuse nothing, p99 < 1.5 ms.

    The same test as :func:`envelope_for_median_600`, which the chapter calls.
    """
    return envelope_for_median_600(panel, policy, envelope)

"""Exercise checkers for chapters 06 (the closed loop) and 07 (interview drills).

Same contract as :mod:`workbench.ui.exercises.base`: "right", "not yet: <hint>" or "not
answered yet". The 06 checkers rerun the loop headless at the panel's run length
(``panel.requests``) and never touch its widgets. ``tests/test_exercises_loop_drills.py`` is the
instructor's key.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from workbench.feedback.guard import closed_loop
from workbench.ui.exercises.base import _verdict
from workbench.ui.figures import closed_loop as lf
from workbench.ui.panels.closed_loop import scenario_named

NOISE_SEEDS = (1, 2, 3, 4, 5)  # 06, exercise 2: the no-op seeds, against the scenario's own seed 7


def _scenario(panel, name: str):
    return dataclasses.replace(scenario_named(name), requests=panel.requests)


def _with_hint(verdict: str, hint) -> str:
    return f"not yet: {hint()}" if verdict == "not yet: " else verdict


TRADEOFF_SEED = 11  # 06, exercise 1: a seed the chapter does not print (its seed 7 gives 0.20)


def tradeoff_threshold(panel, threshold: Any, seed: int = TRADEOFF_SEED) -> str:
    """06, exercise 1: the smallest threshold (steps of 0.01) at which the loop keeps placement, pinned_tradeoff at
    ``seed`` and the panel's run length."""
    sc = dataclasses.replace(_scenario(panel, "pinned_tradeoff"), seed=seed)

    def takes(t: float) -> bool:
        return closed_loop(sc, threshold=t).final_actions == ("placement",)

    def test() -> bool:
        t = round(float(threshold), 2)
        if not 0 <= t <= 1:
            raise ValueError("a threshold between 0 and 1 (0.05 is 5%)")
        return takes(t) and not takes(round(t - 0.01, 2))

    def hint() -> str:
        if not takes(round(float(threshold), 2)):
            return ("the guard still refuses: read its verdict, which names the check that fails and by how much; "
                    "it refuses when a number is worse by *more than* the threshold")
        return "the loop takes it, but a smaller threshold would too: find the edge"

    return _with_hint(_verdict((threshold,), "a threshold (a number such as 0.05)", test, ""), hint)


def noise_floor(panel, threshold: Any) -> str:
    """06, exercise 2: the smallest threshold (steps of 0.01) at which a no-op on seeds 1-5 passes against seed 7."""
    noise = lf.seed_noise(_scenario(panel, "pinned_tradeoff"), NOISE_SEEDS)
    worst = max(r["worst"] for r in noise["rows"])
    target = round(-(-worst // 0.01) * 0.01, 2)

    def test() -> bool:
        return round(float(threshold), 2) == target

    def hint() -> str:
        t = float(threshold)
        if t < worst:
            return "at that threshold the guard refuses a change that changed nothing: take the worst seed's margin"
        return "every no-op passes, but a tighter threshold would too: round the worst margin up to 0.01"

    return _with_hint(_verdict((threshold,), "a threshold (a number such as 0.05)", test, ""), hint)


def refused_action(panel, kind: Any, stream: Any) -> str:
    """06, exercise 3: on priority_two_streams, the action the guard refuses and the stream whose p99 it protects."""
    loop = closed_loop(_scenario(panel, "priority_two_streams"))

    def test() -> bool:
        refused = [r for r in loop.results if not r.verdict.accepted]
        kinds = {r.action.kind for r in loop.results}
        if kind not in kinds:
            raise ValueError(f"an action kind the loop proposed here: {sorted(kinds)}")
        return any(r.action.kind == kind and f"stream {stream} p99" in r.verdict.why for r in refused)

    def hint() -> str:
        if any(r.action.kind == kind and r.verdict.accepted for r in loop.results):
            return "the guard accepts that one: print each result's verdict"
        return "the verdict names the stream that gets worse; fairer on paper is not better for everyone"

    return _with_hint(_verdict((kind, stream), "an action kind and a stream name", test, ""), hint)


# 07: an answer to ``fusion-memory-bursts`` complete but for one core element (exercises 2 and 4 read it). Its
# numbers are the drill's evidence (tests/test_exercises_loop_drills.py checks them): aggressive fusion makes the MLP
# one GEMM chain (norm, up-projection, GELU, down-projection, residual) that keeps each token's 4,096-wide hidden row
# on chip, 12 KiB a row, so no useful tile fits the 4 MiB of SRAM and it spills ten times the elementwise plan's bytes
# per request; eight cores contend for the one HBM; the four-op cap cuts the chain at the down-projection
PARTIAL_ANSWER = """Workload: the transformer block at production load, 6,610 req/s on 8 cores; p95 went from \
2.5 ms to 3.1 ms after aggressive fusion shipped.
Mechanism: the fused MLP kernel now runs the norm, the up-projection, GELU, the down-projection and the residual \
together and keeps each token's whole 4,096-wide hidden row on chip, 12 KiB a row, so no useful tile fits the 4 MiB \
SRAM and it spills the hidden activations to HBM and back, ten times the elementwise plan's spill per request; under \
load the eight cores contend for the shared bandwidth, which stretches the tail.
Proof: the closed-loop mapping report at the same seed, with per-kernel working sets, spill and HBM bytes and memory \
contention's share of the tail drivers.
Fix: cap fused kernels at four ops (max_depth = 4) so the MLP chain is cut at the down-projection.
Owner: the ML compiler team.
Rollback: we can always revert it."""


# 07, exercises 2 and 4: the same answer with a conditional rollback and an owner who is nobody in particular
EXERCISE_ANSWER = PARTIAL_ANSWER.rsplit("\n", 2)[0] + """
Rollback: ship behind the fusion-level flag on a canary and flip it back if canary p95 rises more than 5% \
above the elementwise plan.
Owner: someone from infra should look into it."""


def _missing(drill, text: str) -> list[str]:
    from workbench.grading.grader import CORE, grade

    g = grade(drill, text)
    return [k for k in CORE if not g.elements[k].present]


def missing_element(drill, element: Any) -> str:
    """07, exercise 2: the core element the grader finds missing in :data:`EXERCISE_ANSWER`."""
    from workbench.grading.grader import CORE

    def test() -> bool:
        if element not in CORE:
            raise ValueError(f"one of {', '.join(CORE)}")
        return [element] == _missing(drill, EXERCISE_ANSWER)

    return _verdict((element,), "a core element name", test,
                    "each line is labelled, but a label is not an element: which line names nobody accountable?")


def regressed_p95_ms(drill, value: Any) -> str:
    """07, exercise 3: the regressed run's p95 (ms) in the drill's evidence, within 2%."""
    from workbench.grading.practice import prepare

    s = prepare(drill).summaries

    def near(x: float, target_s: float) -> bool:
        return abs(x - target_s * 1e3) <= 0.02 * target_s * 1e3

    def hint() -> str:
        x = float(value)
        if near(x, s["base"]["latency_s"]["p95"]):
            return "that is the healthy baseline's p95; the question asks for the regressed run"
        if near(x, s["reg"]["latency_s"]["mean"]):
            return "that is the regressed run's mean: the mean hides the tail the drill is about"
        if near(x, s["reg"]["latency_s"]["p99"]):
            return "that is the regressed run's p99; the drill's primary metric is p95"
        return "read the 'regressed' row of the evidence table, p95 column (ms)"

    verdict = _verdict((value,), "a latency in ms (a number)",
                       lambda: near(float(value), s["reg"]["latency_s"]["p95"]), "")
    return _with_hint(verdict, hint)


def owner_sentence(drill, text: Any) -> str:
    """07, exercise 4: an owner sentence that, replacing the last line of :data:`EXERCISE_ANSWER`, makes it strong."""
    from workbench.grading.grader import grade

    def answer() -> str:
        return EXERCISE_ANSWER.rsplit("\n", 1)[0] + "\n" + text

    def test() -> bool:
        if not isinstance(text, str) or not text.strip():
            raise TypeError("a sentence, as a string")
        return grade(drill, answer()).verdict == "strong"

    def hint() -> str:
        e = grade(drill, answer()).elements["owner"]
        return e.hint or "the owner is found, but another element went missing: keep the sentence to the owner"

    return _with_hint(_verdict((text,), "your owner sentence as a string", test, ""), hint)


# --- 06, build it yourself: a confidence interval for p99, and a canary sized from it --------------------------------

P99_CONFIDENCE = 0.95
CANARY_REGRESSION = 0.20  # the p99 regression the canary must see: +20 %


def p99_ranks(n: Any, lo_rank: Any, hi_rank: Any) -> str:
    """06, build it yourself: the 1-based ranks of the sorted ``n`` samples that bracket the true p99 at 95 %,
    equal-tailed from the binomial (:func:`workbench.analysis.quantile_ci.order_statistic_ranks`)."""
    from workbench.analysis import quantile_ci as qc

    def test() -> bool:
        size, lo, hi = int(n), int(lo_rank), int(hi_rank)
        if (size, lo, hi) != (n, lo_rank, hi_rank):
            raise ValueError("whole numbers")
        return (lo, hi) == qc.order_statistic_ranks(size, 0.99, P99_CONFIDENCE)

    def hint() -> str:
        size, lo, hi = int(n), int(lo_rank), int(hi_rank)
        want = qc.order_statistic_ranks(size, 0.99, P99_CONFIDENCE)
        if lo > hi:
            return "the lower rank comes first"
        if (lo + 1, hi + 1) == want:
            return "ranks count from 1: the smallest sample is rank 1 (index 0 of the sorted array)"
        if not 1 <= lo < hi <= size:
            return f"two ranks between 1 and {size:,}"
        cover = qc.coverage(size, (lo, hi))
        if cover < P99_CONFIDENCE:
            return (f"those ranks bracket the true p99 only {cover:.1%} of the time: B, the count below it, is "
                    f"Binomial(n, 0.99); l is the largest rank with P(B <= l - 1) <= 0.025, u the smallest with "
                    f"P(B <= u - 1) >= 0.975")
        return (f"those ranks bracket it {cover:.1%} of the time, more than needed: take the tightest equal-tailed "
                "pair (2.5 % below, 2.5 % above)")

    return _with_hint(_verdict((n, lo_rank, hi_rank), "three whole numbers", test, ""), hint)


def canary_size(traffic, requests: Any, regression: float = CANARY_REGRESSION) -> str:
    """06, build it yourself: the fewest canary requests at which the p99 interval expected from ``traffic`` is
    narrower than the regression, ``hi / lo < 1 + regression`` (within 2 % of
    :func:`workbench.analysis.quantile_ci.canary_requests`'s answer, above it)."""
    from workbench.analysis import quantile_ci as qc

    want = qc.canary_requests(traffic, regression)

    def test() -> bool:
        m = int(requests)
        if m != requests or m < 1:
            raise ValueError("a whole number of requests")
        return want <= m <= 1.02 * want

    def hint() -> str:
        m = int(requests)
        if m < qc.min_samples_for_upper_bound(0.99, P99_CONFIDENCE):
            return (f"{m} requests cannot bound p99 from above at all: the largest of them sits below the true p99 "
                    "more often than 2.5 % of the time")
        ratio = qc.width_ratio(traffic, m)
        if ratio >= 1 + regression:
            return (f"at {m:,} requests the interval is hi / lo = {ratio:.3f}, wider than the {regression:.0%} you "
                    "want to see: more requests")
        return (f"at {m:,} the interval is already narrow enough (hi / lo = {ratio:.3f}), and fewer would do: find "
                "the smallest (bisect between 368 and the traffic's size)")

    return _with_hint(_verdict((requests,), "a whole number of requests", test, ""), hint)

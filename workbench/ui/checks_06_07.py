"""Exercise checkers for chapters 06 (the closed loop) and 07 (interview drills).

Same contract as :mod:`workbench.ui.exercises`: "right", "not yet: <hint>" or "not
answered yet". The 06 checkers rerun the loop headless at the panel's run length
(``panel.requests``) and never touch its widgets. ``tests/test_checks_06_07.py`` is the
instructor's key.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from workbench.feedback.guard import closed_loop
from workbench.ui import loop_figures as lf
from workbench.ui.exercises import _verdict
from workbench.ui.loop_panel import scenario_named

NOISE_SEEDS = (1, 2, 3, 4, 5)  # 06, exercise 2: the no-op seeds, against the scenario's own seed 7


def _scenario(panel, name: str):
    return dataclasses.replace(scenario_named(name), requests=panel.requests)


def _with_hint(verdict: str, hint) -> str:
    return f"not yet: {hint()}" if verdict == "not yet: " else verdict


def tradeoff_threshold(panel, threshold: Any) -> str:
    """06, exercise 1: the smallest threshold (steps of 0.01) at which the loop keeps placement, pinned_tradeoff."""
    sc = _scenario(panel, "pinned_tradeoff")

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

"""Exercise checkers for the notebooks: right, wrong with a hint, or not answered yet.

A learner's cell holds a placeholder (``answer = ...``) and calls a checker. The checker
evaluates the answer by running the panel's own model headless (``panel.run``), so
checking neither moves the panel's widgets nor solves anything by being run: a notebook
executed top to bottom reports "not answered yet". ``tests/test_exercises.py`` holds a
worked solution for each exercise and proves the checker accepts it and refuses a wrong
one (the instructor's key).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

NOT_ANSWERED = "not answered yet: replace the ... with your answer and run the cell again"


def _verdict(answers: tuple, expected: str, test: Callable[[], bool], hint: str) -> str:
    if any(a is ... for a in answers):
        return NOT_ANSWERED
    try:
        ok = test()
    except (TypeError, ValueError, KeyError) as e:
        return f"expected {expected}; got {', '.join(repr(a) for a in answers)} ({e})"
    return "right" if ok else f"not yet: {hint}"


def _run(panel, **changes: Any) -> dict:
    """The panel's model at its current settings with ``changes``, without touching its widgets."""
    return panel.run(**{**panel.values(), **changes})["summary"]


def batching_under_budget(panel, max_batch: Any, max_delay_ms: Any, keep_delay_ms: float = 8.0) -> str:
    """03, exercise 4: at 1,500 req/s with dynamic batching and the max delay kept at ``keep_delay_ms``, a max
    batch that keeps p99 under 15 ms."""
    def test() -> bool:
        batch, delay = int(max_batch), float(max_delay_ms)  # a wrong type says what was expected, first
        if delay != keep_delay_ms:
            return False
        s = _run(panel, rate=1500, policy="dynamic", max_batch=batch, max_delay_ms=delay)
        return s["latency_s"]["p99"] < 15e-3

    return _verdict((max_batch, max_delay_ms), "a whole number and a delay in ms", test,
                    f"keep the window at {keep_delay_ms:g} ms: a batch also leaves as soon as it is full, so a smaller "
                    "max batch cuts both the wait for company and the batch's own service time")


def balancing_weight(panel, weight: Any) -> str:
    """04, exercise 2: under weighted fair queueing, a weight for 'batch' that keeps both p99s within 2x."""
    def test() -> bool:
        s = _run(panel, discipline="weighted", batch_weight=float(weight))
        p = [v["latency_s"]["p99"] for v in s["streams"].values()]
        return max(p) < 2 * min(p)

    return _verdict((weight,), "a weight (a number)", test,
                    "compare each stream's share of the offered load with its share of the weights")


def smallest_hbm_without_reloads(panel, gib: Any) -> str:
    """05, exercise 2: the smallest HBM capacity on the panel's slider with no reloads at all."""
    step = panel.ctrl["hbm_gib"].step

    def test() -> bool:
        def loads(capacity: int) -> int:
            return (_run(panel, hbm_gib=capacity)["residency"] or {}).get("loads", 0)

        return loads(int(gib)) == 0 and loads(int(gib) - step) > 0

    return _verdict((gib,), "a whole number of GiB", test,
                    "add up the weights of the models that must stay resident at once")


def strong_answer(drill, text: Any) -> str:
    """07, exercise 2: an answer the grader rates strong, with its per-element feedback when it is not."""
    from workbench.grading.grader import grade
    from workbench.grading.practice import feedback

    def test() -> bool:
        if not isinstance(text, str):
            raise TypeError("an answer is text")
        return grade(drill, text).verdict == "strong"

    verdict = _verdict((text,), "your answer as a string", test, "")
    return verdict if verdict != "not yet: " else "not yet:\n" + feedback(grade(drill, text))

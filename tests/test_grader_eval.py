"""The grader against the hand-labelled answers: the goals of issue 5, as a test.

The labels in ``tests/grader_labels/answers.toml`` were written by hand from the rubric
rules, independently of the grader's code; the grader was then tuned on them, so these
are training-set figures. ``holdout.toml`` (if present) was labelled afterwards and never
tuned on: ``tests/benchmarks/grader_eval.py`` reports both.
"""

from __future__ import annotations

from pathlib import Path

from workbench.grading.drills import load_drills
from workbench.grading.evaluate import evaluate, load_labels

LABELS = Path(__file__).parent / "grader_labels" / "answers.toml"


def test_labelled_set_meets_the_goals():
    answers = load_labels(LABELS)
    assert len(answers) >= 40 and len({a["drill"] for a in answers}) >= 4
    ev = evaluate(answers, load_drills())
    for element, m in ev.per_element.items():
        assert m["accuracy"] >= 0.9, (element, m)
    assert ev.strong_graded_weak == []
    assert ev.stuffed_above_weak == []

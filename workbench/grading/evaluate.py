"""Measure the grader on a hand-labelled answer set: per-element precision, recall, accuracy, verdict confusion.

The labels (``tests/grader_labels/answers.toml``) were written by hand from the rubric
rules, independently of the grader's code. Goals (issue 5): every element at 0.9
accuracy or better, no strong answer graded weak, no keyword-stuffed answer above weak.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from workbench.grading.drills import Drill
from workbench.grading.grader import ELEMENTS, grade

VERDICTS = ("strong", "partial", "weak")


@dataclass(frozen=True)
class Evaluation:
    """The grader against the labels."""

    n: int
    per_element: dict[str, dict[str, float]]  # element -> precision, recall, accuracy
    confusion: dict[str, dict[str, int]]  # labelled verdict -> graded verdict -> count
    strong_graded_weak: list[str]
    stuffed_above_weak: list[str]
    disagreements: list[tuple[str, str, bool, bool]]  # (answer id, element, label, graded)


def load_labels(path: str | Path) -> list[dict]:
    """The labelled answers."""
    return tomllib.loads(Path(path).read_text(encoding="utf-8"))["answer"]


def evaluate(answers: list[dict], drills: dict[str, Drill]) -> Evaluation:
    """Grade every labelled answer and compare."""
    counts = {e: {"tp": 0, "fp": 0, "fn": 0, "tn": 0} for e in ELEMENTS}
    confusion = {v: dict.fromkeys(VERDICTS, 0) for v in VERDICTS}
    strong_weak, stuffed, disagree = [], [], []
    for a in answers:
        g = grade(drills[a["drill"]], a["text"])
        for e in ELEMENTS:
            label, got = bool(a["labels"][e]), g.elements[e].present
            counts[e]["tp" if label and got else "fn" if label else "fp" if got else "tn"] += 1
            if label != got:
                disagree.append((a["id"], e, label, got))
        confusion[a["verdict"]][g.verdict] += 1
        if a["verdict"] == "strong" and g.verdict == "weak":
            strong_weak.append(a["id"])
        if a["category"] == "keyword-stuffed" and g.verdict != "weak":
            stuffed.append(a["id"])
    per = {}
    for e, c in counts.items():
        p = c["tp"] / (c["tp"] + c["fp"]) if c["tp"] + c["fp"] else 1.0
        r = c["tp"] / (c["tp"] + c["fn"]) if c["tp"] + c["fn"] else 1.0
        per[e] = {"precision": p, "recall": r, "accuracy": (c["tp"] + c["tn"]) / len(answers)}
    return Evaluation(len(answers), per, confusion, strong_weak, stuffed, disagree)


def format_evaluation(ev: Evaluation) -> str:
    """The printed report."""
    lines = [f"{ev.n} labelled answers", f"{'element':<10}{'precision':>10}{'recall':>8}{'accuracy':>10}"]
    for e, m in ev.per_element.items():
        lines.append(f"{e:<10}{m['precision']:>10.2f}{m['recall']:>8.2f}{m['accuracy']:>10.2f}")
    lines.append("verdict confusion (rows: labelled, columns: graded)")
    lines.append(f"{'':<10}" + "".join(f"{v:>9}" for v in VERDICTS))
    for v in VERDICTS:
        lines.append(f"{v:<10}" + "".join(f"{ev.confusion[v][w]:>9}" for w in VERDICTS))
    lines.append(f"strong graded weak: {ev.strong_graded_weak or 'none'}")
    lines.append(f"keyword-stuffed graded above weak: {ev.stuffed_above_weak or 'none'}")
    return "\n".join(lines)

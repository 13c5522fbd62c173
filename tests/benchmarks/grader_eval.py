"""Print the grader's per-element precision, recall and accuracy and the verdict confusion matrix.

Run: ``python tests/benchmarks/grader_eval.py [--disagreements]`` (also part of ``make bench``).
"""

from __future__ import annotations

import sys
from pathlib import Path

from workbench.grading.drills import load_drills
from workbench.grading.evaluate import evaluate, format_evaluation, load_labels

LABELS = Path(__file__).resolve().parents[1] / "grader_labels"
SETS = (("answers.toml", "tuned on (training set)"),
        ("holdout.toml", "labelled later; used once, for generic fixes (term-list lines, fixes need an action)"),
        ("holdout2.toml", "labelled last; seen once, then one consistency change (list lines void for rollback too)"))


def main() -> None:
    drills = load_drills()
    for name, what in SETS:
        if not (LABELS / name).exists():
            continue
        print(f"== {name}: {what}")
        ev = evaluate(load_labels(LABELS / name), drills)
        print(format_evaluation(ev))
        if "--disagreements" in sys.argv:
            for answer, element, label, got in ev.disagreements:
                print(f"  {answer:<22}{element:<10} labelled {label!s:<6} graded {got}")


if __name__ == "__main__":
    main()

"""Measure the grader on hand-labelled answers: per element, per drill and per writer, and the verdicts.

The corpus lives in ``tests/grader_labels/``: one TOML file per writer (``writer = "A"``
at the top, or ``writer`` on each answer; the first round's files are writer ``legacy``).
Labels follow the element definitions in :mod:`workbench.grading.detectors`. Figures that
flatter nothing: :func:`by_writer` scores each writer's answers on their own, so a rule
tuned on some writers is measured on the one it never saw, and the benchmark
(``tests/benchmarks/grader_eval.py``) keeps one writer's set for a single final score.

Goals (issue 13, on writers the rules were not tuned on): every element at least 0.9,
verdicts at least 0.85, strong answers graded strong at least 0.9, no strong answer graded
weak, no keyword list, bare chain or recitation graded above weak.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from workbench.grading.drills import Drill
from workbench.grading.grader import ELEMENTS, grade

VERDICTS = ("strong", "partial", "weak")
TRAPS = ("keyword", "chain", "recit", "stuffed", "gamed")  # trap kinds that must never grade above weak
GOALS = {"element": 0.9, "verdict": 0.85, "strong_recall": 0.9}


@dataclass(frozen=True)
class Evaluation:
    """The grader against the labels."""

    n: int
    per_element: dict[str, dict[str, float]]  # element -> precision, recall, accuracy
    per_drill: dict[str, dict[str, float]]  # drill -> element -> accuracy (and "verdict")
    confusion: dict[str, dict[str, int]]  # labelled verdict -> graded verdict -> count
    verdict_accuracy: float
    strong_recall: float  # share of labelled-strong answers graded strong
    strong_graded_weak: list[str]
    traps_above_weak: list[str]
    disagreements: list[tuple[str, str, bool, bool]]  # (answer id, element, label, graded)

    def meets_goals(self) -> list[str]:
        """The goals this evaluation misses (empty when it meets them all)."""
        miss = [f"{e} accuracy {m['accuracy']:.2f} < {GOALS['element']}" for e, m in self.per_element.items()
                if m["accuracy"] < GOALS["element"]]
        if self.verdict_accuracy < GOALS["verdict"]:
            miss.append(f"verdict accuracy {self.verdict_accuracy:.2f} < {GOALS['verdict']}")
        if self.strong_recall < GOALS["strong_recall"]:
            miss.append(f"strong graded strong {self.strong_recall:.2f} < {GOALS['strong_recall']}")
        if self.strong_graded_weak:
            miss.append(f"strong graded weak: {self.strong_graded_weak}")
        if self.traps_above_weak:
            miss.append(f"traps above weak: {self.traps_above_weak}")
        return miss


def load_labels(path: str | Path) -> list[dict]:
    """The labelled answers of one file, each with its writer."""
    data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    writer = data.get("writer", "legacy")
    return [{**a, "writer": a.get("writer", writer), "source": Path(path).name} for a in data["answer"]]


def load_corpus(folder: str | Path) -> list[dict]:
    """Every labelled answer in the folder."""
    return [a for p in sorted(Path(folder).glob("*.toml")) for a in load_labels(p)]


def is_trap(a: dict) -> bool:
    """A keyword list, bare chain or recitation: must be graded weak."""
    kind = f"{a.get('trap', '')} {a.get('category', '')}".lower()
    return any(t in kind for t in TRAPS)


def evaluate(answers: list[dict], drills: dict[str, Drill],
             grader: Callable[[Drill, str], object] = grade) -> Evaluation:
    """Grade every labelled answer and compare."""
    counts = {e: {"tp": 0, "fp": 0, "fn": 0, "tn": 0} for e in ELEMENTS}
    confusion = {v: dict.fromkeys(VERDICTS, 0) for v in VERDICTS}
    drill_hits: dict[str, dict[str, list[bool]]] = {}
    strong_weak, traps, disagree = [], [], []
    for a in answers:
        g = grader(drills[a["drill"]], a["text"])
        hits = drill_hits.setdefault(a["drill"], {e: [] for e in (*ELEMENTS, "verdict")})
        for e in ELEMENTS:
            label, got = bool(a["labels"][e]), g.elements[e].present
            counts[e]["tp" if label and got else "fn" if label else "fp" if got else "tn"] += 1
            hits[e].append(label == got)
            if label != got:
                disagree.append((a["id"], e, label, got))
        hits["verdict"].append(a["verdict"] == g.verdict)
        confusion[a["verdict"]][g.verdict] += 1
        if a["verdict"] == "strong" and g.verdict == "weak":
            strong_weak.append(a["id"])
        if is_trap(a) and a["verdict"] == "weak" and g.verdict != "weak":
            traps.append(a["id"])
    n = max(len(answers), 1)
    per = {}
    for e, c in counts.items():
        p = c["tp"] / (c["tp"] + c["fp"]) if c["tp"] + c["fp"] else 1.0
        r = c["tp"] / (c["tp"] + c["fn"]) if c["tp"] + c["fn"] else 1.0
        per[e] = {"precision": p, "recall": r, "accuracy": (c["tp"] + c["tn"]) / n}
    per_drill = {d: {e: sum(v) / len(v) for e, v in h.items()} for d, h in sorted(drill_hits.items())}
    strong = sum(confusion["strong"].values())
    return Evaluation(len(answers), per, per_drill, confusion,
                      sum(confusion[v][v] for v in VERDICTS) / n,
                      confusion["strong"]["strong"] / strong if strong else 1.0, strong_weak, traps, disagree)


def by_writer(answers: list[dict], drills: dict[str, Drill],
              grader: Callable[[Drill, str], object] = grade) -> dict[str, Evaluation]:
    """One evaluation per writer."""
    writers = sorted({a["writer"] for a in answers})
    return {w: evaluate([a for a in answers if a["writer"] == w], drills, grader) for w in writers}


def format_evaluation(ev: Evaluation, drills: bool = False) -> str:
    """The printed report."""
    lines = [f"{ev.n} labelled answers", f"{'element':<10}{'precision':>10}{'recall':>8}{'accuracy':>10}"]
    for e, m in ev.per_element.items():
        lines.append(f"{e:<10}{m['precision']:>10.2f}{m['recall']:>8.2f}{m['accuracy']:>10.2f}")
    lines.append(f"verdict accuracy {ev.verdict_accuracy:.2f}; strong graded strong {ev.strong_recall:.2f}")
    lines.append("verdict confusion (rows: labelled, columns: graded)")
    lines.append(f"{'':<10}" + "".join(f"{v:>9}" for v in VERDICTS))
    for v in VERDICTS:
        lines.append(f"{v:<10}" + "".join(f"{ev.confusion[v][w]:>9}" for w in VERDICTS))
    lines.append(f"strong graded weak: {ev.strong_graded_weak or 'none'}")
    lines.append(f"traps (keyword lists, bare chains, recitations) graded above weak: {ev.traps_above_weak or 'none'}")
    if drills:
        cols = (*ELEMENTS, "verdict")
        lines.append("accuracy per drill")
        lines.append(f"{'drill':<32}" + "".join(f"{c[:9]:>10}" for c in cols))
        for d, m in ev.per_drill.items():
            lines.append(f"{d:<32}" + "".join(f"{m[c]:>10.2f}" for c in cols))
    return "\n".join(lines)


def format_writers(evs: dict[str, Evaluation]) -> str:
    """One row per writer: its size, each element's accuracy, verdicts, strong recall, strong graded weak."""
    head = f"{'writer':<8}{'n':>5}" + "".join(f"{e[:9]:>10}" for e in ELEMENTS) + f"{'verdict':>9}{'strong':>8}" \
        f"{'s->weak':>8}{'traps':>7}"
    lines = [head]
    for w, ev in evs.items():
        lines.append(f"{w:<8}{ev.n:>5}" + "".join(f"{ev.per_element[e]['accuracy']:>10.2f}" for e in ELEMENTS)
                     + f"{ev.verdict_accuracy:>9.2f}{ev.strong_recall:>8.2f}{len(ev.strong_graded_weak):>8}"
                     f"{len(ev.traps_above_weak):>7}")
    return "\n".join(lines)

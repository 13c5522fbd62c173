"""How far the grader is from a second human reading: two blind annotators relabelled a sample of the corpus.

``python tests/benchmarks/grader_agreement.py`` prints, per element and for the verdict, how often the
writer's own label, each annotator's label and the grader's result agree on the same answers. The
annotators (``tests/grader_labels/agreement/``) saw only ``brief/BRIEF.md``, the label definitions and
the texts: 160 answers, 8 drawn at random (seed 20261204) from each writer but U and V. ``brief/BRIEF.md``
holds the ten plan drills only, so the 40 answers to the three token drills were relabelled by two more
blind helpers from ``brief/TOKEN_BRIEF.md`` (each label records its ``brief``). ``--brief BRIEF.md`` or
``--brief TOKEN_BRIEF.md`` restricts the table to the answers labelled from one brief.
"""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from workbench.grading.drills import load_drills  # noqa: E402
from workbench.grading.evaluate import load_corpus  # noqa: E402
from workbench.grading.grader import ELEMENTS, Grade, grade  # noqa: E402

LABELS = ROOT / "tests" / "grader_labels"


def load_annotators(folder: Path = LABELS / "agreement") -> dict[str, dict[str, dict]]:
    """Each annotator's labels by corpus answer id."""
    out = {}
    for path in sorted(folder.glob("annotator_*.toml")):
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        out[str(data["annotator"])] = {x["id"]: x for x in data["label"]}
    return out


class Sample(NamedTuple):
    """The relabelled answers (those whose labels came from ``brief``, or all), with every reading and the grade."""

    ids: list[str]
    corpus: dict[str, dict]
    notes: dict[str, dict[str, dict]]
    graded: dict[str, Grade]


def sample(brief: str | None = None) -> Sample:
    """The answers both annotators relabelled (those labelled from ``brief`` when given), graded once."""
    notes = load_annotators()
    corpus = {a["id"]: a for a in load_corpus(LABELS)}
    drills = load_drills()
    ids = sorted(set.intersection(*(set(n) for n in notes.values())))
    ids = [i for i in ids if brief is None or all(n[i]["brief"] == brief for n in notes.values())]
    return Sample(ids, corpus, notes, {i: grade(drills[corpus[i]["drill"]], corpus[i]["text"]) for i in ids})


def agreement(s: Sample) -> dict[str, dict[str, float]]:
    """{element or 'verdict': {pair name: share of answers on which the pair agrees}}."""
    ids, corpus, notes, graded = s
    table: dict[str, dict[str, float]] = {}
    for e in (*ELEMENTS, "verdict"):
        def writer(i: str, e: str = e):
            return corpus[i]["verdict"] if e == "verdict" else corpus[i]["labels"][e]

        def grader(i: str, e: str = e):
            return graded[i].verdict if e == "verdict" else graded[i].elements[e].present

        readers = {"writer": writer, "grader": grader}
        for name, lab in notes.items():
            readers[f"annotator {name}"] = (lambda i, lab=lab, e=e:
                                            lab[i]["verdict"] if e == "verdict" else lab[i]["labels"][e])
        names = list(readers)
        row = {}
        for a in range(len(names)):
            for b in range(a + 1, len(names)):
                fa, fb = readers[names[a]], readers[names[b]]
                row[f"{names[a]} ~ {names[b]}"] = sum(fa(i) == fb(i) for i in ids) / len(ids)
        table[e] = row
    return table


def against_consensus(s: Sample) -> dict[str, tuple[int, float, float]]:
    """Per element: (answers on which writer and both annotators agree, the grader's accuracy on those, the grader's
    accuracy against the majority of the three readings on every answer). Where three readings agree the label is
    not in doubt, so a grader error there is the grader's own."""
    ids, corpus, notes, graded = s
    out = {}
    for e in ELEMENTS:
        votes = {i: [corpus[i]["labels"][e], *(n[i]["labels"][e] for n in notes.values())] for i in ids}
        agreed = [i for i in ids if len(set(votes[i])) == 1]
        right = sum(graded[i].elements[e].present == votes[i][0] for i in agreed)
        majority = sum(graded[i].elements[e].present == (2 * sum(votes[i]) > len(votes[i])) for i in ids)
        out[e] = (len(agreed), right / len(agreed), majority / len(ids))
    return out


def main() -> None:
    brief = sys.argv[sys.argv.index("--brief") + 1] if "--brief" in sys.argv[:-1] else None
    s = sample(brief)
    n, table = len(s.ids), agreement(s)
    pairs = list(next(iter(table.values())))
    print(f"{n} answers relabelled blind by {len(load_annotators())} annotators"
          + (f" (labels from {brief})" if brief else "") + "; share of answers on which each pair agrees")
    print(f"{'element':<10} " + " ".join(f"{p:>24}" for p in pairs))
    for e, row in table.items():
        print(f"{e:<10} " + " ".join(f"{row[p]:24.3f}" for p in pairs))
    print("\nthe grader against three readings (the writer and two annotators, all blind helpers)")
    print(f"{'element':<10} {'all three agree':>16} {'grader there':>13} {'grader ~ majority':>18}")
    for e, (k, there, majority) in against_consensus(s).items():
        print(f"{e:<10} {k:>10} / {n:<3} {there:13.3f} {majority:18.3f}")


if __name__ == "__main__":
    main()

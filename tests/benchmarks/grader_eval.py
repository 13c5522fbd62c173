"""The grader on the labelled corpus: per writer (leave-one-writer-out), per element, per drill, verdicts.

Run: ``python tests/benchmarks/grader_eval.py [--disagreements WRITER] [--final]``.

The rules are hand-written, so "training" is the set of writers whose disagreements a
developer read while writing them; ``TUNED_ON`` records which. Every other writer's row
is a left-out figure: its answers were scored, never read for tuning. ``FINAL`` is the
writer kept for one score at the end: it is left out of every table unless ``--final``
is given, and the issue note reports the one time it was run. ``NEXT`` writers are stored for
later final scores and left out of everything here.
"""

from __future__ import annotations

import sys
from pathlib import Path

from workbench.grading.drills import load_drills
from workbench.grading.evaluate import by_writer, evaluate, format_evaluation, format_writers, load_corpus

LABELS = Path(__file__).resolve().parents[1] / "grader_labels"
# writers whose disagreements were read while writing the rules
TUNED_ON = ("legacy", "A", "B", "C", "D", "E", "F", "G", "H", "J", "K", "L", "M", "N", "O", "P", "Q", "R", "S", "T",
            "U", "V", "W", "X", "Y", "Z", "AA", "AB", "AC", "AD", "AE", "AF", "AG", "AH", "AI", "AJ", "AK", "AL", "AM",
            "AN", "AO", "AP", "AQ", "AR", "AS", "AT", "AU",
            "AV", "AW", "AX", "AY", "AZ", "BA", "BB", "BC", "BD", "BE", "BF", "BG", "BH", "BI", "BJ", "BK",
            "BL", "BM", "BN", "BO", "BP", "BQ", "BR", "BS", "BT", "BU", "BV",
            "BW", "BX", "BY", "BZ", "CA", "CB", "CC", "CD", "CE", "CF", "CG", "CH", "CI", "CJ", "CK", "CL", "CM",
            "CN", "CO", "CP", "CQ", "CR", "CS", "CT", "CU", "CV", "CW", "CX", "CY", "CZ", "DA", "DB", "DC")
FINAL = "DE"  # held out: never read, never scored; round 34 scores it with DD
NEXT = ("DD",)  # stored for later final scores: out of every table, --final too


def main(argv: list[str]) -> None:
    drills = load_drills()
    corpus = load_corpus(LABELS)
    final = "--final" in argv
    corpus = [a for a in corpus if a["writer"] not in NEXT]
    answers = [a for a in corpus if final or a["writer"] != FINAL]
    writers = by_writer(answers, drills)
    print(f"{len(answers)} labelled answers from {len(writers)} writers; tuned on {', '.join(TUNED_ON)}"
          + ("" if final else f"; writer {FINAL} held back (--final scores it)")
          + (f"; {', '.join(NEXT)} stored for later final scores, left out" if NEXT else ""))
    print(format_writers(writers))
    left_out = [a for a in answers if a["writer"] not in TUNED_ON and a["writer"] != FINAL]
    if left_out:
        print(f"\n== writers never tuned on ({', '.join(sorted({a['writer'] for a in left_out}))}), pooled")
        ev = evaluate(left_out, drills)
        print(format_evaluation(ev, drills=True))
        print("goals missed: " + ("; ".join(ev.meets_goals()) or "none"))
    held = ([] if final else [FINAL]) + list(NEXT)
    print("\n== every writer" + (f" except {' and '.join(held)}" if held else "") + ", pooled")
    ev = evaluate(answers, drills)
    print(format_evaluation(ev, drills=True))
    if final and not any(a["writer"] == FINAL for a in corpus):
        print(f"\n== FINAL: writer {FINAL} is not in the corpus yet: nothing to score")
    elif final:
        ev = evaluate([a for a in corpus if a["writer"] == FINAL], drills)
        print(f"\n== FINAL: writer {FINAL}, scored once\n" + format_evaluation(ev, drills=True))
        print("goals missed: " + ("; ".join(ev.meets_goals()) or "none"))
    if "--disagreements" in argv:
        who = argv[argv.index("--disagreements") + 1]
        if who == FINAL and not final:
            sys.exit(f"writer {FINAL} is the final held-out set; its disagreements are not for tuning")
        for answer, element, label, got in writers[who].disagreements:
            print(f"  {answer:<28}{element:<10} labelled {label!s:<6} graded {got}")


if __name__ == "__main__":
    main(sys.argv[1:])

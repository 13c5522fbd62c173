"""Issue 36's measure: the grader on writers it was never tuned on, pooled and per drill family.

Run: ``python tests/benchmarks/grader_round4.py [--writers AC,AD,...]``.

The held-out writers are the ones ``grader_eval.py`` keeps out of every table (``FINAL`` and ``NEXT``):
their answers were stored unread and are scored here, once per session that reports them. Families: the ten
request-level drills, the three token-level ones, and the two drills written from the concept lexicon
(measured apart, as the issue asks). Gamed answers (``trap = "gamed: ..."``, labelled weak by their writers)
must never be graded above weak.

Goals (issue 36): every element >= 0.93, verdicts >= 0.88, strong recognised >= 0.9, no gamed answer above weak.
"""

from __future__ import annotations

import sys
from pathlib import Path

from workbench.grading.drills import load_drills
from workbench.grading.evaluate import evaluate, load_corpus

sys.path.insert(0, str(Path(__file__).parent))
from grader_eval import FINAL, LABELS, NEXT  # noqa: E402

TOKEN = ("chunked-prefill-ttft", "kv-preemption-storm", "priority-budget-starvation")
NEW = ("spec-decode-acceptance", "tp-allreduce-slow-link")
GOALS = {"element": 0.93, "verdict": 0.88, "strong": 0.9}


def family(drill: str) -> str:
    return "new (concept-built)" if drill in NEW else "token-level" if drill in TOKEN else "request-level"


def line(name: str, answers: list[dict], drills) -> str:
    ev = evaluate(answers, drills)
    gamed = [a for a in answers if "gamed" in a.get("trap", "").lower()]
    above = [a["id"] for a in gamed if a["id"] in ev.traps_above_weak]
    acc = {e: m["accuracy"] for e, m in ev.per_element.items()}
    missed = [e for e, v in acc.items() if v < GOALS["element"]]
    if ev.verdict_accuracy < GOALS["verdict"]:
        missed.append("verdict")
    if ev.strong_recall < GOALS["strong"]:
        missed.append("strong")
    if above:
        missed.append("gamed")
    return (f"{name:<22}{ev.n:>5}" + "".join(f"{acc[e]:>10.2f}" for e in acc) + f"{ev.verdict_accuracy:>9.2f}"
            f"{ev.strong_recall:>8.2f}{len(gamed):>7}{len(above):>7}   {', '.join(missed) or 'all goals met'}"
            + (f"\n{'':<22}gamed above weak: {', '.join(above)}" if above else ""))


def main(argv: list[str]) -> None:
    writers = argv[argv.index("--writers") + 1].split(",") if "--writers" in argv else [FINAL, *NEXT]
    drills = load_drills()
    answers = [a for a in load_corpus(LABELS) if a["writer"] in writers and a["drill"] in drills]
    head = (f"{'':<22}{'n':>5}" + "".join(f"{e[:9]:>10}" for e in ("workload", "mechanism", "artifact", "fix",
                                                                      "owner", "rollback"))
            + f"{'verdict':>9}{'strong':>8}{'gamed':>7}{'>weak':>7}")
    print(f"writers never tuned on: {', '.join(writers)}\n{head}")
    print(line("all", answers, drills))
    for fam in ("request-level", "token-level", "new (concept-built)"):
        part = [a for a in answers if family(a["drill"]) == fam]
        if part:
            print(line(fam, part, drills))
    for w in writers:
        part = [a for a in answers if a["writer"] == w]
        if part:
            print(line(f"writer {w}", part, drills))


if __name__ == "__main__":
    main(sys.argv[1:])

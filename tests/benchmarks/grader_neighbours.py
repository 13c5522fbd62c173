"""How often a drill's answer earns another drill's mechanism: the 'neighbouring drill's answer' trap, over the corpus.

Run: ``python tests/benchmarks/grader_neighbours.py [--writers A,B,...]`` (about 5 minutes on the tuned writers).

Every answer whose writer labelled its mechanism present is graded against every other drill whose mechanism is of
another class; each mechanism it earns there is a false acceptance (the answer is right, for another incident).
Drills of one class are skipped: the shape-drift fallback (average-hides-tail, compiler-runtime-mapping,
precision-win-without-fallback), strict priority (fairness-starvation, priority-budget-starvation) and shared-HBM
contention (fusion-memory-bursts, cost-model-misses-contention). By default the writers the rules were tuned on
(``grader_eval.TUNED_ON``), so the figure is a measure of the rules, not of a held-out set.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

from workbench.grading.drills import load_drills
from workbench.grading.evaluate import load_corpus
from workbench.grading.grader import grade

sys.path.insert(0, str(Path(__file__).parent))
from grader_eval import LABELS, TUNED_ON  # noqa: E402

SAME_CLASS = ({"average-hides-tail", "compiler-runtime-mapping", "precision-win-without-fallback"},
              {"fairness-starvation", "priority-budget-starvation"},
              {"fusion-memory-bursts", "cost-model-misses-contention"})


def same_class(a: str, b: str) -> bool:
    """Are the two drills' mechanisms of one class (an answer to one is a fair answer to the other)?"""
    return any(a in group and b in group for group in SAME_CLASS)


def main(argv: list[str]) -> None:
    writers = set(argv[argv.index("--writers") + 1].split(",")) if "--writers" in argv else set(TUNED_ON)
    drills = load_drills()
    answers = [a for a in load_corpus(LABELS) if a["writer"] in writers and a["labels"]["mechanism"]]
    earned, tried = Counter(), Counter()
    for a in answers:
        for target in drills:
            if target != a["drill"] and not same_class(target, a["drill"]):
                tried[a["drill"], target] += 1
                earned[a["drill"], target] += grade(drills[target], a["text"]).elements["mechanism"].present
    total, n = sum(earned.values()), sum(tried.values())
    print(f"{len(answers)} answers with a labelled mechanism, writers {', '.join(sorted(writers))}")
    print(f"another class's mechanism earned: {total} of {n} gradings ({total / max(n, 1):.1%})")
    for (source, target), k in earned.most_common():
        if k:
            print(f"  {source:32} -> {target:32} {k:3} / {tried[source, target]}")


if __name__ == "__main__":
    main(sys.argv[1:])

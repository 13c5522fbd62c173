"""Grading time of the longest answers: every drill, answers of 5,000, 10,000 and 20,000 characters.

Run: ``python tests/benchmarks/bench_grader.py``. The answers are the labelled corpus's texts run together (prose,
lists, headed sections, pasted configs: the forms the rules read), cut to length, plus three degenerate shapes
(one long word, a soup of rubric terms, one short line repeated). CPU time, best of 3; the goal (issue 36) is
under 0.5 s for 20,000 characters, and the 20,000/2,000 ratio near 10 (linear), never near 100 (quadratic).
"""

from __future__ import annotations

import time
from pathlib import Path

from workbench.grading.drills import load_drills
from workbench.grading.evaluate import load_corpus
from workbench.grading.grader import grade

LABELS = Path(__file__).resolve().parents[1] / "grader_labels"


def best_of(drill, text: str, n: int = 3) -> float:
    best = float("inf")
    for _ in range(n):
        t = time.process_time()
        grade(drill, text)
        best = min(best, time.process_time() - t)
    return best


def main() -> None:
    drills = load_drills()
    corpus = [a["text"] for a in load_corpus(LABELS) if a["writer"] in ("AG", "V", "X")]
    prose = "\n".join(corpus)
    shapes = {"corpus prose": prose, "one word": "a" * 20_000, "term soup": "ttft p99 queue spill owner canary " * 700,
              "one line repeated": "p99 went up.\n" * 2000}
    print(f"{'drill':<32}" + "".join(f"{n:>9}" for n in (2_000, 5_000, 10_000, 20_000)) + "   20k/2k")
    worst = 0.0
    for d in sorted(drills.values(), key=lambda d: d.id):
        times = [best_of(d, prose[:n]) for n in (2_000, 5_000, 10_000, 20_000)]
        worst = max(worst, times[-1])
        print(f"{d.id:<32}" + "".join(f"{t:>8.3f}s" for t in times) + f"{times[-1] / max(times[0], 1e-4):>9.1f}")
    print(f"\nworst drill at 20,000 characters of corpus prose: {worst:.3f} s (CPU, best of 3)")
    d = drills["fusion-memory-bursts"]
    for name, text in shapes.items():
        print(f"{name:<20} 20,000 characters: {best_of(d, text[:20_000]):.3f} s")


if __name__ == "__main__":
    main()

"""The grader against the hand-labelled corpus: its size and spread, and the goals' floor on every answer.

The corpus (``tests/grader_labels/``, see its README) holds answers from writers who never
saw the grader; the rules were tuned on some writers and never read the others' answers.
``tests/benchmarks/grader_eval.py`` prints the per-writer (left-out) figures; this test keeps
the figures on the whole corpus from falling below the issue's goals (every element at 0.9 or
more, workload too since 2026-12-05: 0.913 on the 2,080 answers less AA, AB and AC; until
then its floor was 0.88). The final held-out set (``FINAL``), when
it exists, is counted in the corpus's size but left out of the floors: a test that enforced it would make
whoever fixes a failure tune on it (its one score is in the issue note and in
``grader_eval.py --final``).
"""

from __future__ import annotations

import os
import sys
import tomllib
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from functools import cache
from pathlib import Path

from workbench.grading.drills import load_drills
from workbench.grading.evaluate import GOALS, evaluate, load_corpus
from workbench.grading.grader import grade

sys.path.insert(0, str(Path(__file__).parent / "benchmarks"))
# the held-out writers, set once where the figures are printed: FINAL, never read, never scored; NEXT, stored for
# later final scores (both left out of the floors here)
from grader_eval import FINAL, NEXT  # noqa: E402

LABELS = Path(__file__).parent / "grader_labels"
BELOW_GOAL: dict[str, float] = {}  # elements whose floor is below the goal, with the reason beside it (none now)
# gamed answers graded above weak where the label departs from the corpus's own convention, each with its reason; the
# list can only shrink (a new one fails the test)
LABEL_DISPUTES = {
    # 'a neighbouring scenario with this drill's figures': HBM contention told of the slow-link incident, with its own
    # proof, fix, owner and canary. That is a fluent misdiagnosis, which every other writer labels partial (91 answers
    # with a wrong class and no fix of this drill's are labelled partial, 10 weak), not an answer to another drill;
    # no rule found separates it from them without moving those (read in the twenty-fifth session)
    "CY-tp-allreduce-slow-link-3",
}


def test_the_corpus_is_large_spread_and_labelled_consistently():
    corpus = load_corpus(LABELS)
    drills = load_drills()
    writers = Counter(a["writer"] for a in corpus)
    new = {w: n for w, n in writers.items() if w != "legacy"}
    assert len(corpus) >= 400 and len(new) >= 4 and sum(new.values()) >= 360
    labelled = {d for d in drills if not drills[d].scenario.name.startswith("llm_")}
    assert len(labelled) >= 10
    token = {d for d in drills if drills[d].scenario.name.startswith("llm_")}
    for w in new:  # a writer answers all ten request-level drills, token drills only (H, J, K), or all (AG)
        mine = {a["drill"] for a in corpus if a["writer"] == w}
        assert mine == labelled or (mine and mine <= token) or labelled <= mine <= labelled | token, w
    assert len({(a["writer"], a["id"]) for a in corpus}) == len(corpus)
    for a in corpus:  # the verdict follows from the labels, by the grader's own rule
        core = sum(bool(a["labels"][e]) for e in ("mechanism", "artifact", "owner", "rollback"))
        assert a["verdict"] == ("strong" if core == 4 else "weak" if core <= 1 else "partial"), a["id"]


@cache
def _drills():
    return load_drills()


def _grade_one(job: tuple[str, str]):
    drill, text = job
    return grade(_drills()[drill], text)


def graded_on_every_core(answers: list[dict]):
    """A grader for :func:`evaluate` that looks up grades made beforehand on every core (the corpus is thousands of
    answers; grading is pure, so the grades are the same whichever process makes them)."""
    jobs = [(a["drill"], a["text"]) for a in answers]
    with ProcessPoolExecutor(max_workers=max(1, min(4, os.cpu_count() or 1))) as pool:
        grades = dict(zip(jobs, pool.map(_grade_one, jobs, chunksize=64), strict=True))
    return lambda drill, text: grades[(drill.id, text)]


def test_the_whole_corpus_stays_above_the_goals_floor():
    tuned_and_left_out = [a for a in load_corpus(LABELS) if a["writer"] not in (FINAL, *NEXT)]  # never enforced
    ev = evaluate(tuned_and_left_out, _drills(), graded_on_every_core(tuned_and_left_out))
    for element, m in ev.per_element.items():
        assert m["accuracy"] >= BELOW_GOAL.get(element, GOALS["element"]), (element, m)
    assert ev.verdict_accuracy >= GOALS["verdict"]
    assert ev.strong_recall >= GOALS["strong_recall"]
    assert ev.strong_graded_weak == []
    assert set(ev.traps_above_weak) <= LABEL_DISPUTES, sorted(set(ev.traps_above_weak) - LABEL_DISPUTES)


def test_a_disputed_label_is_graded_as_the_convention_labels_it():
    """Each answer in ``LABEL_DISPUTES`` is graded partial, as the corpus labels a fluent misdiagnosis with its own
    proof, owner and way back: never strong, and still short of the mechanism."""
    disputed = [a for a in load_corpus(LABELS) if a["id"] in LABEL_DISPUTES]
    assert len(disputed) == len(LABEL_DISPUTES)
    for a in disputed:
        g = grade(_drills()[a["drill"]], a["text"])
        assert g.verdict == "partial" and not g.elements["mechanism"].present, a["id"]


def test_the_second_reading_covers_the_same_answers_with_its_brief_recorded():
    corpus = {a["id"]: a for a in load_corpus(LABELS)}
    token = {d for d, x in load_drills().items() if x.scenario.name.startswith("llm_")}
    readings = [tomllib.loads(p.read_text(encoding="utf-8")) for p in sorted((LABELS / "agreement").glob("*.toml"))]
    assert len(readings) == 2
    ids = [{x["id"] for x in r["label"]} for r in readings]
    assert ids[0] == ids[1] and len(ids[0]) == 160 and ids[0] <= set(corpus)
    sampled_before = {FINAL, *NEXT, "U", "V", "W", "X", "Y", "Z", "AA", "AB"}  # drawn before U-AB were written
    assert not {corpus[i]["writer"] for i in ids[0]} & sampled_before
    for r in readings:
        for x in r["label"]:  # each answer labelled from the brief that holds its drill, verdict by the rule
            assert x["brief"] == ("TOKEN_BRIEF.md" if corpus[x["id"]]["drill"] in token else "BRIEF.md"), x["id"]
            core = sum(x["labels"][e] for e in ("mechanism", "artifact", "owner", "rollback"))
            assert x["verdict"] == ("strong" if core == 4 else "weak" if core <= 1 else "partial"), x["id"]

"""Each drill's reference answer, handed in for every other drill: the "correct answer to a different drill" a gamed
candidate submits, in the project's own words (the references are written per drill in ``drills/*.toml``).

A reference states its own chain (the detector reads it in the reference, pasted or not), and graded against a drill
of another mechanism class it earns at most a weak verdict, except the pairs listed below with their reason. Drills of
one class (``mechanism_class``: the shape-envelope drills, the strict-priority pair, the HBM-contention pair) share a
chain by design: an answer to one explains the other's mechanism, and is not checked here.
"""

from __future__ import annotations

from itertools import permutations

from workbench.grading import detectors as det
from workbench.grading.drills import load_drills
from workbench.grading.grader import grade
from workbench.grading.text import norm, segments

D = load_drills()

# (source reference, drill graded): why it still earns more than weak (known misses, not goals)
KNOWN = {
    ("average-hides-tail", "cost-model-misses-contention"): "the reference uses nine of the cost-model prompt's words",
    ("compiler-runtime-mapping", "cost-model-misses-contention"): "eight of its prompt's words: read as a misdiagnosis",
    ("compiler-runtime-mapping", "memory-residency-eviction"): "five of its prompt's words: read as a misdiagnosis",
    ("compiler-runtime-mapping", "recompile-storm"): "the compile drills share their words",
    ("cost-model-misses-contention", "recompile-storm"): "'compiler' and 'the core' read as the recompile chain",
    ("kv-preemption-storm", "cost-model-misses-contention"): "six of its prompt's words: read as a misdiagnosis",
    ("precision-win-without-fallback", "cost-model-misses-contention"): "nine of its prompt's words",
    ("recompile-storm", "compiler-runtime-mapping"): "the compile drills share their words",
    ("tp-allreduce-slow-link", "chunked-prefill-ttft"): "prefill chunks and the first token read as chunking's chain",
}


def test_every_reference_states_its_own_chain():
    for d in D.values():
        segs = segments(d.strong_answer)
        assert det.mechanism(d, segs, [norm(s) for s in segs]).present, d.id


def test_a_reference_handed_in_for_a_drill_of_another_class_earns_at_most_weak():
    above = set()
    for a, b in permutations(D, 2):
        ca, cb = D[a].rubric.mechanism_class or a, D[b].rubric.mechanism_class or b
        if ca != cb and grade(D[b], D[a].strong_answer).verdict != "weak":
            above.add((a, b))
    assert above <= set(KNOWN), sorted(above - set(KNOWN))
    assert len(above) >= len(KNOWN) - 2  # the list is kept current: a pair mended is taken off it

"""The drill grader: does an answer name the mechanism, a proving artifact, an owner and a rollback?

Deterministic and offline: plain text rules, no model, no network, nothing from the
answer is ever executed. For each rubric element it returns present or missing, the
quoted evidence (the sentence or bullet that earned it), or a hint saying what is
missing and one follow-up question that would draw it out (the mock interview asks
them). The element definitions are in :mod:`workbench.grading.detectors`:

* mechanism: this drill's causal chain stated as claims, in the drill's vocabulary or
  its plain-language lexicon, with no credit for bare terms joined by "so" or "->";
* artifact: concrete and reproducible evidence (same seed, replay, per-bucket ...);
* fix: a bounded fix on the drill's fix vocabulary;
* owner: an accountable team, role or person, wherever it stands in a sentence;
* rollback: a way back tied to a condition or a validation gate (a number is not needed);
* workload: the workload and its first failing metric, with a direction or number.

Claims, not keywords (:mod:`workbench.grading.claims`): a line that is a soup of terms, a bare list or
``x = y`` fields earns nothing, an answer of three lines or more with no sentence that claims anything (or a
pasted config dump) earns nothing at all, a cause that only restates the change or its own effect is no step
of the chain, and a fluent answer that states another class's chain about that drill's incident earns
nothing here; each missing element's hint then says why. An analogy counts where the answer maps it onto the
case (:mod:`workbench.grading.analogy`).

Sentences that recite the drill's prompt, pitfalls and takeaways or the card's text
(40% or more of their word 5-grams appear there) earn nothing, and an answer that is
mostly the reference answer pasted back (its figures changed or not) earns nothing at all. The verdict is ``strong``
only when mechanism, artifact, owner and rollback are all present, ``weak`` when at most
one is. The labelled corpus in ``tests/grader_labels/`` uses the same definitions.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from workbench.errors import ConfigError
from workbench.grading import claims, gaming, mimicry, tautology
from workbench.grading import detectors as det
from workbench.grading.artifact import artifact
from workbench.grading.detectors import Element
from workbench.grading.drills import Drill, siblings
from workbench.grading.fix import fix
from workbench.grading.owner import owner
from workbench.grading.text import (
    TEMPLATE_FIELD,
    bare_run,
    content_words,
    disclaimed,
    grams,
    norm,
    quote,
    recited,
    segments,
)
from workbench.grading.workload import workload

ELEMENTS = ("workload", "mechanism", "artifact", "fix", "owner", "rollback")
CORE = ("mechanism", "artifact", "owner", "rollback")
WEIGHTS = {"workload": 10, "mechanism": 30, "artifact": 20, "fix": 10, "owner": 15, "rollback": 15}
MAX_CHARS = 20_000
OTHER_MAX = 6_000  # characters: longer answers are not checked for answering another drill

CARD_TEXT = """Compiler-runtime mapping defines how static optimization and dynamic control cooperate. The compiler
captures graph-level transforms such as fusion, layout selection, and initial placement, producing executable plans
tuned for expected workload envelopes. The runtime then adapts launch parameters, stream priorities, and memory
residency as live traffic and input shape distributions drift. High-performing systems expose feedback loops where
runtime telemetry informs compiler heuristics, reducing mismatch between offline assumptions and production behavior.
Closed-loop mapping report combining offline compile profiles with runtime telemetry and retuning actions.
Defines workload and first failing mechanism. Proposes bounded fix + owner + rollback-safe validation.
Gives generic optimization ideas without mechanism proof or ownership. Scheduling quality decides whether
architecture headroom reaches product throughput. Tie every accelerator claim to a reproducible workload slice and
one primary metric trend. Prefer bounded fixes with clear owner and rollback boundary over broad tuning bundles.
A strong answer on Compiler-Runtime Mapping names the workload symptom, explains mechanism, and proposes one
measurable validation plan. Then it identifies owner and fallback action if the proposed fix under-delivers. The goal
is practical engineering reasoning, not keyword listing. Inspect tail first, not average. Check fairness across
streams. Validate fusion against memory constraints. Which first-principles bottleneck class explains the symptom,
and what artifact proves it reproducibly?"""


@dataclass(frozen=True)
class Grade:
    """The grader's result for one answer."""

    drill: str
    verdict: str  # strong | partial | weak
    score: int  # 0-100
    elements: dict[str, Element]

    def to_json(self) -> dict:
        """The ``--json`` form."""
        return {"drill": self.drill, "verdict": self.verdict, "score": self.score,
                "elements": {k: {"present": e.present, "evidence": e.evidence, "hint": e.hint,
                                 "question": e.question} for k, e in self.elements.items()}}

    def follow_ups(self) -> list[tuple[str, str]]:
        """(element, question) for each missing core element, in the order a reviewer would ask them."""
        return [(k, self.elements[k].question) for k in CORE if not self.elements[k].present]


def check_answer(raw: bytes | str) -> str:
    """Refuse binary, non-UTF-8 or oversized answers with a clear message; return the text."""
    if isinstance(raw, bytes):
        if b"\x00" in raw:
            raise ConfigError("answer", f"{len(raw)} bytes", "looks binary (NUL bytes); give plain UTF-8 text")
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise ConfigError("answer", f"byte {e.start}", "is not UTF-8 text") from None
    if len(raw) > MAX_CHARS:
        raise ConfigError("answer", f"{len(raw)} characters", f"is longer than {MAX_CHARS} characters")
    return raw


CARD_GRAMS = grams(CARD_TEXT)


def _elements(segs: list[str], norms: list[str], drill: Drill, stuffed: bool,
              argued: bool = False) -> dict[str, Element]:
    mechanism = det.mechanism(drill, segs, norms)
    return {"workload": workload(segs, norms, drill, stuffed, mechanism.present), "mechanism": mechanism,
            "artifact": artifact(segs, norms, drill, stuffed), "fix": fix(segs, norms, drill, stuffed, argued),
            "owner": owner(segs, norms, stuffed), "rollback": det.rollback(segs, norms, stuffed, drill)}


_LABELLED = re.compile(r"^\W*[a-z][a-z /&-]{0,30}:")


_VERB = re.compile(r"(?<![a-z-])(?:[a-z]+(?<!e)ed|is|are|was|were|has|have|had|does|did|owns|fixes|goes|went|runs|sits|"
                   r"takes|gives|causes|makes|gets|got|needs|waits|queues|spills|stalls)(?![a-z])")


def _term(n: str) -> bool:
    """A 'sentence' of one to three words with no label and no verb ('skew.', 'hot core.', 'replay same seed.'),
    not 'owner: runtime team' nor 'p99 doubled.'"""
    return content_words(n) <= 3 and not _LABELLED.match(n) and not _VERB.search(n)


def _argued(n: str) -> bool:
    """A sentence that argues: a dozen content words or more, with a verb, not a chain of terms joined by arrows
    (figures may be: 'p99 went 1.4 -> 4.5 ms')."""
    return content_words(n) >= 12 and bool(_VERB.search(n)) and not re.search(r"[a-z%)]\s*(?:->|→|=>)\s*[a-z(]", n)


def graded(drill: Drill, elements: dict[str, Element]) -> Grade:
    """The verdict and score of a set of element results: strong when every core element (mechanism, artifact,
    owner, rollback) is present, weak when at most one is; the score weighs all six."""
    core = sum(elements[k].present for k in CORE)
    verdict = "strong" if core == len(CORE) else "weak" if core <= 1 else "partial"
    score = sum(WEIGHTS[k] for k, e in elements.items() if e.present)
    return Grade(drill.id, verdict, score, elements)


def grade(drill: Drill, answer: str) -> Grade:
    """Grade an answer to a drill (deterministic, linear in the answer's length)."""
    answer = check_answer(answer)
    shared = CARD_GRAMS | grams(" ".join([drill.prompt, drill.title, *drill.debug_branches, *drill.pitfalls,
                                          drill.senior_review_question, *drill.takeaways]))
    references = grams(drill.strong_answer, figures=False) | grams(drill.weak_answer, figures=False)
    pasted = recited(answer, references, figures=False)  # the reference answer pasted back, whole, any figures
    segs = [] if pasted else [s for s in segments(answer) if not recited(s, shared)]
    norms = [disclaimed(norm(s)) for s in segs]
    # (a line or two is judged line by line below: 'Who owns it? The ML compiler team.' is an answer)
    # (filler and a JSON record are read in one sentence too)
    claimless = gaming.record(answer) or mimicry.management_speak(answer) or mimicry.contents(answer) or \
        len(segs) >= 3 and (
                                    not any(claims.claims_something(n) for n in norms)
                                    or gaming.config_dump(segs, norms) or gaming.self_graded(norms)
                                    or gaming.shotgun(answer) or gaming.cites_away(answer)
                                    or gaming.glossary(answer) or gaming.verse(answer)
                                    or gaming.hollow_template(segs, norms) or gaming.code_only(answer)
                                    or gaming.acrostic(segs) or gaming.questions_only(segs)
                                    or gaming.haiku(answer) or gaming.query(segs)
                                    or mimicry.commit_log(segs, norms) or mimicry.self_interview(answer)
                                    or mimicry.tool_log(answer) or mimicry.truisms(answer)
                                    or mimicry.element_recital(answer) or mimicry.hypothetical(answer, norms)
                                    or mimicry.conditional_menu(answer)
                                    or mimicry.another_setup(answer, _facts(drill))
                                    or mimicry.reworded_reference(answer, _facts(drill),
                                                                  _reference_stems(drill.strong_answer)))
    if not segs or claimless:
        # each element's own hint and question, the first hint saying why nothing was found
        empty = ("the answer is empty" if not answer.strip() else "no sentence in the answer claims anything (terms, "
                 "lists, 'x = y' fields, a menu of causes or verdicts on itself); say what happens to what, and "
                 "why, in sentences"
                 if claimless
                 else "the answer only restates the drill or the card")
        elements = _elements([], [], drill, False)
        first = elements[ELEMENTS[0]]
        elements[ELEMENTS[0]] = Element(False, "", f"{empty}; {first.hint}", first.question)
    else:
        # lines that claim nothing (a soup of terms, a bare list, 'x = y' fields) earn nothing, whatever they hold;
        # an answer made mostly of them or of bare term runs is keyword-stuffed: its run lines earn nothing; a list
        # of terms split into one- to three-word 'sentences' ('Static placement. Skew. Hot core. ...') is one such
        # run, unless a sentence beside them argues ('87% of requests ... so its queue wait explodes ...', then
        # 'Least-loaded dispatch. Runtime team.': a senior's shorthand); a term line never argues
        fielded = claims.assigned(norms)
        kinds = [claims.degenerate(n) or ("fields" if fielded and claims.field_line(n) else None) for n in norms]
        runs = sum(bool(k) or bare_run(n) for n, k in zip(norms, kinds, strict=True))
        dropped = [(s, k) for s, k in zip(segs, kinds, strict=True) if k]
        segs = [s for s, k in zip(segs, kinds, strict=True) if not k]
        norms = [n for n, k in zip(norms, kinds, strict=True) if not k]
        terms = [_term(n) for n in norms]
        argued = any(_argued(n) for n in norms)
        stuffed = runs >= 0.5 * (len(norms) + len(dropped)) or (
            len(norms) >= 5 and sum(terms) >= 0.6 * len(norms) and not argued)
        if stuffed:
            segs, norms = [s for s, t in zip(segs, terms, strict=True) if not t], [n for n, t in zip(
                norms, terms, strict=True) if not t]
        elements = _elements(segs, norms, drill, stuffed, argued)
        crammed = _crammed_soup(segs, norms, elements)
        if crammed is not None:  # four elements or more from one sentence in a soup's grammar: read again without it
            dropped.append((segs.pop(crammed), "soup"))
            norms.pop(crammed)
            elements = _elements(segs, norms, drill, stuffed, argued)
        # (an answer to another incident is answer-sized: past OTHER_MAX characters the check is left out, which keeps
        # grading linear and fast on the longest answers)
        other, misdiagnosed = (None, False) if elements["mechanism"].present or len(answer) > OTHER_MAX else \
            _answers_another(drill, segs, norms)
        if misdiagnosed:  # another class's chain told of this incident: a wrong mechanism, and a fix for that chain
            elements["fix"] = Element(False, "", f"this fixes another incident's cause ('{other.title}'); "
                                                 f"{elements['fix'].hint or 'propose a fix for this incident'}",
                                      elements["fix"].question)
        elif other is not None:  # a fluent answer to another incident earns nothing here
            why = (f"this explains another incident ('{other.title}'), not this one; answer the drill's own "
                   "symptom and change")
            elements = {k: Element(False, "", why if k == "mechanism" else e.hint, e.question)
                        for k, e in elements.items()}
        elif dropped:
            elements = _told(elements, dropped)
    return graded(drill, elements)


def _answers_another(drill: Drill, segs: list[str], norms: list[str]) -> tuple[Drill | None, bool]:
    """The sibling drill of another class whose chain the answer states, when it states none of this drill's; and
    whether the answer tells it of this drill's incident (a misdiagnosis) rather than of the other's."""
    own = drill.rubric.mechanism_class or drill.id
    said = tautology.content_stems(" ".join(norms))
    here = len(said & _prompt_words(drill))
    # an answer that names at most one step of this drill's chain is about something else, whatever words it shares
    elsewhere = det.steps_named(drill, norms) <= 1
    for other in siblings(str(Path(drill.path).parent)):
        # another class's chain, told about that drill's incident (its prompt's words, more of them than this one's):
        # a misdiagnosis of this incident names this one's change and is graded as such
        if other.id == drill.id or (other.rubric.mechanism_class or other.id) == own:
            continue
        theirs, vocabulary = _prompt_words(other), _vocabulary(other)
        told_here = here >= 4 and len(said & theirs) < here  # this incident told in its own prompt's words
        ours, only_theirs = _prompt_words(drill) - vocabulary, theirs - _vocabulary(drill)
        # ... or told in the words only that drill's prompt uses and none that only this one's does (two drills of
        # one pool share 'docs tenant', 'ttft' and 'budget'; 'chunked prefill' is the other's change, 'strict
        # priority' this one's)
        apart = not said & ours and len(said & only_theirs) >= 2 or (
            len(said & only_theirs) >= 3 and len(said & only_theirs) > len(said & ours) and not told_here)
        # ... or, of two drills whose every chain step has a word the other's never uses, names none of this one's in
        # such a word ('split over' and 'first token' are tensor parallelism's words and chunked prefill's too; the
        # compile drills share steps: naming none of this one's own is a misdiagnosis of this incident)
        away = elsewhere or (_steps_apart(tuple(det.steps_of(drill)), vocabulary)
                             and det.steps_named(drill, norms, vocabulary) == 0)
        # (an answer that tells this incident in its prompt's words, four of them or more and more of them than the
        # other's, misdiagnoses it: its other elements are this incident's, but its fix is the other chain's)
        if (apart or len(said & theirs) >= (2 if away and not told_here else 2 * here + 2)) and \
                det.mechanism(other, segs, norms).present:
            return other, False
        if told_here and away and len(said & theirs) >= 2 and det.mechanism(other, segs, norms).present:
            return other, True
    return None, False


@lru_cache(maxsize=64)
def _reference_stems(reference: str) -> frozenset[str]:
    """The content stems of a drill's reference answer, its figures' fields left out."""
    return tautology.content_stems(TEMPLATE_FIELD.sub(" ", reference))


def _facts(drill: Drill) -> dict[str, set[float]]:
    """The quantities the drill's prompt and reference answer state (cores, request rate, buckets, memory, blocks,
    tokens)."""
    return _facts_of(drill.prompt + " " + drill.strong_answer)


@lru_cache(maxsize=64)
def _facts_of(text: str) -> dict[str, set[float]]:
    return mimicry.facts(text)


def _vocabulary(drill: Drill) -> frozenset[str]:
    """Every word a drill's prompt, workload and chain use: what an answer to it may say."""
    return _words(drill.prompt, (*drill.rubric.workload_terms, *(t for step in det.steps_of(drill) for t in step)))


def _prompt_words(drill: Drill) -> frozenset[str]:
    """The distinctive words of a drill's prompt (those no more than a few prompts share are kept by the caller)."""
    return _words(drill.prompt, ())


@lru_cache(maxsize=256)
def _words(prompt: str, terms: tuple[str, ...]) -> frozenset[str]:
    """A prompt's distinctive words and every word of some terms (kept: each sibling's are read for every answer)."""
    return (tautology.content_stems(prompt) - _COMMON) | tautology.content_stems(" ".join(terms))


@lru_cache(maxsize=256)
def _steps_apart(steps: tuple[tuple[str, ...], ...], words: frozenset[str]) -> bool:
    """Does every step have a term with a word not in ``words``?"""
    return all(any(not tautology.content_stems(t) <= words for t in step) for step in steps)


_COMMON = tautology.content_stems("you observe regression in p99 latency of the after was were to and explain root "
                                  "cause release decision while for serving pool stream tenant traffic with from "
                                  "most step token tokens make")


def _crammed_soup(segs: list[str], norms: list[str], elements: dict[str, Element]) -> int | None:
    """The first sentence that is the quote of four elements or more and reads as a soup (:func:`claims.telegraphic`),
    if any."""
    quotes = Counter(e.evidence for e in elements.values() if e.present)
    return next((i for i, (s, n) in enumerate(zip(segs, norms, strict=True))
                 if quotes[quote(s)] >= 4 and claims.telegraphic(n)), None)


def _told(elements: dict[str, Element], dropped: list[tuple[str, str]]) -> dict[str, Element]:
    """Each missing element's hint, led by why the first line that claims nothing was not read."""
    seg, kind = dropped[0]
    why = f"'{quote(seg, 60)}': {claims.KINDS[kind]}; "
    return {k: e if e.present or e.hint.startswith(why) else Element(False, "", why + e.hint, e.question)
            for k, e in elements.items()}

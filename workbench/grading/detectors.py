"""The grader's element detectors: each reads the answer's sentences and returns present or missing,
the quoted sentence that earned it, or what is missing and one question that would draw it out.

Definitions (kept from the grader's first version; the labelled corpus uses the same):

* mechanism -- this drill's causal chain stated as claims: at least ``mechanism_min_steps`` of its
  steps (the drill's vocabulary or its plain-language lexicon), the required ones among them,
  within a few consecutive sentences, joined by causal language; a run of bare terms ("drift so
  fallback so queue so p99", "a -> b -> c", comma lists) earns nothing, and an un-negated wrong
  bottleneck class voids it;
* artifact -- an evidence noun made concrete and reproducible (same seed, replay, per bucket ...) (``artifact.py``);
* fix -- one bounded action on the drill's fix vocabulary, proposed, not a proof, a rollback or a menu (``fix.py``);
* owner -- an accountable team, role or person, wherever it stands in the sentence (``owner.py``);
* rollback -- a way back tied to a condition (if/when/unless/on + a regression, a metric, a canary
  or an SLO; a threshold is optional) or a release held on a validation gate;
* workload -- the workload and its first failing metric, with a direction or a number (``workload.py``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from workbench.grading import analogy, claims, tautology
from workbench.grading.asserted import asserted, first_guesses
from workbench.grading.drills import Drill
from workbench.grading.lexicon import (
    ARGUES,
    CAUSAL,
    CONDITION,
    FIX_LABEL,
    GATE,
    GATE_FIRST,
    HELD,
    ROLLBACK_LABEL,
    TEXTBOOK,
)
from workbench.grading.text import bare_run, has, phrase, quote
from workbench.grading.way_back import tied_way_back, tied_way_backs


@dataclass(frozen=True)
class Element:
    """One rubric element's result: the quoted evidence, or a hint and a follow-up question."""

    present: bool
    evidence: str
    hint: str
    question: str = ""


_CONDITIONS = {"if", "until", "till", "once", "when", "whenever"}


# the chain told backwards: the symptom's rise given as the cause of the steps that produce it ('because p99 went up,
# the queue grew, which made requests miss the buckets')
_BACKWARDS = re.compile(r"(?<![a-z])(?:because|since|as) (?:the )?(?:pooled |overall )?(?:p9\d(?:\.\d)?|tail|latency) "
                        r"(?:\w+ ){0,2}?(?:went up|rose|grew|increased|spiked|jumped|doubled),? (?:so |then )?"
                        r"(?:the )?\w+ (?:\w+ )?(?:grew|rose|built|formed|filled)|"
                        r"(?<![a-z])(?:p9\d(?:\.\d)?|tail|latency) (?:spike|rise|increase|jump)s? "
                        r"(?:causes|caused|forces|forced|makes|made|leads to|led to|drives|drove|triggers|triggered)")


def _linked(window: str, steps) -> bool:
    """Causal language between the first and the last chain step named in the window."""
    spots = [m.start() for step in steps for t in step for m in phrase(t).finditer(window)]  # every mention
    if len(spots) < 2:
        return False
    lo, hi = min(spots), max(spots)
    causes = [m for m in CAUSAL.finditer(window) if lo < m.start() < hi]
    if any(m.group() not in _CONDITIONS for m in causes) or \
            any(lo < m.start(1) < hi for m in _EXPLAINED.finditer(window)):
        return True
    # the 'if' of a rollback or the 'until' of a release gate is a condition on an action, not a cause (the spans are
    # found only when a condition word is all that links the window)
    acts = [m.span() for g in (GATE, GATE_FIRST, HELD) for m in g.finditer(window)] + tied_way_backs(window) \
        if causes else []
    return any(not any(a <= m.start() < b for a, b in acts) for m in causes)


# a colon inside a claim, after a clause of its own (four words or more: not a 'root cause:' label), introduces what
# explains it ('LRU eviction under mixed traffic thrashes: each batch reloads ...')
_EXPLAINED = re.compile(r"(?:[a-z0-9~'-]+ ){3,}[a-z0-9'-]+ ?(:)(?= [a-z])")


# a pasted setting or command ('discipline: wfq  # revert', '$ batcherctl set max_delay_s=0.002'), not a claim
CONFIG_LINE = re.compile(r"^\s*(?:\$\s|[a-z_][a-z0-9_.-]*\s?[:=]\s?(?:\[[^\]]*\]|\{[^}]*\}|[\w.'\"%/-]+)\s*(?:#.*)?$)")


def _unsaid(norms: list[str]) -> list[str]:
    """The sentences with each first guess the answer turns from blanked ('my first instinct was HBM contention
    ..., but no, I don't buy it'): a chain taken back is not claimed."""
    full = " ".join(norms)
    for a, b in first_guesses(full):
        full = full[:a] + " " * (b - a) + full[b:]
    out, at = [], 0
    for n in norms:
        out.append(full[at:at + len(n)])
        at += len(n) + 1
    return out


# a line labelled as another element (a rollback, a release decision, an owner, a proof) makes no claim of the chain
_NOT_A_CLAIM = re.compile(r"^\W*(?:proof|evidence|artifact|artefact|owners?|ownership|rollback|roll back|release|"
                          r"release decision|decision|gate|revert plan|validation|verification)\s*:")

# a proof proposed, not a claim: the quantities it would measure are no steps of the chain ('I'd want the same seed
# replayed with acceptance, tokens per step and TPOT per tenant'), unless it argues as well ('..., because ...')
_PROPOSED_PROOF = re.compile(r"^\W*(?:(?:and|so|then|first),? )?(?:i'?d|i would|we'?d|we would|i'll|we'll|let's) "
                             r"(?:\w+ )?(?:want|like|need|ask for|run|rerun|re-run|replay|compare|pull|dump|plot|grab)"
                             r"(?![a-z])|^\W*to (?:prove|show|confirm|check) (?:it|this|that)(?![a-z])")

_SCENE = re.compile(r"^\W*(?:workload|context|setup|set-up|situation|background|scenario)\s*:")
_ARROW_ONLY = re.compile(r"^[\W_]*(?:v|\^)?[\W_]*$")


def _proposed_proof(n: str) -> bool:
    return bool(_PROPOSED_PROOF.search(n)) and not ARGUES.search(n)


def steps_of(drill: Drill) -> list[tuple[str, ...]]:
    """Each chain step's accepted phrasings: the drill's vocabulary and its plain-language lexicon."""
    r = drill.rubric
    return [step + (r.mechanism_plain[k] if k < len(r.mechanism_plain) else ()) for k, step in
            enumerate(r.mechanism_chain)]


# a step named only as the contrast ('those run faster than the generic fallback did', 'instead of the fallback') is
# not a step the answer claims happened; 'longer than the cost model predicted' compares with the step, it claims it
_CONTRAST = re.compile(r"(?<![a-z])(?:instead of|rather than)\s+(?:the\s+|a\s+|an\s+)?(?:[\w-]+\s+)?$")
_THAN = re.compile(r"(?<![a-z])than\s+(?:the\s+|a\s+|an\s+)?(?:[\w-]+\s+)?$")
_BEFORE_NOW = re.compile(r"(?:\s+[\w-]+){0,2}?\s+(?:did|used to|was|were|had)(?![a-z])")


def _claimed(window: str, step: tuple[str, ...]) -> bool:
    """Is one of the step's phrasings in the window other than as the contrast?"""
    for t in step:
        for m in phrase(t).finditer(window):
            before = window[max(0, m.start() - 40):m.start()]
            if not (_CONTRAST.search(before) or (_THAN.search(before) and _BEFORE_NOW.match(window, m.end()))):
                return True
    return False


def _between(window: str, steps, change: frozenset[str]) -> bool:
    """Does the window claim a step between the change and the symptom: a step named in words other than the change's
    own or a metric's ('ttft', 'p99'), outside a clause that reads a figure's move ('spill 1.1 -> 11.3 mib')?"""
    text = claims.without_readings(window)
    return any(not tautology.restates(w, change) and not tautology.symptom(w) for step in steps for t in step
               for m in phrase(t).finditer(text) for w in [claims.whole(text, m.start(), m.end())])


def steps_named(drill: Drill, norms: list[str], besides: frozenset[str] = frozenset()) -> int:
    """How many of the drill's chain steps the answer names anywhere, in words other than a metric's ('p99') and, when
    ``besides`` holds another drill's words, in a term of which some word is not one of them ('split over' and
    'first token' name a step of tensor parallelism's chain and of chunked prefill's alike)."""
    text = " ".join(norms)
    return sum(any(not tautology.symptom(claims.whole(text, m.start(), m.end())) for t in step
                   if not besides or not tautology.content_stems(t) <= besides
                   for m in phrase(t).finditer(text)) for step in steps_of(drill))


def mechanism(drill: Drill, segs: list[str], norms: list[str]) -> Element:
    r = drill.rubric
    steps = steps_of(drill)
    question = drill.senior_review_question
    change = tautology.change_words(" ".join((drill.prompt, *r.change_terms)))
    # an analogy's nouns read as the things they map to (the case's things: its chain and its workload)
    norms = analogy.mapped(norms, [t for step in steps for t in step] + list(r.workload_terms))
    plain = norms
    norms = [tautology.untautological(n, change) for n in norms]  # the change given as its own cause is no step
    # (a line that sets the scene, 'Workload: the chat pool ..., chunked prefill; ...', names what runs, not a cause)
    causes = " ".join(n for n in norms if not _SCENE.match(n))
    wrong = [t for t in r.rejected_mechanisms if asserted(causes, t)]
    if wrong:
        return Element(False, "", f"'{wrong[0]}' is not the bottleneck class in this scenario; explain the chain "
                                  "that fits what the evidence shows", question)
    # bare terms, settings, textbook definitions and general truths: no argument about this case
    usable = ["" if bare_run(n) or CONFIG_LINE.match(n) or TEXTBOOK.search(n) or _NOT_A_CLAIM.match(n)
              or _proposed_proof(n) else n
              for n in _unsaid(norms)]
    # a diagram's arrow lines ('|', 'v') join its boxes: they are no sentence and take no place in a window
    keep = [i for i, n in enumerate(norms) if not _ARROW_ONLY.match(n)]
    usable, segs = [usable[i] for i in keep], [segs[i] for i in keep]
    best: set[int] = set()
    best_window = ""
    # the steps each sentence names at all: a window is read only for the steps its sentences name (a phrase does not
    # run across a sentence's end), and not at all when it could neither earn the chain nor beat the best so far
    named = [{k for k, step in enumerate(steps) if u and any(phrase(t).search(u) for t in step)} for u in usable]
    for width in (1, 2, 3, 4, 5, 6, 7, 8):
        for i in range(len(usable) - width + 1):
            can = set().union(*named[i:i + width])
            if len(can) < r.mechanism_min_steps and len(can) <= len(best) or not set(r.mechanism_required) <= can \
                    and len(can) <= len(best):
                continue
            if width > 5 and sum(bool(ARGUES.search(u)) for u in usable[i:i + width]) < 2:
                continue  # a paragraph-wide chain argues along the way, not a row of bare readings
            window = " ".join(usable[i:i + width])
            found = {k for k in can if _claimed(window, steps[k])}
            if len(found) > len(best):
                best, best_window = found, window
            if len(found) >= r.mechanism_min_steps and set(r.mechanism_required) <= found and _linked(window, steps) \
                    and not _BACKWARDS.search(window) and _between(window, steps, change):
                return Element(True, quote(" ".join(segs[i:i + width])), "")
    names = r.step_names or tuple(step[0] for step in r.mechanism_chain)
    missing = [k for k in range(len(steps)) if k not in best]
    if best and missing:
        want = [k for k in missing if k in r.mechanism_required] or missing
        k = want[0]
        question = r.step_questions[k] if k < len(r.step_questions) else question
        # what was found, with the words that matched it: the learner sees what was read, not a claim about it
        seen = ", ".join(f"{names[j]} ('{has(best_window, steps[j])}')" for j in sorted(best))
        hint = (f"your answer touches {seen}, but the chain is missing {', '.join(names[j] for j in missing)}; "
                "state it as cause and effect, not as a list of terms")
    elif plain != norms:
        hint = claims.KINDS["tautology"]
    else:
        hint = ("explain the causal chain of this scenario in your own words, step by step, from the change to the "
                "metric; bare terms joined by 'so' or '->' are not a mechanism")
    return Element(False, "", hint, question)


# a labelled trigger is a way back and its condition: 'Rollback trigger: p99 above 2 ms for 10 minutes'
_TRIGGER = re.compile(r"(?<![a-z])(?:roll ?back|revert|abort|kill[- ]switch)[- ]?(?:triggers?|criteria|criterion|"
                      r"conditions?|rules?|signals?)\s?[:=-]\s?(?:[\w%.<>=-]+ ){0,3}?(?:p\d{2}|latency|tail|errors?|"
                      r"slo|ttft|goodput|hit rate|canary|any)")


# a pasted config's automatic way back with its trigger ('auto_revert_if: chat_p99_regression_pct: 5', 'rollback:
# pinned: bf16_plan auto_if: {canary_p99_worse_pct: 5}'), read across the lines it spans
_CONFIG_TRIGGER = re.compile(r"(?<![a-z])(?:auto_|revert_|rollback_|roll_back_)+(?:if|on|when|trigger\w*)\s?:"
                             r"\s*[{\[]?\s*[a-z_]*(?:p\d\d|latency|ttft|error|regress|reload|preempt|slo)")


def _change_off(n: str, drill: Drill | None) -> bool:
    """The drill's own change switched off on a condition ('if TPOT p99 stays above the speculation-off run,
    disable speculation'): the change is the drill's ``revert_terms``; the condition, a CONDITION's. (On a line
    labelled as the fix, 'Fix: stop speculation for a sequence when its acceptance is below 0.5' is the fix's policy,
    not a way back: the caller reads such a line only after its first clause, '...; if the canary is no better,
    disable speculation'.)"""
    terms = drill.rubric.revert_terms if drill is not None else ()
    if not terms or not CONDITION.search(n):
        return False
    change = "(?:" + "|".join(re.escape(t) for t in terms) + ")"
    off = re.compile(r"(?<![a-z])(?:disabl\w*|turn\w* off|switch\w* off|off|stop\w*|drop\w*|remov\w*|kill\w*) "
                     r"(?:the |all |any )?(?:[\w-]+ ){0,2}?" + change + r"(?![a-z])|"
                     # ... or the change between: 'switch speculation off', 'turn the draft model off'
                     r"(?<![a-z])(?:disabl\w*|turn\w*|switch\w*|shut\w*|flip\w*|put\w*) (?:the |all |any )?"
                     r"(?:[\w-]+ ){0,2}?" + change + r"(?: [\w-]+){0,2}? off(?![a-z])|"
                     # ... or the change first: 'speculation goes off on the canary if ...'
                     r"(?<![a-z])" + change + r" (?:goes|gets|is|will go|will be|would go|turns|switches|is turned|"
                     r"is switched|gets turned|gets switched) (?:off|disabled)(?![a-z])|"
                     # ... or said in shorthand after its condition: '..., speculation off.'
                     r"(?:(?<=, )|(?<=; )|(?<= and ))" + change + r" off(?= *(?:[.;]|$| for| until| if| unless| when))")
    return bool(off.search(n))


# a way back on nothing named: 'revert if regresses', 'roll back if it regresses' (a keyword soup's phrase: no metric,
# no canary, no threshold says what regresses; 'if it regresses past baseline' names one)
_VAGUE_REGRESSION = re.compile(r"(?<![a-z])(?:(?:auto-?)?revert|roll ?back|rollback|go back|switch back|flip back)"
                               r"\w*,?[ -](?:if|on|when|whenever)[ -](?:it |things |anything |something )?regress\w*"
                               r"(?! (?:on|in|beyond|past|above|over|by|against|versus|vs)\b)|"
                               # no metric named ('triggered if whichever metric is relevant regresses')
                               r"(?<![a-z])(?:if|when|whenever) (?:whichever|whatever) (?:\w+ ){0,3}?(?:is|are|seems|"
                               r"looks) (?:relevant|appropriate|applicable|important) regress\w*")
# a release held on the diagnosis, not on a validation of the release ('hold until root cause is confirmed')
_ON_DIAGNOSIS = re.compile(r"(?<![a-z])(?:until|till|unless|once)\s+(?:the |we |i )?(?:have |know |find )?(?:the )?"
                           r"(?:root cause|cause|diagnosis|culprit)(?: is| has been| gets)?\s*(?:confirmed|known|found|"
                           r"identified|understood|clear)?[^.;,\n]{0,20}|"
                           # ... or on the regression itself going away ('gated on the regression being resolved')
                           r"(?<![a-z])(?:until|till|unless|once|gated on|on)\s+(?:the |this )?(?:regression|issue|"
                           r"problem)(?: is| being| has been| gets)?\s*(?:confirmed|resolved|fixed|gone|addressed|"
                           r"understood)[^.;,\n]{0,20}|"
                           r"(?<![a-z])(?:until|till|unless|once)\s+(?:it|this|that|the node|the pool) (?:is|gets) "
                           r"no longer regress\w*")


# a rollback line whose condition leads to its way back by an arrow ('Rollback: fcfs kept hot; docs TTFT p99 busts SLO
# in a surge -> flip to fcfs')
_ARROW_BACK = re.compile(r"(?<![a-z])(?:p\d{2}(?:\.\d)?|latency|ttft|tpot|itl|slo|goodput|canary)[^.;]{0,80}? +-> +"
                         r"(?:\w+ ){0,2}?(?:flip|switch|revert|roll|go back|fall back|restore)")


def rollback(segs: list[str], norms: list[str], stuffed: bool, drill: Drill | None = None) -> Element:
    for s, n in zip(segs, norms, strict=True):
        if stuffed and bare_run(n) or n.rstrip().endswith("?"):
            continue  # (a way back asked, 'should we roll back if canary p99 stays above 1.5 ms?', is not planned)
        n = _VAGUE_REGRESSION.sub(" ", _ON_DIAGNOSIS.sub(" ", n))
        if GATE.search(n) or GATE_FIRST.search(n) or HELD.search(n) or tied_way_back(n) or _TRIGGER.search(n) \
                or _change_off(n.partition("; ")[2] if FIX_LABEL.match(n) else n, drill) \
                or (ROLLBACK_LABEL.match(n) and _ARROW_BACK.search(n)):
            return Element(True, quote(s), "")
    config = _CONFIG_TRIGGER.search(" ".join(norms))
    if config and not stuffed:
        key = config.group().split(":")[0].strip()
        return Element(True, quote(next((s for s, n in zip(segs, norms, strict=True) if key in n), segs[0])), "")
    return Element(False, "", "give a way back tied to a condition (e.g. keep the previous plan loaded and revert "
                              "if canary p99 regresses) or hold the release until a named validation passes; "
                              "'we can always roll back' is not a rollback plan",
                   "What is the rollback boundary: what would you go back to, and on what signal?")

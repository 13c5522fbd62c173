"""The grader's element detectors: each reads the answer's sentences and returns present or missing,
the quoted sentence that earned it, or what is missing and one question that would draw it out.

Definitions (kept from the grader's first version; the labelled corpus uses the same):

* mechanism -- this drill's causal chain stated as claims: at least ``mechanism_min_steps`` of its
  steps (the drill's vocabulary or its plain-language lexicon), the required ones among them,
  within a few consecutive sentences, joined by causal language; a run of bare terms ("drift so
  fallback so queue so p99", "a -> b -> c", comma lists) earns nothing, and an un-negated wrong
  bottleneck class voids it;
* artifact -- an evidence noun made concrete and reproducible (same seed, replay, per bucket ...);
* fix -- an action on the drill's fix vocabulary;
* owner -- an accountable team, role or person, wherever it stands in the sentence;
* rollback -- a way back tied to a condition (if/when/unless/on + a regression, a metric, a canary
  or an SLO; a threshold is optional) or a release held on a validation gate;
* workload -- the workload and its first failing metric, with a direction or a number (``workload.py``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from workbench.grading.drills import Drill
from workbench.grading.lexicon import (
    ACTIONS,
    CAUSAL,
    CONDITION,
    EVIDENCE_NOUNS,
    FIX_LABEL,
    FIX_MARKER,
    FIX_QUESTION,
    FIX_STOP,
    GATE,
    GATE_FIRST,
    GENERIC,
    HELD,
    I_OWN,
    LOOK_INTO,
    MAYBE_BACK,
    NAMED,
    NEGATED_BACK,
    NOT_A_FIX,
    NOT_SUBJECT,
    OTHER_LABEL,
    OWNER_CUE,
    OWNER_LABEL,
    OWNER_NOUN,
    OWNER_THAT,
    OWNS,
    PROOF,
    PROPOSES,
    QUALIFIERS,
    READS_SHOWN,
    REVERT_VERB,
    ROLES,
    ROLLBACK_LABEL,
    TRIAL,
    TURNED,
    TURNED_TO,
    VAGUE_WORSE,
    WAY_BACK,
)
from workbench.grading.text import asserted, bare_run, content_words, find, has, links, negated, phrase, quote


@dataclass(frozen=True)
class Element:
    """One rubric element's result: the quoted evidence, or a hint and a follow-up question."""

    present: bool
    evidence: str
    hint: str
    question: str = ""


def _linked(window: str, steps) -> bool:
    """Causal language between the first and the last chain step named in the window."""
    spots = [p for step in steps for p in find(window, step)]
    if len(spots) < 2:
        return False
    lo, hi = min(spots), max(spots)
    return any(lo < m.start() < hi for m in CAUSAL.finditer(window))


# a pasted setting or command ('discipline: wfq  # revert', '$ batcherctl set max_delay_s=0.002'), not a claim
CONFIG_LINE = re.compile(r"^\s*(?:\$\s|[a-z_][a-z0-9_.-]*\s?[:=]\s?(?:\[[^\]]*\]|\{[^}]*\}|[\w.'\"%/-]+)\s*(?:#.*)?$)")


def steps_of(drill: Drill) -> list[tuple[str, ...]]:
    """Each chain step's accepted phrasings: the drill's vocabulary and its plain-language lexicon."""
    r = drill.rubric
    return [step + (r.mechanism_plain[k] if k < len(r.mechanism_plain) else ()) for k, step in
            enumerate(r.mechanism_chain)]


def mechanism(drill: Drill, segs: list[str], norms: list[str]) -> Element:
    r = drill.rubric
    steps = steps_of(drill)
    question = drill.senior_review_question
    full = " ".join(norms)
    wrong = [t for t in r.rejected_mechanisms if asserted(full, t)]
    if wrong:
        return Element(False, "", f"'{wrong[0]}' is not the bottleneck class in this scenario; explain the chain "
                                  "that fits what the evidence shows", question)
    usable = ["" if bare_run(n) or CONFIG_LINE.match(n) else n for n in norms]  # bare terms, settings: no argument
    best: set[int] = set()
    best_window = ""
    for width in (1, 2, 3, 4):
        for i in range(len(usable) - width + 1):
            window = " ".join(usable[i:i + width])
            found = {k for k, step in enumerate(steps) if has(window, step)}
            if len(found) > len(best):
                best, best_window = found, window
            if len(found) >= r.mechanism_min_steps and set(r.mechanism_required) <= found and _linked(window, steps):
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
    else:
        hint = ("explain the causal chain of this scenario in your own words, step by step, from the change to the "
                "metric; bare terms joined by 'so' or '->' are not a mechanism")
    return Element(False, "", hint, question)


def _gate_only(n: str, noun: str) -> bool:
    """Is every mention of the evidence noun inside a release gate ('hold the release until a load test passes')? A
    gate is the rollback's; the artifact proves the mechanism."""
    gates = [m.span() for g in (GATE, GATE_FIRST, HELD) for m in g.finditer(n)]
    spots = [m.start() for m in phrase(noun).finditer(n)]
    return bool(gates) and all(any(a <= x < b for a, b in gates) for x in spots)


def artifact(segs: list[str], norms: list[str], drill: Drill, stuffed: bool) -> Element:
    for s, n in zip(segs, norms, strict=True):
        noun = has(n, EVIDENCE_NOUNS)
        if not noun or (stuffed and bare_run(n)) or _gate_only(n, noun) or (READS_SHOWN.search(n) and
                                                                              not PROPOSES.search(n)):
            continue  # no evidence; only a release gate's; or the evidence shown, read back ('the run shows ...')
        rest = phrase(noun).sub(" ", n, count=1)  # something concrete besides the noun itself
        quals = [q for q in (*QUALIFIERS, *drill.rubric.artifact_terms) if noun not in q.lower()]
        if has(rest, quals):
            return Element(True, quote(s), "")
    return Element(False, "", "name a concrete, reproducible artifact: e.g. the closed-loop mapping report at the "
                              "same seed, a per-bucket/per-stream/per-core breakdown, a replayed trace, or a load "
                              "test at production shapes ('check dashboards' or 'profile it' is not one)",
                   "What artifact proves it reproducibly: which run, at which seed, broken down how?")


_ACTION = re.compile(r"(?<![a-z])(?:" + "|".join(re.escape(a) for a in sorted(ACTIONS, key=len, reverse=True))
                     + r")(?:e?s|e?d|ing|[bdgmnpt](?:ed|ing))?(?![a-z])")  # a verb's forms, not 'scheduler'


_ACTION_FIRST = frozenset(a.split(" ")[0] for a in ACTIONS)
_TO_PROVE = re.compile(r"(?<![a-z])(?:to|and|then) (?:show|prove|confirm|measure|compare|replay|rerun|re-run|watch|"
                       r"monitor)(?![a-z])")  # 'run 2048 to show ...' proposes a proof, not a fix


def fix_words(drill: Drill) -> frozenset[str]:
    """The content words of the drill's fix vocabulary ('buckets', 'envelope', 'max_delay' ...)."""
    words = re.findall(r"[a-z][a-z0-9_'-]{3,}", " ".join(drill.rubric.fix_terms).lower())
    return frozenset(w.rstrip("s") for w in words if w not in FIX_STOP and w.rstrip("s") not in FIX_STOP)


def _names(n: str, words: frozenset[str]) -> bool:
    return any(w.rstrip("s") in words for w in re.findall(r"[a-z][a-z0-9_'-]*", n))


def _acts_on(n: str, words: frozenset[str]) -> bool:
    """An action verb followed, within eight words, by one of the fix words (and not a proof or a watch)."""
    for m in _ACTION.finditer(n):
        if m.group().startswith("fix") or NOT_A_FIX.search(n[max(0, m.start() - 40):m.end() + 40]):
            continue
        after = re.findall(r"[a-z][a-z0-9_'-]*", n[m.end():m.end() + 80])[:8]
        if any(w.rstrip("s") in words for w in after):
            return True
    return False


_NEW_CLAUSE = re.compile(r",? and (?:then )?(?:we|i|they|you) |; |(?:,|;) ?(?:and|but|then) ?$")  # a new clause


# a metric coming back ('if the rerun brings p99 back to 1.5 ms'), not a way back to the old system
_METRIC_BACK = re.compile(r"(?<![a-z])(?:p\d{2}(?:\.\d)?|latency|tail|ttft|itl|tpot|throughput|busy|utili[sz]ation|"
                          r"hit rate)\w* (?:[\w.~%-]+ ){0,2}?(?:back (?:to|down|under|near|within|below)|"
                          r"(?:comes?|came|goes|went|gets?) back)(?![a-z])")


def _tied_way_backs(n: str) -> list[tuple[int, int]]:
    """Spans of the ways back tied to a condition ('revert to WFQ if batch p99 breaches', 'ship on a canary and
    revert if it is worse'), each with its condition: what counts as a rollback, and so never as the fix.

    A condition belongs to one way back, the nearer of its neighbours (the one before it on a tie): in 'switch
    back to WFQ behind a flag and flip it back if batch p99 breaches' the first way back is the fix and only the
    second is tied; in 'flip it off if p99 passes 500 ms, then go back to sharing by weight' the second is the fix.
    A condition that opens a new clause ('..., and if interactive needs more, add a guard'; '..., and we turn it
    on again once the test passes') is not the way back's before it."""
    backs = [(m.start(), m.end()) for m in WAY_BACK.finditer(n)
             if not _METRIC_BACK.search(n, max(0, m.start() - 40), m.end() + 12)]
    spans, claimed = [], set()
    for m in CONDITION.finditer(n):
        c, d = m.start(), m.end()
        over = [w for w in backs if w[0] < d and c < w[1]]  # a way back inside the condition's own words
        left = [w for w in backs if w[1] <= c and c - w[1] <= 160 and not _NEW_CLAUSE.search(n[w[1]:c])]
        right = [w for w in backs if w[0] >= d and w[0] - d <= 160]
        gaps = [(c - w[1], 0, w) for w in left[-1:]] + [(w[0] - d, 1, w) for w in right[:1]]
        for w in over[:1] or [min(gaps)[2] for _ in gaps[:1]]:
            spans.append((min(w[0], c), max(w[1], d)))
            claimed.add(w)
    for a, b in backs:
        if (a, b) not in claimed and VAGUE_WORSE.search(n[max(0, a - 160):b + 160]) and TRIAL.search(n):
            spans.append((a, b))
    return spans


def _tied_way_back(n: str) -> bool:
    return bool(_tied_way_backs(n))


REACH = 20  # characters blanked either side of a tied way back and its condition


def _without_rollbacks(n: str, reach: int = REACH) -> str:
    """The sentence with each tied way back, its condition and ``reach`` characters around them blanked: a sentence
    (or a long unpunctuated answer) may hold the fix beside the rollback ('id bump budget to 2048 ... if the canary
    is worse flip it back', 'switch back to WFQ behind a flag and flip it back if batch p99 breaches')."""
    for a, b in _tied_way_backs(n):
        a, b = max(0, a - reach), min(len(n), b + reach)
        n = n[:a] + " " * (b - a) + n[b:]
    return n


_FIX_NOUN = re.compile(r"(?<![a-z])(?:fix|fixes|solution|remedy|mitigation|to fix|instead|then|and then|after that|"
                       r"meanwhile|ship|recommend)(?![a-z])")


_CLAUSE_END = re.compile(r"[.;]|$")


def _without_gates(n: str) -> str:
    """The sentence with its release gates blanked ('... held back until p99 passes on a replay of prod traffic')."""
    for g in (GATE, GATE_FIRST, HELD):
        for m in list(g.finditer(n)):
            end = _CLAUSE_END.search(n, m.end()).start()  # to the end of the gate's clause
            n = n[:m.start()] + " " * (end - m.start()) + n[end:]
    return n


def _fix_line(n: str, words: frozenset[str]) -> bool:
    """A 'Fix:' line whose terms are actions, one of them a phrase of three words or more on the fix words ('fix:
    rebucket from the observed histogram, +1024 +2048, recompile'), not a list ('Fix: rebucket, recompile, 1024')."""
    if not FIX_LABEL.match(n) or "/" in n:
        return False
    body = re.sub(r"^\s*[a-z /&]{1,30}:\s", " ", n)
    return bool(_ACTION.search(body)) and any(content_words(i) >= 3 and _names(i, words) for i in links(body))


def reverts(n: str, terms: tuple[str, ...]) -> bool:
    """Does the sentence undo the regression's own change, unconditionally ('revert the batcher change', 'go back to
    the old window and cap', 'rolls it back to weighted fair queueing')? The change must be named within the way
    back's reach; 'we can always roll back', 'roll back if needed' and 'instead of flipping back' undo nothing."""
    for m in REVERT_VERB.finditer(n) if terms else ():
        before, after = n[max(0, m.start() - 30):m.start()], n[m.end():m.end() + 30]
        if MAYBE_BACK.search(before) or MAYBE_BACK.search(after) or NEGATED_BACK.search(before):
            continue
        if has(n[max(0, m.start() - 30):m.end() + 60], terms):
            return True
    return False


# a label that ends its line, its content on the next ('Change:' then a config line, 'revert:' then a command)
_LABEL_ALONE = re.compile(r"(?<![a-z])(?:fix|fixes|change|changes|mitigation|remedy|solution|proposed fix|revert)"
                          r"\s*:\s*$")
# an escape hatch kept open, not a change proposed ('we could always roll back to the 64 GiB parts')
_ESCAPE_HATCH = re.compile(r"(?:can|could) always (?:just )?(?:roll|revert|go|switch|flip|move|fall)")
_DECISION_LABEL = re.compile(r"^\s*(?:release decision|release|decision)\s*:")


def _other_fix(n: str, drill: Drill) -> bool:
    """Does the sentence propose only the fix of another mechanism: a rejected mechanism's remedy ('add cores') or one
    of the drill's rejected fixes ('least-loaded dispatch' for a compile stall), with no fix of this drill's?"""
    r = drill.rubric
    rejected = [t for t in (*r.rejected_mechanisms, *r.rejected_fixes) if has(n, [t]) and not negated(n, t)]
    return bool(rejected) and not has(n, r.fix_terms + r.fix_plain)


def unbounded(body: str, drill: Drill) -> bool:
    """Does the proposal only turn one of the drill's settings of degree one way, with no value, no setting to go back
    to and no named alternative beside it ('fix: lower max_delay_s', 'a bigger budget', 'fuse more')? Then it is
    not bounded: 'to what?' is unanswered (``brief/LABELING.md``: 'revert max_delay to 2 ms' is bounded)."""
    knobs = drill.rubric.fix_knobs
    if not knobs or TURNED_TO.search(body) or WAY_BACK.search(body):
        return False
    if not any(TURNED.search(" ".join(body[:m.start()].split()[-3:]) + " | " + " ".join(body[m.end():].split()[:2]))
               for k in knobs for m in phrase(k).finditer(body)):
        return False
    alternatives = [t for t in (*drill.rubric.fix_terms, *drill.rubric.fix_plain)
                    if not TURNED.search(t) and not any(phrase(k).search(t) for k in knobs)]
    return not has(body, alternatives)  # 'lower the fusion level to elementwise' names where it goes


def fix_sentence(s: str, n: str, drill: Drill, words: frozenset[str], asked: bool = False) -> bool:
    """Does this one sentence propose a bounded fix on the drill's fix vocabulary (the rule, sentence by sentence)?
    ``asked``: it answers the answer's own question heading ('What's the fix?'), which labels it as a 'Fix:' would."""
    if ROLLBACK_LABEL.match(n) or OTHER_LABEL.match(n):
        # a decision may be the fix itself when it undoes the change ('decision: revert to WFQ; ...'); a rollback
        # line never is
        return bool(_DECISION_LABEL.match(n)) and reverts(_without_rollbacks(n), drill.rubric.revert_terms)
    if PROOF.search(_without_gates(n)) and not _FIX_NOUN.search(n):
        return False  # it proposes evidence ('I'd get a same-seed run of ...'), and names no fix
    if bare_run(n) and not _fix_line(n, words):
        return False
    if _other_fix(n, drill):
        return False
    if _tied_way_back(n):  # the conditional way back is the rollback's; what else the sentence proposes may be the fix
        n = _without_rollbacks(n)
    body = re.sub(r"^\s*[a-z /&]{1,30}:\s", " ", n)  # past a 'Fix:' label, which is no action by itself
    if content_words(body) < 2 or unbounded(body, drill):
        return False
    terms = drill.rubric.fix_terms + drill.rubric.fix_plain
    if (asked or FIX_LABEL.match(n)) and (has(n, terms) or _names(n, words)):  # a config key may name it
        return True  # "fix: max_delay back to 2 ms", "fix: least-loaded dispatch"
    term = has(body, terms)
    if term and not negated(body, term):
        m = phrase(term).search(body)
        at = m.start()
        # an action on the fix itself, not a proof that mentions it; the term's own words are no action ('weighted
        # fair queueing' names the fix, it does not propose it)
        first = term.strip().lower().split(" ")[0]
        verb = first in ACTIONS  # a term that is itself an action ('add buckets', 'recompile'), unlike 'weighted ...'
        near = body[max(0, at - 60):at + 60] if verb else body[max(0, at - 60):at] + " | " + body[m.end():at + 60]
        if (_ACTION.search(near) or FIX_MARKER.search(near)) and not (
                NOT_A_FIX.search(body[max(0, at - 60):at]) or _TO_PROVE.search(body[at:at + 40]) or
                _ESCAPE_HATCH.search(body[max(0, at - 60):at])):
            return True
    if reverts(n, drill.rubric.revert_terms):  # undoing the change that caused it, not tied to a condition
        return True
    # a proposal ("fix:", "I'd", "we should", an imperative) whose verb acts on this drill's fix words
    first = body.strip().split(" ")[0]  # an imperative opens on the verb's plain form ('add', not 'fused attention')
    proposed = FIX_MARKER.search(n) or (first in _ACTION_FIRST and _ACTION.match(body.strip()))
    return bool(proposed and _acts_on(body, words))


def fix(segs: list[str], norms: list[str], drill: Drill, stuffed: bool) -> Element:
    words = fix_words(drill)
    for i, (s, n) in enumerate(zip(segs, norms, strict=True)):
        asked = i > 0 and bool(FIX_QUESTION.match(norms[i - 1]) or _LABEL_ALONE.search(norms[i - 1]))
        if fix_sentence(s, n, drill, words, asked=asked):
            return Element(True, quote(s), "")
    return Element(False, "", "propose one bounded fix for this mechanism: what you would change, and to what (a "
                              "number, or the setting before the change), and why it moves the metric",
                   "What is the one bounded change you would ship first, and what would it change in the numbers?")


_POSSESSIVE_OWN = re.compile(r"(?<![a-z])(?:its|their|his|her|our|my|your) own(?![a-z])")  # 'on its own core'


def _owner_in(s: str, n: str) -> bool:
    n = _POSSESSIVE_OWN.sub(" ", n)  # 'its own' names no owner
    strong = I_OWN.search(n) or OWNER_LABEL.search(n) or re.search(r"own|accountab|responsib|dri\b|sign", n)
    if LOOK_INTO.search(n) and not strong and not ROLES.search(n):  # a named role may be asked to look
        return False  # "the infra folks should look into it" is advice, not an owner
    cue = OWNER_CUE.search(n) or content_words(n) <= 6  # a team named on its own line is an assignment
    for m in OWNER_NOUN.finditer(n):
        words = [w for w in m.groups() if w]
        acts = re.match(r" (?:(?!is |was |has |does )[a-z]+s|have) ", n[m.end():])  # the subject: 'the team adds'
        if (cue or acts) and words and words[-1] not in GENERIC and words[0] not in ("someone", "somebody"):
            return True
    if OWNER_THAT.search(n):
        return True
    for m in OWNS.finditer(n):
        subject = m.group(1).split()
        if not set(subject) & NOT_SUBJECT and subject[-1] not in GENERIC:
            return True
    if re.search(r"(?<![a-z])(?:someone|somebody|whoever)(?![a-z])", n) and not ROLES.search(n):
        return False
    return bool(ROLES.search(n) or I_OWN.search(n) or OWNER_LABEL.search(n) or
                (NAMED.search(s) and re.search(r"own|accountable|drive|sign|lead|responsib|assign|on the hook|ask", n)))


def owner(segs: list[str], norms: list[str], stuffed: bool) -> Element:
    for s, n in zip(segs, norms, strict=True):
        if not (stuffed and bare_run(n)) and _owner_in(s, n):
            return Element(True, quote(s), "")
    return Element(False, "", "name who is accountable: a team, role or person (e.g. the ML compiler team, the "
                              "serving on-call); 'someone' or 'the team should' is not an owner",
                   "Who owns the fix, and who signs off on the release?")


def rollback(segs: list[str], norms: list[str], stuffed: bool) -> Element:
    for s, n in zip(segs, norms, strict=True):
        if stuffed and bare_run(n):
            continue
        if GATE.search(n) or GATE_FIRST.search(n) or HELD.search(n) or _tied_way_back(n):
            return Element(True, quote(s), "")
    return Element(False, "", "give a way back tied to a condition (e.g. keep the previous plan loaded and revert "
                              "if canary p99 regresses) or hold the release until a named validation passes; "
                              "'we can always roll back' is not a rollback plan",
                   "What is the rollback boundary: what would you go back to, and on what signal?")

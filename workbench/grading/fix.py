"""The fix element: one bounded change on this drill's fix vocabulary, proposed (not a proof, a rollback or a menu).

A fix counts when a sentence proposes an action on the drill's fix terms (its jargon or its plain-language phrasings),
or undoes the regression's own change where the drill says so (``revert_terms``). It does not count when the sentence
only proves, watches or recites; when its way back is tied to a condition (that is the rollback); when it names a
neighbouring mechanism's remedy; when it keeps things as they are while a change is tried; or when it turns one of the
drill's settings of degree (``fix_knobs``) one way with no value, nothing to go back to and no named alternative.
"""

from __future__ import annotations

import re

from workbench.grading.detectors import Element
from workbench.grading.drills import Drill
from workbench.grading.fix_bounds import proposes_none, reverts, unbounded
from workbench.grading.fix_forms import CONFIG_CHANGE, LABEL_ALONE, base_forms, by_pronoun, canaried, gerunds, sweep
from workbench.grading.lexicon import (
    ACTIONS,
    CONDITION,
    FIX_LABEL,
    FIX_MARKER,
    FIX_QUESTION,
    FIX_STOP,
    GATE,
    GATE_FIRST,
    HELD,
    NOT_A_FIX,
    OTHER_LABEL,
    PROOF,
    ROLLBACK_LABEL,
)
from workbench.grading.owner_words import ORG
from workbench.grading.text import bare_run, content_words, has, links, negated, phrase, quote
from workbench.grading.way_back import tied_way_back, without_rollbacks

_FORMS = r"(?:e?s|e?d|ing|[bdgmnpt](?:ed|ing))?"  # a verb's forms, not 'scheduler'


def _verb(a: str) -> str:
    """An action's pattern, its first word in any form ('turns on', 'moved to')."""
    first, _, rest = a.partition(" ")
    return re.escape(first) + (_FORMS + " " + re.escape(rest) + r"(?![a-z])" if rest else "")


_ACTION = re.compile(r"(?<![a-z])(?:" + "|".join(_verb(a) for a in sorted(ACTIONS, key=len, reverse=True))
                     + r")" + _FORMS + r"(?![a-z])")


_ACTION_FIRST = frozenset(a.split(" ")[0] for a in ACTIONS)
# 'run 2048 to show ...', '... on 64 and 32 GiB and compare ...' propose a proof, not a fix ('bump the budget to 2048
# and rerun' proposes the fix, then its check)
_TO_PROVE = re.compile(r"(?<![a-z])(?:(?:to|then) (?:show|prove|confirm|measure|compare|replay|rerun|re-run|watch|"
                       r"monitor)|and (?:show|prove|confirm|measure|compare|watch|monitor))(?![a-z])")


def fix_words(drill: Drill) -> frozenset[str]:
    """The content words of the drill's fix vocabulary ('buckets', 'envelope', 'max_delay' ...)."""
    words = re.findall(r"[a-z][a-z0-9_'-]{3,}", " ".join(drill.rubric.fix_terms).lower())
    return frozenset(w.rstrip("s") for w in words if w not in FIX_STOP and w.rstrip("s") not in FIX_STOP)


def _names(n: str, words: frozenset[str]) -> bool:
    return any(w.rstrip("s") in words for w in re.findall(r"[a-z][a-z0-9_'-]*", n))


# a clause of consequence or reason: 'int8 buckets stop at 512, so prompts miss and run the generic path'
# a past action of a thing is what happened ('the benchmark used short prompts so everything hit the int8 buckets'),
# a past action of a person or a team may be the fix told as a story ('the compiler team's owner added 2048 buckets')
_THING_DID = re.compile(r"(?<![a-z])[a-z]+(?:ed|s)(?![a-z])")
_PEOPLE = frozenset(("i", "we", "they", "he", "she", "you", "team", "teams", "owner", "owners", "folks", "lead",
                     "platform", "infra", "ops", "squad", "group", "org",
                     "engineer", "engineers", "sre", "sres", "on-call", "oncall", "who", "someone", "somebody",
                     "manager", "people", "and", "then", "also", "just", "already", "have", "has", "had", "be",
                     "been", "get", "got", "should", "would", "could", "must", "will", "to"))


_BY_ORG = re.compile(r"(?<![a-z])" + ORG + r"\s$")  # 'serving runtime switches placement to least-loaded'


def _things_did(lead: str) -> str:
    """``lead`` with the past or present actions of things blanked (the word before the verb is not a person)."""
    def blank(m: re.Match) -> str:
        before = lead[:m.start()].split()
        if _ACTION.fullmatch(m.group()) and (not before or before[-1] not in _PEOPLE) and not _BY_ORG.search(
                lead[:m.start()]):
            return " " * len(m.group())
        return m.group()
    return _THING_DID.sub(blank, lead)


_PREDICTS = re.compile(r"(?<![a-z])(?:should|would|will|ought to) (?:then )?(?:show|see|read|give|drop|look|stay|"
                       r"come|have|fall|return|get|go|match|sit|recover|be (?:zero|fine|ok|okay|back|near|under|"
                       r"below|gone|around|about|roughly|within|\d))(?![a-z])")  # not 'should be built
_CAUSE_BREAK = re.compile(r", so |,? (?:because|since|hence|thus|whereas) ")
_CONSEQUENCE = re.compile(r",? (?:so|because|since|which|hence|thus|whereas|while) |$")


def _acts_on(n: str, words: frozenset[str]) -> bool:
    """An action verb followed, within eight words, by one of the fix words (and not a proof or a watch)."""
    for m in _ACTION.finditer(n):
        if m.group().startswith("fix") or NOT_A_FIX.search(n[max(0, m.start() - 40):m.end() + 40]):
            continue
        after = n[m.end():m.end() + 80]
        after = after[:_CONSEQUENCE.search(after).start()]  # not past 'so'
        if re.match(r" (?:it|this|that|them)\b ?(?:[,;]|behind |on a |as a |to a )", after):
            continue  # 'ship it, the gate passed', 'ship it behind the fusion flag': the verb's object is 'it'
        if re.match(r" (?:nothing|none|no)(?![a-z])", after):
            continue  # 'ship nothing with 320 blocks': a negative object proposes nothing
        after = re.findall(r"[a-z][a-z0-9_'-]*", after)[:8]
        if any(w.rstrip("s") in words for w in after):
            return True
    return False


_FIX_NOUN = re.compile(r"(?<![a-z])(?:fix|fixes|solution|remedy|mitigation|to fix|instead|then|and then|after that|"
                       r"meanwhile|ship|recommend)(?![a-z])")


_AUX = re.compile(r"(?<![a-z])(?:should|must|to|be|been|get|gets|will|need|needs|can|could|would|we|i|you|they)\s"
                  r"(?:\w+\s)?$")


def _acted(after: str) -> str:
    """What follows a fix noun, kept only where it acts on it: a participle ('buckets 1024 and 2048 added') or a verb
    after a modal or a subject ('int8 buckets should be built', 'WFQ, which we restore'); a verb of which the noun is
    the subject ('int8 buckets stop at 512') describes it."""
    for m in _ACTION.finditer(after):
        if m.group().endswith("ed") or (m.group() in ACTIONS and _AUX.search(after[:m.start()])):
            return after
    return " ".join(w for w in after.split() if not _ACTION.fullmatch(w.strip(".,;:!?()'\"")))


_CALLED_THE_FIX = re.compile(r"(?:(?<![a-z])is|(?<![a-z])be|'s) (?:the|my|our)(?: real| actual| right| proper| whole)? "
                             r"(?:fix|remedy|solution)(?![a-z])|"
                             # 'the sensible middle ground is bigger portions, 2,048 rather than 512'
                             r"(?<![a-z])the (?:sensible|right|best|obvious|safe|cheapest|simplest) (?:middle ground|"
                             r"answer|move|option|choice|call|thing to do|first step) is(?![a-z])|"
                             # 'Better is least-loaded dispatch', 'the better way is ...' (opening its sentence)
                             r"^\W*(?:(?:much|far|the|a) )?(?:better|best)(?: (?:option|way|choice|move|approach))? is"
                             r"(?! not)(?![a-z])")
_CLAUSE_END = re.compile(r"[.;]|$")
# what stays as it is while a change is tried ('keep the 64 GiB pool serving until the canary is clean'): no change
_AS_IS = re.compile(r"(?<![a-z])(?:keep|keeps|keeping|leave|leaves|leaving|stay|stays|staying) (?:on )?"
                    r"(?:[\w.'-]+ ){0,5}?(?:serving|running|live|in service|in place|as it is|as is|until|till|while|"
                    r"carrying|taking|handling)"
                    r"(?![a-z])|"
                    # the old plan kept as the way back ('keep the old elementwise plan pinned and revert to it if ...')
                    r"(?<![a-z])keep\w* (?:the |our )?(?:old|previous|current|prior|existing) (?:[\w,.-]+ ){0,2}?"
                    r"(?:plan|config|setting|settings|pool|placement)s? (?:pinned|loaded|ready|warm|on standby|"
                    r"in reserve)(?![a-z])")

# how a change is rolled out, not what it changes: 'behind the fusion-level flag', 'a canary against the elementwise
# plan'
_ROLLOUT = re.compile(r"(?<![a-z])behind (?:the |a |an )?(?:[\w-]+ ){0,2}?(?:flag|toggle|feature flag)(?![a-z])|"
                      r"(?<![a-z])against (?:the |a |an |our )?(?:[\w-]+ ){0,2}?(?:plan|baseline|config|version|build)"
                      r"(?![a-z])")


_NEXT_ACT = re.compile(r", (?:and )?(?:then )?(?:(?:the |our )?(?:[\w'-]+ ){1,8}?(?:should|will|would|must|needs? to|"
                       r"has to|can) )?(?=(?:have|get|ask|" + "|".join(sorted(_ACTION_FIRST)) + r")(?![a-z]))")
_CLAUSE_BREAK = re.compile(r", and (?:then |also )?(?=[a-z])|; |, then ")
_SEMICOLON = re.compile(r"; ")


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
    if not FIX_LABEL.match(n) or re.search(r"[a-z]\s?/\s?[a-z]", n):  # 'a/b/c' lists terms; '1024 / 2048' is values
        return False
    body = re.sub(r"^\s*[a-z /&]{1,30}:\s", " ", n)
    return bool(_ACTION.search(body)) and any(content_words(i) >= 3 and _names(i, words) for i in links(body))


# an escape hatch kept open, not a change proposed ('we could always roll back to the 64 GiB parts')
_ESCAPE_HATCH = re.compile(r"(?:can|could) always (?:just )?(?:roll|revert|go|switch|flip|move|fall)|"
                           r"(?:can|could) (?:just )?(?:revert|"
                           r"(?:roll|go|switch|flip|move|fall)\w* (?:\w+ ){0,3}?back)")
# a proposal declined ('I would not roll back the recompile change'), unless another takes its place
_DECLINED = re.compile(r"(?:i would|i'd|we would|we'd|we should|should|i will|i'll|we will|we'll) "
                       r"(?:not|never)(?![a-z])|"
                       r"(?<![a-z])(?:wouldn't|wouldnt|shouldn't|shouldnt|won't|wont) ")
_IN_ITS_PLACE = re.compile(r"(?<![a-z])(?:instead|rather|but)(?![a-z])")
# an opinion, not a proposal: 'I'd guess it spills', 'what I'd normally accept as noise' ('I'd' proposes nothing here)
_OPINION = re.compile(r"(?<![a-z])(?:i'd|i would|we'd|we would|i'll|i will)\s(?:\w+\s)?(?:guess|think|say|suspect|"
                      r"imagine|assume|accept|argue|agree|doubt|wonder|describe|consider|call)(?![a-z])")
# ... and a guess at what will happen is no proposal at all, to its clause's end: 'I'd guess we end up rolling it back'
_GUESSED = re.compile(r"(?<![a-z])(?:i'd|i would|we'd|we would)\s(?:\w+\s)?(?:guess|imagine|wonder|doubt)"
                      r"(?![a-z])[^.;]*")
_DECISION_LABEL = re.compile(r"^\s*(?:release decision|release|decision)\s*:")
_DECIDED = re.compile(r"^\s*(?:release decision|decision)\s*:")  # what is decided, not a release's plan
_TEAM_LABEL = re.compile(r"^\W*(?:the )?[a-z][a-z -]{0,30} (?:team|on-?call)\s?:\s")  # 'Compiler team: ...' its to-do
_HOLDS = re.compile(r"\W*(?:(?:we|i)(?:'ll| will| would|'d)? )?(?:keep|hold|stay|leave|remain)(?![a-z])")
_IF_WORD = re.compile(r"(?<![a-z])(?:if|when|whenever|unless|once|until|till|as soon as|after|before)(?![a-z])")


_PHRASAL = tuple(a + " " for a in ACTIONS if " " in a)  # 'turn off', 'roll back', 'go back'


def _action_term(term: str) -> bool:
    """Does the fix term open on an action ('add buckets', 'turn off speculation'), not name a thing?"""
    t = term.strip().lower()
    return t.split(" ")[0] in ACTIONS or t.startswith(_PHRASAL)


def _masked(body: str, terms: tuple[str, ...]) -> str:
    """The body with the fix terms that are no action blanked, so no term lends another an action ('weighted fair
    queueing' holds no 'weight')."""
    chars = list(body)
    for t in terms:
        if not _action_term(t):
            for m in phrase(t).finditer(body):
                end = re.compile(r"[a-z]*").match(body, m.end()).end()  # to the word's end ('queu' + 'eing')
                chars[m.start():end] = " " * (end - m.start())
    return "".join(chars)


# a verb in the present whose subject is a fix term (blanked by _masked) says what the fix does, it proposes nothing
# ('weighted fair queueing allocates capacity in proportion to weights')
_DESCRIBES = re.compile(r"(?<=  )[a-z]+s(?![a-z])")


def _described(before: str) -> str:
    return _DESCRIBES.sub(lambda m: " " * len(m.group()) if _ACTION.fullmatch(m.group()) else m.group(), before)


_DETERMINER = re.compile(r"(?<![a-z])(?:a|an|the|this|that|each|every|no|its|their|our|one) $")
# the system doing what it does, told in the present ('the scheduler reserves KV blocks for the interactive tenant'):
# a description of the mechanism, not a proposal
_SYSTEM_DOES = re.compile(r"(?<![a-z])(?:the (?:\w+ )?(?:scheduler|runtime|engine|batcher|allocator|compiler|server|"
                          r"system|policy|router|kernel)|vllm|it) $")


def _acts(near: str) -> bool:
    """An action's verb in the text, not an -ing form after a determiner ('a running request' is an adjective)."""
    return any(not (a.group().endswith("ing") and _DETERMINER.search(near, 0, a.start()))
               for a in _ACTION.finditer(near))


def _acted_on(body: str, masked: str, term: str, m: re.Match) -> bool:
    """Is this mention of a fix term acted on (proposed), not a proof, a watch or an escape hatch that mentions it? The
    fix terms' own words are no action (``masked`` blanks them: 'weighted fair queueing' names the fix, it does not
    propose it) unless the term is itself an action ('add buckets')."""
    at = m.start()
    # a verb's plain form used as a noun ('a recompile storm', 'the re-bucket') names a thing, it proposes nothing; not
    # a participle ('a reserved share')
    first = term.strip().lower().split(" ")[0]
    as_noun = re.match(re.escape(first) + r"(?![a-z])", body[at:]) and _DETERMINER.search(body, 0, at)
    verb = _action_term(term) and not as_noun
    if verb and re.match(re.escape(first) + r"e?s(?![a-z])", body[at:]) and _SYSTEM_DOES.search(body, 0, at):
        return False
    after = masked[m.end():at + 60]
    after = after[:_CONSEQUENCE.search(after + " ").start()]  # what follows 'so' is its effect, not an act on it
    lead = masked[max(0, at - 60):at]
    lead = lead[max((m.end() for m in _CAUSE_BREAK.finditer(lead)), default=0):]  # not before 'so' (another clause)
    lead = _things_did(lead)
    near = body[max(0, at - 60):at + 60] if verb else _described(lead) + " | " + _acted(after)
    near = _PREDICTS.sub(" ", near)  # '64 GiB should show zero loads' foretells a result, it proposes nothing
    before = body[max(0, at - 60):at]
    marks = list(FIX_MARKER.finditer(before))
    if marks:  # a proof before 'the fix is' is another clause's ('... a rerun proves it, the fix is least-loaded')
        before = before[marks[-1].start():]
    return bool(_acts(near) or FIX_MARKER.search(near)) and not (
        NOT_A_FIX.search(before) or _TO_PROVE.search(body[at:at + 40]) or _ESCAPE_HATCH.search(before))


def _first_clause(n: str) -> str:
    """The line's first clause where it is unconditional and another follows ('switch back to WFQ, and keep strict
    priority off until ...'); '' otherwise."""
    cut = _CLAUSE_BREAK.search(n)
    return n[:cut.start()] if cut and not CONDITION.search(n, 0, cut.start()) else ""


def _first_clause_reverts(n: str, drill: Drill) -> bool:
    """Does the line undo the change in a first clause of its own, before the way back that follows ('I'd switch back
    to weighted fair queueing, and keep strict priority off until a test shows both streams meet their targets')?"""
    return reverts(_first_clause(n), drill.rubric.revert_terms)


def _decision_fix(n: str, drill: Drill) -> bool:
    """Is the line a decision that is the fix itself: undoing the change ('decision: revert to WFQ; ...'), in the whole
    line or in its first clause, unconditional, before a second one ('decision: we revert to weighted fair queueing
    today, and strict priority doesn't come back until ...'), or naming the fix as what is decided before any
    condition ('decision: this node is out of the pool; it returns only when ...')?"""
    if not _DECISION_LABEL.match(n):
        return False
    if reverts(without_rollbacks(n), drill.rubric.revert_terms) or _first_clause_reverts(n, drill):
        return True
    if not _DECIDED.match(n):
        return False
    body = _AS_IS.sub(lambda m: " " * len(m.group()), _DECISION_LABEL.sub(" ", n))
    body = body[:m.start()] if (m := _CLAUSE_BREAK.search(body)) else body
    body = body[:m.start()] if (m := _IF_WORD.search(body)) else body
    terms = drill.rubric.fix_terms + drill.rubric.fix_plain
    return content_words(body) >= 2 and not unbounded(body, drill) and \
        any(not negated(body, t) for t in terms if phrase(t).search(body))


def fix_sentence(s: str, n: str, drill: Drill, words: frozenset[str], asked: bool = False) -> bool:
    """Does this one sentence propose a bounded fix on the drill's fix vocabulary (the rule, sentence by sentence)?
    ``asked``: it answers the answer's own question heading ('What's the fix?'), which labels it as a 'Fix:' would."""
    if ROLLBACK_LABEL.match(n) or OTHER_LABEL.match(n):
        # a rollback line never is a fix; a decision may be, and a release line's first clause before its way back
        # ('Release: we put a guard so ... stop speculating; if TPOT ...'), unless it keeps what runs ('keep the pool')
        head = _DECISION_LABEL.sub(" ", n) if _DECISION_LABEL.match(n) else ""
        head = head[:m.start()] if (m := _CLAUSE_BREAK.search(head)) else ""
        return _decision_fix(n, drill) or bool(head) and not _IF_WORD.search(head) and not _HOLDS.match(head) and \
            fix_sentence(s, head + " ", drill, words)
    if sweep(n, drill) or canaried(n, drill) or tied_way_back(n) and _first_clause_reverts(n, drill):
        return True  # (the change undone in a clause of its own before the way back: 'go back to WFQ, and keep ...')
    proof = PROOF.search(_without_gates(n))
    if proof and not _FIX_NOUN.search(n):
        # it proposes evidence ('I'd get a same-seed run of ...') and names no fix, unless a clause before the proof's
        # is a fix of its own ('... rebucket to 1024/2048 and recompile, and attach a same-seed report')
        cuts = list(_CLAUSE_BREAK.finditer(n, 0, proof.start()))
        if cuts and fix_sentence(s, n[:cuts[-1].start()] + " ", drill, words, asked):
            return True
        # ... or a clause after it ('prove it with a same-seed report, have the compiler team add 1k/2k buckets')
        after = _NEXT_ACT.search(n, proof.end()) or _SEMICOLON.search(n, proof.end())  # or a clause of its own
        return bool(after) and fix_sentence(s, " " + n[after.end():], drill, words, asked)
    if bare_run(n) and not _fix_line(n, words):
        return False
    if proposes_none(n, drill):
        return False
    if tied_way_back(n):  # the conditional way back is the rollback's; what else the sentence proposes may be the fix
        n = without_rollbacks(n)
    for p in (_AS_IS, _GUESSED, _ROLLOUT):
        n = p.sub(lambda m: " " * len(m.group()), n)
    # an opinion proposes nothing, unless what it says is an imperative ('I would say limit the fusion before ...')
    n = _OPINION.sub(lambda m: m.group() if _ACTION.match(n, m.end() + 1) else " " * len(m.group()), n)
    body = re.sub(r"^\s*[a-z /&]{1,30}:\s", " ", n)  # past a 'Fix:' label, which is no action by itself
    if content_words(body) < 2 or unbounded(body, drill):
        return False
    terms = drill.rubric.fix_terms + drill.rubric.fix_plain
    if (asked or FIX_LABEL.match(n) or _TEAM_LABEL.match(n)) and (has(n, terms) or _names(n, words)):  # (or a key)
        return True  # "fix: max_delay back to 2 ms", "fix: least-loaded dispatch"
    if _CALLED_THE_FIX.search(n) and has(n, terms):
        return True  # 'another replica, that's the real fix': the answer names its fix as the fix
    masked = _masked(body, terms)
    if any(_acted_on(body, masked, t, m) for t in terms if not negated(body, t) for m in phrase(t).finditer(body)):
        return True
    if reverts(n, drill.rubric.revert_terms):  # undoing the change that caused it, not tied to a condition
        return True
    # a proposal ("fix:", "I'd", "we should", an imperative) whose verb acts on this drill's fix words
    first = body.strip().split(" ")[0]  # an imperative opens on the verb's plain form ('add', not 'fused attention')
    proposed = FIX_MARKER.search(n) or (first in _ACTION_FIRST and _ACTION.match(body.strip()))
    declined = _DECLINED.search(n)
    if declined and not _IN_ITS_PLACE.search(n, declined.end()):  # 'but' before it opens the sentence, names nothing
        return False
    return bool(proposed and _acts_on(body, words))


# a shorthand line with no verb ('Budget 2048.', 'INT8 buckets at 1024/2048.'): an element written as a note
_FINITE = re.compile(r"(?<![a-z])(?:is|are|was|were|has|have|had|does|did|be|been|not|no|never|would|could|might|"
                     r"may|can|will|should|must|exists?|helps?|works?)(?![a-z])|"
                     r"(?<![a-z])(?!(?:embed|speed|need|seed|feed|shed)(?![a-z]))[a-z]{3,}ed(?![a-z])|[:?]")


def _shorthand(n: str, terms: tuple[str, ...]) -> bool:
    """A verbless note of two to five content words naming one of the drill's fix phrases, with a value or three words
    or more: in an answer that argues its mechanism in sentences, the fix in a senior's shorthand ('Budget 2048.'),
    read as a 'Fix:' line would be."""
    words = content_words(n)  # a bare term ('int8 buckets.') is no bounded fix: a value, or three words or more
    return 2 <= words <= 5 and (words >= 3 or bool(re.search(r"(?<![a-z])\d", n))) and not _FINITE.search(n) and \
        not _ACTION.search(n) and bool(has(n, terms))


def fix(segs: list[str], norms: list[str], drill: Drill, stuffed: bool, argued: bool = False) -> Element:
    """The first sentence that proposes a bounded fix; ``argued``: the answer argues in full sentences, so its verbless
    notes may be its elements in shorthand."""
    words, terms, ing = fix_words(drill), drill.rubric.fix_terms + drill.rubric.fix_plain, gerunds(drill)
    found: list[tuple[int, str]] = []  # (rank, sentence): the quote is the first of the best rank
    for i, (s, n) in enumerate(zip(segs, norms, strict=True)):
        n = base_forms(n, ing)
        asked = i > 0 and bool(FIX_QUESTION.match(norms[i - 1]) or LABEL_ALONE.search(norms[i - 1]))
        note = argued and i > 0 and not stuffed and _shorthand(n, terms)  # read as a 'Fix:' line would be
        if (note and fix_sentence(s, n, drill, words, asked=True)) or (CONFIG_CHANGE.match(n) and (
                has(n.replace("_", "-"), terms) or _names(n, words))):  # a value's 'least_loaded' is 'least-loaded'
            found.append((1, s))
            continue
        if i > 0 and by_pronoun(n, norms[i - 1], drill):
            found.append((1, s))
            continue
        if fix_sentence(s, n, drill, words, asked=asked):
            if asked or FIX_LABEL.match(n) or _CALLED_THE_FIX.search(n):
                return Element(True, quote(s), "")  # labelled or named as the fix ('Fix: ...', '... is the fix')
            found.append((0 if FIX_MARKER.search(n) and not PROOF.search(n) else 1, s))  # proposed in so many words
    if found:
        return Element(True, quote(min(found, key=lambda f: f[0])[1]), "")
    return Element(False, "", "propose one bounded fix for this mechanism: what you would change, and to what (a "
                              "number, or the setting before the change), and why it moves the metric",
                   "What is the one bounded change you would ship first, and what would it change in the numbers?")

"""What a proposed fix must be besides proposed: this drill's (not another mechanism's remedy), bounded (not a setting
turned one way with no value), what undoing the regression's own change looks like, and what proposes none (a formula,
a guess, a menu, a hand-off).

Helpers of :mod:`workbench.grading.fix`, kept apart so that module stays one page of rules.
"""

from __future__ import annotations

import re

from workbench.grading.drills import Drill
from workbench.grading.lexicon import MAYBE_BACK, NEGATED_BACK, REVERT_VERB, TEXTBOOK, TURNED, TURNED_TO, WAY_BACK
from workbench.grading.text import has, negated, phrase

# the setting as it was before the change, named by its age ('go back to the old short timer', 'return to the
# previous values'): in a drill whose fix undoes the change, that is what undoing it means
_BEFORE_CHANGE = re.compile(r" (?:to )?(?:the |our |its |their )?"
                            r"(?:old|previous|original|earlier|prior|former)(?![a-z])")


def reverts(n: str, terms: tuple[str, ...]) -> bool:
    """Does the sentence undo the regression's own change, unconditionally ('revert the batcher change', 'go back to
    the old window and cap', 'rolls it back to weighted fair queueing')? The change must be named within the way
    back's reach; 'we can always roll back', 'roll back if needed' and 'instead of flipping back' undo nothing."""
    for m in REVERT_VERB.finditer(n) if terms else ():
        before, after = n[max(0, m.start() - 30):m.start()], n[m.end():m.end() + 30]
        if MAYBE_BACK.search(before) or MAYBE_BACK.search(after) or NEGATED_BACK.search(before):
            continue
        if has(n[max(0, m.start() - 30):m.end() + 60], terms) or _BEFORE_CHANGE.match(n, m.end()):
            return True
    return False


_OR = re.compile(r"(?<![a-z])(?:or|either|alternatively)(?![a-z])|/")
_RATHER = re.compile(r"(?<![a-z])(?:rather than|instead of|not|over|than|before|then|first)(?![a-z])")


def other_fix(n: str, drill: Drill) -> bool:
    """Does the sentence propose only the fix of another mechanism: a rejected mechanism's remedy ('add cores') or one
    of the drill's rejected fixes ('least-loaded dispatch' for a compile stall), with no fix of this drill's, or
    offer this drill's fix only as one option of a menu beside it ('add more GPUs or move the other model off')?"""
    r = drill.rubric
    rejected = [t for t in (*r.rejected_mechanisms, *r.rejected_fixes) if has(n, [t]) and not negated(n, t)]
    if not rejected:
        return False
    own = has(n, r.fix_terms + r.fix_plain)
    if not own:
        return True
    # a menu: this drill's fix offered as one option beside another mechanism's ('add GPUs or move the model off')
    a, b = sorted((phrase(rejected[0]).search(n).start(), phrase(own).search(n).start()))
    between = n[a:b]
    return bool(_OR.search(between)) and not _RATHER.search(between)


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


# no remedy proposed, only a guess at one: 'I'm not really sure what the right fix is, maybe some kind of aging'
_UNSURE = re.compile(r"(?<![a-z])(?:not (?:really |entirely |totally |quite )?sure|unsure|no idea|don't know|dont know|"
                     r"do not know) (?:what|which|how|whether|if|about)(?![a-z])|"
                     r"(?<![a-z])(?:some kind of|some sort of|some mix of|somehow|in some way)(?![a-z])")


# a line that opens on the formula, or on a definition of its symbols ('let a be the acceptance and k = 4 the draft
# length': k = 4 is named, not set)
_FORMULA = re.compile(r"^\W*[\w.]+\s?=\s?[\w.()]+\s?[*/]\s?[\w.(]|^\W*(?:let|denote|define)\s+[a-z](?:_\w+)?\s+"
                      r"(?:be|denote|as)(?![a-z])")


# a labelled menu of remedies ('Options after that: retrain the draft, shorten it, try another draft, tune batch
# sizes.', 'Possible fixes: roll back the driver, restart the fabric manager, add GPUs, ...'): three or more, none
# picked, so none proposed
_MENU_LABEL = re.compile(r"^\W*(?:[a-z]+ ){0,2}?(?:options|possible (?:fixes|remedies|actions|mitigations)|ideas|"
                         r"things to try|candidates|alternatives|levers)(?: [a-z]+){0,2}?\s*:")


# the problem handed to someone to look at, nothing changed ('I would give this to the fusion owner in the ML compiler
# team to investigate further')
_HANDED_OFF = re.compile(r"(?<![a-z])(?:give|hand|pass|send|assign|escalate|route)\w* (?:this|it|that)(?: over| on)? "
                         r"to [^.;]{0,70}?(?:to (?:investigate|look into|dig into|triage|check)|for (?:investigation|"
                         r"triage|review))(?![a-z])")


# a fix picked by whatever the cause turns out to be ('address whichever of these is dominant'): no fix chosen
_WHICHEVER = re.compile(r"(?<![a-z])(?:whichever (?:of these |one |fix |class |cause |bottleneck )?(?:is dominant|"
                        r"dominates|applies|is implicated|matters|the data shows)|"
                        r"(?:address|fix|tackle|treat|target)\w* whichever)(?![a-z])")


def proposes_none(n: str, drill: Drill) -> bool:
    """A computation ('load_ms = weights_gib * 1.074 / 64'), a definition or a general truth ('fusion is a well-known
    optimisation'), another mechanism's remedy, a guess at one ('not sure what the fix is, maybe aging'), a menu, a
    fix left to whichever cause dominates, or a hand-off to be investigated."""
    menu = (label := _MENU_LABEL.match(n)) and len(re.findall(r",|(?<![a-z])or(?![a-z])", n[label.end():])) >= 2
    return bool(_FORMULA.search(n) or TEXTBOOK.search(n) or other_fix(n, drill) or _UNSURE.search(n) or menu
                or _HANDED_OFF.search(n) or _WHICHEVER.search(n))

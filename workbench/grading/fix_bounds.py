"""What a proposed fix must be besides proposed: this drill's (not another mechanism's remedy), bounded (not a setting
turned one way with no value), and what undoing the regression's own change looks like.

Helpers of :mod:`workbench.grading.fix`, kept apart so that module stays one page of rules.
"""

from __future__ import annotations

import re

from workbench.grading.drills import Drill
from workbench.grading.lexicon import MAYBE_BACK, NEGATED_BACK, REVERT_VERB, TURNED, TURNED_TO, WAY_BACK
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

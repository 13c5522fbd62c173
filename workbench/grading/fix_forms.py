"""How a fix may be written besides a sentence that proposes it: a pasted config line, a label alone on its line
with the change on the next, a proposing -ing form of one of the drill's fix verbs, a sweep over named values, the fix
shipped to a canary, and a setting's value given by pronoun.

Helpers of :mod:`workbench.grading.fix`, kept apart so that module stays one page of rules.
"""

from __future__ import annotations

import re

from workbench.grading.drills import Drill
from workbench.grading.text import has

# where an -ing form proposes: after 'by', 'for', 'try', 'suggest' ... ('the fix is fusing the small steps', 'go for
# tiling'), or as the sentence's subject with a modal ('precompiling buckets up to 4096 would remove it')
_GERUND_AFTER = r"(?:by|for|try|trying|start|starting|consider|considering|recommend|suggest|propose|about|is|be|" \
                r"means|mean|involves|at|:)"
_MODAL = re.compile(r"(?<![a-z])(?:would|should|will|could|might|must)(?![a-z])")


def gerunds(drill: Drill) -> re.Pattern | None:
    """The -ing forms of the verbs that lead the drill's fix phrases ('tiling' for 'tile the kernel', 'fusing' for
    'fuse'), the verb's 'e' dropped; None where no phrase leads with such a verb. Built once per answer."""
    verbs = {t.split(" ")[0] for t in drill.rubric.fix_terms + drill.rubric.fix_plain}
    verbs = sorted(v[:-1] for v in verbs if re.fullmatch(r"[a-z]{3,}e", v))
    return re.compile("(" + "|".join(verbs) + r")ing(?![a-z])") if verbs else None


def base_forms(n: str, ing: re.Pattern | None) -> str:
    """The sentence with a proposing -ing form of a fix verb (``ing``, from :func:`gerunds`) written as the verb ('by
    tiling the kernel' -> 'by tile the kernel'): a phrase is matched from each word's start, and the -ing form drops
    the verb's 'e'. Only where it proposes: 'we ended up fusing' and 'merging the steps saves launches' tell what
    happened."""
    if ing is None:
        return n
    n = re.sub(r"(?<![a-z])(" + _GERUND_AFTER + r" )" + ing.pattern, r"\1\2e", n)
    first = re.match(r"^\W*" + ing.pattern, n)
    if first and _MODAL.search(n, first.end()):
        n = n[:first.start(1)] + first.group(1) + "e" + n[first.end():]
    return n


# a setting changed in a pasted config: a diff's added line ('+ discipline: weighted_fair') or a value with what it
# was ('buckets: [128, ..., 2048, 4096]  # was [128, 256, 512]')
CONFIG_CHANGE = re.compile(r"^\s*(?:\+\s+[a-z_][\w.-]*\s?[:=]\s?\S.*|[a-z_][\w.-]*\s?[:=]\s?\S.*#\s*(?:was|previously|"
                           r"before|old|proposed|new|fix|target)\b.*)$")
# a label that ends its line, its content on the next ('Change:' then a config line, 'revert:' then a command)
LABEL_ALONE = re.compile(r"(?<![a-z])(?:fix|fixes|change|changes|mitigation|remedy|solution|proposed fix|revert|"
                         r"proposed|proposal|proposed config|new config|target config)"
                         r"\s*:\s*$|"
                         # a numbered heading of its own ('4) Fix.', 'Fix.')
                         r"^\W*(?:\d{1,2}[.)]\s*)?(?:fix|fixes|mitigation|remedy|solution|proposed fix)\s*\.?\s*$")


# a sweep of the drill's setting over values it names, or one that picks its point: 'sweep the budget at 1024, 2048
# and 4096', 'try 1,024, 2,048 and 4,096 at the same seed and pick the knee' (the values bound it)
_SWEEP = re.compile(r"(?<![a-z])(?:sweep\w*|try)(?![a-z])")
_PICK = re.compile(r"(?<![a-z])(?:pick|choose|select|settle on|take|keep|ship)\w* (?:the |a |its )?(?:[\w-]+ )?"
                   r"(?:knee|best|point|value|setting|winner|one|budget)(?![a-z])")


def sweep(n: str, drill: Drill) -> bool:
    """Does the sentence sweep the drill's setting of degree over values it names ('a budget sweep at 1024, 2048 and
    4096'), or over values and pick the point ('try 1,024, 2,048 and 4,096 ... and pick the knee')? Only in a drill
    whose fix is itself a sweep (its fix vocabulary names one: chunked prefill's budget, whose ITL tail is not
    monotone in it); elsewhere a sweep is the proof ('sweep max_delay over 0.5 to 20 ms at the same seed')."""
    knobs = drill.rubric.fix_knobs
    if not knobs or not any("sweep" in t for t in drill.rubric.fix_terms) or not _SWEEP.search(n):
        return False
    if len(re.findall(r"(?<![\w.])\d[\d,.]*", n)) < 2:
        return False
    return bool(has(n, knobs) or _PICK.search(n))


# the fix shipped to a canary, named after the verb: 'canary a 2,048 budget', 'canary least-loaded dispatch at 10%'
# (not the canary as a thing: 'the canary's p99', 'if the canary passes 7 ms', 'run it as a canary against ...')
_CANARIED = re.compile(r"(?:^\W*|[,;:.(]\s*|(?<![a-z])(?:i'?d|we|to|should|will|would|then|and|first|let's|now) )"
                       r"canary (?:with |on )?(?:a |an |the )?(?:new |larger |bigger |smaller |higher |lower )?"
                       r"(?=[~\d]|(?!(?:p\d|latency|tail|ttft|tpot|itl|goodput|is|are|was|shows?|looks?|runs?|"
                       r"traffic|results?|metrics?|whose|pool|tenant|stream|group|fleet|node|and|or|against|with|for|"
                       r"of|to|in|at|first|if|when|before|after|until|that|which|it|them|this|phase|period|window|"
                       r"rollout|release|stage)(?![a-z]))[a-z])")


def canaried(n: str, drill: Drill) -> bool:
    """Does the sentence ship one of the drill's fixes to a canary ('canary a 2,048 budget'): the fix proposed, its
    trial named with it? The change itself canaried ('canary it and revert if ...') is a release plan."""
    m = _CANARIED.search(n)
    return bool(m) and bool(has(n[m.start():m.end() + 40], drill.rubric.fix_terms + drill.rubric.fix_plain))


# a knob's new value given by pronoun: 'The runtime team should own the budget setting. I would increase it to around
# 2,000 tokens.'
_PRONOUN_TO = re.compile(r"(?<![a-z])(?:increas|rais|bump|set|lower|reduc|cap|chang|mov|lift|doubl|grow|put)\w* "
                         r"(?:it|that|this|them)(?: up| back| down)? to (?:about |around |roughly |~)?\d")


def by_pronoun(n: str, before: str, drill: Drill) -> bool:
    """Does the sentence set a value by pronoun ('increase it to around 2,000') right after a sentence that names one
    of the drill's settings of degree (``before``)? The pronoun is that setting."""
    return bool(_PRONOUN_TO.search(n)) and bool(has(before, drill.rubric.fix_knobs))

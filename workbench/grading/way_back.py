"""Ways back tied to their conditions: the spans a rollback earns and the fix never does.

A way back ('revert to WFQ', 'flip it back', 'switch speculation off') is tied to the condition nearest it ('if batch
p99 breaches', 'unless the canary ...'); :func:`tied_way_backs` finds each pair, :func:`without_rollbacks` blanks them
so what else the sentence proposes can be read as the fix (``fix.py``), and the mechanism's window leaves them out
(``detectors.py``). Pure text functions, linear in the sentence's length.
"""

from __future__ import annotations

import re

from workbench.grading.lexicon import ACTIONS, CONDITION, TRIAL, VAGUE_WORSE, WAY_BACK

# a new clause, or a clause of its own forward step ('..., re-enabling priority only if ...')
_BACK_VERBS = {"switch", "flip", "revert", "move", "put", "restore", "disable", "drop", "cut", "route", "stop", "pin",
               "keep", "use", "set", "change", "turn", "let", "run", "ship"}  # may be the way back's own verb
_NEW_CLAUSE = re.compile(r",? and (?:then )?(?:we|i|they|you) |; |(?:,|;) ?(?:and|but|then) ?$|"
                         r"(?<![a-z])(?:and|but|then), ?$|"  # '... (weights from load) and, if interactive needs ...'
                         r", (?:and )?(?:only )?re-?enabl\w* |"
                         r",? plus (?:a |an |the |some )?|"  # another item of its own ('..., plus a guard if ...')
                         # the change just made kept as it is ('turn speculation off today, and keep it off unless ...')
                         r", and keep (?:it|them|this|that) (?:off|on|out|there|in place) |"
                         # an action of its own after the way back ('..., adding a guard if interactive needs it')
                         r", (?:and )?(?:then )?(?:" + "|".join(a.rstrip("e") for a in ACTIONS if " " not in a
                                                               and a not in _BACK_VERBS) + r")\w* ")


# a metric coming back ('if the rerun brings p99 back to 1.5 ms'), not a way back to the old system
_METRIC_BACK = re.compile(r"(?<![a-z])(?:p\d{2}(?:\.\d)?|latency|tail|ttft|itl|tpot|throughput|busy|utili[sz]ation|"
                          r"hit rate)\w* (?:[\w.~%-]+ ){0,2}?(?:back (?:to|down|under|near|within|below)|"
                          r"(?:comes?|came|goes|went|gets?) back)(?![a-z])")


# a clause of its own after the condition's ('tune until p95 is back, and we can always roll back')
_AND_WE = re.compile(r", and (?:then )?(?:we|i|they|you) ")
_ANOTHER_IF = re.compile(r",? (?:and|but|or|then),? (?:if|when|whenever|once|unless|should)(?![a-z])")


def tied_way_backs(n: str) -> list[tuple[int, int]]:
    """Spans of the ways back tied to a condition ('revert to WFQ if batch p99 breaches', 'ship on a canary and
    revert if it is worse'), each with its condition: what counts as a rollback, and so never as the fix.

    A condition belongs to one way back, the nearer of its neighbours (the one before it on a tie): in 'switch
    back to WFQ behind a flag and flip it back if batch p99 breaches' the first way back is the fix and only the
    second is tied; in 'flip it off if p99 passes 500 ms, then go back to sharing by weight' the second is the fix.
    A condition that opens a new clause ('..., and if interactive needs more, add a guard'; '..., and we turn it
    on again once the test passes') is not the way back's before it."""
    metric_backs = [mb.span() for mb in _METRIC_BACK.finditer(n)]  # 'p99 comes back to 11 ms' is no way back
    backs = [(m.start(), m.end()) for m in WAY_BACK.finditer(n)
             if not any(a <= m.start() < b or a < m.end() <= b for a, b in metric_backs)]
    spans, claimed = [], set()
    for m in CONDITION.finditer(n):
        c, d = m.start(), m.end()
        over = [w for w in backs if w[0] < d and c < w[1]]  # a way back inside the condition's own words
        left = [w for w in backs if w[1] <= c and c - w[1] <= 160 and not _NEW_CLAUSE.search(n[w[1]:c])]
        # not past a ';' nor past another condition's clause ('stop speculating when acceptance is under 0.5, and if
        # p99 is still high, switch speculation off': the guard's own condition is not the way back's)
        right = [w for w in backs if w[0] >= d and w[0] - d <= 160 and ";" not in n[d:w[0]]
                 and not _ANOTHER_IF.search(n, d, w[0]) and not _AND_WE.search(n, d, w[0])]
        gaps = [(c - w[1], 0, w) for w in left[-1:]] + [(w[0] - d, 1, w) for w in right[:1]]
        for w in over[:1] or [min(gaps)[2] for _ in gaps[:1]]:
            spans.append((min(w[0], c), max(w[1], d)))
            claimed.add(w)
    for a, b in backs:
        if (a, b) not in claimed and VAGUE_WORSE.search(n[max(0, a - 160):b + 160]) and TRIAL.search(n):
            spans.append((a, b))
    return spans


def tied_way_back(n: str) -> bool:
    """Does the sentence hold a way back tied to its condition?"""
    return bool(tied_way_backs(n))


REACH = 20  # characters blanked either side of a tied way back and its condition


def without_rollbacks(n: str, reach: int = REACH) -> str:
    """The sentence with each tied way back, its condition and ``reach`` characters around them blanked: a sentence
    (or a long unpunctuated answer) may hold the fix beside the rollback ('id bump budget to 2048 ... if the canary
    is worse flip it back', 'switch back to WFQ behind a flag and flip it back if batch p99 breaches')."""
    for a, b in tied_way_backs(n):
        stop = n.find(";", b)  # the reach stays in the clause: 'go back to WFQ behind a flag; if p99 breaches, revert'
        # ... and in its own conjunct: 'canary least-loaded dispatch and flip back to the old placement if ...'
        joint = max(n.rfind(" and ", 0, a) + 5, n.rfind(", ", 0, a) + 2) if n[max(0, a - reach):a].strip() else 0
        a, b = max(0, a - reach, n.rfind(";", 0, a) + 1, joint), min(len(n), b + reach, stop if stop >= 0 else len(n))
        n = n[:a] + " " * (b - a) + n[b:]
    return n

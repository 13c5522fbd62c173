"""The artifact element: an evidence noun made concrete and reproducible (same seed, replay, per bucket ...),
proposed or named, not a release gate's validation, a way back's condition, figures read back or a dashboard.

Split from :mod:`workbench.grading.detectors` (the mechanism and the rollback), as ``fix.py`` and ``owner.py`` are.
"""

from __future__ import annotations

import re

from workbench.grading.detectors import Element
from workbench.grading.drills import Drill
from workbench.grading.lexicon import EVIDENCE_NOUNS, GATE, GATE_FIRST, HELD, PROPOSES, QUALIFIERS, READS_SHOWN
from workbench.grading.text import bare_run, has, phrase, quote
from workbench.grading.way_back import tied_way_backs

# what a release waits for ('... blocked until per-stream p99 passes on a replay', '... needs a load test before
# release'): the validation of a gate, to the end of its clause
_UNTIL = re.compile(r"(?<![a-z])(?:until|till|til|unless)(?![a-z])[^.;\n]{0,160}|[^.;\n]{0,80}?(?<![a-z])before "
                    r"(?:release|releasing|shipping|it ships|anything ships|going live|rollout|rolling out)(?![a-z])")


def _gate_only(n: str) -> bool:
    """Is every mention of an evidence noun inside a release gate ('hold the release until a load test passes') or a
    way back's condition ('if the preemption counter is not zero, back to 4,000 blocks')? Those are the rollback's;
    the artifact proves the mechanism."""
    gates = [m.span() for g in (GATE, GATE_FIRST, HELD, _UNTIL) for m in g.finditer(n)] + tied_way_backs(n)
    spots = [m.start() for noun in EVIDENCE_NOUNS for m in phrase(noun).finditer(n)]
    return bool(gates) and all(any(a <= x < b for a, b in gates) for x in spots)


# 'run' the verb of the workload ('batches run a quarter longer', 'they run on the generic path'), not a run made
_RUNS_ON = re.compile(r"(?<![a-z])(?:batch|batches|requests?|kernels?|cores?|jobs?|it|they|blocks?|models?|prompts?|"
                      r"decodes?|prefills?|ops|steps?|slices?|docs|documents?|tokens?|who|teams?)\s(?:\w+\s)?runs?(?![a-z])")


# a proof proposed as a procedure, its noun left out: 'proof: same-seed runs of ...', 'I'd prove it by running ...'
_PROVE_BY = re.compile(r"^\W*(?:proof|to prove it|evidence|artifact|artefact)\s*:|"
                       r"(?<![a-z])(?:prove|show) (?:it|this|that) by "
                       r"(?:running|rerunning|replaying|comparing)(?![a-z])")


# a figure's move as it was shown ('22% -> 36%', 'from 21% to 47%')
_MOVE = re.compile(r"\d(?:\.\d+)?\s?(?:%|ms|s)?\s?(?:->|→|to)\s?~?\d|(?<![a-z])from ~?\d")
_LABEL = re.compile(r"^\W*(?:evidence|proof|artifact|artefact)\s*:")


def _reading(n: str) -> bool:
    """Is the sentence the evidence shown read back as figures ('Evidence: queueing share of tail drivers 22% -> 36%'),
    with nothing proposed to run, replay or compare?"""
    body = _LABEL.sub(" ", n)
    return bool(_MOVE.search(body)) and not PROPOSES.search(body)


# two figures read side by side ('KV max 100% versus 15%', '531 preemptions vs zero'): a reading, no a/b proposed
_FIGURE_VS = re.compile(r"\d[\d.,]*\s?(?:%|ms|s|x)?(?:\s[a-z]+)?\s(?:versus|vs\.?)\s~?(?:[\d.,]+\s?(?:%|ms|s|x)?|zero|"
                        r"none)(?!\w|\.\d)")


# a run written as code, its seed fixed ('r = sim("priority_two_streams", seed=42, scheduler=s)')
_SEEDED_CALL = re.compile(r"[a-z_]\w*\([^()]*(?<![a-z_])seed\s?=\s?\d+")


# 'numbers' are evidence only where the sentence asks for it (a proof's label, a modal, an imperative run), and a
# split only where someone splits something ('if I split by stream'), not where the story tells of a thing split ('the
# prompt being split'); 'run' and 'vs' were tried too and refused more real proofs than they saved
# ... or what chunking does ('chunked prefill is splitting the prompts'), not a breakdown ('splitting latency by
# tenant')
_TOLD_SPLIT = re.compile(r"(?<![a-z])(?:(?:being|been|is|are|was|were|gets?|got) split|(?:splitting|splits) "
                         r"(?:the |a |an |its |each |every |long )?(?:prompts?|requests?|prefills?|documents?|docs|"
                         r"sequences?|work))(?![a-z])")


_SEEDS = ("same seed", "same-seed", "fixed seed", "fixed-seed", "one seed")


# the evidence someone already made ('the group that wrote the report'): the prompt's, not a proof proposed
_AUTHORED = re.compile(r"(?<![a-z])(?:who|that|which) (?:wrote|produced|published|authored|ran|made|built) (?:the|that|"
                       r"this|their|its) (?:[\w-]+ ){0,2}?(?:report|benchmark|run|test|analysis|study)s?(?![a-z])")
# a team named after its work ('the benchmarking and analytics group'): people, not evidence
_TEAM_NAME = re.compile(r"(?<![a-z])(?:[\w-]+ (?:and|&) )?[\w-]+ (?:group|team|org|squad)(?![a-z])")
# evidence dismissed, not asked for ('a single seed tells you very little', 'the p99 figures are jumpy')
_DISMISSED_EVIDENCE = re.compile(r"(?<![a-z])(?:tells?|says?|shows?|proves?) (?:you |us )?(?:very |so )?(?:little|"
                                 r"nothing|not much)(?![a-z])")
# a figure inside a way back's condition ('if TPOT p99 stays above the no-spec number'): the rollback's, no evidence
_IN_CONDITION = re.compile(r"(?<![a-z])(?:if|unless|when|until|once)(?![a-z])[^,;.]*$")


# evidence defined as itself ('the artifact that shows it per tenant is the per-tenant same-seed artifact'), or its
# requirements certified met ('the artifact requirements of section 5 (same-seed ...) are satisfied by reference')
_SELF_EVIDENT = re.compile(r"(?<![a-z])(?:artifact|artefact|proof|evidence)(?![a-z])[^.;]{0,80}? (?:is|are|will be|"
                           r"would be) (?:just )?(?:the|a|an|our) (?:[\w-]+ ){0,4}?(?:artifact|artefact|proof|"
                           r"evidence)(?![a-z])|(?<![a-z])(?:requirements?|criteria|obligations?)(?![a-z])[^.;]{0,80}"
                           r"(?:are|is|have been|has been|were|was) (?:satisfied|met|fulfilled|covered|discharged)"
                           r"(?![a-z])")


# evidence said to be elsewhere, nothing of it proposed here ('fully explained in the attached analysis (see Appendix
# A, Figures 2 to 4)')
_ELSEWHERE = re.compile(r"(?<![a-z])(?:appendix|appendices|annex|attached (?:analysis|report|doc\w*|deck|slides|"
                        r"write-?up)|enclosed (?:analysis|report))(?![a-z])")
# a run proposed: a modal ('I'd rerun ...'), or a sentence that opens on the run ('Replay the trace ...')
_MODAL = r"would|i'd|we'd|let's|i'll|we'll|should|need|want"
_RUN_VERB = r"rerun|re-run|replay|run|dump|plot|sweep|compare"
_WILL_RUN = re.compile(rf"(?<![a-z])(?:{_MODAL})(?![a-z])|^\W*(?:{_RUN_VERB})(?![a-z])")


def _artifact_in(n: str, drill: Drill, stuffed: bool) -> bool:
    if _DISMISSED_EVIDENCE.search(n) and not _ASKS_FOR.search(n) or _SELF_EVIDENT.search(n) or \
            _ELSEWHERE.search(n) and not _WILL_RUN.search(n):
        return False
    n = _FIGURE_VS.sub(" ", _RUNS_ON.sub(lambda m: m.group()[:m.group().rindex("run")],
                                                 _TEAM_NAME.sub(" ", _AUTHORED.sub(" ", n))))
    # 'prove it by running ... same seed'; a seeded run named by its seed alone ('Same-seed per-core utilisation.')
    noun = has(n, EVIDENCE_NOUNS) or (_PROVE_BY.search(n) and "prove") or has(n, _SEEDS)
    if not noun and _SEEDED_CALL.search(n):
        return True  # a run written as code with its seed: 'sim("priority", seed=42)'
    if not noun or (stuffed and bare_run(n)) or _gate_only(n) or (READS_SHOWN.search(n) and
                                                                          not PROPOSES.search(n)) or _reading(n):
        return False  # no evidence; only a release gate's; or the evidence shown, read back ('the run shows ...')
    if _DASHBOARD.search(n) and not _REPRODUCED.search(n):
        return False  # 'the per-tenant dashboards already show it', 'a screenshot of the Grafana board': not rerun
    if noun == "numbers" and (not _ASKS_FOR.search(n) or all(_IN_CONDITION.search(n, 0, m.start())
                                                             for m in phrase(noun).finditer(n))) or \
            noun == "split" and _TOLD_SPLIT.search(n):
        return False  # 'agree the new per-core numbers', 'the prompt being split': no evidence asked for
    rest = phrase(noun).sub(" ", n, count=1)  # something concrete besides the noun itself
    quals = [q for q in (*QUALIFIERS, *drill.rubric.artifact_terms) if noun not in q.lower()]
    return has(rest, quals)


# production's own dashboards, read or pictured, or an alert put on them, are no run anyone can repeat ('check
# dashboards', 'put an alert on acceptance in monitoring')
_DASHBOARD = re.compile(r"(?<![a-z])(?:dashboards?|grafana|screenshots?|datadog|alerts?|alerting|monitoring|"
                        r"panels?|keep an eye on)(?![a-z])")
_REPRODUCED = re.compile(r"(?<![a-z])(?:seed\w*|rerun|re-run|replay\w*|load test|trace|sweep|a/b|reproduc\w*|"
                         r"bench\w*)(?![a-z])")


# a sentence that asks for the artifact (not one that reads figures 'vs' others): a run proposed as above, a proof's
# label, or a capture taken
_ASKS_FOR = re.compile(rf"(?<![a-z])(?:{_MODAL}|prov\w*|proof|confirm\w*|reproduc\w*|evidence|artifact|artefact|"
                       r"validat\w*|demonstrat\w*|to show|show it)(?![a-z])|"
                       rf"^\W*(?:{_RUN_VERB}|capture|take)(?![a-z])")


def artifact(segs: list[str], norms: list[str], drill: Drill, stuffed: bool) -> Element:
    """The first sentence naming a concrete artifact; the quote is the first of them that proposes it ('I'd rerun ...',
    'Proof: ...'), where one does, rather than one that mentions it while reading the figures."""
    # (a proof asked about, 'would a same-seed run per tenant show something?', is not proposed)
    found = [s for s, n in zip(segs, norms, strict=True)
             if not n.rstrip().endswith("?") and _artifact_in(n, drill, stuffed)]
    if found:
        proposed = [s for s, n in zip(segs, norms, strict=True) if s in found and _ASKS_FOR.search(n)]
        return Element(True, quote((proposed or found)[0]), "")
    return Element(False, "", "name a concrete, reproducible artifact: e.g. the closed-loop mapping report at the "
                              "same seed, a per-bucket/per-stream/per-core breakdown, a replayed trace, or a load "
                              "test at production shapes ('check dashboards' or 'profile it' is not one)",
                   "What artifact proves it reproducibly: which run, at which seed, broken down how?")

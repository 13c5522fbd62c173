"""Answers that wear another document's form and claim nothing in it: each check reads the whole answer.

* ``commit_log``: the elements as commit subjects ('c0d4e88 test(artifact): add same-seed replay', 'e93b7d0 revert:
  rollback on canary regression'): a history of changes said to have happened, not a cause argued;
* ``tool_log``: a diagnostic tool's output pasted ('[INFO] root_cause ...... IDENTIFIED'), nothing argued;
* ``management_speak``: the drill's nouns wrapped in corporate filler ('leverage our NCCL learnings to holistically
  root-cause ...', 'a canary-first, rollback-ready posture'): four stock phrases or more, one word in 25 or denser,
  in one sentence as in many;
* ``self_interview``: questions on the elements answered 'yes' ('Is there an artifact? Yes, a reproducible one. Is
  there an owner? Yes, the owner owns it.'): a checklist ticked in prose;
* ``truisms``: what is true of every incident and says nothing of this one ('Batching trades throughput for latency.
  ... Configuration changes should be owned by the team that operates the component'): no figure, no past tense, no
  speaker, and practice prescribed in general, twice or more;
* ``element_recital``: each element described by what the rubric asks of it ('The mechanism is the first-principles
  causal chain ... The owner is a named, accountable team.') or said to be in hand ('I have a reproducible artifact'),
  three times or more, none of them said;
* ``conditional_menu``: every cause covered by a supposition ('If the cause is launch overhead, ... If the cause is
  SRAM spill, ...'), three or more;
* ``hypothetical``: every claim kept a supposition ('If the cause were ..., a comparison might show ...; Were an owner
  needed, it would presumably be ...'): no figure, and three sentences in four or more conditional or hedged;
* ``contents``: a table of contents of a document kept elsewhere ('section 2 Mechanism, section 3 Artifact, section 4
  Fix ... all covered there'): three elements or more named as its numbered parts, none of them said;
* ``another_setup``: the reference reworded with the incident's facts changed ('900 req/s across eight cores ... four
  buckets' for 700 req/s, four cores and three buckets): three of its stated quantities or more (cores, request
  rate, buckets, memory, KV blocks), each given only at values the drill never has. A candidate who misreads one
  figure, or two, keeps the rest of the incident;
* ``reworded_reference``: the same with two facts changed (token counts or request rates), in the reference's own
  words: three in four of its content words are the reference's, and it says most of what the reference says.

The grader (:func:`workbench.grading.grader.grade`) gives each nothing and says why, as it does the forms of
:mod:`workbench.grading.gaming`. Every check is a bounded pattern or a count: linear in the answer's length.
"""

from __future__ import annotations

import re

from workbench.grading.claims import claims_something
from workbench.grading.tautology import content_stems

# a commit's short hash, then its subject in the conventional form ('fix(kv): ...', 'revert: ...', 'sched: ...')
_COMMIT = re.compile(r"^\s*[0-9a-f]{7,12}\s+[a-z]+(?:\([\w/ .-]{1,30}\))?!?:\s", re.IGNORECASE)


# a tool's log line ('[INFO] artifact ...... GENERATED (seed fixed)', '[PASS] release_decision ...')
_LOG_LINE = re.compile(r"^\s*\[(?:info|pass|ok|warn|warning|debug|fail|error|done)\]\s", re.IGNORECASE)


def tool_log(text: str) -> bool:
    """Is the answer a tool's output: four log lines or more ('[INFO] owner ..... ASSIGNED'), half of its lines?
    A log says what a tool reported, not what causes what."""
    lines = [line for line in text.splitlines() if line.strip()]
    logged = sum(bool(_LOG_LINE.match(line)) for line in lines)
    return logged >= 4 and logged >= 0.5 * len(lines)


def commit_log(segs: list[str], norms: list[str]) -> bool:
    """Is the answer a commit log: four commit subjects or more, half of its lines or more, and fewer than half of the
    subjects a claim? Subjects name what was done ('preemption storm explained'); they do not say why."""
    commits = [n for s, n in zip(segs, norms, strict=True) if _COMMIT.match(s)]
    return (len(commits) >= 4 and len(commits) >= 0.5 * len(norms)
            and sum(claims_something(n) for n in commits) < 0.5 * len(commits))


# stock phrases of corporate filler; none of them is a systems term ('bandwidth' alone is left out: memory bandwidth)
_FILLER = re.compile(r"(?<![a-z])(?:leverag\w*|synerg\w*|holistic\w*|sociali[sz]\w*|empower\w*|alignment|value stream|"
                     r"circl\w* back|at the end of the day|data-driven|evidence-based|narrative|posture|learnings|"
                     r"north star|move the needle|best-in-class|stakeholders?|deep[- ]dive|kpis?|double[- ]click|"
                     r"low-hanging|boil the ocean|game[- ]changer|paradigm|ecosystem|actionable|going forward|"
                     r"touch base|take (?:it|this) offline|mission[- ]critical|world-class|impactful|journey|"
                     r"seamless\w*|proactive\w*|thought leadership|cross-functional\w*|best practices?|triangulat\w*|"
                     r"align\w* on)(?![a-z])")


def management_speak(text: str) -> bool:
    """Is the answer corporate filler: four distinct stock phrases or more ('leverage', 'holistically', 'socialise',
    'posture'), at least one word in 25 of it? Real answers in the corpus use one or two."""
    low = text.lower()
    hits = _FILLER.findall(low)
    return len(set(hits)) >= 4 and len(hits) * 25 >= len(low.split())


# a question on the answer's own elements answered 'yes' ('Is there a rollback? Yes, canary and revert.')
_ASKED_YES = re.compile(r"(?<![a-z])(?:is|are|was|were|has|have|do|does|did|can|will|could) (?:there|we|it|you|i|"
                        r"this|the \w+)\b[^?.]{0,50}?\?\s*(?:yes|yep|yeah|yup|correct|absolutely|of course|definitely|"
                        r"certainly|check|sure|indeed)(?![a-z])")


def self_interview(text: str) -> bool:
    """Does the answer ask itself three yes/no questions or more and answer each 'yes'? A box ticked in prose."""
    return len(_ASKED_YES.findall(text.lower())) >= 3


_SPEAKER = re.compile(r"(?<![a-z])(?:i|i'd|i'll|i'm|i've|we|we'd|we'll|we're|we've|our|my|me|us|let's|you|your)"
                      r"(?![a-z])")
_PAST = re.compile(r"(?<![a-z])(?:was|were|went|rose|fell|grew|jumped|dropped|doubled|tripled|quadrupled|regressed|"
                   r"increased|decreased|became|got|spiked|climbed|moved|changed|broke|stalled)(?![a-z])")
_PRESCRIBED = re.compile(r"(?<![a-z])(?:should|ought to)(?![a-z])")  # not 'must': 'interactive must wait' tells


def truisms(text: str) -> bool:
    """Does the answer speak only in general: no figure, no past tense, no speaker (no 'I', 'we' or 'you'), and
    practice prescribed twice or more ('changes should be owned by ..., rolled back on an SLO breach')? (On every
    writer, 2026-12-07, no answer labelled above weak is so.)"""
    low = text.lower()
    return not re.search(r"\d", low) and not _SPEAKER.search(low) and not _PAST.search(low) and \
        len(_PRESCRIBED.findall(low)) >= 2


_ELEMENT = (r"(?:workload|mechanism|causal mechanism|root cause|cause|artifact|artefact|proof|evidence|fix|owner|"
            r"rollback|release decision|bottleneck class)s?")
# an element certified by the rubric's own adjectives ('The fix is bounded and specific', 'An accountable owner has
# been identified') or said to be in hand ('I have a reproducible artifact at the same seed')
_ELEMENT_DESCRIBED = re.compile(r"(?<![a-z])(?:(?:the|my|our|an?) (?:[\w-]+ ){0,2}?" + _ELEMENT +
                                r" (?:is|are|has been|have been) (?:\w+[ ,]+){0,4}?(?:identified|named|bounded|"
                                r"specific|conditional|reproducible|accountable|precise\w*|clear\w*|tied|"
                                r"first-principles|concrete|explicit|defined|stated|understood|assigned|accepted|"
                                r"established)|i (?:have|'ve) (?:identified |found |got |built |prepared |named |"
                                r"specified |provided |proposed |defined |stated )?"
                                r"(?:a|an|the) (?:[\w-]+ ){0,3}?" + _ELEMENT + r")(?![a-z])")


def element_recital(text: str) -> bool:
    """Is an element described by the rubric's adjectives, or said to be in hand, three times or more ('The fix is
    bounded and specific to the mechanism.', 'I have a reproducible artifact ...')? (On every writer, 2026-12-08, only
    gamed answers are so.)"""
    return len(_ELEMENT_DESCRIBED.findall(text.lower())) >= 3


# a cause taken up only to be covered ('If the cause is launch overhead, ... If the cause is SRAM spill, ...')
_IF_CAUSE = re.compile(r"(?:^|(?<=[.!?]\s))\W*if (?:the (?:root )?cause is|it'?s|it is|the problem is|the culprit is)"
                       r"(?![a-z])|"
                       # ... or supposed as a counterfactual that says what would follow ('If the cores were saturated,
                       # the added latency would come from compute')
                       r"(?:^|(?<=[.!?]\s))\W*if [^.!?]{3,120}?(?:were|was|is|are|degraded|lined up)(?![a-z])"
                       r"[^.!?]{0,160}?(?<![a-z])would(?![a-z])")


def conditional_menu(text: str) -> bool:
    """Do three sentences or more open on a cause supposed ('If the cause is X, ...', 'If the cores were saturated,
    ... would ...'): every cause covered, none argued? (On every writer, 2026-12-08, only gamed answers are so.)"""
    return len(_IF_CAUSE.findall(text.lower())) >= 3


_SUPPOSITION = re.compile(r"^\W*(?:if|were|should|whether|provided|assuming|suppose|supposing|in case)(?![a-z])|"
                          r"(?<![a-z])(?:could|might|presumably|conceivably|perhaps|possibly)(?![a-z])")


def hypothetical(text: str, norms: list[str]) -> bool:
    """Is every claim a supposition: no figure, three sentences or more, three in four of them conditional or
    hedged? (On every writer, 2026-12-08, no answer labelled above weak is so.)"""
    return not re.search(r"\d", text) and len(norms) >= 3 and \
        sum(bool(_SUPPOSITION.search(n)) for n in norms) >= 0.75 * len(norms)


# an element named as a numbered part of a document ('section 3 Artifact', '§4 fix', 'part 5: owner')
_PART = re.compile(r"(?<![a-z])(?:section|sec\.|part|chapter|appendix|\u00a7)\s?\d{1,2}[.:)]?\s?(?:the )?"
                   r"(?:workload|symptom|mechanism|root[- ]cause|cause|artifact|artefact|proof|evidence|fix|remedy|"
                   r"owner|ownership|rollback|release)(?![a-z])")


def contents(text: str) -> bool:
    """Does the answer list three elements or more as numbered parts of a document ('section 2 Mechanism')?"""
    return len(_PART.findall(text.lower())) >= 3


_COUNT_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
                "ten": 10, "sixteen": 16}
_QUANTITY = r"(\d[\d,]*(?:\.\d+)?|" + "|".join(_COUNT_WORDS) + r")\s?"
_UNITS = {"cores": r"cores?", "rate": r"req(?:uests)?/s|requests per second|rps", "buckets": r"buckets",
          "memory": r"gib|gb", "blocks": r"(?:kv )?blocks", "tokens": r"tokens"}
_FACTS = {unit: re.compile(r"(?<![\w.])" + _QUANTITY + r"(?:" + pattern + r")(?![a-z])")
          for unit, pattern in _UNITS.items()}


def facts(text: str) -> dict[str, set[float]]:
    """The quantities a text states, by unit: {'cores': {4.0}, 'rate': {700.0}, ...}."""
    low, out = text.lower(), {}
    for unit, pattern in _FACTS.items():
        for m in pattern.finditer(low):
            value = m.group(1).replace(",", "")
            out.setdefault(unit, set()).add(float(_COUNT_WORDS.get(value) or value))
    return out


def _changed(answer: str, drill_facts: dict[str, set[float]]) -> int:
    """How many of the incident's quantities the answer states only at values the drill (its prompt and its
    reference answer) never gives."""
    return sum(1 for unit, values in facts(answer).items() if unit in drill_facts and not values & drill_facts[unit])


def another_setup(answer: str, drill_facts: dict[str, set[float]]) -> bool:
    """Does the answer state three of the incident's quantities or more, each only at values the drill never gives?"""
    return _changed(answer, drill_facts) >= 3


def reworded_reference(answer: str, drill_facts: dict[str, set[float]], reference: frozenset[str]) -> bool:
    """Is the answer the reference (``reference``: its content stems) reworded with two of the incident's quantities
    or more changed? 75% or more of its content words are the reference's and it holds 60% or more of them; the
    closest genuine answers with two quantities of their own hold at most 59% and 71% (every writer, 2026-12-07)."""
    if _changed(answer, drill_facts) < 2:
        return False
    said = content_stems(answer.lower())
    shared = len(said & reference)
    return bool(said) and shared >= 0.75 * len(said) and shared >= 0.6 * len(reference)

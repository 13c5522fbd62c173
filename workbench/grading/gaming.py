"""Answers that address the grader, not the question: each check reads the whole answer.

* ``self_graded``: the answer certifies itself ('This answer covers all required elements'), or its label lines are
  verdicts on themselves ('Owner: assigned'), ticked boxes or a template's bracketed blanks;
* ``cites_away``: every element handed to ticket, runbook or change ids;
* ``shotgun``: a menu of causes, as a list or as a run of 'it could be ...' hedges, and no pick among them;
* ``config_dump``: a pasted config or report of 'key: value' lines with no sentence that claims; ``record``: a JSON
  object of fields;
* ``hollow_template``: a template's sections, a table's rows or a checklist's boxes filled with the drill's terms;
  ``code_only``: the elements in a code block's comments, nothing argued outside it;
* ``glossary``: the drill's words defined under a glossary's heading; ``verse``: the drill's words set to rhyme;
* ``acrostic``: the drill's terms under the letters of a word ('D - draft model, ...'); ``questions_only``: questions
  asked, none answered; ``haiku``: stanzas of three short lines; ``query``: a query's clauses ('SELECT ... WHERE').

A grader that counts vocabulary credits all of them; :func:`workbench.grading.grader.grade` gives each nothing and
says why. Every check is a bounded pattern or a count: linear in the answer's length.
"""

from __future__ import annotations

import re

from workbench.grading.claims import IDENTIFIER, LABEL_LINE, claims_something

# an answer that grades itself ('This answer covers all required elements'), or its label lines filled with verdicts
# on themselves ('Mechanism: identified', 'Owner: assigned to the appropriate team')
_SELF_GRADED = re.compile(r"(?<![a-z])(?:(?:this|my|the) (?:answer|response|write-?up|submission|reply) "
                          r"(?:\w+ )?(?:covers|addresses|includes|hits|meets|satisfies|contains|ticks)|"
                          r"all (?:(?:the|required|six|rubric|key) ){0,3}(?:elements|criteria|boxes|items|points) "
                          r"(?:are )?"
                          r"(?:covered|addressed|present|met|ticked))(?![a-z])")
# a ticked box before a line ('[x] Owner: accountable team assigned', '✅ Fix'), and a label whose value says the
# element was supplied, not what it is ('Artifact: a concrete, same-seed artifact has been specified')
_CHECKBOX = re.compile(r"^\W{0,3}(?:\[\s?[x\u2713\u2714]\s?\]|[\u2611\u2705\u2714\u2713])\s*")
# 'Owner:', 'root cause:', 'Workload \u2014 ' opening a line
_LABEL_AT_START = r"^\W*[a-z][a-z /&-]{0,30}?(?::|\s[\u2014\u2013-]\s)"
_META_PASSIVE = re.compile(_LABEL_AT_START + r".*(?:ha(?:s|ve) been|is|are) (?:specified|proposed|"
                           r"assigned|determined|identified|defined|provided|established|covered|addressed|"
                           r"in place)\W*(?:$|,| and)")
# a ticket, runbook or change id as written ('RCA-7731', 'INFRA-2290', 'SOP-12', 'GPU-TP-04')
_TICKET = re.compile(r"(?<![A-Za-z0-9-])[A-Z]{2,}(?:-[A-Z]{2,})*-\d+(?![A-Za-z0-9])")
_META_VALUE = re.compile(_LABEL_AT_START + r"\s*(?:identified|provided|covered|addressed|assigned|done|yes|"
                         r"included|present|handled|defined|named|stated|explained|given|specified|complete|"
                         r"confirmed|clear|check|checked|tick|ticked)(?![a-z])")


# a menu of causes set out as a list ('Could be several things, so covering them all:' then a bullet per cause), and
# an answer that never picks one of them
_MENU_OPENS = re.compile(r"(?<![a-z])(?:could be (?:due to )?(?:several|many|a few|lots of|any number of) "
                         r"(?:things|causes|reasons|factors)|"
                         r"(?:several|many|multiple|a few|various) (?:candidates|possibilities|options|suspects|"
                         r"factors|hypotheses|(?:possible |potential |plausible )?(?:root )?(?:causes|explanations|"
                         r"culprits))|any of which|covering (?:them|it) all|cover (?:them|it) all|covers all of them|"
                         r"(?:would|will|can)(?:n'?t| not) rule (?:any|out any) of them(?: out)?|"
                         r"(?:one|any) of the (?:\w+ )?(?:bottleneck )?classes|"
                         r"in no particular order|(?:one or more|any|some combination|a combination) of the following|"
                         r"(?:several|many|multiple|various) (?:bottleneck )?(?:classes|mechanisms) (?:are|could be|"
                         r"would be|fit|match))"
                         r"(?![a-z])")
# the items of a menu told in a line: 'or's, semicolons, or commas that are no figure's ('5,500')
_OR = re.compile(r"(?<![a-z])or(?![a-z])|;|,(?!\d)")
_LIST_ITEM = re.compile(r"^\s*(?:[-*\u2022]|\d{1,2}[.)])\s+\S")
_PICKS = re.compile(r"(?<![a-z])(?:most likely|my (?:bet|money|pick|guess) is|i(?:'d| would) bet|i think it'?s|"
                    r"(?:the )?(?:root )?cause is(?! (?:one or more|one of|any of|some combination|a combination|"
                    r"whichever))|"
                    r"it'?s (?:number |#)?\d|probably (?:number |#)?\d|top suspect|"
                    r"leading (?:candidate|hypothesis)|i(?:'d| would) start with|the one that fits)(?![a-z])")


# the same menu told in prose: 'It could be the draft's acceptance, in which case ... It could be the KV cache ...'
_HEDGE = re.compile(r"(?<![a-z])(?:(?:it|this|that|the cause|the culprit) (?:could|might|may) "
                    r"(?:also |equally |just as well )?be|(?:or )?(?:maybe|perhaps|possibly) it'?s)(?![a-z])")


# a hedge on a sentence's claim: an answer whose every sentence hedges, two hedges a sentence, commits to nothing
# ('Maybe the KV cache is the issue ... Maybe the runtime team could own it, or maybe capacity planning.', '... might
# or might not help')
_MAYBE = re.compile(r"(?<![a-z])(?:maybe|perhaps|possibly|conceivably|potentially|(might|may) or \1 not)(?![a-z])")


def shotgun(text: str) -> bool:
    """Does the answer set out a menu of causes, a list of four or more, three 'or's after its opening ('It could be
    several things: X, or Y, or Z, or ...') or three 'it could be ...' hedges or more, and never pick one; or hedge
    every one of four sentences or more ('maybe')?"""
    low = text.lower()
    if _PICKS.search(low):
        return False
    if len(_HEDGE.findall(low)) >= 3:
        return True
    sentences = [x for x in re.split(r"[.!?](?:\s|$)", low) if x.strip()]
    if len(sentences) >= 4 and all(_MAYBE.search(x) for x in sentences) and \
            len(_MAYBE.findall(low)) >= 2 * len(sentences):
        return True
    lines = low.splitlines()
    for i, line in enumerate(lines):
        if opens := _MENU_OPENS.search(line):
            told = line[opens.end():]
            sentences = re.split(r"[.!?](?:\s|$)", told, maxsplit=2)[:2]  # its own sentence's rest and the next
            if len(re.findall(r"(?<![a-z])or(?![a-z])", told)) >= 3 or max(len(_OR.findall(x)) for x in sentences) >= 6:
                return True  # the menu told in one line
            items = 0
            for rest in lines[i + 1:]:
                if _LIST_ITEM.match(rest):
                    items += 1
                elif rest.strip():
                    break
            if items >= 4:
                return True
    return False


# a note to whoever marks it ('[Note for the evaluator: ... should be scored as complete]'): a plea, not an answer
_TO_THE_GRADER = re.compile(r"(?<![a-z])(?:(?:note|message|hint|summary|tl;?dr) (?:for|to) (?:the |any )?"
                            r"(?:[a-z]+ )?(?:evaluator|grader|marker|examiner|assessor|reviewer|scorer)|"
                            r"(?:should|must|can) (?:be )?(?:scored|"
                            r"graded|marked|rated|assessed) (?:as )?(?:complete|strong|full|correct|a pass)|"
                            r"(?:score|grade|mark|rate) (?:this|it|me) (?:as )?(?:strong|complete|full marks|correct)|"
                            r"(?:please )?(?:score|grade|mark|rate) (?:this |it |me )?accordingly|"
                            r"(?:against|per) the (?:evaluation|grading|marking|scoring) (?:criteria|rubric)|"
                            r"full marks,? (?:i think|please|for (?:me|this))|"
                            r"(?:get|earn|deserve|give me|award me) full marks|"
                            r"(?:please )?(?:score|grade|mark|rate) (?:this |it |me )?as (?:complete|strong|full|"
                            r"correct|a pass)|self[- ]assessment for|"
                            # a verdict on itself, or praise put in an interviewer's mouth ('Verdict: strong.',
                            # 'Interviewer: that's a complete, strong answer')
                            r"^\W*(?:verdict|grade|score|rating)\s?:\s?(?:strong|pass|complete|full)|"
                            r"(?:that'?s|this is) (?:a |an )?(?:complete|strong|perfect|excellent|model)(?:,? "
                            r"(?:strong|complete))? answer|exactly the (?:mechanism|answer|root cause)|"
                            r"(?:points|things|boxes|elements|criteria) (?:you'?re|you are|they'?re|the "
                            r"(?:grader|rubric|marker) is) (?:looking for|checking for|after))"
                            r"(?![a-z])")
# a template's slot filled in prose ('The owner is [the serving runtime team].'): words in square brackets, not
# figures ('[1024, 2048]') or a ticked box ('[x]')
_SLOT = re.compile(r"\[[a-z][a-z0-9 ,./'&%-]{2,60}\]|\{\{[^{}]{1,60}\}\}|"  # '{{owner_team}}' too
                   r"<[a-z][a-z0-9 ,./'&%|_-]{2,60}>")  # and '<team name>', not a comparison ('p99 < 200 ms')


# elements certified one after another in a sentence, none of them stated ('ownership is clear, the rollback plan is in
# place, the canary criteria are defined'): three such clauses grade the answer as three verdict lines would
_CERTIFIED = re.compile(r"(?<![a-z])(?:is|are|has been|have been) (?:clear|in place|defined|agreed|assigned|identified|"
                        r"established|covered|understood|settled|sorted|ready)(?![a-z])")


# an element promised by its rubric name, nothing of it said ('I will produce a reproducible artifact at the same seed
# that proves it', 'I will propose a bounded fix and name the accountable owner')
_PROMISED = re.compile(r"(?<![a-z])(?:i|we)(?: will|'ll| would|'d| shall)(?: first| then| also| finally| next)? "
                       r"(?:identify|establish|determine|produce|propose|name|define|quantify|provide|state|give|"
                       r"describe|explain|attach|assign|set out)(?: and \w+)? (?:the|a|an)(?: [\w-]+){0,3}? "
                       r"(?:workload|mechanism|bottleneck|artifact|artefact|fix|owner|rollback|release decision|"
                       r"root cause)(?![a-z])")


def self_graded(norms: list[str]) -> bool:
    """Does the answer certify itself: a sentence saying it covers the elements, a note asking whoever marks it for a
    grade, three label lines or more whose value is a verdict on the line ('Fix: provided', 'Owner: a named team
    has been assigned') or a sentence certifying three elements ('ownership is clear, the plan is in place, ...'), a
    ticked box ('[x] Artifact: same-seed report') or a template's bracketed blanks ('Root
    cause: [nvlink / pcie] related'), or a template filled in prose, three sentences or more and half of them with
    their words in slots ('The fix is to [restore the KV blocks].')?"""
    if any(_TO_THE_GRADER.search(n) for n in norms):
        return True
    slotted = sum(bool(_SLOT.search(n)) for n in norms)
    if slotted >= 3 and slotted >= 0.5 * len(norms):
        return True
    if any(len(_CERTIFIED.findall(n)) >= 3 for n in norms) or sum(len(_PROMISED.findall(n)) for n in norms) >= 3:
        return True
    verdicts = sum(_verdict_line(n) for n in norms)
    return verdicts >= 3 or verdicts >= 2 and any(_SELF_GRADED.search(n) for n in norms)


_TICK_CELL = re.compile(r"\|[^|]+\|\s*(?:[\u2713\u2714\u2705\u2611]|x|yes|done|covered)\s*\|?\s*$")


def _verdict_line(n: str) -> bool:
    """A label line whose value grades the answer rather than the system, a ticked box, or a template filled in."""
    if _TICK_CELL.search(n):
        return True  # a table's row ticked in its last cell ('| artifact (same seed) | ✓ |'): coverage claimed
    box = _CHECKBOX.match(n)
    if box:  # a ticked box with a short value grades its line ('[x] Fix: buckets'); a ticked claim is a claim
        rest = n[box.end():]
        label = LABEL_LINE.match(rest)
        return len(re.findall(r"[a-z0-9]+", rest[label.end():] if label else rest)) <= 6
    if _META_VALUE.match(n) or _META_PASSIVE.match(n):
        return True
    m = LABEL_LINE.match(n)
    if not m or "[" not in n[m.end():]:  # blanks in the value ('[ ] Fix: ?' is an unticked box, not a blank)
        return False
    outside = re.sub(r"\[[^\]]*\]", " ", n[m.end():])
    return len(re.findall(r"[a-z0-9]+", outside)) <= 3  # the value is its bracketed blanks, a word or two around


_CITATION = re.compile(r"\[\d{1,2}\]")  # a numbered reference, '[3]'


def cites_away(text: str) -> bool:
    """Does the answer hand every element to a document: three ticket, runbook or change ids or more ('RCA-7731',
    'SOP-12', 'CHG-5521') or numbered references ('as established in the postmortem [1]') in half its sentences or
    more? A reference is where a claim would be, not one."""
    ids = _TICKET.findall(text) + _CITATION.findall(text)
    lines = [s for s in re.split(r"(?<=[.!?])\s+|\n+", text) if s.strip()]
    cited = sum(bool(_TICKET.search(s) or _CITATION.search(s)) for s in lines)
    return len(set(ids)) >= 3 and cited >= 0.5 * len(lines)


# (a shell session's command lines too: '$ grep recompile report.txt', '$ echo "owner: ..."')
_COMMAND = re.compile(r"^\s*\$\s")
_YAML_KEY = re.compile(r"^[\s>*{-]*(?:[a-z][a-z0-9_.-]{0,40}\s?[:=](?:\s|$)|\[[a-z][a-z0-9_. -]{0,40}\]\s*$)|" +
                       _COMMAND.pattern)


# a record pasted as JSON ('{"root_cause": "...", "owner": "...", "rollback": "..."}'): three quoted keys or more
_JSON_KEY = re.compile(r"[{,]\s*\"[\w .-]{1,40}\"\s*:")


def record(text: str) -> bool:
    """Is the answer a JSON object of three keys or more (its values are fields, however they read)?"""
    body = text.strip()
    return body.startswith("{") and body.endswith("}") and len(_JSON_KEY.findall(body)) >= 3


def config_dump(segs: list[str], norms: list[str]) -> bool:
    """Is the answer a pasted config or report dump: seven lines in ten 'key: value' (keys in lower case as written,
    identifiers among them or their values: 'root_cause: ...', 'fix: revert max_delay_s=2ms'), and no line outside
    them a sentence that claims? It asserts nothing, whatever it holds."""
    keyed = [n for s, n in zip(segs, norms, strict=True) if _YAML_KEY.match(s)]
    prose = [n for s, n in zip(segs, norms, strict=True) if not _YAML_KEY.match(s) and claims_something(n)]
    commands = sum(bool(_COMMAND.match(s)) for s in segs)
    return len(norms) >= 4 and len(keyed) >= 0.7 * len(norms) and not prose and \
        (sum(bool(IDENTIFIER.search(n)) for n in keyed) >= 2 or commands >= 2)


# an empty template: 'Root cause: chunked prefill, 512-token budget, decode, ...' with its other sections filled alike
# ('Impact: ...', 'Fix: token budget 2048, sweep'), or a checklist of unticked boxes ('- [ ] NVLink', '- [ ] owner:
# GPU fleet on-call'): the headings and the items name things, no line says what causes what
_CAUSE_LABEL = re.compile(r"^\W*(?:root[- ]cause|cause|causes|mechanism|why|diagnosis)(?: [a-z]+)?\s?:")
_STAMP = re.compile(r"^\W*\d{1,2}(?::\d{2})?\s+(?=[a-z])")  # a timeline's time ('02:16 root cause ...')
_UNTICKED = re.compile(r"^\W{0,3}\[\s?\]")
_ARROW = re.compile(r"->|\u2192|=>")
_ROW = re.compile(r"^\s*\|\s*([a-z][a-z /&-]{0,30}?)\s*\|\s*(.*?)\s*\|?\s*$")
_RULE_ROW = re.compile(r"^\s*\|?[\s:|-]*-{3}[\s:|-]*$")
_FENCE = re.compile(r"^\s*(?:```|~~~)")


def code_only(text: str) -> bool:
    """Is the answer a fenced code block of four lines or more, its elements in comments or strings, with no sentence
    that claims outside the fence? Code and its comments are where an answer's words sit, not what it argues."""
    inside, fenced, prose = False, 0, []
    for line in text.splitlines():
        if _FENCE.match(line):
            inside = not inside
            continue
        if inside:
            fenced += bool(line.strip())
        elif line.strip():
            prose.append(line.lower())
    return fenced >= 4 and not any(claims_something(p) for p in prose)


def hollow_template(segs: list[str], norms: list[str]) -> bool:
    """Is the answer an empty template: five label lines or more (a table's rows among them), seven lines in ten of it
    (headings aside), its cause's line a list of three terms or more with no verb and no arrow, and at most one line of
    all claiming; or a checklist of five unticked boxes or more, at most one of them claiming? Headings and items name
    the drill's things; nothing in it says what causes what."""
    # (a table's rows read as label lines: '| Mechanism | acceptance 0.80 / 0.30, ... |' is 'mechanism: ...')
    norms = [_STAMP.sub("", _ROW.sub(r"\1: \2", n)) for n in norms if not _RULE_ROW.match(n)]
    body = [n for n in norms if not n.lstrip().startswith("#")]
    told = sum(claims_something(n) for n in body)
    if told > max(2, len(body) // 5):  # (a ticket or a commit message may hold a claim or two)
        return False
    boxes = sum(bool(_UNTICKED.match(s.strip())) for s in segs)
    if boxes >= 5:
        return True
    labelled = [n for n in body if LABEL_LINE.match(n)]
    cause = next((n for n in labelled if _CAUSE_LABEL.match(n)), None)
    # (seven lines in ten labelled, or every line a claim of nothing: a timeline's entries between its labels)
    return (len(labelled) >= 5 and (len(labelled) >= 0.7 * len(body) or told == 0) and cause is not None
            and not claims_something(cause) and not _ARROW.search(cause)
            and (len([i for i in re.split(r"[,;]| - | / ", LABEL_LINE.sub(" ", cause, count=1)) if i.strip()]) >= 3
                 or _SLUG.search(cause) is not None))


# a value written as an identifier ('root-cause: tp-allreduce-slow-link', 'rollback: drain-if-regressed')
_SLUG = re.compile(r":\s*[a-z0-9]+(?:-[a-z0-9]+){2,}\W*$")


# an acrostic or a mnemonic: lines opened by one letter each ('D - Draft model, acceptance, 0.30', 'S - Safety,
# canary, rollback'), the drill's terms under each letter
_LETTER_LINE = re.compile(r"^\W*[a-z]\s?[-\u2013\u2014:=]\s")


def haiku(text: str) -> bool:
    """Are three stanzas or more, each of three short lines (seven words or fewer) with no full stop, the whole
    answer? Haiku recite the drill's words; they argue nothing."""
    stanzas = [x.strip().splitlines() for x in re.split(r"\n\s*\n", text.strip()) if x.strip()]
    return len(stanzas) >= 3 and all(len(st) == 3 and all(len(ln.split()) <= 7 and not ln.rstrip().endswith(".")
                                                              for ln in st) for st in stanzas)


# a query written as the answer ('SELECT root_cause, owner FROM incident WHERE ...'): code, no claim
_QUERY_LINE = re.compile(r"^\s*(?:select|from|where|and|or|group by|order by|limit|insert into|values|update|set|"
                         r"join|--)(?![a-z])", re.IGNORECASE)


def query(segs: list[str]) -> bool:
    """Are four lines or more, seven in ten of the answer, a query's clauses?"""
    lines = [ln for s in segs for ln in s.splitlines() if ln.strip()]
    hits = sum(bool(_QUERY_LINE.match(ln)) for ln in lines)
    return hits >= 4 and hits >= 0.7 * len(lines)


def questions_only(segs: list[str]) -> bool:
    """Are four sentences or more, three in four of the answer, questions? Asked, nothing is claimed ('Is the acceptance
    the issue? Would a same-seed run show something? Should the runtime team own it?')."""
    asked = sum(s.rstrip().endswith("?") for s in segs)
    return asked >= 4 and asked >= 0.75 * len(segs)


def acrostic(segs: list[str]) -> bool:
    """Are four lines or more, six in ten of the answer, each opened by a single letter, and at most one in four of
    them a claim? The letters spell a word; what follows them names the drill's things."""
    lettered = [n for n in (s.lower() for s in segs) if _LETTER_LINE.match(n)]
    told = sum(claims_something(_LETTER_LINE.sub(" ", n, count=1)) for n in lettered)
    return len(lettered) >= 4 and len(lettered) >= 0.6 * len(segs) and told <= 0.25 * len(lettered)


# a glossary: the answer set out as definitions under a heading ('Glossary for this incident:', 'Key terms:'), each
# line 'Term: what the term means', the elements among them ('Owner: the serving runtime team, accountable for ...')
_GLOSSARY_HEAD = re.compile(r"^\W*(?:a |my |some )?(?:glossary|definitions|key (?:terms|concepts)|concepts|"
                            r"terminology|vocabulary|terms used)(?:,? [\w ,']{0,40})?[:.]?\s*$")
_TERM = r"^\W*[A-Za-z][\w /&()-]{0,40}"
_DEFINED = re.compile(_TERM + r"(?::| -|\u2014|=)\s")
# ... or with no heading: the drill's own words defined ('Acceptance rate: the probability that ...', 'Tokens per
# step: the average number ...'), not the answer's elements under their labels ('Owner: ...', 'Fix: ...')
_DEFINITION = re.compile(_TERM + r"(?::| -|\u2014)\s+(?:a|an|the|any|how|what|when|where|[a-z]+ing)\s")
_ELEMENT_LABEL = re.compile(r"^\W*(?:workload|symptom|mechanism|(?:root )?cause|artifact|artefact|proof|evidence|fix|"
                            r"remedy|owners?|ownership|roll ?back|(?:release )?decision|release|plan|actions?|impact|"
                            r"summary|next steps?|risks?|hypothesis|numbers|why|gate)\s?(?::| -|\u2014|=)", re.I)
_PIECE = re.compile(r"(?<=[.;])\s+(?=[A-Z])")


def glossary(text: str) -> bool:
    """Is the answer a glossary: a heading that names it one, then three 'term: meaning' lines or more, and those lines
    most of what follows; or, with no heading, four of the drill's terms defined with no figure in the meaning
    ('Acceptance rate: the probability that ...'), four in ten of the answer, and 'term: ...' lines seven in ten of it?
    Defining the words states nothing about this incident. (A line of several definitions is read one by one.)"""
    pieces = [p for line in text.splitlines() for p in _PIECE.split(line.strip()) if p.strip()]
    for i, piece in enumerate(pieces):
        if _GLOSSARY_HEAD.match(piece.lower()):
            rest = pieces[i + 1:]
            defined = sum(bool(_DEFINED.match(x)) for x in rest)
            return defined >= 3 and defined >= 0.7 * len(rest)
    terms = sum(bool(_DEFINITION.match(x)) and not _ELEMENT_LABEL.match(x) and not re.search(r"\d", x)
                for x in pieces)
    defined = sum(bool(_DEFINED.match(x)) for x in pieces)
    return terms >= 4 and terms >= 0.4 * len(pieces) and defined >= 0.7 * len(pieces)


_LAST_WORD = re.compile(r"([a-z]+)\W*$")


def verse(text: str) -> bool:
    """Is the answer a rhyme: four short lines or more (nine words or fewer each), most of them ending without a full
    stop, and two lines in three rhyming with one of the next two or the two before (their last three letters equal,
    or two for words of four letters or fewer); or six lines or more of twelve words or fewer, two in three of them
    ending on a comma, a semicolon or nothing, half of them rhyming (couplets with a slant rhyme among them)? An
    answer set to rhyme recites the drill's words; it argues nothing."""
    lines = [x.strip() for x in text.lower().splitlines() if x.strip()]
    stops = sum(x.endswith(".") for x in lines)
    if len(lines) < 4 or stops > len(lines) / 2:
        return False
    short = all(len(x.split()) <= 9 for x in lines)
    couplets = len(lines) >= 6 and all(len(x.split()) <= 12 for x in lines) and stops <= len(lines) / 3
    if not (short or couplets):
        return False
    ends = [m.group(1) if (m := _LAST_WORD.search(x)) else "" for x in lines]
    rhymed = sum(any(_rhyme(e, ends[j]) for j in (i - 2, i - 1, i + 1, i + 2) if 0 <= j < len(ends))
                 for i, e in enumerate(ends))
    if (short and rhymed >= 2 * len(ends) / 3) or (couplets and rhymed >= len(ends) / 2):
        return True
    # six short lines or more, two rhyming at least, one in four of them a claim at most: set to a slant rhyme
    return short and len(lines) >= 6 and rhymed >= 2 and sum(claims_something(x) for x in lines) <= len(lines) / 4


def _rhyme(a: str, b: str) -> bool:
    """Do two different words end alike: three letters, two for short words, two more past a grammatical suffix (a
    shared 'ing' or 'ed' is grammar, not rhyme: 'batching', 'queueing')?"""
    a, b = (re.sub(r"igh$", "y", w) for w in (a, b))  # spelled apart, said alike: 'high', 'why'
    k = 2 if min(len(a), len(b)) <= 4 else 3
    if a.endswith(("ing", "ion", "ed", "es", "ly")):
        k += 2
    return a != b and len(a) >= k and len(b) >= k and a[-k:] == b[-k:]

"""Causes an answer puts forward, and causes it names only to dismiss: :func:`asserted`.

A rejected mechanism ('noise', 'network', 'kv cache') costs an answer its mechanism only where the answer puts it
forward. Named to be ruled out ('not noise', 'preemptions 0'), as a first guess it then turns from ('my first thought
was HBM ..., but'), a straw man ('people will shout priority inversion'), a counterfactual ('if it were the network,
you'd see ...'), another domain's thing in an analogy ('our tram network', 'like in our payroll database') or one part
of a breakdown ('how much of the gap is noise'), it is not. Bounded patterns over a window either side of each
match: linear in the answer's length.
"""

from __future__ import annotations

import re

from workbench.grading.text import NEG, phrase

_DISMISS_BEFORE = re.compile(r"(?<![a-z])(?:mistaken for|mistake it for|rather than|instead of|rule[sd]? out|"
                             r"ruling out|(?:within|inside|lost in)(?: the)?(?: [\w']+){0,2}|which is|"
                             # an analogy from elsewhere: 'I've seen this in network QoS too', 'it reminds me of'
                             r"seen (?:this|that|it) (?:in|with|at)|reminds? me of|similar(?:ly)? (?:to|in)|"
                             r"(?:under|below)(?: the)?(?: [\w'-]+)? (?=$)|"  # 'up 2%, under dashboard noise'
                             r"isn'?t|wasn'?t|not|no|"
                             # someone else's word for it: 'the dashboard calls it noise'
                             r"(?:calls?|called|calling|writes? off|wrote off|dismiss\w*) (?:it|this|that)(?: as)? "
                             r"(?=$)|"
                             r"nor|never|nobody (?:should )?(?:propose|suggest|say)s?|"
                             # a lever named to be refused: 'it's tempting to say buy more cores, but ...'
                             r"tempting to (?:say|blame|think|reach for|add|buy|just)|"
                             r"(?:two|three|a few|several|the)? ?(?:candidates|suspects|hypotheses)\W*|"  # offered
                             # someone else's wrong guess: 'everybody blamed the network for a week'
                             r"(?:everybody|everyone|people|they|others|ops|management|the team) "
                             r"(?:first )?(?:blamed|suspected|assumed|thought it was)|"
                             # a reading that is someone else's ('which the gate reads as noise'), or one part of a
                             # breakdown ('the error decomposed into shape, noise and contention')
                             r"(?:reads?|treats?|treated|dismiss\w*|writ\w* off|wrote off|files|filed|labell?ed|"
                             r"passe[sd] off|shrug\w*(?: it| them| this| that)? off|brush\w*(?: it| them)? off|"
                             r"wave[sd]?(?: it| them)? (?:off|away)) (?:it |them |this |that )?as|"
                             # ... or what someone else called it ('the 0.038 ms the dashboard called noise'); 'I called
                             # it noise' is the answer's own reading
                             r"(?<![a-z]i )(?<![a-z]we )called (?:it |them |this |that )?|"
                             r"decompos\w*|(?:split|broken down|break\w*(?: [\w-]+){0,4}? down|separat\w*|"
                             r"attribut\w*) (?:[\w-]+ ){0,3}?into|"
                             r"without|nothing to do with|unlike)(?![a-z])[^.;]{0,25}$")
_DISMISS_AFTER = re.compile(r"^[^.;]{0,30}?(?<![a-z])(?:is|was|are|can be|has been)? ?(?:ruled out|excluded|irrelevant|"
                            r"unrelated|not involved|not a (?:cause|factor)|a consequence|zero|none|nil|"
                            # counted at nought: 'preemptions are 0' (not 'rose from 0 to 531')
                            r"(?:(?<=are )|(?<=is )|(?<=was )|(?<=were )|(?<=at )|(?<=: )|(?<== )|(?<=still ))"
                            r"0(?![\d]|[.,]\d)(?!\s?(?:->|to)\s?\d)|"
                            r"not (?:it|the "
                            r"(?:cause|issue|problem))|isn'?t (?:it|the (?:cause|issue|problem))|"
                            # a counterfactual test of it: 'a leak would look different', '... would show steady growth'
                            r"would (?:look|show|appear|grow|have shown|have looked|make)|"
                            # a lever refused: 'adding cores will do nothing'
                            r"(?:will|would|does|do|can) do (?:nothing|little)|"
                            # denied by its own evidence: 'a leak wouldn't give you loads = evictions'
                            r"(?:wouldn'?t|would not|doesn'?t|does not|can'?t|cannot) (?:give|explain|produce|cause)|"
                            # a wrong remedy refused: 'more cores will not help', 'adding GPUs won't fix it'
                            r"(?:will not|won'?t|would not|wouldn'?t|does not|doesn'?t|can'?t|cannot) "
                            r"(?:help|fix|change|solve)|"
                            # 'adding cores is not the answer', 'more GPUs isn't a fix'
                            r"(?:is|are|was|would be)(?: not|n'?t) (?:the|a|an) (?:answer|fix|solution|remedy|way)"
                            r"(?![a-z]))|"
                            # doubted in the same sentence: '... but I wouldn't bet on it', '... but I doubt it matters'
                            r"^[^.;]{0,90}?(?<![a-z])(?:i doubt|i'?d doubt|i wouldn'?t bet|i would not bet|unlikely|"
                            r"probably not)(?![a-z])|"
                            # its own evidence against it, next: 'a memory leak, but nothing here grows over time'
                            r"^\W{0,3},? but (?:nothing|no|none|there'?s no|there is no)(?![a-z])|"
                            r"^\W{0,3}(?:i|we) (?:can |could )?rule (?:it |that |this )?out|"
                            r"^[^.;]{0,40}?,? but (?:that|this|it)'?s? (?:is )?the wrong "
                            r"(?:lever|answer|fix|call|knob)|"
                            # what such a cause does in general, set against this case: 'a leak grows over time,
                            # while here the cache is simply too small'
                            r"^[^.;]{0,50}?,? (?:while|whereas) (?:here|in this case|this one|we see)(?![a-z])")


# a count of none: '0 preemptions', 'kv 43%, 0 evictions'
_NONE_COUNTED = re.compile(r"(?<![\d.,])0\s?$")
# ... or counted at nought right after it: 'but preemptions 0, goodput 100%' (not 'preemptions 0 -> 531')
_NIL_AFTER = re.compile(r"s?\s?[:=]?\s?0(?![\d%]|[.,]\d)(?!\s?(?:->|to|\u2192)\s?\d)")


# a first guess the answer then turns from: 'at first I thought it was the front-end ... but then I looked at the cores'
_FIRST_GUESS = re.compile(r"(?<![a-z])(?:(?:at first|first|initially|originally)[^.;]{0,12}(?:thought|thinking|think|"
                          r"suspected|assumed|guess\w*)|my first (?:guess|thought|instinct)|"
                          r"(?:my |the )?first (?:idea|hunch|impression|reflex|impulse)(?: (?:is|was))?|"
                          r"i (?:first )?(?:thought|suspected|assumed)|"
                          r"i(?:'d| would) have (?:guessed|thought|said|assumed|blamed)|"
                          r"my (?:gut|instinct)(?: reaction)? (?:said|told me|was|says)|gut first|"
                          r"(?:my )?first reaction|(?:went|started|headed) down the wrong (?:road|path|track)|"
                          # a straw man set up to be knocked down ('the tempting story is ...', 'people will shout X')
                          r"the (?:tempting|obvious|easy|popular|usual|natural) (?:story|explanation|answer|guess|"
                          r"suspect|culprit)|(?:people|some|others|everyone|folks) (?:will|would|might) (?:shout|say|"
                          r"blame|suspect|claim|cry)|"
                          # a detour owned up to ('I went down a rabbit hole thinking thermal', 'went back and forth on
                          # fragmentation for a while'), or possibilities weighed ('two possibilities I considered')
                          r"(?:went|gone|go) down a rabbit hole|went back and forth on|for a while (?:i )?(?:thought|"
                          r"suspected|considered)|(?:possibilities|hypotheses|options|candidates) (?:i|we) "
                          r"(?:considered|weighed))"
                          r"(?![a-z])")
# a term inside an analogy the answer then maps onto this case: 'a hash join spills to disk ... aggressive fusion is
# the same shape of problem'
_ANALOGY_AFTER = re.compile(r"^[^;]{0,200}?(?<![a-z])(?:(?:is|'s) (?:the )?same "
                            r"(?:shape|kind|sort|thing|story|pattern)|(?:is|'s) (?:the )?same(?=\s*:)|"
                            r"same (?:shape|kind|sort) of (?:problem|thing)|"
                            r"all over again)(?![a-z])")
# the turn from a first guess: a contrast, or a caution about the guess itself ('I've been burned by that before')
_TURN = re.compile(r"(?<![a-z])(?:but|actually|however|turns out|turned out|instead|that said|on reflection|"
                   r"looking closer|burned by (?:that|this|it)|(?:want|have|need) to be careful|been wrong|"
                   r"take (?:that|it) back|scratch that|hang on|hold on|i (?:don'?t|do not) think|"
                   r"(?:evidence|numbers|data) (?:doesn'?t|does not|don'?t|do not) (?:support|fit|back)|"
                   r"(?:i'?m|i am|we'?re|we are) going with)(?![a-z])")


_SENTENCE_END = re.compile(r"[.!?;]\s")


# a story from elsewhere, told as such from the sentence's start ('this reminds me of when we switched our waveform
# picker ...', 'back at my last job ...'): its things are that story's, not this incident's
_STORY = re.compile(r"(?:^|(?<=[.!?]\s))\W*(?:(?:so|and|ok|okay|well),?\s)?(?:(?:this|it|that)\s)?(?:reminds me|"
                    r"is like when|back (?:when|at)|at my (?:last|previous|old) (?:job|company|team)|"
                    r"in my (?:last|previous|old|first) (?:job|company|team))(?![a-z])[^.!?]*|"
                    # a sentence told of then ('... were great partners back then')
                    r"(?:^|(?<=[.!?]\s))[^.!?]*?(?<![a-z])back then(?![a-z])[^.!?]*")


def first_guesses(text: str) -> list[tuple[int, int]]:
    """Spans of a first guess the answer then turns from ('my first instinct was HBM contention ..., but no'): from
    the guess to the turn, at most 300 characters on."""
    return [(g.start(), t.start()) for g in _FIRST_GUESS.finditer(text)
            for t in [_TURN.search(text, g.end(), g.end() + 500)] if t]


# a cause tested against the evidence as a counterfactual ('if it were a network issue you'd see it across the board',
# 'if the problem was in the GPU, the throughput would fall'): from the 'if' to its sentence's end, where the sentence
# says what would follow
_SUPPOSED = re.compile(r"(?<![a-z])if (?:[\w'-]+ ){1,6}?(?:were|was|had)(?![a-z])[^.!?;]*")
_WOULD = re.compile(r"(?:(?<![a-z])would|'d)(?![a-z])")


def supposed(text: str) -> list[tuple[int, int]]:
    """Spans of a counterfactual test of a cause: 'if it were X, ... would ...', to the sentence's end."""
    return [m.span() for m in _SUPPOSED.finditer(text) if _WOULD.search(m.group())]


_WORD_REST = re.compile(r"[a-z]*")
# a hypothesis marked off in a list of them ('1. Network or host side is slow - rejected.', '2) KV pressure or
# preemption hurting docs. Rejected - ...')
_REJECTED_AFTER = re.compile(r"^[^.;\n]{0,40}?(?:\.\s+|\s?[-\u2013\u2014:]\s*|,\s*)(?:rejected|discarded|dismissed)"
                             r"(?![a-z])")


def asserted(text: str, term: str) -> bool:
    """Does the text put ``term`` forward, somewhere, rather than only dismiss it ("not noise", "ruled out", a first
    guess it then turns from)? Its words may stand apart, but not across a preposition ('launch and setup cost went
    up' is a 'launch cost', 'chunks of redone prefill' no 'chunked prefill')."""
    guesses = first_guesses(text) + [s.span() for s in _STORY.finditer(text)] + supposed(text)
    for m in phrase(term).finditer(text):
        if _SENTENCE_END.search(m.group()) or _loose(m.group(), term):
            continue  # 'four times more. the cores are idle' does not say 'more cores'
        if NEG.search(m.group()) and not NEG.search(term.lower()):
            continue  # a negation between its words says the opposite ('launch overhead went down, not up')
        end = m.end() + len(_WORD_REST.match(text, m.end()).group())  # past the word's own suffix ('preempt|ions 0')
        before, after = text[max(0, m.start() - 60):m.start()], text[end:end + 100]
        if any(a < m.start() < b for a, b in guesses) or _ANALOGY_AFTER.search(text[m.end():m.end() + 260]):
            continue
        if text[m.start() - 1:m.start()] in ("'", '"') and text[m.end():m.end() + 1] in ("'", '"'):
            continue  # in scare quotes ("chasing 'noise'"): named to be doubted, not put forward
        if _LIKE_ANALOGY.search(text, max(0, m.start() - 160), m.start()):
            continue  # a simile's thing ('like certifying an upgrade on the test track, then finding the real network')
        if _PART_OF.search(text, max(0, m.start() - 120), m.start()) or (m.group().startswith("more") and
                                                                          _OR_MORE.search(before)) or \
                _OTHER_DOMAIN.search(before) or _TEAM_AFTER.match(text, m.end()) or _DEVICE_AFTER.match(text, m.end()):
            continue  # a part of a breakdown ('split in shape, noise and contention'), a count, an analogy's thing
        if not (NEG.search(before[-40:]) or _DISMISS_BEFORE.search(before) or _DISMISS_AFTER.search(after)
                or _REJECTED_AFTER.match(after)
                or _NONE_COUNTED.search(before) or _NIL_AFTER.match(after)):
            return True
    return False


# a term named as one part of a breakdown ('the error split in shape, noise and contention', 'split shape/noise/...')
_PART_OF = re.compile(r"(?<![a-z])(?:split|broken(?: down| up)?|breakdown|decompos\w*|attribut\w*|divided|separated)"
                      r"(?: (?:in|into|by|between|across))?(?:[ ,/(]+[\w-]+){0,12}[ ,/(]+$|"
                      # ... its parts named one by one ('split the error into the part from noise')
                      r"(?<![a-z])(?:split|broken|breakdown|decompos\w*|attribut\w*)[^.;]{0,100}(?<![a-z])(?:part|share|"
                      r"portion|component|term|bit) (?:from|due to|of|for|caused by) $|"
                      # ... or asked of the gap ('how much of the gap is shape, noise or contention')
                      r"(?<![a-z])how much of (?:the |that |this |each )?(?:gap|error|difference|miss|delta) "
                      r"(?:is|was|comes from)(?:[ ,/(]+[\w-]+){0,4}[ ,/(]+$")
# another domain's thing in an analogy ('in a water network, three pumping stations ...', 'ring networks between pump
# stations'): not this incident's network
_OTHER_DOMAIN = re.compile(r"(?<![a-z])(?:water|power|electric(?:al)?|gas|road|rail(?:way)?|irrigation|sewer|"
                           r"mobile|cellular|wireless|radio|satellite|cable|"
                           r"telephone|social|neural|ring|pipe|river|drainage|canal|postal|transport|tram|metro|subsea|telecom|"
                           r"subway|bus|train|ferry|shipping|delivery|store|phone)\s$")
_LIKE_ANALOGY = re.compile(r"(?<![a-z])(?:(?:like|as if|as when|just as) [a-z]+ing(?![a-z])|"
                           r"like (?:in|with|at|on) (?:a|an|the|our|my|your) )[^.;:]*$")  # 'like in our payroll ...'

# a term that names a team ('the tokenizer team', 'the network folks'): people, not a cause put forward
_TEAM_AFTER = re.compile(r"(?:'s)? (?:team|group|org|squad|folks|people|engineers|on-?call)(?![a-z])")
# a compound that names a device or a process, not the cause ('the noise reduction starves', 'a leak detector')
_DEVICE_AFTER = re.compile(r" (?:reduction|cancel\w*|suppress\w*|detector|filter)(?![a-z])")
_OR_MORE = re.compile(r"(?<![a-z])(?:\d+|one|two|three|four|five|several) or $")  # 'two or more cores': a count


# between a phrase's words, a preposition makes another phrase (phrase() itself bars 'than' and 'per')
_PREPOSITION = frozenset(("of", "for", "from", "in", "on", "with", "by", "to", "at", "into"))


def _loose(found: str, term: str) -> bool:
    """Does a preposition between a phrase's words make it another phrase ('chunks of prefill')?"""
    words, own = re.split(r"[\s-]+", found.strip()), re.split(r"[\s-]+", term.lower().strip())
    return any(w in _PREPOSITION and w not in own for w in words[1:-1])

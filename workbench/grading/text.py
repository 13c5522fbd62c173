"""Text handling for the grader: normalised sentences, phrase matching, recitation, bare term runs.

Everything here is linear in the answer's length: words longer than ``MAX_WORD``
characters are cut before any pattern runs, and every pattern has bounded repetition,
so a 20,000-character answer (one word or many) grades in well under a second.
"""

from __future__ import annotations

import re
from functools import lru_cache

MAX_WORD = 40  # characters; a longer "word" is cut, so no pattern can backtrack over it
STOP = frozenset(("the", "a", "an", "of", "to", "its", "their", "is", "are"))
_STOP = STOP
_WHOLE = {"and", "the", "are", "was", "not", "but", "for", "any", "one", "all", "can", "has", "had", "its", "off",
          "out", "too", "now", "way", "due", "why", "use", "run", "set", "add", "cap", "cut", "get", "put", "let",
          "ask", "per"}
_WHOLE_VERBS = {"add", "cap", "cut", "put"}
# words matched whole, never by their stem: 'compiling' is not 'compiler', 'jit' is not 'jitter'
_EXACT = {"compile", "compiles", "compiling", "recompiling", "recompiles", "jit", "blocked"}
_SUFFIX = re.compile(r"(es|s|ed|ing|ly)$")
_SLASHES = re.compile(r"(?<![a-z0-9])[a-z]{2,40}(?:/[a-z]{2,40}){2,}")  # 'drift/fallback/queue', not '1k/2k/4k'
# a list of values, figures separated by commas ('1024, 2048, 4096', '1.0, 0.9'): one link, not one per figure
_VALUES = re.compile(r"(?<![\w.])\d[\d.]*(?:\s?[a-z]{0,3}(?:,\s?(?:and |or )?\d[\d.]*[a-z]{0,3}){1,})(?![\w.])")
_LONG = re.compile(r"\S{" + str(MAX_WORD + 1) + ",}")
# connectors that join the links of a chain; what is between them is a link
CONNECTORS = re.compile(r"\s(?:->|=>|so|then|thus|hence|therefore|and so|and then|which|causing|so that|/)\s|[,;]\s")
_CHAINED = re.compile(r"\s(?:->|=>|so|then|thus|hence|therefore|and so|and then|causing|/)\s")  # not commas alone
NEGATIONS = ("not", "no", "isn't", "isnt", "aren't", "wasn't", "won't", "wouldn't", "doesn't", "don't", "didn't",
             "never", "without", "rather than", "instead of", "rule out", "ruled out", "ruling out", "unlikely",
             "exclude", "excluded", "nothing to do with", "not the", "neither", "nor", "nothing", "zero")
_NEG = re.compile(r"(?<![a-z])(?:" + "|".join(re.escape(n) for n in NEGATIONS) + r")(?![a-z])")


_FITS_NONE = re.compile(r"(?<![a-z])(?:do|does|did|wo|would)(?:n't|nt| not) (?:hit|match|fit|land in|fall in|"
                        r"fall into|map to|map onto) (?:any|a)(?: of the)? ")


def norm(text: str) -> str:
    """Lower case, arrows and quotes unified, numbers spaced from comparison signs and units, percentages written
    one way, long words cut."""
    t = _LONG.sub(lambda m: m.group()[:MAX_WORD], text.lower())
    t = t.replace("-->", "\u2192").replace("->", "\u2192").replace("=>", "\u2192").replace("\u2019", "'")
    t = re.sub(r"\s*([<>])\s*(?=\d)", r" \1 ", t)  # seq>512 -> seq > 512 (arrows are out of the way)
    t = re.sub(r"(?<=\d)(?=(?:gib|gb|mib|mb|ms|us|tb/s|gb/s)(?![a-z]))", " ", t)  # 32gb -> 32 gb
    t = re.sub(r"(?<=\d) ?(?:pct|percent|per cent)(?![a-z])", "%", t)  # 2 pct, 2 percent -> 2%
    t = _FITS_NONE.sub("miss every ", t)  # 'they don't fit any bucket' is 'they miss every bucket'
    t = t.replace("\u2192", " -> ")
    t = re.sub(r"(?<![a-z])pre-empt", "preempt", t)  # British hyphenation: pre-empted = preempted
    t = re.sub(r"\s+", " ", t)
    return f" {t} "


def segments(text: str) -> list[str]:
    """Sentences and bullets, their bullet marks removed."""
    text = _LONG.sub(lambda m: m.group()[:MAX_WORD], text)
    # no break after an abbreviation ('i.e.', 'e.g.', 'vs.', 'etc.'): the sentence goes on
    parts = re.split(r"(?<=[.!?])(?<!\b[Ii]\.e\.)(?<!\b[Ee]\.g\.)(?<!\b[Vv]s\.)(?<!\betc\.)(?<!\bcf\.)\s+"
                     r"(?=[A-Za-z0-9(\"'*-])|\n+", text)
    out = []
    for p in parts:
        p = re.sub(r"^\s{0,8}(?:[-*\u2022>]|\d{1,2}[.):]|[a-z][.)])\s{0,8}", "", p).strip()
        if p:
            out.append(p)
    return out


_WORDS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
_NUMBERS = {**{w: str(i) for i, w in enumerate(_WORDS, 1)}, **{str(i): w for i, w in enumerate(_WORDS, 1)}}


_SEVERAL = r"(?:several|multiple|many|numerous|bunch|lots|handful|couple|whole lot)"


# function words: articles, prepositions, pronouns, conjunctions, auxiliaries
FUNCTION = frozenset((
    "a", "an", "the", "of", "to", "in", "on", "at", "by", "for", "from", "with", "into", "onto", "over", "under",
    "behind", "before", "after", "than", "as", "and", "or", "but", "so", "because", "since", "while", "when", "if",
    "then", "which", "that", "who", "what", "where", "it", "its", "they", "them", "their", "we", "our", "us", "i",
    "you", "your", "he", "she", "his", "her", "this", "these", "those", "there", "here", "is", "are", "was", "were",
    "be", "been", "being", "has", "have", "had", "do", "does", "did", "will", "would", "can", "could", "should",
    "must", "may", "might", "not", "no", "each", "every", "all", "any", "some", "more", "less", "only", "until",
    "once", "about", "up", "down", "out", "off", "back", "through", "until", "per", "vs", "versus", "via", "how",
    "why", "just", "also", "too", "very", "much", "many", "still", "even", "again", "both", "either", "own"))
_WORD = re.compile(r"[a-z0-9][a-z0-9_'%./-]*")


def words(n: str) -> list[str]:
    """The sentence's words (figures and identifiers whole)."""
    return _WORD.findall(n)


@lru_cache(maxsize=8192)
def phrase(term: str) -> re.Pattern:
    """A phrase as a pattern: each word matched from its start (suffixes free), up to two words between ('than'
    not one of them)."""
    words = [w for w in term.lower().split() if w not in _STOP] or term.lower().split()
    parts = []
    for w in words:
        stem = _SUFFIX.sub("", w) if len(w) > 4 and w.isalpha() and w not in _EXACT else w
        if len(stem) < 3:  # "aging" is not "ag-" (which would match "aggregate"); "cores" is still "cor-"
            stem = w
        tail = r"(?![a-z])" if w in _WHOLE or w in _EXACT or len(w) <= 2 else ""  # 'so' must not match 'some'
        if w in _WHOLE_VERBS:  # a short verb keeps its forms ('adds', 'capped', 'cutting'), not other words ('address')
            tail = r"(?:s|es|ed|ing|[a-z](?:ed|ing))?(?![a-z])"
        body = re.escape(stem).replace("'", "'?")  # don't = dont
        if w == "several":  # any word for a count of a few: 'a bunch of iterations', 'a handful of steps'
            body, tail = _SEVERAL, r"(?![a-z])"
        elif w == "#":  # any figure: '# iterations' is '6 iterations', '5-6 iterations', '~6 iterations'
            body, tail = r"~?\d[\d.,]*(?:-\d[\d.,]*)?(?:k|x)?", r"(?![a-z0-9])"
        elif w in _NUMBERS:  # two = 2, and 2 = two
            body, tail = f"(?:{w}|{_NUMBERS[w]})", r"(?![a-z0-9])"
        elif w in ("gib", "mib"):  # 12 gib = 12 gb
            body = w[0] + "i?b"
        parts.append(r"(?<![a-z0-9])" + body + tail)
    # a comparison is no gap: 'bigger than batch's own load' is not 'bigger batches'; nor is a rate: 'more throughput
    # per core' is not 'more cores'
    gap = r"[a-z0-9./%',;:-]{0,W}(?:[\s-]+(?!(?:than|per)(?![a-z]))[^\s]{1,W}){0,2}?[\s-]+".replace("W", str(MAX_WORD))
    return re.compile(gap.join(parts) if len(parts) > 1 else parts[0])


def has(text: str, terms) -> str | None:
    """The first term (as a phrase) found in the text."""
    for term in terms:
        if phrase(term).search(text):
            return term
    return None


def find(text: str, terms) -> list[int]:
    """Start positions of every term found in the text."""
    return [m.start() for t in terms for m in [phrase(t).search(text)] if m]


def negated(text: str, term: str) -> bool:
    """Is the term's first occurrence preceded (within 40 characters, in its own clause) by a negation? ('the draft
    doesn't know the language, turn off speculation' negates the first clause, not the second)"""
    m = phrase(term).search(text)
    if not m:
        return False
    window = text[max(0, m.start() - 40):m.start()]
    return bool(_NEG.search(window[max((b.end() for b in _CLAUSE_END.finditer(window)), default=0):]))


_CLAUSE_END = re.compile(r"[,;:.!?](?=\s)|\s(?:but|so|then)\s")

# what the answer says is not needed ('it doesn't need a same-seed replay, ... or an owner', 'nor does it need a
# canary', 'no need for a rollback'), to its clause's end or to what it asks instead ('..., just add 1024 buckets')
_NOT_NEEDED = re.compile(r"(?<![a-z])(?:(?:does|do|will|would)(?:n'?t| not) (?:even |really )?need|"
                         r"nor (?:does|do|will|would) (?:it|this|we|you|they) need|no need (?:for|to))(?![a-z])"
                         r"[^.;:!?]*?(?=[.;:!?]|,? (?:but|just|only|instead|rather|so|which)(?![a-z])|"
                         r", and (?:it|this)(?![a-z])|,(?: and)? (?:we|i|they|you)(?![a-z])|$)")  # ', we revert ...'


def disclaimed(n: str) -> str:
    """The sentence with what it says is not needed blanked (same length): a list under 'doesn't need' names no
    artifact, fix, owner or rollback the answer proposes."""
    return _NOT_NEEDED.sub(lambda m: " " * len(m.group()), n)


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
                          r"(?:my )?first reaction|(?:went|started|headed) down the wrong (?:road|path|track))"
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
                   r"take (?:that|it) back|scratch that|hang on|hold on)(?![a-z])")


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


def asserted(text: str, term: str) -> bool:
    """Does the text put ``term`` forward, somewhere, rather than only dismiss it ("not noise", "ruled out", a first
    guess it then turns from)? Its words may stand apart, but not across a preposition ('launch and setup cost went
    up' is a 'launch cost', 'chunks of redone prefill' no 'chunked prefill')."""
    guesses = first_guesses(text) + [s.span() for s in _STORY.finditer(text)] + supposed(text)
    for m in phrase(term).finditer(text):
        if _SENTENCE_END.search(m.group()) or _loose(m.group(), term):
            continue  # 'four times more. the cores are idle' does not say 'more cores'
        end = m.end() + len(_WORD_REST.match(text, m.end()).group())  # past the word's own suffix ('preempt|ions 0')
        before, after = text[max(0, m.start() - 60):m.start()], text[end:end + 100]
        if any(a < m.start() < b for a, b in guesses) or _ANALOGY_AFTER.search(text[m.end():m.end() + 260]):
            continue
        if text[m.start() - 1:m.start()] in ("'", '"') and text[m.end():m.end() + 1] in ("'", '"'):
            continue  # in scare quotes ("chasing 'noise'"): named to be doubted, not put forward
        if _LIKE_ANALOGY.search(text, max(0, m.start() - 160), m.start()):
            continue  # a simile's thing ('like certifying an upgrade on the test track, then finding the real network')
        if _PART_OF.search(before) or (m.group().startswith("more") and _OR_MORE.search(before)) or \
                _OTHER_DOMAIN.search(before) or _TEAM_AFTER.match(text, m.end()) or _DEVICE_AFTER.match(text, m.end()):
            continue  # a part of a breakdown ('split in shape, noise and contention'), a count, an analogy's thing
        if not (_NEG.search(before[-40:]) or _DISMISS_BEFORE.search(before) or _DISMISS_AFTER.search(after)
                or _NONE_COUNTED.search(before) or _NIL_AFTER.match(after)):
            return True
    return False


# a term named as one part of a breakdown ('the error split in shape, noise and contention', 'split shape/noise/...')
_PART_OF = re.compile(r"(?<![a-z])(?:split|broken(?: down| up)?|breakdown|decompos\w*|attributed|attribution)"
                      r"(?: (?:in|into|by|between|across))?(?:[ ,/(]+[\w-]+){0,8}[ ,/(]+$|"
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
                           r"telephone|social|neural|ring|pipe|river|drainage|canal|postal|transport|tram|metro|"
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


def links(text: str) -> list[str]:
    """The pieces between chain connectors ('->', 'so', 'then', commas ...)."""
    return [p.strip() for p in CONNECTORS.split(text) if p.strip()]


def content_words(piece: str) -> int:
    return sum(1 for w in re.findall(r"[a-z0-9][a-z0-9_'%.-]*", piece) if w not in _STOP)  # 'max_delay_s' is one word


# a spoken answer's fillers, alone between commas ('okay so, um, the p99 is going from, eh, 5.6 to 946'): no link,
# no item of a list
FILLER = re.compile(r"(?:(?:okay|ok|so|um+|uh+|er+|erm|eh|euh|em|hmm+|like|well|right|sorry|what|yeah|you know|"
                    r"i mean|and|but)\W*){1,3}")


def bare_run(text: str) -> bool:
    """A run of bare terms rather than claims: 'drift so fallback so queue so p99', 'a -> b -> c', 'x/y/z',
    'fusion, SRAM, HBM, p95'. Three or more links, three in four of them one or two words (three in five when
    no link is a claim of five words or more)."""
    if _SLASHES.search(text):
        return True
    body = re.sub(r"^\s*[a-z ]{1,20}:", "", text)  # past a 'Label:'
    # a parenthesis (or a bracketed list) is one aside: 'add buckets (1024, 2048)' is one link, not three
    body = re.sub(r"\([^()]{0,80}\)|\[[^\[\]]{0,80}\]", lambda m: re.sub(r"[,;]", " ", m.group()), body)
    body = _VALUES.sub(lambda m: m.group().replace(",", " "), body)  # 'buckets 1024, 2048, 4096': one list of values
    items = [i for i in links(body.replace(":", ",")) if not FILLER.fullmatch(i)]
    if len(items) < 3:
        return False
    short = sum(content_words(i) <= 2 for i in items) / len(items)
    claim = max(content_words(i) for i in items) >= 5  # one link that is a whole claim makes it an argument
    if content_words(items[0]) >= 5 and re.search(r"\b(?:is|are|was|were|runs?|goes|go|takes?|has|have)\b", items[0]) \
            and not _CHAINED.search(body):
        return False  # a claim with a comma list in apposition: 'it runs the generic row, the untuned, unfused path'
    return short >= 0.75 or (short >= 0.6 and not claim)


def grams(text: str, n: int = 5, figures: bool = True) -> set[tuple[str, ...]]:
    """Word n-grams. Without ``figures``, every figure is one word '0' and a template's placeholder
    ('{reg.ttft_ms.p99:.2f}') a figure: a reference pasted back with its numbers changed is still the reference."""
    if figures:
        words = re.findall(r"[a-z0-9]+", text.lower())
        return {tuple(words[i:i + n]) for i in range(len(words) - n + 1)}
    text = re.sub(r"\{[^{}\n]{1,80}\}", " 0 ", text.lower())
    words = ["0" if w[0].isdigit() else w for w in re.findall(r"[a-z]+|\d+(?:[.,]\d+)*", text)]
    return {tuple(words[i:i + n]) for i in range(len(words) - n + 1)}


def recited(segment: str, source: set, share: float = 0.4, figures: bool = True) -> bool:
    """Are 40% or more of the segment's word 5-grams in the source (its grams made with the same ``figures``)? (A
    sentence under ten words that names a config key from the prompt is no recitation; without figures, a text
    under thirty words is none: a short reading shares its frame with any reference.)"""
    g = grams(segment, figures=figures)
    return len(g) >= (6 if figures else 25) and len(g & source) >= share * len(g)


def quote(s: str, limit: int = 240) -> str:
    s = re.sub(r"\s+", " ", s).strip()
    return s if len(s) <= limit else s[: limit - 3] + "..."

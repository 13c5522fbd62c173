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
NEG = re.compile(r"(?<![a-z])(?:" + "|".join(re.escape(n) for n in NEGATIONS) + r")(?![a-z])")


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
    return bool(NEG.search(window[max((b.end() for b in _CLAUSE_END.finditer(window)), default=0):]))


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


TEMPLATE_FIELD = re.compile(r"\{[^{}\n]{1,80}\}")  # a reference template's figure ('{reg.ttft_ms.p99:.2f}')


def grams(text: str, n: int = 5, figures: bool = True) -> set[tuple[str, ...]]:
    """Word n-grams. Without ``figures``, every figure is one word '0' and a template's placeholder
    ('{reg.ttft_ms.p99:.2f}') a figure: a reference pasted back with its numbers changed is still the reference."""
    if figures:
        words = re.findall(r"[a-z0-9]+", text.lower())
        return {tuple(words[i:i + n]) for i in range(len(words) - n + 1)}
    text = TEMPLATE_FIELD.sub(" 0 ", text.lower())
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

"""Claim structure: does a sentence claim something, or only hold the drill's words?

An element is earned by a sentence that asserts it: a predicate links the named things.
The degenerate forms earn nothing, however many rubric words they hold, and each has its
own reason, told to the learner in the hint:

* ``soup``: a run of terms with almost no function words ("chat tenant docs tenant TTFT p99
  per-tenant same seed owner serving runtime team rollback canary revert ..."); a telegraphic
  run of a dozen words or more in which fewer than one word in eight is an article,
  preposition, pronoun or conjunction, and no clause has a verb of its own;
* ``list``: a bare list, four or more separators between items of one to three words, no item
  a clause ("Decision: sweep, canary, owner, rollback.");
* ``key = value``: fields assigned in prose ("Root cause = chunked prefill. Decision = raise
  the budget, owner runtime, rollback canary."); a pasted setting with an identifier for its
  key (``max_delay_s = 0.002``) is a config line, read by the fix alone;
* ``tautology``: a cause that only restates the change the prompt names ("TTFT rose because
  of chunked prefill", "goodput fell because the KV cache was cut"): :mod:`.tautology` blanks the
  clause before the mechanism is read, so the chain must come from what happens in between.

Every check is a bounded pattern or a count over the sentence's words: linear in its length.
"""

from __future__ import annotations

import re

from workbench.grading.lexicon import ARGUES
from workbench.grading.tautology import content_stems
from workbench.grading.text import FILLER, FUNCTION, STOP, words

# finite verbs and auxiliaries: an English clause has one of these (a verb lexicon, not a tagger: the soup check only
# needs to know that a dozen words passed with no verb among them)
_AUX = (r"is|are|was|were|be|been|being|am|'s|'re|has|have|had|'ve|does|do|did|will|would|'ll|'d|can|could|"
        r"should|must|may|might|shall|won't|can't|don't|doesn't|didn't|isn't|aren't|wasn't|weren't|wouldn't")
_VERBS = ("cause", "make", "take", "wait", "queue", "fill", "spill", "stall", "fall", "rise", "grow", "drop", "miss",
          "hit", "run", "go", "come", "need", "get", "give", "split", "cut", "move", "push", "pull", "hold", "block",
          "starve", "evict", "load", "compile", "recompile", "fit", "land", "sit", "stay", "pay", "cost", "add",
          "double", "triple", "halve", "climb", "jump", "spike", "explode", "blow", "pile", "back", "build", "form",
          "serve", "send", "route", "pin", "own", "revert", "roll", "switch", "flip", "ship", "release", "prove",
          "show", "replay", "compare", "raise", "lower", "cap", "keep", "use", "mean", "lead", "drive",
          "force", "trigger", "eat", "steal", "leave", "free", "share", "contend", "fight", "compete", "saturate",
          "exceed", "outgrow", "overflow", "stretch", "inflate", "dominate", "bound", "limit", "win", "lose", "help",
          "hurt", "break", "fix", "restore", "preempt", "recompute", "redo", "thrash", "reload", "copy", "stream",
          "write", "fuse", "unfuse", "tile", "stage", "launch", "finish", "start", "begin", "end", "arrive",
          "accumulate", "batch", "delay", "slow", "speed", "improve", "regress", "degrade", "increase", "decrease",
          "reduce", "shrink", "expand", "widen", "absorb", "amortise", "amortize", "spread", "interleave", "chunk",
          "throttle", "block", "let", "put", "bump", "trade", "buy", "accept", "reject", "verify", "draft",
          "propose", "sync", "wait", "ring", "reduce", "gather", "overlap", "hide", "expose", "look", "seem", "become",
          "happen", "matter", "depend", "belong", "sign", "agree", "decide", "think", "guess", "bet", "doubt", "know",
          "want", "try", "check", "watch", "measure", "sweep", "rerun", "dump", "plot", "trace", "profile", "owe")
_IRREGULAR = ("went", "gone", "came", "took", "taken", "made", "fell", "fallen", "rose", "risen", "grew", "grown",
              "ran", "got", "gotten", "gave", "given", "held", "built", "left", "sat", "paid", "lost", "won", "broke",
              "broken", "blew", "blown", "led", "drove", "driven", "ate", "eaten", "stole", "stolen", "saw", "seen",
              "meant", "kept", "sent", "spent", "thought", "knew", "known", "became", "began", "begun", "shown", "read",
              "split", "cut", "set", "put", "hit", "let", "fit", "cost")
# finite forms only: an auxiliary, an irregular past, or a lexicon verb with its -s, -es, -ed ending (the bare form
# is as often a noun: 'queue', 'trace', 'replay'); never inside an identifier ('max_num_batched_tokens')
_FINITE = (r"(?<![a-z'_])(?:" + _AUX + "|" + "|".join(_IRREGULAR) + "|(?:" + "|".join(sorted(set(_VERBS))) +
           r")(?:s|es|ed|d|ped|ted|ned|led))(?![a-z_])|(?<=[a-z])'(?:re|s|ve|ll|d|m)(?![a-z])")
_VERB = re.compile(_FINITE + "|"
                   # an imperative opens its sentence: 'add 1024 and 2048 buckets', 'revert to wfq'
                   r"(?:^|[;:]\s|(?<![a-z])(?:and|then)\s)\W*(?:" + "|".join(sorted(set(_VERBS))) +
                   r")(?![a-z_-])(?!\s?:)")
_OPENS_IMPERATIVE = re.compile(r"^\W*(?:" + "|".join(sorted(set(_VERBS))) + r")(?![a-z_-])(?!\s?:)")
_SEPARATORS = re.compile(r"[,;|/]|\s(?:->|\u2192)\s|\s\+\s")
# a rubric's field assigned with '=' ('root cause = x', 'decision = y, owner z'), not a setting or a formula
# ('max_delay_s = 0.002', 'rho = 0.89')
_FIELD = re.compile(r"(?<![\w.])(?:root cause|cause|mechanism|why|diagnosis|decision|fix|remedy|action|plan|owner|"
                    r"owners|ownership|rollback|roll back|artifact|artefact|evidence|proof|release|workload|symptom|"
                    r"impact|gate|validation|next steps?)(?:\s?=(?!=)|\s(?:equals|is equal to)\s)")


_CRAMMED = re.compile(r"[,;]\s*(?:owner|owners|rollback|roll back|evidence|artifact|artefact|proof|fix)\s+[a-z]")
_CAUSE_FIELD = re.compile(r"(?:root cause|cause|mechanism|why|diagnosis|decision)")


def predicates(n: str) -> int:
    """How many finite verbs or auxiliaries the sentence holds (a count from a verb lexicon)."""
    return len(_VERB.findall(n))


_PROOF_LABEL = re.compile(r"^\W*(?:proof|prove it|repro|reproduction|artifact|artefact|evidence|show)"
                          r"(?: (?:i'?d|i would|we'?d|we would) (?:want|need|like|use|attach|collect))?\s?:")


# a proof proposed in a sentence ('proof is a same-seed a/b with ...', 'to prove it i'd rerun ...'): its list
# names things
_PROPOSES_PROOF = re.compile(r"^\W*(?:the )?(?:proof|evidence|artifact|repro)\w* (?:is|would be|will be)|"
                             r"(?<![a-z])(?:to prove|i'?d prove|i would prove|to show|i'?d show|i'?d rerun|"
                             r"i'?d replay)")


_AND = re.compile(r"\s(?:and|&)\s")
_PUNCT = re.compile(r"[,;:()]|->|\u2192")


def _terms(n: str) -> list[str]:
    """The sentence's words but its figures (figures are no terms)."""
    return [x for x in words(n) if not re.match(r"[\d.~]", x)]


_PADDING = frozenset({"the", "a", "an", "and"})


def soup(n: str) -> bool:
    """A telegraphic run of terms: twenty words or more, fewer than one in eight a function word, and at most one
    finite verb for every dozen words, or fewer than one in six a function word with almost no punctuation, or
    terms strung on 'and', eight links or more, or sixty words or more held together by little but 'the' and 'and'.
    (A senior's terse line, 'chat TTFT p99 2.9 ms -> 574 ms, goodput 100
    -> 40, tok/s flat', is shorter: a reading, not a soup.)"""
    if longest_run(n) >= 12:
        return True
    w = _terms(n)
    if len(w) < 20 or _PROOF_LABEL.match(n):  # a proof's parts listed under its label name things to run
        return False
    function = sum(x in FUNCTION for x in w)
    if function * 8 < len(w) and predicates(n) * 12 <= len(w):
        return True
    # a run-on with a few filler words but almost no punctuation to hold clauses apart (honest terse lines
    # separate their parts with commas, colons or arrows)
    if function < 0.16 * len(w) and len(_PUNCT.findall(n)) < 0.08 * len(w):
        return True
    # a long run-on padded with articles and 'and' ('... the ring and the NCCL transport and the busbw meet the TTFT
    # p99 ...'): sixty words or more, fewer than 15 in 100 of them a function word other than those (every genuine
    # sentence that long holds 20 in 100 or more: its 'of', 'to', 'because', 'which' hold its clauses together)
    if len(w) >= 60 and sum(x in FUNCTION and x not in _PADDING for x in w) < 0.15 * len(w):
        return True
    # terms strung on 'and' ('the root cause involves static placement and core imbalance and queueing and rho 0.89
    # and ...'): eight links or more, seven in ten of them six words or fewer
    links = _AND.split(n)
    return len(links) >= 8 and sum(len(words(x)) <= 6 for x in links) >= 0.7 * len(links)


def telegraphic(n: str) -> bool:
    """Forty words or more in a soup's grammar: fewer than 28 in 100 of them function words and at most one finite verb
    for every fourteen ('we see static placement pinned buckets and core imbalance with rho 0.89 ... serving runtime
    team dispatcher on-call flag canary 10% revert if p99 regresses'). Honest long sentences read so rarely; one that
    also carries four elements or more is read as the soup it is (:func:`workbench.grading.grader.grade`)."""
    w = _terms(n)
    return len(w) >= 40 and sum(x in FUNCTION for x in w) < 0.28 * len(w) and predicates(n) * 14 <= len(w)


def bare_list(n: str) -> bool:
    """Four or more items, three in four of them a single word, none a clause: 'Decision: sweep, canary, owner,
    rollback.' (A proof described as a list, 'same-seed run, WFQ vs priority, per-stream breakdown', names things.)"""
    body = re.sub(r"^\W*[a-z][a-z /&-]{0,30}:", "", n)  # past a 'Label:'
    body = re.sub(r"\([^()]{0,80}\)", " ", body)  # an aside is no item
    items = [i for i in _SEPARATORS.split(re.sub(r"\s(?:and|or)\s(?=[^,;]{1,30}$)", ", ", body)) if i.strip()]
    items = [i for i in items if re.search(r"[a-z]{2}", i)]  # '1024/2048/4096' are figures, not items
    if len(items) < 4:
        return False
    sizes = [len([x for x in words(i) if x not in STOP]) for i in items]
    return sum(k <= 1 for k in sizes) >= 0.75 * len(items) and max(sizes) <= 4 and \
        not any(re.search(_FINITE, i) for i in items)  # 'sweep' in a list is a term, not an imperative


def echo(n: str) -> bool:
    """One term said again and again, nothing else: 'Owner, owner, owner.', 'Same seed, same seed.'"""
    items = [i.strip() for i in re.split(r"[,;.!]", n) if i.strip()]
    return len(items) >= 2 and len(set(items)) == 1 and len(words(items[0])) <= 4


def long_list(n: str) -> bool:
    """Eight items or more, seven in ten of them five words or fewer, no proof's label before them:
    the drill's vocabulary run through commas ('we observe that strict priority, surge, backlog, fcfs, same seed, ...,
    are all relevant'). A proof listing what it would run ('Repro: same seed, 64 vs 32 GiB, loads, evictions, ...')
    names things, under its label."""
    if _PROOF_LABEL.match(n) or _PROPOSES_PROOF.search(n):
        return False
    body = re.sub(r"\([^()]{0,80}\)", " ", n)  # an aside is no item
    # (a spoken answer's fillers are no items: 'okay so, um, the p99 is going from, eh, 5.6 to 946 ms')
    items = [i for i in re.split(r"[,;]", body) if re.search(r"[a-z]{2}", i) and not FILLER.fullmatch(i.strip())]
    if len(items) < 8:
        return False
    terms = sum(len(words(i)) <= 5 for i in items)
    return terms >= 0.7 * len(items)


def fields(n: str) -> bool:
    """Rubric fields assigned with '=' and no claim in their values: 'Root cause = chunked prefill 512-token
    budget.', 'Decision = sweep, owner runtime, rollback canary.' A field whose value is a sentence ('cause = the
    batcher holds each request until ...') is a label; a setting ('max_delay_s = 0.002') is no field."""
    found = list(_FIELD.finditer(n))
    spans = [m.end() for m in found]
    # a lone 'owner = runtime team' is a label written with '='; a cause assigned, or fields run together, is not
    if not spans or (len(spans) == 1 and not _CAUSE_FIELD.match(found[0].group())):
        return False
    values = [n[a:b] for a, b in zip(spans, [m.start() for m in found][1:] + [len(n)], strict=True)]
    return not any(_claim(v) for v in values)


# a value that is a sentence: a finite verb (not an -ed word before a noun, 'chunked prefill'), or an imperative
_IMPERATIVE = re.compile(r"^\W*(?:add|raise|lower|revert|roll|switch|flip|cap|set|keep|pin|restore|move|split|drop|"
                         r"give|use|turn|disable|enable|route|dispatch|recompile|rebuild|precompile|limit|bump|cut)"
                         r"(?![a-z])")


def _claim(v: str) -> bool:
    if _CRAMMED.search(v):
        return False  # 'raise the budget, owner runtime, rollback canary': other fields named bare
    aux = re.search(r"(?<![a-z'_])(?:" + _AUX + r")(?![a-z_])", v)
    return bool(aux or _IMPERATIVE.search(v) or len([x for x in words(v) if x in FUNCTION]) >= 3)


KINDS = {"soup": "this line runs terms together with no sentence; say what happens to what, and why",
         "list": "this line lists terms; say what causes what",
         "fields": "this line assigns labels ('x = y'); state the claim as a sentence",
         "tautology": "this names the change as its own cause; say what the change does, step by step, that "
                      "moves the metric",
         "menu": "this line offers a menu of possible causes; commit to the one the evidence supports and say "
                 "why the others do not fit",
         "crammed": "this line crams the elements into one run of 'proven by ..., fixed by ..., owned by ...' "
                    "clauses; state each claim as a sentence of its own",
         "chain": "this line chains terms with arrows; say what causes what, and why, in sentences"}

# links of a chain that are no step of a mechanism: a proof, an owner, a way back ('-> platform team -> revert ...')
_RELEASE_LINK = re.compile(r"(?:->|\u2192|=>)\s*(?:[\w-]+ ){0,3}?(?:team|owner|on-?call|revert|roll ?back|canary|"
                           r"same[- ]seed|replay|rerun)(?![a-z])")
# one arrow between words ('lru eviction -> pcie reload'), not between figures ('p99 1.4 -> 4.5 ms')
_WORD_ARROW = re.compile(r"[a-z%)]\s*(?:->|\u2192|=>)\s*(?=[a-z(])")

# an element named by its participle ('proven by', 'fixed by', 'owned by', 'rolled back'): three kinds in one
# sentence is a checklist read out, not an argument
_ELEMENT_PARTICIPLE = re.compile(r"(?<![a-z])(?:(?P<proof>(?:proven|proved|shown|confirmed|demonstrated|evidenced|"
                                 r"verified) (?:by|with|via))|(?P<fix>(?:fixed|solved|resolved|mitigated|remedied|"
                                 r"addressed) (?:by|with|via))|(?P<owner>owned by|signed off by|approved by)|"
                                 r"(?P<back>(?:rolled|rolling) back|revert(?:ed|ing))|"
                                 r"(?P<gate>(?:held|gated|blocked) (?:until|on))|"
                                 r"(?P<cause_by>(?:explained|driven) by)|"
                                 # ... or by its label as a subject ('and the fix is ..., and the owner is ...')
                                 r"(?P<cause_is>(?:the )?root cause (?:is|was))|(?P<proof_is>the (?:artifact|proof|"
                                 r"evidence) (?:is|was|will be))|(?P<fix_is>the (?:fix|remedy|solution) (?:is|was))|"
                                 r"(?P<owner_is>the owners? (?:is|are|will be))|"
                                 r"(?P<back_is>the rollback (?:is|plan is))|"
                                 r"(?P<gate_is>the release decision is))(?![a-z])"
                                 # (a label's value, not a participle of its own: 'the fix is proven by a replay')
                                 r"(?! (?:proven|proved|shown|confirmed|verified|owned|fixed|rolled|held|gated|signed|"
                                 r"approved|being))")


# a menu of possible causes offered instead of one ('several possible root causes ...: a, b, c, d or e')
_MENU = re.compile(r"(?<![a-z])(?:several|many|multiple|a few|various|possible|potential|candidate|plausible) "
                   r"(?:possible |potential |root )?(?:root )?(?:causes|culprits|explanations|suspects|hypotheses)"
                   r"(?![a-z])|(?<![a-z])could be any (?:one )?of(?![a-z])")


def menu(n: str) -> bool:
    """Is the sentence a menu of causes: it announces several possible ones and lists four or more?"""
    m = _MENU.search(n)
    return bool(m) and len(re.findall(r",|(?<![a-z])or(?![a-z])", n[m.end():])) >= 4


# a cause told as its own effect: 'the p99 regressed because of production load, and production load is what
# regressed the p99'
_CIRCLE = re.compile(r"^(?P<a>[^;]{6,}?) because (?:of )?(?P<b>[^,;]{3,}?),? and (?P<c>[^;]{6,})$")


def circle(n: str) -> bool:
    """Does the sentence give a cause and then say the cause is what caused its effect, nothing more ('X because of
    Y, and Y is what X')? Words compared by their first five letters ('changed', 'change')."""
    m = _CIRCLE.match(n)
    if not m:
        return False
    a, b, c = ({w[:5] for w in content_stems(m.group(k))} for k in "abc")
    return bool(b) and b <= c and bool(a & c) and len(c - a - b) <= 1


def _kind(group: str) -> str:
    return group.removesuffix("_is").removesuffix("_by")


# the elements' own names used as labels inside a sentence ('... per tenant artifact, ... team owner and ..., canary
# rollback ..., release gate ...')
_LABEL_NOUN = re.compile(r"(?<![a-z])(?:(?P<proof>artifacts?|artefacts?)|(?P<owner>owners?)|(?P<back>rollback)|"
                         r"(?P<gate>release gate)|(?P<cause>root cause))(?![a-z])")


def _argued_at_length(n: str) -> bool:
    """Is the sentence's cause, before its first participle of another element, argued at a paragraph's length (80
    words or more, three causal links or more)? A paragraph written without full stops, not a cram."""
    m = next((m for m in _ELEMENT_PARTICIPLE.finditer(n) if not (m.lastgroup or "").startswith("cause")), None)
    cause = n[:m.start()] if m else n
    return len(cause.split()) >= 80 and len(ARGUES.findall(cause)) >= 3


def crammed(n: str) -> bool:
    """Does one sentence name three elements or more by their participles ('..., proven by a same-seed run, fixed by
    routing embed to its own pool, owned by the platform team, rolled back on a canary'), its cause not argued at a
    paragraph's length?"""
    if len({_kind(m.lastgroup) for m in _ELEMENT_PARTICIPLE.finditer(n) if m.lastgroup}) >= 3:
        return not _argued_at_length(n)
    return len(n.split()) >= 40 and len({m.lastgroup for m in _LABEL_NOUN.finditer(n)}) >= 3



def field_line(n: str) -> bool:
    """Does the line assign a rubric field with '='?"""
    return bool(_FIELD.search(n))


def assigned(norms: list[str]) -> bool:
    """Does the answer state its fields with '=' ('Root cause = ...', 'Fix = ...', 'Owner = ...'), three lines or
    more? Then every such line is a field, the lone 'owner = ...' too."""
    return sum(bool(_FIELD.search(n)) for n in norms) >= 3


def degenerate(n: str) -> str | None:
    """Why a normalised sentence claims nothing (a key of :data:`KINDS`), or None when it may claim something."""
    if fields(n):
        return "fields"
    if soup(n):
        return "soup"
    if bare_list(n) or long_list(n) or echo(n):
        return "list"
    if circle(n):  # before 'crammed': a circular cause is named for what it is
        return "tautology"
    if crammed(n):
        return "crammed"
    if menu(n):
        return "menu"
    if len(_WORD_ARROW.findall(n)) >= 5 and len(_RELEASE_LINK.findall(n)) >= 2:
        return "chain"  # the whole story as one arrow chain, its proof, owner and way back among the links
    return None


_TOKENS = re.compile(r"[a-z0-9][a-z0-9_'%./~+-]*|[,;:()\[\]{}=]|->|\u2192|\.(?=\s)")


def longest_run(n: str) -> int:
    """The longest stretch of content words with no function word or punctuation between them: prose rarely runs
    past eight ('per-tenant ttft p99 cdf'); a soup of terms runs on for a dozen or more."""
    best = cur = 0
    for tok in _TOKENS.findall(n):
        cur = 0 if tok in FUNCTION or not tok[0].isalnum() else cur + 1
        best = max(best, cur)
    return best


def claims_something(n: str) -> bool:
    """A sentence that claims: past its label, four words or more with a finite verb among them that is not an
    adjective ('pinned plan', 'unfused mapping'), not a question, not a list of items, not a soup or fields. (A
    senior's arrow chain claims when a link has its verb: '>512 misses all buckets -> generic kernels -> ...')"""
    if degenerate(n) or _CONFIG_KEY.match(n) or _ASSIGNS.search(n):
        return False  # a pasted config's line ('fix: revert max_delay_s=2ms'): a setting, not a sentence
    body = LABEL_LINE.sub(" ", n, count=1)
    if re.search(r"\?\W*$", body):
        return False
    items = [i for i in re.split(r"[,;]", body) if i.strip()]
    if len(items) >= 3 and sum(len(words(i)) <= 4 for i in items) >= 0.75 * len(items):
        return False  # 'closed-loop mapping report, same seed, per-bucket hit rate, misses by reason'
    verbs = [m for m in _VERB.finditer(body) if not (_PARTICIPLE.search(m.group()) and _ADJECTIVE.match(body, m.end()))]
    return bool(verbs) and (len(words(body)) >= 4 or bool(_OPENS_IMPERATIVE.match(body)) and len(words(body)) >= 2)


_PARTICIPLE = re.compile(r"(?:ed|" + "|".join(w for w in _IRREGULAR if w.endswith(("n", "t", "d"))) + r")$")
LABEL_LINE = re.compile(r"^\W*[a-z][a-z0-9 _/&-]{0,30}:(?=\s)")
_CONFIG_KEY = re.compile(r"^\W*[a-z][a-z0-9]*(?:[_.][a-z0-9]+)+\s?[:=]")  # 'root_cause: ...'
_ASSIGNS = re.compile(r"(?<![a-z0-9])[a-z][a-z0-9]*(?:_[a-z0-9]+)+\s?=\s?[\w.'\"]")  # 'max_delay_s=2ms'

IDENTIFIER = re.compile(r"(?<![a-z0-9])[a-z][a-z0-9]*(?:_[a-z0-9]+)+(?![a-z0-9])")
# a participle before a noun is an adjective: 'pinned plan', 'unfused mapping', 'hit rate'
_ADJECTIVE = re.compile(r"\s(?!(?:" + "|".join(sorted(FUNCTION)) + r")(?![a-z]))[a-z][a-z_-]+")


# a figure's move ('22% -> 36%', 'from 1.1 mib to 11.3 mib', 'to 36%'), and the clause that reads it
_MOVE = re.compile(r"(?:(?<![a-z])from\s)?~?\d[\d.,]*\s?(?:%|ms|s|us|mib|gib|mb|gb|x|req/s|tokens/s)?\s?"
                   r"(?:to|->|\u2192)\s?~?\d|(?<![a-z])(?:rose|rises|climbed|jumped|grew|fell|dropped|increased|"
                   r"decreased|went up|went down) to ~?\d")
_CLAUSE_START = re.compile(r"[,;:.](?=\s)|\(|(?<![a-z])(?:and|but|while|whereas|so|because|which)\s")


def whole(text: str, start: int, end: int) -> str:
    """The words a match touches, whole ('fus' in 'fusion' -> 'fusion')."""
    while start > 0 and text[start - 1].isalnum():
        start -= 1
    while end < len(text) and (text[end].isalnum() or text[end] in "-_"):
        end += 1
    return text[start:end]


def without_readings(n: str) -> str:
    """The sentence with each clause that reads a figure's move blanked ('spill increased from 1.1 mib to 11.3 mib',
    'memory contention 46% -> 62% of the tail'): a step named as the evidence moved is observed, not claimed."""
    for m in list(_MOVE.finditer(n))[::-1]:
        starts = [c.end() for c in _CLAUSE_START.finditer(n, max(0, m.start() - 100), m.start())]
        a = starts[-1] if starts else max(0, m.start() - 100)
        end = _CLAUSE_START.search(n, m.end())
        b = end.start() if end else len(n)
        n = n[:a] + " " * (b - a) + n[b:]
    return n

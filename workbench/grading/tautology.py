"""Tautologies: a cause that only restates the change the prompt names, or the effect it explains.

"TTFT rose because of chunked prefill", "goodput fell because the KV cache was cut", "spill rose
because the change increased spill": :func:`untautological` takes such a cause out of the
sentence with its causal word before the mechanism is read, so the chain must come from the
steps in between. The stems it compares by (:func:`content_stems`, :func:`change_words`) are the
grader's word sets for prompts and answers too. Bounded patterns and word-set checks: linear.
"""

from __future__ import annotations

import re

from workbench.grading.text import FUNCTION, STOP, words

_GENERIC = frozenset(("enabled", "enable", "enabling", "turned", "turning", "switched", "change", "changes", "changed",
                      "new", "on", "off", "the", "a", "an", "was", "were", "is", "are", "been", "being", "got",
                      "of", "that", "this", "it", "its", "to", "from", "with", "by", "for", "and", "our", "we", "they",
                      "having", "after", "just", "recent", "recently", "rollout", "setting", "config", "introduced",
                      "introducing", "introduction", "adding", "added", "use", "using", "used"))
# the things a change is applied to and the words that say it now applies: 'because its prompts are now chunked'
_CARRIERS = frozenset(("prompts", "prompt", "requests", "request", "now", "all", "every", "them", "their"))
# a cause clause: what follows 'because (of)', 'due to', 'caused by', 'since', to the end of its clause
_CAUSE = re.compile(r"(?<![a-z])(?:because(?: of)?|due to|caused by|driven by|thanks to|owing to)\s+"
                    r"([^,;.:()\u2192]{1,80}?)(?=\s*(?:[,;.]\s*(?!(?:which|so|meaning|as|since|because|that)\s)|$|"
                    r"\s(?:and|but|while|whereas)\s))")
# the effect a tautology gives: the symptom itself ('ttft up because ...'), not a step ('load imbalance caused by ...')
_SYMPTOM = re.compile(r"(?<![a-z])(?:p\d\d\w*|tail|latency|latencies|ttft|itl|tpot|goodput|throughput|regress\w*|"
                      r"time-to-first-token|first tokens?|inter-token|"
                      r"slow\w*|worse|degrad\w*|spike\w*|metric|symptom|slo)(?![a-z])")
# the change as the subject of a causal verb, with the symptom after it: 'chunked prefill caused the ttft regression'
_AGENT = re.compile(r"(?:^|[,;:]\s|\.\s)\s*([a-z0-9][^,;.:()]{1,60}?)\s+(?:caused|causes|led to|leads to|drove|drives|"
                    r"is behind|was behind|made|makes|broke|pushed|raised|hurt|triggered|is why|was why|"
                    r"(?:is|was) (?:what|the reason)(?: \w+)?)\s+(?:the\s+)?"
                    r"(?:[\w.%-]+\s+){0,3}?(?:regression|p\d\d\w*|ttft|tail|latency|goodput|itl|slowdown|drop|rise|"
                    r"increase|spike|time-to-first-token|time to first token|first tokens?)(?![a-z])")


def _stem(w: str) -> str:
    return re.sub(r"(?:ing|ed|es|s)$", "", w) if len(w) > 4 else w


def _bare(word: str) -> str:
    """A word without its trailing full stop or possessive ("the batcher's" names 'batcher', "core." 'core')."""
    return re.sub(r"'s?$", "", word.strip("."))


def restates(clause: str, known: frozenset[str], own: bool = False) -> bool:
    """Is the clause only known words (the prompt's, or the effect's own with ``own``), the generic words of a change
    or a reading aside?"""
    dropped = (_GENERIC | _READING_WORDS if own else _GENERIC) | STOP | _CARRIERS
    w = [x for x in map(_bare, words(_split(clause))) if x and x not in dropped]
    w = [x.split("-", 1)[1] if x[0].isdigit() and "-" in x else x for x in w]  # '512-token' -> 'token'
    w = [x for x in w if x and not x[0].isdigit()]
    return bool(w) and len(w) <= 8 and all(_stem(x) in known or "-" in x and all(_stem(p) in known for p in
                                                                                   x.split("-")) for x in w)


def circular(cause: str, effect: str, change: frozenset[str]) -> bool:
    """Does the cause only restate its effect ('spill increased because the fusion change increased spill', 'the hit
    rate fell because fewer requests hit a bucket'): its words the effect's, the change's or a reading's, one of
    them at least the effect's own?"""
    own = frozenset(_stem(x) for x in words(_split(effect)) if x not in _GENERIC | _READING_WORDS)
    cause_words = {_stem(x) for x in words(_split(cause))}
    return bool(own & cause_words) and restates(cause, change | own, own=True)


# the words a reading restates its own figure in ('more requests fell back', 'there was more contention')
_READING_WORDS = frozenset(("more", "fewer", "less", "higher", "lower", "longer", "shorter", "bigger", "smaller",
                            "increased", "increase", "decreased", "decrease", "rose", "rise", "fell", "fall", "grew",
                            "went", "got", "became", "better", "worse", "requests", "request", "there", "much",
                            "contribution", "share", "amount", "number", "count", "level", "its", "took"))
_FALLS_BACK = re.compile(r"(?<![a-z])(?:fell|falls|fall|falling) back(?![a-z])")


def _split(text: str) -> str:
    """Identifiers split into words ('mapping_fallback' -> 'mapping fallback'), 'fell back' one word 'fallback'."""
    return _FALLS_BACK.sub("fallback", text.replace("_", " "))


def content_stems(text: str) -> frozenset[str]:
    """The stems of a text's content words (no function word, no figure, no trailing punctuation)."""
    return frozenset(_stem(re.sub(r"'s?$", "", x.strip(".,%/-"))) for x in words(_split(text.lower()))
                     if x not in FUNCTION and x not in _GENERIC and not x[0].isdigit() and len(x) > 2)


def change_words(prompt: str) -> frozenset[str]:
    """The stems of the words the drill's prompt uses: a cause made only of them restates the change."""
    w = [x for x in map(_bare, words(prompt.lower())) if x]
    # a figure's unit is the change's word too: '512-token budget' names 'token'
    return frozenset(_stem(x) for x in w + [p for x in w if x[0].isdigit() for p in x.split("-")[1:] if p])


def untautological(n: str, change: frozenset[str]) -> str:
    """The sentence with every cause that restates the change or the effect it explains taken out with its causal
    word ('ttft up because chunked prefill' -> 'ttft up'; 'spill rose because the change increased spill' -> 'spill
    rose'), so the mechanism must come from the steps in between. Before a colon only the cause goes: the colon's
    explanation keeps its causal word ('... because of chunked prefill: each long prompt is cut ...')."""
    cut = []
    for m in _CAUSE.finditer(n):
        start = max(n.rfind(". ", 0, m.start()) + 1, n.rfind(";", 0, m.start()) + 1, m.start() - 120)
        effect = n[start:m.start()]
        if (restates(m.group(1), change) and _SYMPTOM.search(effect)) or circular(m.group(1), effect, change):
            cut.append(m.span(1) if n[m.end():m.end() + 2].strip().startswith(":") else m.span())
    cut += [m.span() for m in _AGENT.finditer(n) if restates(m.group(1), change)]
    for a, b in sorted(cut, reverse=True):
        n = n[:a] + " " + n[b:]
    return n


def symptom(term: str) -> bool:
    """Is the phrase the symptom itself (a metric: 'ttft', 'p99', 'the tail')?"""
    return bool(_SYMPTOM.search(term))

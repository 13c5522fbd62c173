"""Answers by analogy: a mechanism told through an analogy that the answer maps onto the case.

"Think of a highway where trucks (the documents) and motorbikes (the interactive prompts) share the
lanes ...", "It's an overbooked hotel ... The KV cache is the hotel." An analogy earns the mechanism
when the answer says what its parts stand for: each mapping pairs an analogy's noun with a thing the
drill's chain names ("trucks (the documents)", "the hotel is the KV cache", "the guests are the
sequences"), and the analogy's noun is then read as that thing wherever the answer uses it. A story
with no mapping stays a story: its steps must be named in the drill's own terms.

Only answers that announce an analogy ('like', 'think of', 'imagine', 'picture', 'analogy', 'as if')
are read this way, and only pairs in which exactly one side holds a term of the drill's chain.
Bounded patterns, one pass per sentence: linear in the answer's length.
"""

from __future__ import annotations

import re

from workbench.grading.text import has

_ANNOUNCED = re.compile(r"(?<![a-z])(?:like a|like an|like the|think of|imagine|picture|analogy|analogous|as if|"
                        r"as though|metaphor|it'?s an? [a-z]+ (?:problem|story)|the [a-z]+ problem)(?![a-z])")
_WORD = (r"(?!(?:the|a|an|of|in|on|at|to|is|are|and|or|where|when|while|every|each|its|their|our)(?![a-z]))"
         r"[a-z][a-z'-]{1,30}")
_NOUN = _WORD + r"(?: " + _WORD + r"){0,2}"
# 'trucks (the documents)', 'a long truck (a document's prefill)', 'the cars (= running decodes)'
_PAREN = re.compile(r"(?<![a-z])(" + _NOUN + r") \((?:the |a |an |i\.e\.,? |= ?|aka |read:? |our )?([^()]{2,60})\)")
# 'the hotel is the kv cache', 'the guests are the sequences', 'trucks = documents', 'the bus stands for the batch'
_IS = re.compile(r"(?<![a-z])(?:the |our |your )(" + _NOUN + r") (?:is|are|=|->|stands? for|plays? the role of|"
                 r"maps? (?:on)?to|means?) (?:the |our |your |a |an )(" + _NOUN + r")"
                 r"(?=[ ]?[,.;:)]|$| (?:and|while|but|here|in this case|in our case)(?![a-z]))")
_STOP = {"it", "this", "that", "which", "what", "there", "here", "one", "thing", "problem", "story", "same", "case"}


def _pairs(text: str) -> list[tuple[str, str]]:
    return [(m.group(1).strip(), m.group(2).strip()) for p in (_PAREN, _IS) for m in p.finditer(text)]


def mappings(norms: list[str], terms) -> dict[str, str]:
    """The analogy's nouns and what the answer says they stand for: {analogy noun: the case's thing}."""
    text = " ".join(norms)
    if not _ANNOUNCED.search(text):
        return {}
    out: dict[str, str] = {}
    for a, b in _pairs(text):
        if a in _STOP or b in _STOP or a == b:
            continue
        in_a, in_b = has(f" {a} ", terms), has(f" {b} ", terms)
        if in_b and not in_a:
            out.setdefault(a, b)
        elif in_a and not in_b:
            out.setdefault(b, a)
    return out


def mapped(norms: list[str], terms) -> list[str]:
    """The sentences with each mapped analogy noun (and its plural or singular) read as the thing it stands for."""
    table = mappings(norms, terms)
    if not table:
        return norms
    nouns = sorted(table, key=len, reverse=True)
    pattern = re.compile(r"(?<![a-z])(?:a |an |the |every |each )?(" + "|".join(
        re.escape(n.removesuffix("s")) for n in nouns) + r")s?(?![a-z])")

    def sub(m: re.Match) -> str:
        key = next(n for n in nouns if n.removesuffix("s") == m.group(1))
        return f" {table[key]}"

    return [pattern.sub(sub, n) for n in norms]

"""Figures said in words, as a spoken answer gives them, written as digits: 'TTFT p99 goes three point six to two
ninety seven' is 'TTFT p99 goes 3.6 to 297'.

A transcript of a mock interview reads its figures the way people say them: 'three point six' (3.6), 'two ninety
seven' (297: a hundreds digit, then the rest), 'twelve ninety' (1290), 'five thirty one' (531), 'three hundred' (300),
'sixty nine percent' (69 %). A detector that looks for a figure's move reads them once they are digits. A lone small
word ('one bucket', 'two owners') is a count, not a figure, and stays a word unless a unit follows it ('three
milliseconds'). Pure and linear: one pass of one pattern.
"""

from __future__ import annotations

import re

_UNITS = {w: i for i, w in enumerate("zero one two three four five six seven eight nine".split())}
_TEENS = {w: i for i, w in enumerate("ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen "
                                     "nineteen".split(), 10)}
_TENS = {w: 10 * i for i, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split(), 2)}
_SCALES = {"hundred": 100, "thousand": 1000}
_WORD = "|".join(sorted([*_UNITS, *_TEENS, *_TENS, *_SCALES], key=len, reverse=True))
_RUN = re.compile(rf"(?<![a-z-])(?:{_WORD})(?:(?:[\s-]+(?:and[\s-]+)?|[\s-]+point[\s-]+)(?:{_WORD}))*(?![a-z])")
_UNIT_AFTER = re.compile(r"\s?(?:-ish\s)?\s?(?:ms|milliseconds?|percent|%|x|times|fold)(?![a-z])")
# (seconds stay words: 'p99 is one second' is said of a tail's rough size, and written so without a figure)
_UNIT_WORDS = ((re.compile(r"(?<=\d) ?milliseconds?(?![a-z])"), " ms"), (re.compile(r"(?<=\d) ?percent(?![a-z])"), "%"))


def _whole(words: list[str]) -> str:
    """A run of number words with no 'point' as digits: read with its scales ('three hundred and ten'), else as the
    spoken chunks it is made of, written side by side ('two ninety seven' = 2 | 97)."""
    if any(w in _SCALES for w in words):
        total, cur = 0, 0
        for w in words:
            if w == "thousand":
                total, cur = total + max(cur, 1) * 1000, 0
            elif w == "hundred":
                cur = max(cur, 1) * 100
            else:
                cur += _UNITS.get(w, 0) + _TEENS.get(w, 0) + _TENS.get(w, 0)
        return str(total + cur)
    chunks: list[int] = []
    open_tens = False  # the last chunk is a tens word waiting for its unit ('ninety' then 'seven')
    for w in words:
        if w in _UNITS and open_tens:
            chunks[-1] += _UNITS[w]
            open_tens = False
        else:
            chunks.append(_UNITS.get(w, 0) + _TEENS.get(w, 0) + _TENS.get(w, 0))
            open_tens = w in _TENS
    return "".join(str(c) if k == 0 else f"{c:02d}" for k, c in enumerate(chunks))


def _figure(m: re.Match, text: str) -> str:
    words = [w for w in re.split(r"[\s-]+", m.group()) if w and w != "and"]
    if len(words) == 1 and words[0] in _UNITS and not _UNIT_AFTER.match(text, m.end()):
        return m.group()  # a count ('one bucket'), not a figure
    if "point" in words:
        k = words.index("point")
        decimals = "".join(str(_UNITS[w]) for w in words[k + 1:] if w in _UNITS)
        return _whole(words[:k]) + ("." + decimals if decimals else "")
    return _whole(words)


def digits(text: str) -> str:
    """The text (lower case) with its spoken figures as digits and their units as symbols ('297 ms', '69%')."""
    out = _RUN.sub(lambda m: _figure(m, text), text)
    for pattern, unit in _UNIT_WORDS:
        out = pattern.sub(unit, out)
    return out

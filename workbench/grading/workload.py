"""The workload element: which workload regressed, and its first failing metric with a size or a direction.

A metric counts when it is a latency or the SLO (TTFT, ITL, goodput for the token drills) that moved the wrong way in
the answer's own statement, not in a rollback's condition; a bare direction ('p99 went up') restates the prompt and
needs a size somewhere in the answer or the workload named beside it (``brief/LABELING.md``: "a bare restatement of
the prompt does not count").
"""

from __future__ import annotations

import re

from workbench.grading import tautology
from workbench.grading.detectors import Element
from workbench.grading.drills import Drill
from workbench.grading.lexicon import DIRECTION, METRICS
from workbench.grading.spoken import digits
from workbench.grading.text import bare_run, has, quote

# a measured change, units ('21.37 against 17.43' too)
FIGURES = re.compile(r"\d(?:\.\d+)?\s?(?:ms|s|%|x|×)(?![a-z])|\d\s?(?:->|→|to|against|vs\.?|versus)\s?~?\d")
WORD_CHAIN = re.compile(r"[a-z]\s*(?:->|→|=>)\s*[a-z]|[a-z] (?:so|then) [a-z]")  # terms chained, not figures: 'a so b'
# a metric in a condition (a rollback's 'if p99 goes above'), or in a release gate, which names its test first ('hold
# the release until the load test at production shapes shows p99 back under 50 ms'), up to a clause's end ('no token
# comes out until the last chunk is done, hence higher TTFT' states the move)
CONDITIONAL = re.compile(r"(?<![a-z])(?:(?:if|when|(?<!at )once|should)\W+(?:\w+\W+){0,6}|"
                         r"(?:unless|until|till)\W+(?:(?!(?:why|hence|so|which)(?![a-z]))\w+[^\w,;:.]+){0,12})$")
_SIZE = re.compile(r"(?<![a-z\d.])\d|->|from")
_SIZE_WORD = re.compile(r"(?<![a-z])(?:doubl\w*|tripl\w*|quadrupl\w*|(?:two|three|four|five|six|ten)[- ]?fold|"
                        r"(?:twice|two|three|four|five|six|ten|several|many) times|order of magnitude|"
                        r"\d+(?:\.\d+)?\s?x|a lot|sharply|dramatically|massively|hugely|significantly|"
                        r"substantially|blew up|blows up|explod\w*|"
                        r"(?:more than|over|above|almost|nearly|about) (?:a|one|two|half a) (?:full )?seconds?)"
                        r"(?![a-z])")
# the tail-driver table is no tail latency ('tail drivers show memory_contention going from 1% to 46%')
_METRIC_WORD = {"tail": r"tail(?! driver)"}
# the tail in plain words
_PLAIN_METRICS = ("worst-case", "worst case", "worst 1%", "worst one", "response time", "slow end")
_NOT_REGRESSED = ("utilisation", "utilization", "queue", "throughput")
_TOKEN_METRICS = ("ttft", "itl", "tpot", "goodput", "first token", "first-token", "inter-token")
_LEVEL = re.compile(r"(?<![a-z])(?:is|at|of|=|was)\s~?\d+(?:\.\d+)?\s?(?:ms|s)$")
_CHANGE = re.compile(r"(?<![a-z])(?:now|before|baseline|vs|versus|compared|from|up|down|instead|used to|over|above|"
                     r"past|beyond|more than|plus|but|while|whereas|better|improved)(?![a-z])")


# a move the sentence calls noise is dismissed, not stated as the regression ('the p99 jump is probably just noise'),
# as is a level still under its threshold ('p99 at 1.9 ms is still under 2 ms'); a caveat that a tail is noisy still
# states it ('p99 went up about 6x, but p99 on a small window is noisy')
_DISMISSED = re.compile(r"(?<![a-z])(?<!not )(?<!n't )(?<!no )(?<!than )(?:noise|a blip|a fluke|"
                        r"still (?:under|below|within|inside))(?![a-z])")  # ('root cause is X, not noise' says so)
# a move only supposed, under a negated modal ('a few milliseconds of extra wait shouldn't quadruple p99')
_NOT_SO = r"(?<![a-z])(?:shouldn'?t|wouldn'?t|couldn'?t|can'?t|cannot|won'?t|should not|would not|could not)(?![a-z])"
_SUPPOSED = re.compile(_NOT_SO + r"\W+(?:\w+\W+){0,3}$")
_NOT_SO_IN = re.compile(_NOT_SO)
_BETTER = re.compile(r"(?<![a-z])(?:improv\w*|better|recovered|faster)(?![a-z])")
_WORSE = re.compile(r"(?<![a-z])(?:regress\w*|worse\w*|degrad\w*|slower|longer|blew|explod\w*|balloon\w*)(?![a-z])")
_UP = re.compile(r"(?<![a-z])(?:rose|ris\w+|increas\w*|doubled|tripled|quadrupled|up|jump\w*|grew|grow\w*|spik\w*|"
                 r"climb\w*|higher)(?![a-z])")
_DOWN = re.compile(r"(?<![a-z])(?:down|dropped|fell|lower|shrank|shrunk|reduced|decreased|halved)(?![a-z])")
_FIG = r"(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"  # a figure, thousands separated or not ('1,041 ms')
_PAIR = re.compile(rf"{_FIG}\s?(ms|s|us|µs)?\s?(?:->|→|to)\s?~?{_FIG}\s?(ms|s|us|µs)?(?![a-z])")
# words of any workload: named anywhere they count, beside a bare direction they say not which workload regressed
_ANY_WORKLOAD = ("requests", "traffic", "batches", "batch", "cores", "prompts", "tokens", "shapes", "streams")
_SCALE = {"s": 1000.0, "ms": 1.0, "us": 0.001, "µs": 0.001}


def _rise(pair: re.Match) -> float:
    """How far a 'from A to B' pair rose, in milliseconds when it carries a time unit (negative: it fell)."""
    a, ua, b, ub = pair.groups()
    return float(b.replace(",", "")) * _SCALE[ub or ua or "ms"] - float(a.replace(",", "")) * _SCALE[ua or ub or "ms"]


def _improved(n: str, x: re.Match) -> bool:
    """A metric that moved the good way ('p95 improved from 5.7 to 3.1 ms', 'interactive p99 426 -> 67'): evidence
    that the change bought something, not the regression. Goodput and hit rate are better higher, the rest lower.
    The other side of the trade stated next, with its metric left implied ('interactive p99 245 -> 27 ms, docs
    255 -> 495'), is the regression."""
    near = x.group()
    higher_better = near.startswith(("goodput", "hit rate"))
    up, down = (_DOWN, _UP) if higher_better else (_UP, _DOWN)  # the words of the bad move and the good one
    if _WORSE.search(near) or up.search(near):
        return False
    pairs = list(_PAIR.finditer(n, x.start()))
    if pairs and pairs[0].start() <= x.end() + 8:  # ("fell from 815 ms to 45 ms")
        better = _rise(pairs[0]) > 0 if higher_better else _rise(pairs[0]) < 0
        return better and not any(_rise(p) < 0 if higher_better else _rise(p) > 0 for p in pairs[1:])
    return bool(_BETTER.search(near) or down.search(near))


def _moves(n: str) -> list[re.Match]:
    """Each metric's stated move, one per metric word, overlapping ('p95 got better while the chat p99 went from
    15 ms to over a second' holds two)."""
    return [x for x in (_NEAR.match(n, w.start()) for w in _METRIC_AT.finditer(n)) if x]


def _level_only(n: str, near: str) -> bool:
    """A metric stated as a bare level ('p99 is 4.5 ms') with nothing to compare it to: no second figure, no 'now',
    no 'over': a reading of the evidence, not the regression."""
    return bool(_LEVEL.search(near)) and len(re.findall(r"(?<![a-z\d.])\d+(?:\.\d+)?", n)) < 2 and \
        not _CHANGE.search(n)


# the metric that regressed is a latency or the SLO (TTFT, ITL, goodput for the token drills), not a busy core,
# a queue or the throughput a change bought ('utilisation went from 73% to 43%' is evidence, not the regression)
_METRIC = "|".join(_METRIC_WORD.get(m, re.escape(m)) for m in METRICS if m not in _NOT_REGRESSED) + "|" + \
    "|".join(_TOKEN_METRICS + _PLAIN_METRICS)
# a move: a direction word, a multiple or a change with its unit ('7×', 'quadrupled'), or from-to figures
# 'from' moves only with a figure after it ('went from 1.8 to 4.2'), not where a metric comes from ('that's where the
# p95 comes from')
_NUMBER_WORD = r"(?:one|two|three|four|five|six|seven|eight|nine|ten|twenty|thirty|forty|fifty|tens|hundreds|a few)"
_MOVED = ("|".join(re.escape(d) for d in DIRECTION if d != "from")
          + r"|from\W{1,3}(?:(?:about|around|roughly|like|under|over|nearly|almost|just) |~)?"
          + rf"(?:\d|{_NUMBER_WORD}(?![a-z])|half)|doubl|tripl|quadrupl|(?:\d+|{_NUMBER_WORD}) times(?![a-z])"
          + r"|\d+(?:\.\d+)?\s?(?:(?:x|%|ms|s)\b|×)|->|\d(?:\.\d+)? to \d"
          # a level gone to ('p99 goes to more than one second')
          + r"|(?:goes|went|gone|go) to (?:more than |over |above |almost |nearly |about |around |~)?"
          + rf"(?:\d|{_NUMBER_WORD}(?![a-z]))"
          + r"|\d+(?:\.\d+)?\s?(?:ms|s)?\s(?:vs\.?|versus|against)\s~?\d"  # 'p99 is 842 vs 430 before'
          # a level past a second with the figure it rose from: 'become more than one second, from 15 ms'
          + rf"|(?:more than|over|above|past) (?:a|{_NUMBER_WORD}|\d+(?:\.\d+)?) ?seconds?\W{{1,3}}from \d")
_METRIC_AT = re.compile(rf"(?<![a-z])(?:{_METRIC})")
_NEAR = re.compile(rf"(?<![a-z])(?:{_METRIC})(?:s|es|ing|ed)?(?![a-z])"  # a metric word and its inflections
                   rf"(?:\W{{1,4}}\w{{1,40}}){{0,8}}?\W{{1,4}}(?:{_MOVED})")
# the metric's figures given somewhere, in either order ('chat at about 40 ms p99, before about 5.5')
_FIGURED = re.compile(rf"\d(?:\.\d+)?\s?(?:ms|s)\W+(?:\w+\W+){{0,2}}?(?:{_METRIC})|(?:{_METRIC})\W+(?:\w+\W+){{0,3}}?"
                      rf"\d(?:\.\d+)?\s?(?:ms|s)(?![a-z])")


# the body of the distribution: where the drill's regression is a tail percentile, a median or a mean that moved is
# not it ('the median went from 5.6 to 26 ms' for a p99 regression: the p50/p99 confusion the labels refuse)
_NOT_A_STREAM = ("traffic", "pool", "serving pool", "llm pool", "canary", "benchmark", "transformer", "block",
                 "transformer block", "production load", "four cores", "4 cores", "two cores", "2 cores", "node")
_BODY = re.compile(r"(?:p50|median|mean|average)(?![a-z])")
_TAIL_REGRESSED = re.compile(r"regression in (?:the )?(?:[a-z-]+ )?(?:[a-z'-]+ )?(?:p9\d|tail)")


def _stated(n: str, x: re.Match) -> bool:
    """Does the sentence state this move as the regression: not a gain, not a condition's ('if p99 goes above'),
    not only supposed under a negated modal, not a bare level?"""
    before = n[:x.start()]
    return not (_improved(n, x) or CONDITIONAL.search(before) or _SUPPOSED.search(before) or
                _NOT_SO_IN.search(x.group()) or _level_only(n, x.group()))


def workload(segs: list[str], norms: list[str], drill: Drill, stuffed: bool = False,
             explained: bool = True) -> Element:
    """The first sentence that states the regressed metric's move, with the workload named in the answer.

    In an answer that explains nothing (``explained`` False: no mechanism found), a sentence that gives the change as
    its own cause ('TTFT p99 rose because of chunked prefill') is a tautology and states no workload either
    (``brief/GAMED.md``: a tautology earns an element only where a real sentence elsewhere states it)."""
    norms = [digits(n) for n in norms]  # figures said in words, as a transcript gives them, read as digits
    change = tautology.change_words(" ".join((drill.prompt, *drill.rubric.change_terms)))
    tail = bool(_TAIL_REGRESSED.search(drill.prompt.lower()))  # the prompt's regression is a tail percentile
    streams = [w for w in drill.rubric.workload_terms if w not in _ANY_WORKLOAD and w not in _NOT_A_STREAM]
    named = has(" ".join(norms), drill.rubric.workload_terms)  # the workload, named anywhere in the answer
    figured = _FIGURED.search(" ".join(norms))
    prompt = tautology.content_stems(drill.prompt)
    for s, n in zip(segs, norms, strict=True):
        # the moved metric here (not a rollback's "if p99 goes above"); a comma run of figures ("p99 15 -> 1040 ms,
        # p95 5.7 -> 3.1") is data, not a run of bare terms, unless the whole answer is such runs
        # each move on its own: one in a condition does not hide a stated one after it ('served when nobody is
        # waiting, ... their slowest 1% went from under half a second to 0.8')
        if not explained and tautology.untautological(n, change) != n:
            continue
        body_ok = not tail or has(n, streams)  # a stream's own median is its workload ('docs p50 doubled')
        m = next((x for x in _moves(n) if _stated(n, x) and (body_ok or not _BODY.match(x.group()))), None)
        if not m or (bare_run(n) and (stuffed or not FIGURES.search(n) or WORD_CHAIN.search(n))) or \
                _DISMISSED.search(n):
            continue
        # a bare direction ('p99 rose') restates the prompt: it needs the size, or the workload named beside it
        sized = any(_SIZE.search(n[x.start() + len(x.group().split()[0]):x.end() + 16]) for x in _NEAR.finditer(n)) \
            or _SIZE_WORD.search(n) or figured  # past the metric's own digits ('p99')
        # ... and the prompt's own sentence told back ('the document tenant's TTFT p99 regressed after strict priority
        # was enabled during a surge') names the workload it was given, with no size: a restatement
        said = tautology.content_stems(n)
        restated = not sized and len(said) >= 8 and len(said & prompt) >= 0.6 * len(said)
        if named and not restated and (sized or has(n, [t for t in drill.rubric.workload_terms
                                                          if t not in _ANY_WORKLOAD])):
            return Element(True, quote(s), "")
    return Element(False, "", "say which workload regressed and its first failing metric, with a number or a "
                              "direction (e.g. p99 of the chat stream doubled once sequence lengths passed 512)",
                   "Which workload regressed, and which metric failed first, by how much?")

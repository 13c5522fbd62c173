"""The drill grader: does an answer name the mechanism, a proving artifact, an owner and a rollback?

Deterministic and offline: plain text rules, no model, no network, nothing from the
answer is ever executed. For each rubric element it returns present or missing, the
quoted evidence (the sentence or bullet that earned it) and a hint. An element counts
only with substance:

* mechanism: the steps of *this drill's* causal chain (from the drill file), at least
  ``mechanism_min_steps`` of them including the required ones, joined by causal
  language within a few consecutive sentences; an un-negated wrong bottleneck class
  (network, "add hardware", ...) voids it;
* artifact: an evidence noun (report, trace, breakdown, load test, ...) with something
  that makes it concrete and reproducible (per bucket/stream/core, same seed, replay,
  production shapes, a named metric) -- dashboards and "profile it" do not count;
* fix: a bounded fix specific to the mechanism (the drill's fix vocabulary);
* owner: a named accountable team, role or person -- not "someone" or "the team";
* rollback: a way back (revert, pinned plan, flag, canary) with a trigger or a
  threshold, or a release decision tied to validation;
* workload: the workload and its first failing metric, with a direction or number.

Sentences that recite the drill's prompt, pitfalls and takeaways or the card's text
(40% or more of their word 5-grams appear there) earn nothing, and an answer that is
mostly the reference answer pasted back earns nothing at all, so reciting is graded
weak. A run of bare terms ("drift/fallback/queue", comma lists of nouns) is not an
argument either. The verdict is ``strong`` only when
mechanism, artifact, owner and rollback are all present, ``weak`` when at most one is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from workbench.errors import ConfigError
from workbench.grading.drills import Drill

ELEMENTS = ("workload", "mechanism", "artifact", "fix", "owner", "rollback")
CORE = ("mechanism", "artifact", "owner", "rollback")
WEIGHTS = {"workload": 10, "mechanism": 30, "artifact": 20, "fix": 10, "owner": 15, "rollback": 15}
MAX_CHARS = 20_000

CARD_TEXT = """Compiler-runtime mapping defines how static optimization and dynamic control cooperate. The compiler
captures graph-level transforms such as fusion, layout selection, and initial placement, producing executable plans
tuned for expected workload envelopes. The runtime then adapts launch parameters, stream priorities, and memory
residency as live traffic and input shape distributions drift. High-performing systems expose feedback loops where
runtime telemetry informs compiler heuristics, reducing mismatch between offline assumptions and production behavior.
Closed-loop mapping report combining offline compile profiles with runtime telemetry and retuning actions.
Defines workload and first failing mechanism. Proposes bounded fix + owner + rollback-safe validation.
Gives generic optimization ideas without mechanism proof or ownership. Scheduling quality decides whether
architecture headroom reaches product throughput. Tie every accelerator claim to a reproducible workload slice and
one primary metric trend. Prefer bounded fixes with clear owner and rollback boundary over broad tuning bundles.
A strong answer on Compiler-Runtime Mapping names the workload symptom, explains mechanism, and proposes one
measurable validation plan. Then it identifies owner and fallback action if the proposed fix under-delivers. The goal
is practical engineering reasoning, not keyword listing. Inspect tail first, not average. Check fairness across
streams. Validate fusion against memory constraints. Which first-principles bottleneck class explains the symptom,
and what artifact proves it reproducibly?"""

CAUSAL = ("->", "because", " so ", "so the", "so it", "which ", "leads to", "lead to", "leading to", "causes", "caused",
          "causing", "results in", "resulting", "result in", "therefore", "thus", "hence", "drives", "driving",
          "pushes", "pushing", "means", "due to", "as a result", "forcing", "forces", "making", "makes", "then",
          "since", "triggers", "triggering", "inflat", "stretch", "blows up", "once", "whenever", "and so",
          "until", "piles up", "pile up", "backs up", "that's why", "which is why", "this is why", "why")
NEGATIONS = ("not", "no", "isn't", "isnt", "aren't", "wasn't", "won't", "wouldn't", "doesn't", "don't", "didn't",
             "never", "without", "rather than", "instead of", "rule out", "ruled out", "ruling out", "unlikely",
             "exclude", "excluded", "nothing to do with", "not the", "neither", "nor")
METRICS = ("p50", "p90", "p95", "p99", "tail", "latency", "throughput", "hit rate", "wait", "utilisation",
           "utilization", "queue", "slo", "qps", "req/s", "rps", "error rate", "mean", "median")
DIRECTION = ("rose", "rise", "risen", "increase", "doubled", "tripled", "went up", "jumped", "regress", "grew",
             "grow", "spike", "climb", "worse", "degrad", "higher", "dropped", "fell", "falls", "from", "blew up",
             "exploded", "slower", "longer", "went from", "goes up", "go up", "going up", "shot up")
EVIDENCE_NOUNS = ("report", "breakdown", "trace", "replay", "histogram", "load test", "load-test", "benchmark",
                  "a/b", "ab test", "comparison", "compare", "cdf", "profile table", "table", "export", "experiment",
                  "repro", "rerun", "re-run", "plot", "curve", "sweep", "dump", "capture", "timeline", "perfetto",
                  "vs", "versus", "side by side", "diff", "evidence", "scenario", "run", "running", "comparing",
                  "numbers")
QUALIFIERS = ("per-bucket", "per bucket", "by bucket", "per-stream", "per stream", "by stream", "per-core",
              "per core", "by core", "per-kernel", "per kernel", "by kernel", "per-tenant", "per tenant",
              "same seed", "fixed seed", "seeded", "seed", "replay", "production shape", "production traffic",
              "production load", "prod shapes", "prod traffic", "prod load", "at production", "same workload",
              "reproduc", "before/after", "before and after", "misses by reason", "queue wait", "batch-size",
              "batch size histogram", "tail driver", "tail-latency driver", "closed-loop")
WAY_BACK = ("roll back", "rollback", "roll-back", "rolled back", "revert", "previous plan", "pinned plan",
            "pin the previous", "pinned previous", "last known good", "last-known-good", "old plan", "feature flag",
            "flag", "kill switch", "killswitch", "canary", "fall back to the", "switch back", "flip back",
            "undo", "disable", "toggle")
TRIGGER = re.compile(r"threshold|\bslo\b|error budget|guardrail|\d+(\.\d+)?\s?(%|ms|x\b|s\b)|"
                     r"(more|worse|higher|lower|less) than (the )?(baseline|\d)|[<>]=? ?\d|exceeds? (the )?\d|"
                     r"(above|below|over|under) (the )?(baseline|slo|\d)")
RELEASE = re.compile(r"(hold|block|gate|don'?t ship|do not ship|do not release|don'?t release|no[- ]go|go/no-go|"
                     r"ship only|release only|only ship|only release|not release|delay the release|won'?t ship|"
                     r"stop the release|pause the rollout|halt|keep [^.\n]{0,40}\boff\b|no full release|"
                     r"release decision)[^.\n]{0,160}?\b(until|unless|only if|only after|once|after)\b[^.\n]{0,160}?"
                     r"(load test|canary|validat|pass|green|meets?|production|p\d\d|benchmark|test|shows?)")
GENERIC_OWNERS = {"the", "a", "an", "our", "some", "any", "whole", "this", "that", "my", "your", "every", "other",
                  "entire", "same", "relevant", "appropriate", "responsible", "their", "his", "her", "clear", "named",
                  "single", "accountable", "one", "new", "right", "proper", "dedicated"}
ROLES = re.compile(r"\b(on-?call|sre|tech lead|tl|dri|engineering manager|eng manager|em|release manager|"
                   r"release captain|product owner|perf(ormance)? lead|serving lead|compiler lead|runtime lead|"
                   r"platform lead|infra lead|team lead|lead engineer|principal|staff engineer|architect)\b")
OWNER_VERBS = re.compile(r"\b(i|i'll|i will|i'd|i would)\s+(own|drive|be accountable|take ownership)|owned by|"
                         r"\bowner\b|\bowns\b|accountable|\bdri\b|signs? off|sign-off")


@dataclass(frozen=True)
class Element:
    """One rubric element's result."""

    present: bool
    evidence: str
    hint: str


@dataclass(frozen=True)
class Grade:
    """The grader's result for one answer."""

    drill: str
    verdict: str  # strong | partial | weak
    score: int  # 0-100
    elements: dict[str, Element]

    def to_json(self) -> dict:
        """The ``--json`` form."""
        return {"drill": self.drill, "verdict": self.verdict, "score": self.score,
                "elements": {k: {"present": e.present, "evidence": e.evidence, "hint": e.hint}
                             for k, e in self.elements.items()}}


def check_answer(raw: bytes | str) -> str:
    """Refuse binary, non-UTF-8 or oversized answers with a clear message; return the text."""
    if isinstance(raw, bytes):
        if b"\x00" in raw:
            raise ConfigError("answer", f"{len(raw)} bytes", "looks binary (NUL bytes); give plain UTF-8 text")
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise ConfigError("answer", f"byte {e.start}", "is not UTF-8 text") from None
    if len(raw) > MAX_CHARS:
        raise ConfigError("answer", f"{len(raw)} characters", f"is longer than {MAX_CHARS} characters")
    return raw


# --- text handling --------------------------------------------------------------------

def _norm(text: str) -> str:
    t = text.lower().replace("\u2192", " -> ").replace("=>", " -> ").replace("\u2019", "'")
    t = re.sub(r"\s*([<>])\s*(?=\d)", r" \1 ", t)  # seq>512 -> seq > 512
    t = re.sub(r"\s+", " ", t)
    return f" {t} "


def _segments(text: str) -> list[str]:
    parts = re.split(r"(?<=[.!?])\s+(?=[A-Z0-9(\"'*-])|\n+", text)
    out = []
    for p in parts:
        p = re.sub(r"^\s*([-*\u2022]|\d+[.)])\s*", "", p).strip()
        if p:
            out.append(p)
    return out


_STOP = {"the", "a", "an", "of", "to", "its", "their", "is", "are"}
_SUFFIX = re.compile(r"(es|s|ed|ing|ly)$")


@lru_cache(maxsize=4096)
def _phrase(term: str) -> re.Pattern:
    """A phrase as a pattern: each word matched from its start (suffixes free), up to two words between."""
    words = [w for w in term.lower().split() if w not in _STOP] or term.lower().split()
    parts = []
    for w in words:
        stem = _SUFFIX.sub("", w) if len(w) > 4 and w.isalpha() else w
        tail = r"(?![a-z])" if len(stem) <= 3 and stem.isalpha() else ""  # 'so' must not match 'some'
        parts.append(r"(?<![a-z0-9])" + re.escape(stem) + tail)
    return re.compile(r"[a-z0-9./%-]*(?:[\s-]+\S+){0,2}?[\s-]+".join(parts) if len(parts) > 1 else parts[0])


def _has(text: str, terms) -> str | None:
    for term in terms:
        if _phrase(term).search(text):
            return term
    return None


def _listy(text: str) -> bool:
    """A run of bare terms ('drift/fallback/queue', 'fusion, SRAM, HBM, bandwidth, p95: ...') is no argument."""
    if re.search(r"[a-z0-9]+(?:/[a-z0-9]+){2,}", text):
        return True
    items = [i.strip() for i in re.split(r"[,;:]| / ", text) if i.strip()]
    return len(items) >= 4 and sum(len(i.split()) <= 2 for i in items) >= 0.75 * len(items)


def _termlist(text: str) -> bool:
    """A line that, past its 'Label:', is three or more items, most of them one or two words."""
    body = re.sub(r"^\s*[a-z ]{1,20}:", "", text)
    items = [i.strip() for i in re.split(r"[,;]| / ", body) if i.strip()]
    return len(items) >= 3 and sum(len(i.split()) <= 2 for i in items) >= 0.75 * len(items)


def _linked(window: str, chain) -> bool:
    """Causal language between the first and the last chain step named in the window."""
    spots = [m.start() for step in chain for t in step for m in [_phrase(t).search(window)] if m]
    if len(spots) < 2:
        return False
    lo, hi = min(spots), max(spots)
    return any(lo < m.start() < hi for c in CAUSAL for m in _phrase(c).finditer(window))


def _grams(text: str, n: int = 5) -> set[tuple[str, ...]]:
    words = re.findall(r"[a-z0-9]+", text.lower())
    return {tuple(words[i:i + n]) for i in range(len(words) - n + 1)}


def _recited(segment: str, source: set, share: float = 0.4) -> bool:
    g = _grams(segment)
    return len(g) >= 3 and len(g & source) >= share * len(g)


def _negated(text: str, term: str) -> bool:
    m = re.search(r"(?<![a-z0-9])" + re.escape(term.lower()), text)
    if not m:
        return False
    before = text[max(0, m.start() - 40):m.start()]
    return any(re.search(r"(?<![a-z])" + re.escape(n) + r"(?![a-z])", before) for n in NEGATIONS)


def _quote(s: str, limit: int = 240) -> str:
    s = re.sub(r"\s+", " ", s).strip()
    return s if len(s) <= limit else s[: limit - 3] + "..."


# --- element detectors ----------------------------------------------------------------

def _mechanism(drill: Drill, segs: list[str], norms: list[str]) -> Element:
    r = drill.rubric
    example = " -> ".join(step[0] for step in r.mechanism_chain)
    full = " ".join(norms)
    wrong = [t for t in r.rejected_mechanisms if _has(full, [t]) and not _negated(full, t)]
    if wrong:
        return Element(False, "", f"'{wrong[0]}' is not the bottleneck class in this scenario; explain the chain "
                                  f"that fits it, e.g. {example}")
    for width in (1, 2, 3):
        for i in range(len(norms) - width + 1):
            window = " ".join(norms[i:i + width])
            if _listy(window):
                continue
            steps = {k for k, step in enumerate(r.mechanism_chain) if _has(window, step)}
            if len(steps) >= r.mechanism_min_steps and set(r.mechanism_required) <= steps \
                    and _linked(window, r.mechanism_chain):
                return Element(True, _quote(" ".join(segs[i:i + width])), "")
    return Element(False, "", f"give the causal chain for this scenario, step by step, e.g. {example}; a word "
                              "like 'fusion' or the general definition of compiler-runtime mapping is not a mechanism")


def _artifact(segs: list[str], norms: list[str], drill: Drill, stuffed: bool) -> Element:
    for s, n in zip(segs, norms, strict=True):
        noun = _has(n, EVIDENCE_NOUNS)
        if not noun or (stuffed and _termlist(n)):
            continue
        # a qualifier that makes it concrete, other than the noun itself ("Artifact: mapping report." is not enough)
        rest = _phrase(noun).sub(" ", n, count=1)
        quals = [q for q in (*QUALIFIERS, *drill.rubric.artifact_terms) if noun not in q.lower()]
        if _has(rest, quals):
            return Element(True, _quote(s), "")
    return Element(False, "", "name a concrete, reproducible artifact: e.g. the closed-loop mapping report at the "
                              "same seed, a per-bucket/per-stream/per-core breakdown, a replayed trace, or a load "
                              "test at production shapes ('check dashboards' or 'profile it' is not one)")


ACTIONS = ("fix", "add", "lower", "raise", "switch", "move", "cap", "set", "use", "pin", "enable", "disable", "change",
           "increase", "reduce", "split", "re-place", "replace", "rebalance", "go back", "keep", "recompile", "rebuild",
           "re-bucket", "rebucket", "extend", "widen", "turn off", "turn on", "flip", "revert", "roll back", "drop",
           "limit", "bound", "shorten", "halve", "double", "give", "assign", "route", "place", "partition", "shard",
           "prefetch", "preload", "warm", "precompile", "unfuse", "fuse", "calibrate", "retune", "tune", "make",
           "ship", "cut", "trim", "bump", "grow", "shrink", "allocate", "reserve", "evict", "schedule", "weight")


def _fix(segs: list[str], norms: list[str], drill: Drill, stuffed: bool) -> Element:
    for s, n in zip(segs, norms, strict=True):
        term = _has(n, drill.rubric.fix_terms)
        acted = _has(n, ACTIONS)  # a fix is something to do, not a number in the evidence
        if term and acted and not _negated(n, term) and not _listy(n) and not (stuffed and _termlist(n)):
            return Element(True, _quote(s), "")
    examples = "; ".join(drill.rubric.fix_terms[:3])
    return Element(False, "", f"propose one bounded fix for this mechanism, e.g. {examples}")


def _owner(segs: list[str], norms: list[str]) -> Element:
    for s, n in zip(segs, norms, strict=True):
        for m in re.finditer(r"([a-z][a-z/&-]*)(?: ([a-z][a-z/&-]*))? (team|squad|group|org|on-?call|lead|"
                             r"owner(?! (should|could|might|would|can|may)\b))\b", n):  # 'X owner should' is advice
            words = [w for w in m.groups()[:2] if w]
            if words and words[-1] not in GENERIC_OWNERS and words[-1] not in ("should", "must", "will", "can"):
                return Element(True, _quote(s), "")
        if ROLES.search(n) and not re.search(r"\bsomeone\b|\bsomebody\b|\bwhoever\b", n):
            return Element(True, _quote(s), "")
        if re.search(r"\b[A-Z][a-z]+ (from|on|in|at) (the )?[A-Za-z]+", s) and OWNER_VERBS.search(n):
            return Element(True, _quote(s), "")
        m = re.search(r"\b(i|i'll|i will|i'd|i would) (own|drive|take ownership|be accountable)", n)
        if m:
            return Element(True, _quote(s), "")
    return Element(False, "", "name who is accountable: a team, role or person (e.g. the ML compiler team, the "
                              "serving on-call); 'someone' or 'the team should' is not an owner")


def _rollback(segs: list[str], norms: list[str], stuffed: bool) -> Element:
    for s, n in zip(segs, norms, strict=True):
        if stuffed and _termlist(n):
            continue
        if RELEASE.search(n):
            return Element(True, _quote(s), "")
        if _has(n, WAY_BACK) and TRIGGER.search(n):
            return Element(True, _quote(s), "")
    return Element(False, "", "give a way back with a trigger (e.g. canary; revert to the pinned previous plan if p99 "
                              "regresses more than 5%) or a release decision tied to validation")


def _workload(segs: list[str], norms: list[str], drill: Drill) -> Element:
    metric = "|".join(re.escape(m) for m in METRICS)
    moved = "|".join(re.escape(d) for d in DIRECTION) + r"|\d+(\.\d+)?\s?(x|%|ms|s)\b|->"
    near = re.compile(rf"(?<![a-z])({metric})\w*(\W+\w+){{0,8}}?\W+({moved})")  # the metric is what moved
    for s, n in zip(segs, norms, strict=True):
        if near.search(n) and _has(n, drill.rubric.workload_terms):
            return Element(True, _quote(s), "")
    return Element(False, "", "say which workload regressed and its first failing metric, with a number or a "
                              "direction (e.g. p99 of the chat stream doubled once sequence lengths passed 512)")


def grade(drill: Drill, answer: str) -> Grade:
    """Grade an answer to a drill (deterministic)."""
    answer = check_answer(answer)
    shared = _grams(CARD_TEXT) | _grams(" ".join([drill.prompt, drill.title, *drill.debug_branches, *drill.pitfalls,
                                                  *drill.takeaways, drill.senior_review_question]))
    references = _grams(drill.strong_answer) | _grams(drill.weak_answer)
    pasted = _recited(answer, references)  # the reference answer pasted back, whole
    segs = [] if pasted else [s for s in _segments(answer) if not _recited(s, shared)]
    norms = [_norm(s) for s in segs]
    if not segs:
        empty = "the answer is empty" if not answer.strip() else "the answer only restates the drill or the card"
        elements = {k: Element(False, "", f"{empty}: explain the {k} in your own words") for k in ELEMENTS}
    else:
        # an answer made mostly of term lists is keyword-stuffed: its list lines earn nothing
        stuffed = sum(_termlist(n) for n in norms) >= 0.5 * len(norms)
        elements = {"workload": _workload(segs, norms, drill), "mechanism": _mechanism(drill, segs, norms),
                    "artifact": _artifact(segs, norms, drill, stuffed), "fix": _fix(segs, norms, drill, stuffed),
                    "owner": _owner(segs, norms), "rollback": _rollback(segs, norms, stuffed)}
    core = sum(elements[k].present for k in CORE)
    verdict = "strong" if core == len(CORE) else "weak" if core <= 1 else "partial"
    score = sum(WEIGHTS[k] for k, e in elements.items() if e.present)
    return Grade(drill.id, verdict, score, elements)

"""A mock interview: the prompt and the scenario's figures, an answer, then the follow-ups a senior reviewer
would ask for what is missing, and one grade for the whole exchange, saved with its transcript.

:class:`Interview` is the state machine (no input or output of its own), shared by the
terminal (:func:`run_interview`, ``workbench interview``) and the notebook drill panel.
The interviewer asks about each missing core element in the order a reviewer would
(mechanism, artifact, owner, rollback), then about the fix once the core is settled. A
reply that misses the element asked about gets one sharper retry, built from what the
grader reports (for the mechanism, the drill's question for the first missing required
step of the chain), and never a third ask. ``max_follow_ups`` limits the elements asked
about, not the questions; no question is asked after the deadline, and the interview
ends early when nothing is missing.

The final grade reads the answer and every reply together (and the later replies on their
own, so a corrected mechanism counts), so an element is credited whichever question drew it
out: an owner given in reply to the rollback question counts and is not asked about
afterwards. The transcript records, on each interviewer turn, the element it asked about,
whether it was the retry and whether the reply supplied that element (``answered``), and on
each candidate turn the elements that became present with it (``supplied``).
"""

from __future__ import annotations

import signal
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from workbench.errors import ConfigError
from workbench.grading.drills import Drill
from workbench.grading.grader import ELEMENTS, MAX_CHARS, Grade, check_answer, grade, graded
from workbench.grading.store import Store

# the retry's pointed question, per element (the mechanism's is built from the drill's chain: _mechanism_retry)
SHARPER = {
    "workload": "Which stream or request class regressed, and which metric moved first, from what to what?",
    "artifact": "Concretely: which run would you show me, at which seed, and which breakdown in it would show the "
                "mechanism step by step?",
    "fix": "What exactly would you change, to what value, and why that bound?",
    "owner": "Who, by team or role, owns this change and signs off on it?",
    "rollback": "Concretely: what do you go back to, and which signal or threshold triggers it?",
}
_MISSING = "the chain is missing "  # where the grader's mechanism hint lists the steps it did not find


def missing_steps(drill: Drill, hint: str) -> list[int]:
    """The chain steps the grader's mechanism hint names as missing, in chain order ([] when the hint names none:
    no step was found at all, or a wrong bottleneck class was asserted)."""
    if _MISSING not in hint:
        return []
    listed = hint.split(_MISSING, 1)[1].split(";", 1)[0]
    items = f", {listed}, "  # a step name may hold a comma itself: match whole names between the separators
    return [k for k, name in enumerate(_step_names(drill)) if f", {name}, " in items]


def _step_names(drill: Drill) -> tuple[str, ...]:
    r = drill.rubric
    return r.step_names or tuple(step[0] for step in r.mechanism_chain)


def _mechanism_retry(drill: Drill, hints: list[str]) -> str:
    """The sharper mechanism question: the drill's question for the first required step that no hint reports
    as found (the first such step when every required one was found; the first required step when none was).
    The hints are the whole exchange's and each turn's own, so a step the last reply gave is not asked again."""
    r, names = drill.rubric, _step_names(drill)
    seen: set[int] = set()
    for hint in hints:
        missing = missing_steps(drill, hint)
        if missing:
            seen |= set(range(len(names))) - set(missing)
    todo = [k for k in range(len(names)) if k not in seen]
    if not todo:
        return (f"You have named every link; now walk me through them as one chain, cause to effect, from "
                f"{names[0]} to {names[-1]}.")
    if seen:
        k = next((j for j in todo if j in r.mechanism_required), todo[0])
        lead = f"One link is missing from your chain: {names[k]}."
    else:
        k = r.mechanism_required[0]
        lead = f"Take the chain one link at a time, and start with this link: {names[k]}."
    question = r.step_questions[k] if k < len(r.step_questions) else drill.senior_review_question
    return f"{lead} {question}"


def sharper(drill: Drill, element: str, hints: list[str]) -> str:
    """The retry for an element the first ask did not draw out: pointed, and never the first question again.
    ``hints`` are the grader's mechanism hints (the whole exchange's, then each turn's), read for the mechanism."""
    if element == "mechanism":
        return _mechanism_retry(drill, hints)
    return SHARPER[element]


@dataclass
class Interview:
    """One interview on one drill: ``answer`` the opening, then ``reply`` to each question until ``done``."""

    drill: Drill
    max_follow_ups: int = 5  # elements asked about (a retry is the same element): the four core ones and the fix
    deadline: float | None = None  # unix time, s: no question, retries included, is asked after it
    transcript: list[dict] = field(default_factory=list)
    started_at: float = field(default_factory=time.time)
    question: str | None = None  # the open question, if any
    _graded: tuple[int, Grade] | None = field(default=None, init=False, repr=False)  # (candidate turns, their grade)

    def _text(self) -> str:
        return "\n\n".join(t["text"] for t in self.transcript if t["role"] == "candidate")

    @property
    def grade(self) -> Grade:
        """The grade of the whole exchange so far. An element the later turns supply on their own counts too: a
        candidate who turns from a wrong class to the right chain when asked ('at first I said cores; it is HBM
        contention, because ...') gets the mechanism, which the whole exchange, holding the wrong class, would not
        give. A wrong class said last still voids what came before it."""
        turns = [t["text"] for t in self.transcript if t["role"] == "candidate"]
        if self._graded is not None and self._graded[0] == len(turns):
            return self._graded[1]  # asked again before a new turn: the same exchange, the same grade
        whole = grade(self.drill, "\n\n".join(turns))
        elements = dict(whole.elements)
        for k in range(1, len(turns)):
            for name, e in grade(self.drill, "\n\n".join(turns[k:])).elements.items():
                if e.present and not elements[name].present:
                    elements[name] = e
        self._graded = (len(turns), graded(self.drill, elements))
        return self._graded[1]

    @property
    def done(self) -> bool:
        """The interview is over: answered, and no question is open."""
        return self.question is None and bool(self.transcript)

    def asked(self) -> list[dict]:
        """The interviewer's turns, in order."""
        return [t for t in self.transcript if t["role"] == "interviewer"]

    def credited(self) -> dict[str, str]:
        """Elements a reply supplied to a question about another element: {supplied element: the element asked}."""
        out: dict[str, str] = {}
        for question, reply in zip(self.transcript, self.transcript[1:]):
            if question["role"] == "interviewer" and reply["role"] == "candidate":
                for name in reply.get("supplied", []):
                    if name != question["element"]:
                        out.setdefault(name, question["element"])
        return out

    def _hints(self) -> list[str]:
        """The mechanism hints of the whole exchange and of each candidate turn on its own."""
        turns = [t["text"] for t in self.transcript if t["role"] == "candidate"]
        return [self.grade.elements["mechanism"].hint] + [grade(self.drill, t).elements["mechanism"].hint
                                                         for t in turns]

    def _ask(self, element: str, question: str, retry: bool) -> str:
        self.transcript.append({"role": "interviewer", "element": element, "text": question, "retry": retry,
                                "at": time.time()})
        return question

    def _next(self) -> str | None:
        if self.deadline is not None and time.time() > self.deadline:
            return None
        g, turns = self.grade, self.asked()
        if turns and not turns[-1]["retry"] and not g.elements[turns[-1]["element"]].present:
            element = turns[-1]["element"]  # missed at the first ask: once more, sharper, before moving on
            return self._ask(element, sharper(self.drill, element, self._hints()), retry=True)
        asked = {t["element"] for t in turns}
        if len(asked) >= self.max_follow_ups:
            return None
        settled = asked | set(self.credited())  # asked already, or drawn out by another question: not asked again
        core = [(k, q) for k, q in g.follow_ups() if k not in settled]
        if core:
            return self._ask(*core[0], retry=False)
        fix = g.elements["fix"]
        if not fix.present and "fix" not in settled:  # the core is settled: now the fix
            return self._ask("fix", fix.question, retry=False)
        return None

    def _add_reply(self, text: str) -> list[str]:
        """Append a candidate turn; return (and record) the elements that became present with it."""
        before = self.grade.elements
        turn = {"role": "candidate", "text": text, "at": time.time()}
        self.transcript.append(turn)
        after = self.grade.elements
        turn["supplied"] = [k for k in ELEMENTS if after[k].present and not before[k].present]
        return turn["supplied"]

    def room(self) -> int:
        """Characters a reply may still have: the exchange, its turns joined by a blank line, is graded whole."""
        return MAX_CHARS - len(self._text()) - 2 * bool(self.transcript)

    def answer(self, text: str) -> str | None:
        """The opening answer; returns the first follow-up question, or None when nothing is missing. An answer
        that cannot be taken (:func:`taken`) is one ConfigError, and the interview is as it was."""
        if self.transcript:
            raise RuntimeError("the interview has already started; use reply()")
        self._add_reply(taken(text, "answer"))
        self.question = self._next()
        return self.question

    def reply(self, text: str) -> str | None:
        """A reply to the open question; returns the next question, or None when the interview is over. A reply
        that cannot be taken, or would make the exchange longer than the grader reads, is one ConfigError, and
        the exchange so far is kept as it was."""
        if self.question is None:
            raise RuntimeError("no question is open")
        text = taken(text, "reply")
        if len(text) > self.room():
            raise ConfigError("reply", f"{len(text)} characters", f"would make the exchange longer than {MAX_CHARS} "
                              f"characters ({max(self.room(), 0)} are left); keep it shorter")
        turn = self.transcript[-1]  # the open question: what it asked about
        turn["answered"] = turn["element"] in self._add_reply(text)
        self.question = self._next()
        return self.question

    def outcomes(self) -> list[str]:
        """One line per element asked about (supplied at the first ask, at the retry, later, or still missing),
        then one per element given in reply to another element's question."""
        present = {k: e.present for k, e in self.grade.elements.items()}
        asks: dict[str, list[dict]] = {}
        for t in self.asked():
            asks.setdefault(t["element"], []).append(t)
        lines = []
        for element, turns in asks.items():
            if turns[0].get("answered"):
                state = "supplied at the first ask"
            elif len(turns) > 1 and turns[1].get("answered"):
                state = "supplied at the retry"
            else:
                state = "supplied later" if present[element] else "still missing"
            lines.append(f"asked about {element}: {state}")
        lines += [f"{got}: given in reply to the {asked} question" for got, asked in self.credited().items()
                  if present[got]]
        return lines

    def save(self, store: Store, completed: bool = True) -> int | None:
        """Save the graded exchange and its transcript (nothing when no answer was given); returns the id."""
        if not any(t["role"] == "candidate" for t in self.transcript):
            return None
        return store.save(self.grade, self._text(), self.started_at,
                          transcript={"completed": completed, "turns": self.transcript})


def taken(text: str, what: str = "answer") -> str:
    """``text`` as a turn of the exchange: bytes that were not UTF-8 become U+FFFD; an empty turn, NUL bytes or
    more than the grader reads are one ConfigError (nothing of it is kept)."""
    from workbench.grading.practice import clean, refusal

    text = clean(check_answer(text))
    why = refusal(text)
    if why is not None:
        raise ConfigError(what, f"{len(text)} characters", why)
    return text


def _read(iv: Interview, stdin: TextIO, stdout: TextIO, lead: str) -> str | None:
    """The next answer or reply, typed until a single '.' (None at the end of input). One that cannot be taken
    (empty, NUL bytes, longer than the grader reads, alone or with the exchange so far) is refused and asked for
    again; the exchange so far is kept."""
    from workbench.grading.practice import read_block, refusal

    while True:
        stdout.write(f"{lead} (end with a line containing a single '.')\n")
        stdout.flush()
        block = read_block(stdin)
        long = block.too_long or len(block.text) > iv.room()
        why = (f"the exchange may hold {MAX_CHARS} characters and {max(iv.room(), 0)} are left" if long
               else refusal(block.text))
        if why is None:
            return block.text
        if block.ended:
            return None
        kept = "the answer so far is kept; " if iv.transcript else ""
        stdout.write(f"refused: {why}; {kept}type {'a shorter one' if long else 'it again'}\n")


def run_interview(drill: Drill, store: Store, evidence_text: str, reference: str, minutes: float | None = None,
                  max_follow_ups: int = 5, stdin: TextIO | None = None, stdout: TextIO | None = None) -> int | None:
    """A mock interview in the terminal; Ctrl-C, a closed terminal (SIGHUP) or the end of input saves what was
    answered (a second Ctrl-C while it is saved saves nothing). A reply that is empty, holds NUL bytes or would
    make the exchange longer than the grader reads is refused and may be typed again, the exchange so far kept;
    bytes that are not UTF-8 become U+FFFD. Returns the attempt."""
    from workbench.grading.practice import Escaped

    previous = _on_hangup()
    stdin, stdout = stdin or sys.stdin, stdout or sys.stdout  # the streams of the moment (not those at import)
    try:  # the answer quoted back is user input: control characters are escaped when printed
        return _run(drill, store, evidence_text, reference, minutes, max_follow_ups, stdin, Escaped(stdout))
    finally:
        if previous is not None:
            signal.signal(signal.SIGHUP, previous)


def _on_hangup():
    """Ignore SIGHUP (main thread only): a closed terminal then shows up as an I/O error on the next read or
    write, which saves what was answered. Returns the previous handler."""
    if not hasattr(signal, "SIGHUP") or threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGHUP, signal.SIG_IGN)


def _say(stdout: TextIO, text: str) -> None:
    """Write to the terminal if it is still there."""
    try:
        stdout.write(text)
        stdout.flush()
    except (OSError, ValueError):
        pass


def _run(drill: Drill, store: Store, evidence_text: str, reference: str, minutes: float | None,
         max_follow_ups: int, stdin: TextIO, stdout: TextIO) -> int | None:
    from workbench.grading.practice import feedback

    deadline = time.time() + minutes * 60 if minutes else None
    iv = Interview(drill, max_follow_ups, deadline)
    attempt = None
    try:
        stdout.write(f"\n=== mock interview: {drill.title} [{drill.topic}]\n\n{drill.prompt}\n\n"
                     f"Evidence (same seed; healthy baseline vs regressed run):\n{evidence_text}\n\n")
        if minutes:
            stdout.write(f"You have {minutes:g} minutes; no follow-up is asked after that.\n")
        text = _read(iv, stdin, stdout, "Your answer")
        question = iv.answer(text) if text is not None else None
        while question is not None:
            stdout.write(f"\nInterviewer: {question}\n")
            text = _read(iv, stdin, stdout, "Your reply")
            if text is None:
                break
            question = iv.reply(text)
        if not iv.transcript:
            stdout.write("no answer given; nothing saved\n")
            return None
        attempt = iv.save(store, completed=iv.done)
        g = iv.grade
        stdout.write("\nThe whole exchange, graded:\n" + feedback(g) + "\n")
        for line in iv.outcomes():
            stdout.write(f"  {line}\n")
        stdout.write(f"\nStrong reference answer (its figures are from the runs above):\n{reference}\n"
                     f"(attempt #{attempt} saved to {Path(store.path)}, with the transcript)\n")
        stdout.flush()
    except (KeyboardInterrupt, OSError):  # Ctrl-C, a closed terminal, or input that cannot be read any more
        if attempt is None:
            attempt = _save_interrupted(iv, store)
        _say(stdout, f"\ninterrupted; {f'attempt #{attempt} saved' if attempt else 'nothing saved'}\n")
    return attempt


def _save_interrupted(iv: Interview, store: Store) -> int | None:
    """Save what was answered, marked incomplete; a second Ctrl-C while it is graded and saved saves nothing (the
    store writes an attempt and its transcript in one transaction)."""
    try:
        return iv.save(store, completed=False)
    except KeyboardInterrupt:
        return None

"""A mock interview: the prompt and the scenario's figures, an answer, then the follow-ups a senior reviewer
would ask for what is missing, and one grade for the whole exchange, saved with its transcript.

:class:`Interview` is the state machine (no input or output of its own), shared by the
terminal (:func:`run_interview`, ``workbench interview``) and the notebook drill panel.
The interviewer asks at most ``max_follow_ups`` questions, one per missing core element
in the order a reviewer would (mechanism, artifact, owner, rollback), and stops early
when the time is up or nothing is missing. The final grade reads the answer and every
reply together (and the later replies on their own, so a corrected mechanism counts), so a
candidate who supplies the rollback when asked gets credit for it;
the transcript records which element each question was about and whether the reply
supplied it.
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
from workbench.grading.grader import MAX_CHARS, Grade, check_answer, grade, graded
from workbench.grading.store import Store


@dataclass
class Interview:
    """One interview on one drill: ``answer`` the opening, then ``reply`` to each question until ``done``."""

    drill: Drill
    max_follow_ups: int = 4
    deadline: float | None = None  # unix time, s: no follow-up is asked after it
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
        return self.question is None and bool(self.transcript)

    def _next(self) -> str | None:
        asked = {t["element"] for t in self.transcript if t["role"] == "interviewer"}
        if len(asked) >= self.max_follow_ups or (self.deadline is not None and time.time() > self.deadline):
            return None
        for element, question in self.grade.follow_ups():
            if element not in asked:
                self.transcript.append({"role": "interviewer", "element": element, "text": question,
                                        "at": time.time()})
                return question
        return None

    def answer(self, text: str) -> str | None:
        """The opening answer; returns the first follow-up question, or None when nothing is missing."""
        if self.transcript:
            raise RuntimeError("the interview has already started; use reply()")
        self.transcript.append({"role": "candidate", "text": check_answer(text), "at": time.time()})
        self.question = self._next()
        return self.question

    def reply(self, text: str) -> str | None:
        """A reply to the open question; returns the next question, or None when the interview is over."""
        if self.question is None:
            raise RuntimeError("no question is open")
        text = check_answer(text)
        if len(self._text()) + len(text) > MAX_CHARS:
            raise ConfigError("reply", f"{len(text)} characters", f"would make the exchange longer than {MAX_CHARS} "
                              "characters; keep it shorter")
        turn = self.transcript[-1]  # the open question: what it asked about
        before = self.grade.elements[turn["element"]].present
        self.transcript.append({"role": "candidate", "text": text, "at": time.time()})
        turn["answered"] = self.grade.elements[turn["element"]].present and not before
        self.question = self._next()
        return self.question

    def save(self, store: Store, completed: bool = True) -> int | None:
        """Save the graded exchange and its transcript (nothing when no answer was given); returns the id."""
        if not any(t["role"] == "candidate" for t in self.transcript):
            return None
        return store.save(self.grade, self._text(), self.started_at,
                          transcript={"completed": completed, "turns": self.transcript})


def _read(stdin: TextIO, stdout: TextIO, lead: str) -> str | None:
    """Lines until a single '.' (None at end of input)."""
    stdout.write(f"{lead} (end with a line containing a single '.')\n")
    stdout.flush()
    lines = []
    while True:
        line = stdin.readline()
        if not line:
            return "".join(lines) if lines else None
        if line.rstrip("\r\n") == ".":
            return "".join(lines)
        lines.append(line)


def run_interview(drill: Drill, store: Store, evidence_text: str, reference: str, minutes: float | None = None,
                  max_follow_ups: int = 4, stdin: TextIO = sys.stdin, stdout: TextIO = sys.stdout) -> int | None:
    """A mock interview in the terminal; Ctrl-C, a closed terminal (SIGHUP) or the end of input saves what was
    answered. Returns the attempt."""
    from workbench.grading.practice import Escaped

    previous = _on_hangup()
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
    stdout.write(f"\n=== mock interview: {drill.title} [{drill.topic}]\n\n{drill.prompt}\n\n"
                 f"Evidence (same seed; healthy baseline vs regressed run):\n{evidence_text}\n\n")
    if minutes:
        stdout.write(f"You have {minutes:g} minutes; no follow-up is asked after that.\n")
    try:
        text = _read(stdin, stdout, "Your answer")
        question = iv.answer(text) if text is not None else None
        while question is not None:
            stdout.write(f"\nInterviewer: {question}\n")
            text = _read(stdin, stdout, "Your reply")
            if text is None:
                break
            question = iv.reply(text)
    except (KeyboardInterrupt, OSError):  # Ctrl-C, a closed terminal, or input that cannot be read any more
        attempt = iv.save(store, completed=False)
        _say(stdout, f"\ninterrupted; {f'attempt #{attempt} saved' if attempt else 'nothing to save'}\n")
        return attempt
    if not iv.transcript:
        stdout.write("no answer given; nothing saved\n")
        return None
    attempt = iv.save(store, completed=iv.done)
    g = iv.grade
    turns = [t for t in iv.transcript if t["role"] == "interviewer"]
    stdout.write("\nThe whole exchange, graded:\n" + feedback(g) + "\n")
    for t in turns:
        stdout.write(f"  asked about {t['element']}: {'supplied' if t.get('answered') else 'still missing'}\n")
    stdout.write(f"\nStrong reference answer (its figures are from the runs above):\n{reference}\n"
                 f"(attempt #{attempt} saved to {Path(store.path)}, with the transcript)\n")
    stdout.flush()
    return attempt

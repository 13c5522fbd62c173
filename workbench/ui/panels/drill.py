"""Interview practice inside Jupyter: prompt, scenario evidence, a text area, a Grade button, feedback.

The panel only wires widgets to the library: drills come from
:mod:`workbench.grading.drills`, the evidence from
:func:`workbench.grading.practice.evidence`, the grade from
:func:`workbench.grading.grader.grade`, and attempts go to the same progress store as
``workbench practice`` (the default database, ``$WORKBENCH_DB`` or the user data folder,
opened on the first save; ``store=False`` saves nothing), so ``workbench progress`` lists
them. Switching drills clears the previous drill's evidence at once and shows "running
the scenario..." until the new drill's evidence is ready.
"""

from __future__ import annotations

import html
import time

import ipywidgets as w

from workbench.errors import ConfigError
from workbench.grading.drills import Drill, load_drills
from workbench.grading.grader import ELEMENTS, Grade, check_answer, grade
from workbench.grading.interview import Interview
from workbench.grading.practice import prepare
from workbench.grading.store import Store

RUNNING = "<p><i>running the scenario&hellip; (the drill's baseline and regressed runs, same seed)</i></p>"


def feedback_html(g: Grade, reference: str) -> str:
    """Per-element feedback, then the strong reference answer (rendered from the drill's runs)."""
    rows = "".join(
        f"<tr><td>{'&#10003;' if e.present else '&#10007;'}</td><td><b>{k}</b></td>"
        f"<td>{html.escape(e.evidence if e.present else e.hint)}</td></tr>"
        for k, e in ((k, g.elements[k]) for k in ELEMENTS))
    return (f"<p><b>verdict: {g.verdict}</b> (score {g.score}/100)</p><table>{rows}</table>"
            f"<details><summary>Strong reference answer</summary><pre style='white-space:pre-wrap'>"
            f"{html.escape(reference)}</pre></details>")


class DrillPanel:
    """A drill picker, its prompt and evidence, an answer box and a Grade button.

    With ``interview=True`` it is a mock interview: the button sends the answer, the
    interviewer asks whatever :class:`~workbench.grading.interview.Interview` asks next (a
    follow-up for each missing core element, one sharper retry when a reply misses it, then
    the fix) in the reply box, and the whole exchange is graded (and saved with its
    transcript) when the questions end.
    """

    def __init__(self, drills: dict[str, Drill] | None = None, store: Store | bool | None = None,
                 drill_id: str | None = None, show_evidence: bool = True, interview: bool = False):
        self.drills = drills or load_drills()
        self._store = store  # None: the default database, opened on the first save; False: do not save
        self.show_evidence = show_evidence
        self.interview_mode = interview
        self.interview: Interview | None = None
        self.last_grade: Grade | None = None
        ids = sorted(self.drills)
        self.select = w.Dropdown(options=ids, value=drill_id or ids[0], description="drill")
        self.prompt = w.HTML()
        self.evidence = w.HTML()
        self.answer = w.Textarea(placeholder="Your answer: workload, mechanism, artifact, fix, owner, rollback",
                                 layout=w.Layout(width="100%", height="180px"))
        self.button = w.Button(description="Send answer" if interview else "Grade", button_style="primary")
        self.feedback = w.HTML()
        self.question = w.HTML()
        self.reply = w.Textarea(placeholder="Your reply to the interviewer", layout=w.Layout(width="100%",
                                                                                             height="100px"))
        self.reply_button = w.Button(description="Reply", button_style="info")
        self.follow_up = w.VBox([self.question, self.reply, self.reply_button], layout=w.Layout(display="none"))
        self.button.on_click(self._start if interview else self._grade)
        self.reply_button.on_click(self._reply)
        self.select.observe(lambda change: self._load(), names="value")
        self.widget = w.VBox([self.select, self.prompt, self.evidence, self.answer, self.button, self.follow_up,
                              self.feedback])
        self._started = time.time()
        self._load()

    @property
    def drill(self) -> Drill:
        """The selected drill."""
        return self.drills[self.select.value]

    def _load(self) -> None:
        # the previous drill's evidence goes first, so it never shows under the new prompt
        self.evidence.value = RUNNING if self.show_evidence else ""
        d = self.drill
        self.prompt.value = f"<h4>{html.escape(d.title)}</h4><p>{html.escape(d.prompt)}</p>"
        self.feedback.value = ""
        self.answer.value = ""
        self.interview = None
        self.follow_up.layout.display = "none"
        self.answer.disabled = self.button.disabled = False
        self._started = time.time()
        self._ev = None
        if self.show_evidence:
            self._ev = prepare(d)
            self.evidence.value = f"<pre>{html.escape(self._ev.table)}</pre>"

    @property
    def store(self) -> Store | None:
        """The progress store attempts are saved to (the CLI's default database unless one was given)."""
        if self._store is None:
            self._store = Store()
        return self._store or None

    def reference(self) -> str:
        """The strong reference answer, its figures from this drill's runs (run now if not run yet)."""
        if self._ev is None:
            self._ev = prepare(self.drill)
        return self._ev.reference

    def _grade(self, _button=None) -> None:
        try:
            text = check_answer(self.answer.value)
        except ConfigError as e:
            self.feedback.value = f"<p style='color:#b00'>{html.escape(str(e))}</p>"
            return
        self.last_grade = grade(self.drill, text)
        note = ""
        if self.store is not None:
            attempt = self.store.save(self.last_grade, text, self._started)
            note = f"<p>attempt #{attempt} saved to {html.escape(str(self.store.path))}</p>"
        self.feedback.value = feedback_html(self.last_grade, self.reference()) + note

    def _ask(self, question: str | None) -> None:
        if question is None:
            self._finish()
            return
        self.follow_up.layout.display = ""
        self.question.value = f"<p><b>Interviewer:</b> {html.escape(question)}</p>"
        self.reply.value = ""

    def _start(self, _button=None) -> None:
        self.interview = Interview(self.drill)
        try:
            question = self.interview.answer(self.answer.value)
        except ConfigError as e:
            self.interview = None
            self.feedback.value = f"<p style='color:#b00'>{html.escape(str(e))}</p>"
            return
        self.answer.disabled = self.button.disabled = True
        self._ask(question)

    def _reply(self, _button=None) -> None:
        if self.interview is None or self.interview.question is None:
            return
        try:
            question = self.interview.reply(self.reply.value)
        except ConfigError as e:
            self.feedback.value = f"<p style='color:#b00'>{html.escape(str(e))}</p>"
            return
        self._ask(question)

    def _finish(self) -> None:
        iv = self.interview
        self.follow_up.layout.display = "none"
        self.last_grade = iv.grade
        asked = "".join(f"<li>{html.escape(line)}</li>" for line in iv.outcomes())
        note = ""
        if self.store is not None:
            attempt = iv.save(self.store)
            note = f"<p>attempt #{attempt} saved with its transcript to {html.escape(str(self.store.path))}</p>"
        self.feedback.value = (f"<p>The whole exchange, graded:</p><ul>{asked}</ul>"
                               + feedback_html(self.last_grade, self.reference()) + note)

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)

"""The prediction widget: the learner commits a guess, it is stored, and only then is the answer shown.

``predict(...)`` (also ``workbench.ui.predict``) follows every bold "Predict" prompt of the
course. It takes a number with its unit (``unit="ms"``), a choice (``choices=[...]``) or a
ranking (``rank=[...]``). The learner enters a prediction and presses *Commit*: the
prediction is written to the progress store (the one drills use, in its own ``predictions``
table: ``store=None`` opens the default database, ``$WORKBENCH_DB`` or
``~/.local/share/workbench/progress.sqlite3``, at the commit and closes it again; pass a
:class:`~workbench.grading.store.Store` or a path to use another, ``False`` to keep nothing),
the inputs lock, and only then does the widget show the observed value beside the
prediction, how far off it was, and a one-sentence why.

The observed value never comes from the prediction cell. Either the experiment cell below
registers it (``guess.observe(value, why)``, which shows nothing until a commit) or
``answer=`` is a callable that returns ``(value, why)`` and is called at the commit, not
before. A notebook run top to bottom without a person (Run All, nbval, the book build)
commits nothing: every widget says "not committed", its text form says so too, nothing is
written to the store, the reveal waits, and nothing blocks. (The cells below a widget still
run; ``with guess.held():`` around an experiment cell holds what it shows until the commit, see
:mod:`workbench.ui.widgets.held`.)
"""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import ipywidgets as w

from workbench.errors import ConfigError
from workbench.grading.store import Store
from workbench.ui.widgets.held import Held
from workbench.ui.widgets.predictions import (
    NOT_COMMITTED,
    Choice,
    Comparison,
    Number,
    Question,
    compare,
    format_value,
    kind_of,
    parse,
)

CSS_CLASS = "workbench-predict"  # the browser test finds the widget by it
WAITING = "committed; the answer shows here once the experiment below has run (run it now)"


class Prediction:
    """One prediction: its question, the learner's committed guess, and the observation once there is one."""

    def __init__(self, question: Question, answer: Callable[[], tuple[Any, str]] | None = None,
                 store: Store | str | Path | bool | None = None):
        self.question = question
        self._answer = answer
        self._store = store  # None: the default database, opened at each commit; False: keep nothing
        self.stored_in: Path | None = None  # the store the commit went to
        self.committed: Any = None  # the parsed prediction once committed
        self.record_id: int | None = None  # its row in the store
        self.observed: Any = None
        self.why = ""
        self._has_observation = False
        self._answer_error = ""  # why an answer= callable could not run yet
        self.comparison: Comparison | None = None
        self._on_commit: list[Callable[[], None]] = []  # held experiment cells that open at the commit
        self._build()

    # --- the widget -----------------------------------------------------------------------------------------------
    def _build(self) -> None:
        kind = self.question.kind
        self.prompt = w.HTML(f"<b>Predict ({html.escape(self.question.id)}).</b> {html.escape(self.question.text)}")
        if isinstance(kind, Number):
            self.inputs: list[w.Widget] = [w.Text(placeholder=f"a number, in {kind.unit}",
                                                  layout=w.Layout(width="160px"))]
            entry = w.HBox([self.inputs[0], w.Label(kind.unit)])
        elif isinstance(kind, Choice):
            self.inputs = [w.RadioButtons(options=list(kind.options), value=None)]
            entry = self.inputs[0]
        else:
            self.inputs = [w.Dropdown(options=list(kind.items), value=None, description=f"{i + 1}.",
                                      layout=w.Layout(width="260px")) for i in range(len(kind.items))]
            entry = w.Box([w.Label(f"rank them, {kind.order}"), *self.inputs],
                          layout=w.Layout(display="flex", flex_flow="column"))
        self.button = w.Button(description="Commit", button_style="primary", icon="lock",
                               tooltip="record this prediction; the answer is shown only after it")
        self.status = w.HTML(self._status_html())
        self.reveal = w.HTML("")
        self.button.on_click(lambda _b: self.commit())
        # a plain Box in a column, not a VBox: ".widget-vbox" is how the browser tests find a panel
        self.widget = w.Box([self.prompt, entry, self.button, self.status, self.reveal],
                            layout=w.Layout(display="flex", flex_flow="column", align_items="stretch"))
        self.widget.add_class(CSS_CLASS)

    def _raw(self) -> Any:
        if isinstance(self.question.kind, Number | Choice):
            return self.inputs[0].value
        return [d.value for d in self.inputs]

    def _status_html(self, error: str = "") -> str:
        if error:
            return f"<span style='color:#b00'>{html.escape(error)}</span>"
        if self.comparison is not None:  # the comparison itself is in the reveal below
            kept = f"kept in {self.stored_in}" if self.stored_in else "not stored (store=False)"
            return f"<i>committed before the answer was shown; {html.escape(kept)}</i>"
        return f"<i>{html.escape(self.status_text())}</i>"

    def status_text(self) -> str:
        """One line: not committed, committed and waiting, or the comparison. Never the answer before a commit."""
        if self.committed is None:
            return f"{NOT_COMMITTED}: enter your prediction and press Commit; the answer waits for it"
        shown = format_value(self.question.kind, self.committed)
        if self.comparison is None and self._answer_error:
            return (f"you predicted {shown}; the answer could not be computed yet ({self._answer_error}): run the "
                    "cells below, then press 'Show the answer'")
        if self.comparison is None:
            return f"you predicted {shown}; {WAITING}"
        c = self.comparison
        return (f"you predicted {shown}; observed {format_value(self.question.kind, c.observed)}: {c.how_far}. "
                f"Why: {self.why}")

    def _repr_mimebundle_(self, **kwargs: Any) -> dict:
        bundle = self.widget._repr_mimebundle_(**kwargs)
        bundle["text/plain"] = f"prediction {self.question.id}: {self.status_text()}"
        return bundle

    def __repr__(self) -> str:
        return f"<Prediction {self.question.id}: {self.status_text()}>"

    # --- commit and reveal ----------------------------------------------------------------------------------------
    def _save(self, prediction: Any) -> None:
        """Write the commit to the store (a store given is kept open; one opened here is closed again)."""
        if self._store is False:
            return
        store = self._store if isinstance(self._store, Store) else Store(None if self._store in (None, True)
                                                                          else self._store)
        try:
            self.record_id = store.save_prediction(self.question.id, self.question.kind.name, prediction)
            self.stored_in = store.path
        finally:
            if store is not self._store:
                store.close()

    def commit(self, value: Any = None) -> bool:
        """Record the prediction (``value``, or what the inputs hold), then reveal if the answer is known.

        Returns False, saying why in the widget, when the entry is not a prediction yet or the store refuses it.
        Pressed again after a commit, the button only retries an ``answer=`` callable that failed.
        """
        if self.committed is not None:
            self._run_answer()
            self._show()
            return True
        try:
            prediction = parse(self.question.kind, self._raw() if value is None else value)
            self._save(prediction)  # stored before anything reveals the answer
        except (ValueError, ConfigError) as e:
            self.status.value = self._status_html(str(e))
            return False
        self.committed = prediction
        for x in self.inputs:
            x.disabled = True
        self.button.disabled, self.button.description = True, "Committed"
        for open_held in self._on_commit:
            open_held()
        self._run_answer()
        self._show()
        return True

    def held(self) -> Held:
        """``with guess.held():`` around the experiment cell below: its outputs wait for the commit
        (:mod:`workbench.ui.widgets.held`)."""
        return Held(self.question.id, lambda: self.committed is not None, self._on_commit.append)

    def _run_answer(self) -> None:
        """Call ``answer=`` once committed; if it fails (a cell it reads not run yet), the commit stands and the
        button offers to try again."""
        if self._answer is None or self._has_observation:
            return
        try:
            value, why = self._answer()
            self.observe(value, why)
            self._answer_error = ""
            self.button.disabled, self.button.description = True, "Committed"
        except Exception as e:  # any failure of the learner's kernel state is shown, never raised
            self._answer_error = f"{type(e).__name__}: {e}"
            self.button.disabled, self.button.description = False, "Show the answer"

    def observe(self, value: Any, why: str) -> None:
        """Register what the run showed and why (one sentence); shown only once a prediction is committed."""
        self.observed = parse(self.question.kind, value)
        self.why = why.strip()
        self._has_observation = True
        self._show()

    def _show(self) -> None:
        if self.committed is not None and self._has_observation:
            self.comparison = compare(self.question.kind, self.committed, self.observed)
            self.reveal.value = reveal_html(self.question, self.comparison, self.why)
        self.status.value = self._status_html()


def reveal_html(question: Question, c: Comparison, why: str) -> str:
    """The prediction and the observation side by side, how far off, and why."""
    colour = "#2a7" if c.close else "#c60"
    rows = (("you predicted", format_value(question.kind, c.predicted)),
            ("observed", format_value(question.kind, c.observed)),
            ("how far off", c.how_far))
    cells = "".join(f"<tr><td>{k}</td><td><b>{html.escape(v)}</b></td></tr>" for k, v in rows)
    return (f"<div class='{CSS_CLASS}-reveal' style='border-left:4px solid {colour};padding-left:8px'>"
            f"<table>{cells}</table><p>Why: {html.escape(why)}</p></div>")


def predict(id: str, question: str, *, unit: str | None = None, choices: Sequence[str] | None = None,
            rank: Sequence[str] | None = None, order: str = "first to last", tolerance: float = 0.1,
            answer: Callable[[], tuple[Any, str]] | None = None,
            store: Store | str | Path | bool | None = None) -> Prediction:
    """A prediction widget for prompt ``id`` (``"02.1"``): give exactly one of ``unit``, ``choices`` or ``rank``.

    ``answer``, if given, is called at the commit and returns ``(observed value, why)``;
    otherwise a later cell calls ``.observe(value, why)``. ``store``: see the module docstring.
    """
    kind = kind_of(unit, tuple(choices) if choices is not None else None, tuple(rank) if rank is not None else None,
                   order, tolerance)
    return Prediction(Question(id, question, kind), answer, store)

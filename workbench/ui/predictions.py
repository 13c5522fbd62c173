"""Predict, commit, then observe: the learner's predictions, recorded before each answer is shown.

Every "Predict" prompt in a chapter is followed by a cell in which the learner writes a
prediction in place of a placeholder and records it; only the cell after that runs the
experiment. ``predictions`` (one per notebook, no global state) keeps what was predicted, so the
chapter's closing cell, or the learner, can set each prediction beside what the run showed.

A notebook executed top to bottom (nbval, the book) leaves the placeholders in place: each
prediction cell then says "not recorded" and nothing is held.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

NOT_RECORDED = ("not recorded: replace the ... with your prediction (a word, a number or a ranking) and run this "
                "cell before the next one")


@dataclass
class Predictions:
    """What the learner predicted, by question, in the order they were recorded."""

    made: dict[str, Any] = field(default_factory=dict)

    def __call__(self, question: str, prediction: Any) -> str:
        """Record ``prediction`` for ``question`` (a placeholder ``...`` records nothing); say what was kept."""
        if prediction is ...:
            return NOT_RECORDED
        if isinstance(prediction, str) and not prediction.strip():
            return NOT_RECORDED
        self.made[question] = prediction
        return f"recorded for {question!r}: {prediction!r}; now run the next cell and compare"

    def recall(self, question: str) -> str:
        """What was predicted for ``question``, for the cell that shows the answer."""
        if question not in self.made:
            return f"no prediction recorded for {question!r}"
        return f"you predicted for {question!r}: {self.made[question]!r}"

    def summary(self) -> str:
        """Every recorded prediction, one line each."""
        if not self.made:
            return "no predictions recorded"
        return "\n".join(f"{q}: {p!r}" for q, p in self.made.items())

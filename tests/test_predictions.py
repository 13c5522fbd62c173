"""Predict, commit, then observe: every prediction prompt of the course is followed by a cell that records the
learner's prediction before any cell shows the answer (and asserts nothing)."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from workbench.ui.predictions import NOT_RECORDED, Predictions

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").rglob("*.ipynb"))
PROMPT = re.compile(r"\bPredict\b")
# a learner's placeholder: a prediction recorded, or an exercise's answer written before it is checked
RECORDS = re.compile(r"predictions\([^\n]*, \.\.\.\)|^\s*(?:my_\w+|element)\s*=", re.M)


def prompts(path: Path) -> list[tuple[int, str]]:
    """(index, source) of the first code cell after each prediction prompt."""
    cells = nbformat.read(path, as_version=4).cells
    out = []
    for i, c in enumerate(cells):
        if c.cell_type == "markdown" and PROMPT.search(c.source):
            j = next(k for k in range(i + 1, len(cells)) if cells[k].cell_type == "code")
            out.append((j, cells[j].source))
    return out


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_prediction_prompt_is_answered_before_the_run_that_shows_it(path):
    for j, source in prompts(path):
        assert RECORDS.search(source), f"{path.name} cell {j}: the cell after a prediction prompt must record it"
        assert "assert" not in source, f"{path.name} cell {j}: the prediction cell must not hold the answer"


def test_the_course_asks_for_predictions_in_every_chapter_that_has_prompts():
    student = [p for p in NOTEBOOKS if p.parent.name == "notebooks"]
    assert sum(len(prompts(p)) for p in student) >= 30


def test_a_placeholder_records_nothing_and_a_prediction_is_kept_in_order():
    p = Predictions()
    assert p("02.1 bytes", ...) == NOT_RECORDED and p("02.1 bytes", "  ") == NOT_RECORDED and p.made == {}
    assert "recorded" in p("02.1 bytes", "aggressive") and p("02.2 tile", 256).endswith("compare")
    assert list(p.made) == ["02.1 bytes", "02.2 tile"] and p.made["02.2 tile"] == 256
    assert p.recall("02.1 bytes") == "you predicted for '02.1 bytes': 'aggressive'"
    assert p.recall("03.1") == "no prediction recorded for '03.1'"
    assert p.summary() == "02.1 bytes: 'aggressive'\n02.2 tile: 256" and Predictions().summary() == \
        "no predictions recorded"

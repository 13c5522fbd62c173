"""Predict, commit, then observe: every "Predict" prompt of the course is followed directly by a ``predict(`` cell
that reveals nothing, the observation comes only from a later cell (or from an ``answer=`` callable run at the
commit), and the widget records a commit in the progress store before it shows the answer beside it."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import nbformat
import pytest

from workbench.errors import ConfigError
from workbench.grading.store import Store
from workbench.ui import predict
from workbench.ui.widgets.prediction import Prediction
from workbench.ui.widgets.predictions import (
    NOT_COMMITTED,
    Choice,
    Number,
    Ranking,
    compare,
    discordant_pairs,
    format_value,
    kind_of,
    parse,
)

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").rglob("*.ipynb"))
PROMPT = re.compile(r"\bPredict\b")
PREDICT_CELL = re.compile(r"^(\w+) = predict\(\s*\"(\d\d\.\d+)\"", re.M)


def predictions_in(path: Path) -> list[dict]:
    """Each prompt's markdown cell, the cell after it, and (when that is a predict( cell) its variable and id."""
    cells = nbformat.read(path, as_version=4).cells
    out = []
    for i, c in enumerate(cells):
        if c.cell_type == "markdown" and PROMPT.search(c.source):
            nxt = cells[i + 1] if i + 1 < len(cells) else None
            m = PREDICT_CELL.search(nxt.source) if nxt is not None and nxt.cell_type == "code" else None
            out.append({"prompt": i, "cell": i + 1, "source": nxt.source if nxt is not None else "",
                        "var": m and m.group(1), "id": m and m.group(2), "cells": cells})
    return out


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_predict_prompt_is_followed_directly_by_a_predict_cell_that_reveals_nothing(path):
    for p in predictions_in(path):
        where = f"{path.name} cell {p['cell']}"
        assert p["var"], f"{where}: the cell right after a Predict prompt must be `name = predict(\"NN.N\", ...)`"
        src = p["source"]
        assert "assert" not in src and "print(" not in src, f"{where}: a prediction cell asserts and prints nothing"
        assert ".observe(" not in src, f"{where}: the observation belongs in a later cell"
        assert src.rstrip().endswith(p["var"]), f"{where}: the cell shows its widget (ends with {p['var']})"
        assert not p["cells"][p["cell"]].outputs, f"{where}: a prediction cell keeps no stored output"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_the_observation_is_registered_only_below_its_prediction(path):
    """Run All computes nothing of the answer above the commit: ``var.observe(`` only in a cell below the widget, or
    ``answer=`` (called at the commit), never both, and the callable is called nowhere in the notebook."""
    found = predictions_in(path)
    ids = [p["id"] for p in found]
    assert len(ids) == len(set(ids)), f"{path.name}: prediction ids repeat: {ids}"
    for p in found:
        cells, var = p["cells"], p["var"]
        observed_at = [k for k, c in enumerate(cells) if c.cell_type == "code" and f"{var}.observe(" in c.source]
        reassigned = [k for k, c in enumerate(cells) if k != p["cell"] and re.search(rf"^{var}\s*=", c.source, re.M)]
        assert not reassigned, f"{path.name}: {var} is assigned again in cells {reassigned}"
        if "answer=" in p["source"]:
            assert not observed_at, f"{path.name}: {var} has an answer callable and an observe() call"
        else:
            assert len(observed_at) == 1 and observed_at[0] > p["cell"], \
                f"{path.name}: {var} ({p['id']}) must be observed once, in a cell below it (found {observed_at})"


def test_the_course_asks_for_predictions_in_every_chapter_with_prompts_and_solutions_match():
    student = [p for p in NOTEBOOKS if p.parent.name == "notebooks"]
    counts = {p.stem: [q["id"] for q in predictions_in(p)] for p in student}
    assert sum(len(v) for v in counts.values()) >= 20
    for p in NOTEBOOKS:
        if p.parent.name == "solutions":
            assert [q["id"] for q in predictions_in(p)] == counts[p.stem], f"solutions/{p.name} asks other questions"
    for stem, ids in counts.items():  # ids in order, numbered by chapter
        assert ids == [f"{stem[:2]}.{k + 1}" for k in range(len(ids))], f"{stem}: {ids}"


# --- the logic: parse, compare, format -------------------------------------------------------------------------------

def test_kinds_are_named_by_exactly_one_argument():
    assert kind_of(unit="ms") == Number("ms") and kind_of(choices=["a", "b"]) == Choice(("a", "b"))
    assert kind_of(rank=("x", "y"), order="fastest first") == Ranking(("x", "y"), "fastest first")
    for bad in ({}, {"unit": "ms", "choices": ["a", "b"]}, {"choices": ["a"]}, {"rank": ["a", "a"]},
                {"unit": "ms", "tolerance": 0}):
        with pytest.raises(ValueError):
            kind_of(**bad)


def test_numbers_parse_with_their_unit_and_say_how_far_off():
    ms = Number("ms")
    assert parse(ms, "1,500") == 1500.0 and parse(ms, " 2.5 ms ") == 2.5 and parse(ms, 3) == 3.0
    for bad in ("", "fast", float("nan"), True, None):
        with pytest.raises(ValueError):
            parse(ms, bad)
    c = compare(ms, 3.0, 2.0)
    assert not c.close and c.how_far == "off by +1 ms (1.5 times the observed; 50% error, outside 10%)"
    assert compare(ms, 1.95, 2.0).close and "within 10%" in compare(ms, 1.95, 2.0).how_far
    assert compare(ms, 2.0, 2.0).how_far == "exact" and compare(ms, 0.0, 0.0).how_far == "exact"
    assert compare(Number("x"), 4.0, 6.4).how_far.startswith("off by -2.4x (0.62 times")
    assert format_value(Number("x"), 6.43) == "6.43x" and format_value(ms, 0.1234) == "0.123 ms"


def test_choices_are_right_or_wrong_and_rankings_count_pairs_out_of_order():
    c = Choice(("mean", "p50", "p99"))
    assert parse(c, "p99") == "p99" and compare(c, "p99", "p99").how_far == "right"
    assert not compare(c, "p50", "p99").close and compare(c, "p50", "p99").how_far == "wrong"
    with pytest.raises(ValueError, match="choose one of mean, p50, p99"):
        parse(c, "p95")
    r = Ranking(("a", "b", "c"), "lowest first")
    assert parse(r, "c > a > b") == ["c", "a", "b"] and parse(r, ("a", "b", "c")) == ["a", "b", "c"]
    for bad in ("a > b", "a > a > b", [None, "a", "b"], None):
        with pytest.raises(ValueError):
            parse(r, bad)
    assert discordant_pairs(["a", "b", "c"], ["c", "b", "a"]) == 3
    assert compare(r, ["a", "b", "c"], ["a", "b", "c"]).how_far == "exact order"
    far = compare(r, ["b", "a", "c"], ["a", "b", "c"])
    assert not far.close and far.how_far == "1 of 3 pairs out of order; 1 of 3 in the right place"
    assert format_value(r, ["a", "b", "c"]) == "a > b > c"


# --- the widget: nothing shown before a commit, the commit stored first, then the reveal -----------------------------

def _texts(p: Prediction) -> str:
    """Everything the widget shows: its HTML parts and its text form."""
    return " ".join([p.prompt.value, p.status.value, p.reveal.value, p._repr_mimebundle_()["text/plain"]])


@pytest.mark.parametrize("kind, entry, observed, shown", [
    ({"unit": "ms"}, "4.25", 3.125, "3.12 ms"),
    ({"choices": ("queueing", "mapping fallback")}, "queueing", "mapping fallback", "mapping fallback"),
    ({"rank": ("least-loaded", "round-robin", "pinned")}, ["pinned", "least-loaded", "round-robin"],
     ["least-loaded", "pinned", "round-robin"], "least-loaded > pinned > round-robin"),
])
def test_an_observation_stays_hidden_until_the_commit_then_shows_beside_the_stored_prediction(
        tmp_path, kind, entry, observed, shown):
    db = tmp_path / "progress.sqlite3"
    p = predict("09.1", "a question?", store=db, **kind)
    assert NOT_COMMITTED in _texts(p) and not db.exists()  # nothing written before a commit
    p.observe(observed, "the reason in one sentence.")
    assert shown not in _texts(p) and "reason" not in _texts(p) and p.comparison is None  # Run All reveals nothing
    if isinstance(entry, list):
        for d, v in zip(p.inputs, entry):
            d.value = v
    else:
        p.inputs[0].value = entry
    assert p.commit() and p.button.disabled and all(x.disabled for x in p.inputs)
    text = _texts(p)
    assert shown in text and "Why: the reason in one sentence." in text and p.comparison.how_far in text
    assert p._repr_mimebundle_()["text/plain"].startswith("prediction 09.1: you predicted")
    rows = Store(db, create=False).predictions("09.1")
    assert len(rows) == 1 and rows[0]["id"] == p.record_id and rows[0]["prediction"] == p.committed
    assert rows[0]["kind"] == p.question.kind.name
    assert p.commit("anything") and len(Store(db, create=False).predictions()) == 1  # one commit, kept once


def test_an_answer_callable_runs_only_at_the_commit_and_an_observation_after_a_commit_reveals_at_once():
    calls = []

    def answer():
        calls.append(1)
        return 2.0, "why."

    p = predict("09.2", "how long?", unit="ms", answer=answer, store=False)
    assert not calls and not p.commit("") and NOT_COMMITTED in p.status_text()  # an empty entry commits nothing
    assert "type a number" in p.status.value and not calls
    assert p.commit("1.5") and calls == [1] and p.comparison.observed == 2.0 and "observed 2 ms" in p.status_text()
    q = predict("09.3", "which?", choices=("a", "b"), store=False)
    assert q.commit("a") and "the answer shows here once the experiment below has run" in q.status_text()
    q.observe("b", "because.")
    assert q.comparison.how_far == "wrong" and "observed b: wrong. Why: because." in q.status_text()
    with pytest.raises(ValueError):
        q.observe("c", "not an option")


def test_a_store_that_refuses_the_commit_leaves_the_prediction_uncommitted(tmp_path):
    bad = tmp_path / "not-a-db"
    bad.write_text("hello, this is not SQLite" * 100)
    p = predict("09.4", "which?", choices=("a", "b"), store=bad)
    assert not p.commit("a") and p.committed is None and "cannot be used" in p.status.value


# --- the store: its own table, checked as strictly as the attempts --------------------------------------------------

def test_predictions_are_stored_and_read_back_in_order(tmp_path):
    s = Store(tmp_path / "p.sqlite3")
    ids = [s.save_prediction("00.1", "choice", "p99"), s.save_prediction("01.2", "number", 2.5),
           s.save_prediction("04.3", "ranking", ["a", "c", "b"])]
    got = s.predictions()
    assert [g["id"] for g in got] == ids and [g["prediction"] for g in got] == ["p99", 2.5, ["a", "c", "b"]]
    assert [g["question"] for g in s.predictions("01.2")] == ["01.2"] and s.attempts() == []
    with pytest.raises(ValueError):
        s.save_prediction("00.1", "guess", 1)
    s.close()


@pytest.mark.parametrize("column, value", [("kind", "'guess'"), ("prediction", "'{not json'"),
                                           ("prediction", "'[\"a\", \"a\"]'"), ("committed_at", "-1"),
                                           ("question", "''"), ("prediction", "'NaN'")])
def test_a_malformed_prediction_row_is_reported_naming_row_and_column(tmp_path, column, value):
    db = tmp_path / "p.sqlite3"
    s = Store(db)
    s.save_prediction("00.1", "ranking" if "a" in value else "number", ["a", "b"] if "a" in value else 1.0)
    s.close()
    conn = sqlite3.connect(db)
    conn.execute(f"UPDATE predictions SET {column} = {value}")
    conn.commit()
    conn.close()
    with pytest.raises(ConfigError, match=f"predictions row 1: {column}"):
        Store(db, create=False).predictions()


def test_an_older_store_without_the_table_reads_as_none_and_gains_it_when_written(tmp_path):
    from workbench.grading.store import APPLICATION_ID, SCHEMA, SCHEMA_VERSION

    db = tmp_path / "old.sqlite3"
    conn = sqlite3.connect(db)
    conn.executescript(f"PRAGMA application_id = {APPLICATION_ID}; PRAGMA user_version = {SCHEMA_VERSION};"
                       + SCHEMA.split("CREATE TABLE IF NOT EXISTS predictions")[0])
    conn.close()
    assert Store(db, create=False).predictions() == []
    s = Store(db)
    s.save_prediction("00.1", "choice", "p99")
    assert json.dumps(s.predictions()[0]["prediction"]) == '"p99"'
    s.close()


def test_an_answer_that_cannot_run_yet_keeps_the_commit_and_the_button_retries():
    state: dict = {}
    p = predict("09.5", "which way?", choices=("up", "down"), answer=lambda: (state["answer"], "because."), store=False)
    assert p.commit("up") and p.committed == "up" and p.comparison is None
    assert "could not be computed yet (KeyError" in p.status_text() and not p.button.disabled
    assert p.button.description == "Show the answer"
    state["answer"] = "down"
    p.button.click()
    assert p.comparison.how_far == "wrong" and p.button.disabled and p.button.description == "Committed"


class _Panel:
    """A panel's model in miniature: p99 grows with the delay, the mean does not."""

    def values(self) -> dict:
        return {"delay": 1.0, "rate": 100}

    def run(self, delay: float, rate: int) -> dict:
        return {"summary": {"latency_s": {"mean": 0.010, "p99": 0.002 * delay * rate / 100}}}


def test_panel_answers_run_the_panels_model_at_the_two_settings():
    from workbench.ui.panels.answers import direction, moved_most

    key, why = moved_most(_Panel(), "latency_s", ("mean", "p99"), {"delay": 2.0}, {"delay": 8.0}, "a reason")
    assert key == "p99" and why == "a reason (delay 2.0 -> delay 8.0: mean x1.00, p99 x4.00)."
    way, why = direction(_Panel(), "latency_s.p99", {"rate": 100}, {"rate": 50}, "less load")
    assert way == "down" and why == "less load (latency_s.p99 2.00 -> 1.00 ms from rate 100 to rate 50)."
    assert direction(_Panel(), "latency_s.p99", {"rate": 100}, {"rate": 104}, "noise")[0] == "about the same"


def test_run_all_of_a_chapter_leaves_every_widget_uncommitted_revealing_nothing_and_storing_nothing(tmp_path):
    """Executed top to bottom as nbval and the book do (the experiment cells register their observations), each
    widget's last state still says "not committed" and holds no observed value or why; no store is created."""
    from nbclient import NotebookClient

    path = next(p for p in NOTEBOOKS if p.parent.name == "notebooks" and p.stem == "00_tour")
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}).execute()
    models = nb.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]

    def shown(model_id: str) -> str:
        m = models[model_id]["state"]
        kids = [c.removeprefix("IPY_MODEL_") for c in m.get("children", [])]
        return " ".join([str(m.get("value", "")), *(shown(k) for k in kids)])

    found = predictions_in(path)
    assert found
    for p in found:
        (out,) = nb.cells[p["cell"]].outputs
        assert out["data"]["text/plain"].startswith(f"prediction {p['id']}: {NOT_COMMITTED}")
        text = shown(out["data"]["application/vnd.jupyter.widget-view+json"]["model_id"])
        assert NOT_COMMITTED in text and "observed" not in text and "Why:" not in text, text
    assert not (tmp_path / "progress.sqlite3").exists()  # the conftest's $WORKBENCH_DB: nothing committed

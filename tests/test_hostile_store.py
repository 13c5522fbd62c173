"""Hostile input, databases: a foreign store is refused byte for byte; `progress` creates nothing."""

from __future__ import annotations

import hashlib
import sqlite3
import time

import pytest

from workbench.cli import main
from workbench.errors import ConfigError
from workbench.grading.drills import load_drills
from workbench.grading.grader import grade
from workbench.grading.store import APPLICATION_ID, SCHEMA, Store


def _digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _foreign(path, schema: str) -> None:
    c = sqlite3.connect(path)
    c.executescript(schema)
    c.commit()
    c.close()


@pytest.mark.parametrize("schema", [
    "CREATE TABLE users (id INTEGER, name TEXT); INSERT INTO users VALUES (1, 'ada');",
    "CREATE TABLE attempts (id INTEGER, who TEXT); INSERT INTO attempts VALUES (1, 'ada');",
    SCHEMA + "CREATE TABLE extra (x); ",
    "PRAGMA user_version = 7; CREATE TABLE t (x);",
])
def test_a_foreign_database_is_refused_without_a_byte_changed(tmp_path, capsys, schema):
    db = tmp_path / "theirs.sqlite3"
    _foreign(db, schema)
    before, files = _digest(db), sorted(p.name for p in tmp_path.iterdir())
    for command in (["progress", "--db", str(db)], ["practice", "--db", str(db), "--drills", "1"]):
        assert main(command) == 2
        err = capsys.readouterr().err
        assert "left untouched" in err and err.count("\n") == 1
    assert _digest(db) == before and sorted(p.name for p in tmp_path.iterdir()) == files
    with pytest.raises(ConfigError, match="not a workbench progress database|tables differ"):
        Store(db)


def test_a_legacy_store_of_ours_is_accepted_and_then_marked(tmp_path):
    db = tmp_path / "old.sqlite3"
    _foreign(db, SCHEMA)  # an older store: our schema, no marker
    s = Store(db, create=False)
    assert s.attempts() == []
    s.close()
    s = Store(db)
    s.save(grade(load_drills()["fusion-memory-bursts"], "no idea"), "no idea", time.time())
    s.close()
    c = sqlite3.connect(db)
    assert c.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    c.close()


def test_progress_never_creates_a_file_or_folder(tmp_path, capsys):
    db = tmp_path / "a" / "b" / "p.sqlite3"
    assert main(["progress", "--db", str(db)]) == 0
    assert "no attempts yet" in capsys.readouterr().out
    assert not (tmp_path / "a").exists()


def test_a_fifo_as_database_is_refused_without_blocking(tmp_path, capsys):
    import os

    fifo = tmp_path / "db"
    os.mkfifo(fifo)
    assert main(["progress", "--db", str(fifo)]) == 2
    assert "not a regular file" in capsys.readouterr().err


@pytest.mark.parametrize("column, value", [("elements", "not json"), ("finished_at", 1e300),
                                           ("elements", "[1, 2]"), ("score", "high")])
def test_malformed_rows_are_one_clear_line(tmp_path, capsys, column, value):
    db = tmp_path / "p.sqlite3"
    s = Store(db)
    s.save(grade(load_drills()["fusion-memory-bursts"], "no idea"), "no idea", time.time())
    s.close()
    c = sqlite3.connect(db)
    c.execute(f"UPDATE attempts SET {column} = ?", (value,))
    c.commit()
    c.close()
    assert main(["progress", "--db", str(db)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "malformed row" in err and column in err and "Traceback" not in err

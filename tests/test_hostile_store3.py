"""Hostile input, databases (round 3): the store adopts only its own files and touches nothing else.

A database is ours only with our marker and exactly our schema (no trigger, view, extra index
or constraint on our tables); a store of an earlier version (our schema, no marker) is adopted
and stamped. A refused file keeps its bytes and gets no ``-wal``/``-shm`` beside it; a
symbolic link is refused, dangling or not; ``progress`` reads a store on a read-only mount.
"""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
import subprocess
import sys
import time

import pytest

from workbench.cli import main
from workbench.errors import ConfigError
from workbench.grading.drills import load_drills
from workbench.grading.grader import grade
from workbench.grading.store import APPLICATION_ID, SCHEMA, SCHEMA_VERSION, Store

MARK = f"PRAGMA application_id = {APPLICATION_ID}; PRAGMA user_version = {SCHEMA_VERSION};"
ROW = ("INSERT INTO attempts (drill, started_at, finished_at, verdict, score, elements, answer) "
       "VALUES ('fusion-memory-bursts', 1.0, 2.0, 'weak', 0, '{}', 'no idea');")
# The schemas earlier versions of the project wrote, without the marker (commits 1b97a33 and 7abcaaf)
LEGACY_V1 = SCHEMA.split("CREATE TABLE IF NOT EXISTS interviews")[0]
LEGACY_V2 = SCHEMA.replace("answered?, retry?, supplied?}", "answered?}")


def _make(path, script: str, wal: bool = False) -> None:
    c = sqlite3.connect(path)
    if wal:
        c.execute("PRAGMA journal_mode=WAL")
    c.executescript(script)
    c.commit()
    c.close()  # the last connection to close checkpoints and removes -wal and -shm


def _snapshot(folder) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "?"
            for p in sorted(folder.iterdir())}


def _save(store: Store) -> int:
    return store.save(grade(load_drills()["fusion-memory-bursts"], "no idea"), "no idea", time.time())


def _refused(db, capsys) -> None:
    """Every way in refuses ``db`` on one line."""
    for command in (["progress", "--db", str(db)], ["practice", "--db", str(db), "--drills", "1"]):
        assert main(command) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("workbench: error: "), err
    with pytest.raises(ConfigError):
        Store(db)
    with pytest.raises(ConfigError):
        Store(db, create=False)


@pytest.mark.parametrize("extra", [
    "CREATE TRIGGER eat AFTER INSERT ON attempts BEGIN DELETE FROM attempts; END;",
    "CREATE VIEW mine AS SELECT drill, answer FROM attempts;",
    "CREATE INDEX mine ON attempts (answer);",
    MARK + "CREATE TRIGGER eat AFTER INSERT ON attempts BEGIN DELETE FROM attempts; END;",
    MARK + "CREATE VIEW mine AS SELECT drill, answer FROM attempts;",
], ids=["trigger", "view", "index", "marked+trigger", "marked+view"])
def test_our_schema_with_something_foreign_on_it_is_refused_byte_for_byte(tmp_path, capsys, extra):
    db = tmp_path / "theirs.sqlite3"
    _make(db, SCHEMA + extra + ROW)
    before = _snapshot(tmp_path)
    _refused(db, capsys)
    assert _snapshot(tmp_path) == before


def test_our_columns_under_another_constraint_are_refused(tmp_path, capsys):
    db = tmp_path / "theirs.sqlite3"
    _make(db, SCHEMA.replace("answer TEXT NOT NULL\n", "answer TEXT NOT NULL CHECK (length(answer) > 1000)\n"))
    before = _snapshot(tmp_path)
    _refused(db, capsys)
    assert _snapshot(tmp_path) == before


@pytest.mark.parametrize("script", ["CREATE TABLE notes (x); INSERT INTO notes VALUES (1);",
                                    SCHEMA + "CREATE TRIGGER eat AFTER INSERT ON attempts BEGIN SELECT 1; END;"],
                         ids=["foreign", "ours+trigger"])
def test_a_refused_wal_database_gets_no_wal_or_shm_beside_it(tmp_path, capsys, script):
    db = tmp_path / "theirs.sqlite3"
    _make(db, script, wal=True)
    before = _snapshot(tmp_path)
    assert list(before) == ["theirs.sqlite3"]
    _refused(db, capsys)
    assert _snapshot(tmp_path) == before


def test_a_refused_database_with_a_wal_of_its_own_keeps_it_and_gets_nothing_more(tmp_path, capsys):
    live = tmp_path / "live"
    live.mkdir()
    c = sqlite3.connect(live / "theirs.sqlite3")
    c.execute("PRAGMA journal_mode=WAL")
    c.executescript("CREATE TABLE notes (x); INSERT INTO notes VALUES (1);")
    c.commit()
    crashed = tmp_path / "crashed"  # as a program that died mid-session leaves it: the file and its -wal
    crashed.mkdir()
    for name in ("theirs.sqlite3", "theirs.sqlite3-wal"):
        (crashed / name).write_bytes((live / name).read_bytes())
    c.close()
    before = _snapshot(crashed)
    assert before.keys() == {"theirs.sqlite3", "theirs.sqlite3-wal"}
    _refused(crashed / "theirs.sqlite3", capsys)
    assert _snapshot(crashed) == before


@pytest.mark.parametrize("legacy", [LEGACY_V1, LEGACY_V2], ids=["v1", "v2"])
def test_a_store_of_an_earlier_version_is_adopted_and_stamped(tmp_path, capsys, legacy):
    db = tmp_path / "old.sqlite3"
    _make(db, legacy + ROW, wal=True)
    assert main(["progress", "--db", str(db)]) == 0  # read-only: read, not stamped
    assert "fusion-memory-bursts" in capsys.readouterr().out
    c = sqlite3.connect(db)
    assert c.execute("PRAGMA application_id").fetchone()[0] == 0
    c.close()
    s = Store(db)
    _save(s)
    assert [a["id"] for a in s.attempts()] == [1, 2]
    s.close()
    c = sqlite3.connect(db)
    assert c.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    assert c.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert c.execute("SELECT count(*) FROM sqlite_master WHERE name = 'interviews'").fetchone()[0] == 1
    c.close()
    s = Store(db)  # stamped: ours from now on
    assert len(s.attempts()) == 2
    s.close()


def test_a_symlinked_db_is_refused_and_its_target_untouched(tmp_path, capsys):
    real = tmp_path / "real.sqlite3"
    s = Store(real)
    _save(s)
    s.close()
    link = tmp_path / "link.sqlite3"
    link.symlink_to(real)
    before = _snapshot(tmp_path)
    _refused(link, capsys)
    assert _snapshot(tmp_path) == before
    with pytest.raises(ConfigError, match="symbolic link"):
        Store(link)


def test_a_dangling_symlink_db_is_refused_and_its_target_never_created(tmp_path, capsys):
    link = tmp_path / "link.sqlite3"
    target = tmp_path / "elsewhere" / "made.sqlite3"
    link.symlink_to(target)
    for command in (["progress", "--db", str(link)], ["practice", "--db", str(link), "--drills", "1"]):
        assert main(command) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "symbolic link" in err, err
    with pytest.raises(ConfigError, match="symbolic link"):
        Store(link)
    assert not target.exists() and not target.parent.exists()


def test_progress_reads_a_store_on_a_read_only_mount(tmp_path):
    if shutil.which("unshare") is None or subprocess.run(
            ["unshare", "-rm", "true"], capture_output=True, timeout=10).returncode != 0:
        pytest.skip("needs unshare -rm (a private mount namespace) to make a read-only mount")
    folder = tmp_path / "ro"
    folder.mkdir()
    s = Store(folder / "p.sqlite3")
    _save(s)
    s.close()
    before = _snapshot(folder)
    assert list(before) == ["p.sqlite3"]
    r = subprocess.run(["unshare", "-rm", "sh", "-c", 'mount --bind -o ro "$1" "$1" && exec "$2" -m workbench.cli '
                        'progress --db "$1/p.sqlite3"', "sh", str(folder), sys.executable],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "fusion-memory-bursts" in r.stdout and r.stderr == ""
    assert _snapshot(folder) == before

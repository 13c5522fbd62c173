"""Saved practice progress: attempts in SQLite, one transaction per attempt.

The database lives in the user's data folder (``$XDG_DATA_HOME/workbench`` or
``~/.local/share/workbench``), or where ``--db`` or ``$WORKBENCH_DB`` say. It runs in
WAL mode with a busy timeout, so two sessions can write at once; each attempt is one
transaction, so a session killed mid-way loses at most the attempt it was typing. A
file that is not a database, or a database that fails its integrity check, is reported
and never overwritten.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from pathlib import Path

from workbench.errors import ConfigError
from workbench.grading.grader import ELEMENTS, Grade

ENV_DB = "WORKBENCH_DB"
SCHEMA = """
CREATE TABLE IF NOT EXISTS attempts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    drill TEXT NOT NULL,
    started_at REAL NOT NULL,   -- unix time, s
    finished_at REAL NOT NULL,  -- unix time, s
    verdict TEXT NOT NULL,
    score INTEGER NOT NULL,
    elements TEXT NOT NULL,     -- JSON: element -> present
    answer TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS attempts_drill ON attempts (drill, finished_at);
CREATE TABLE IF NOT EXISTS interviews (
    attempt INTEGER PRIMARY KEY REFERENCES attempts (id),
    transcript TEXT NOT NULL    -- JSON: {completed, turns: [{role, text, at, element?, answered?}]}
);
"""


def default_db(override: str | Path | None = None) -> Path:
    """--db, else $WORKBENCH_DB, else the user data folder."""
    if override or os.environ.get(ENV_DB):
        return Path(override or os.environ[ENV_DB])
    base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / "workbench" / "progress.sqlite3"


class Store:
    """The attempts database."""

    def __init__(self, path: str | Path | None = None):
        self.path = default_db(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
            ok = self.conn.execute("PRAGMA quick_check").fetchone()[0]
            if ok != "ok":
                raise ConfigError("--db", str(self.path), f"the database fails its integrity check ({ok}); "
                                  "it was left untouched")
            for attempt in range(50):  # two sessions opening a new file at once: one sets it up, one waits
                try:
                    self.conn.execute("PRAGMA journal_mode=WAL")
                    self.conn.executescript(SCHEMA)
                    break
                except sqlite3.OperationalError as e:
                    if "locked" not in str(e) or attempt == 49:
                        raise
                    time.sleep(0.1)
        except sqlite3.DatabaseError as e:
            raise ConfigError("--db", str(self.path), f"cannot be used as the progress database ({e}); "
                              "it was left untouched") from None
        except OSError as e:
            raise ConfigError("--db", str(self.path), f"cannot be opened ({e.strerror or e})") from None

    def save(self, grade: Grade, answer: str, started_at: float, transcript: dict | None = None) -> int:
        """Record one attempt (and a mock interview's transcript) in one transaction; return its id."""
        elements = json.dumps({k: e.present for k, e in grade.elements.items()})
        try:
            with self.conn:
                self.conn.execute("BEGIN IMMEDIATE")
                cur = self.conn.execute(
                    "INSERT INTO attempts (drill, started_at, finished_at, verdict, score, elements, answer) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (grade.drill, started_at, time.time(), grade.verdict, grade.score, elements, answer))
                if transcript is not None:
                    self.conn.execute("INSERT INTO interviews (attempt, transcript) VALUES (?, ?)",
                                      (cur.lastrowid, json.dumps(transcript)))
                return int(cur.lastrowid)
        except sqlite3.Error as e:
            raise ConfigError("--db", str(self.path), f"could not save the attempt ({e})") from None

    def attempts(self) -> list[dict]:
        """Every attempt, oldest first."""
        rows = self.conn.execute("SELECT id, drill, finished_at, verdict, score, elements FROM attempts "
                                 "ORDER BY finished_at, id").fetchall()
        return [{"id": r[0], "drill": r[1], "finished_at": r[2], "verdict": r[3], "score": r[4],
                 "elements": json.loads(r[5])} for r in rows]

    def transcript(self, attempt: int) -> dict | None:
        """A mock interview's transcript (None for a plain practice attempt)."""
        row = self.conn.execute("SELECT transcript FROM interviews WHERE attempt = ?", (attempt,)).fetchone()
        return json.loads(row[0]) if row else None

    def element_rates(self, drill: str | None = None) -> dict[str, float | None]:
        """Share of attempts in which each element was present (None with no attempts)."""
        rows = [a for a in self.attempts() if drill is None or a["drill"] == drill]
        return {e: (sum(a["elements"].get(e, False) for a in rows) / len(rows) if rows else None) for e in ELEMENTS}

    def close(self) -> None:
        """Close the connection."""
        self.conn.close()


def pick_drills(drill_ids: list[str], store: Store, n: int) -> list[str]:
    """Drills to practise: never seen first, then those where the weakest element fails most, oldest first."""
    attempts = store.attempts()
    rates = store.element_rates()
    known = {e: r for e, r in rates.items() if r is not None}
    weakest = min(known, key=known.get) if known else None

    def key(d: str):
        mine = [a for a in attempts if a["drill"] == d]
        if not mine:
            return (0, 0.0, 0.0, d)
        weak_rate = sum(a["elements"].get(weakest, False) for a in mine) / len(mine) if weakest else 0.0
        return (1, weak_rate, max(a["finished_at"] for a in mine), d)

    return sorted(drill_ids, key=key)[:n]

"""Saved practice progress: attempts in SQLite, one transaction per attempt.

The database lives in the user's data folder (``$XDG_DATA_HOME/workbench`` or
``~/.local/share/workbench``), or where ``--db`` or ``$WORKBENCH_DB`` say. It runs in
WAL mode with a busy timeout, so two sessions can write at once; each attempt is one
transaction, so a session killed mid-way loses at most the attempt it was typing. The
notebooks' prediction widget (:mod:`workbench.ui.widgets.prediction`) commits each prediction
to a table of its own, ``predictions``, read back as strictly as the attempts.

Our stores carry a marker (``PRAGMA application_id`` and ``user_version``). An existing
file is first opened read-only and checked: a store of ours (the marker and exactly our
schema), an older store of ours (exactly our schema, no marker: adopted, and stamped
when next opened for writing) or an empty database is accepted. Exactly means every
object in ``sqlite_master`` is one we create, with our SQL (comments and layout aside):
a trigger, view, index or constraint we did not make is foreign. Anything else
(another program's database, a file that is not a database, one that fails its
integrity check, a symbolic link, something that is not a regular file) is refused
without a byte changed and with nothing beside it: the check opens the file immutable
when no ``-wal``/``-shm`` is there, so SQLite creates none, and removes any it had to
create. A read-only store (``workbench progress``) never creates a file or a folder, and
reads a store on a read-only mount. Malformed rows are reported on one line naming the
row, the column and the value.
"""

from __future__ import annotations

import functools
import json
import math
import os
import re
import sqlite3
import stat
import time
import urllib.parse
from pathlib import Path

from workbench.errors import ConfigError, shorten
from workbench.grading.grader import ELEMENTS, Grade

ENV_DB = "WORKBENCH_DB"
APPLICATION_ID = 0x57424E43  # "WBNC": PRAGMA application_id of a workbench progress store
SCHEMA_VERSION = 1  # PRAGMA user_version
MAX_TIME_S = 32_503_680_000.0  # unix time of the year 3000: later finish times are malformed
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
    transcript TEXT NOT NULL    -- JSON: {completed, turns: [{role, text, at, element?, answered?, retry?, supplied?}]}
);
CREATE TABLE IF NOT EXISTS predictions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    question TEXT NOT NULL,     -- e.g. "02.1"
    committed_at REAL NOT NULL, -- unix time, s
    kind TEXT NOT NULL,         -- number, choice or ranking
    prediction TEXT NOT NULL    -- JSON: a number, an option, or a list of items in order
);
"""
PREDICTION_KINDS = ("number", "choice", "ranking")
SIDECARS = ("-wal", "-shm")  # files SQLite keeps beside a WAL-mode database
UNTOUCHED = "it was left untouched"


def default_db(override: str | Path | None = None) -> Path:
    """--db, else $WORKBENCH_DB, else the user data folder."""
    if override or os.environ.get(ENV_DB):
        return Path(override or os.environ[ENV_DB])
    base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / "workbench" / "progress.sqlite3"


def _normalized(sql: str | None) -> str:
    """A CREATE statement without its comments or layout, so two texts of one schema compare equal."""
    text = re.sub(r"--[^\n]*|/\*.*?\*/", " ", sql or "", flags=re.S)
    text = re.sub(r"\s+", " ", text).strip()
    return re.sub(r" ?([(),]) ?", r"\1", text).lower()


@functools.cache
def our_objects() -> dict[tuple[str, str], tuple[str, str]]:
    """(type, name) -> (table, normalized SQL) of every object :data:`SCHEMA` creates, as SQLite records them."""
    conn = sqlite3.connect(":memory:")
    try:
        conn.executescript(SCHEMA)
        rows = conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master").fetchall()
    finally:
        conn.close()
    return {(kind, name): (table, _normalized(sql)) for kind, name, table, sql in rows}


def classify_db(conn: sqlite3.Connection) -> str:
    """``ours``, ``legacy`` (our schema, no marker), ``empty``, or why the database is not ours.

    Our schema means exactly: every object is one :data:`SCHEMA` creates, with the same SQL
    (an older store may lack ``interviews`` or ``predictions``); a trigger, view, index or constraint of anyone
    else's makes the database foreign, marker or not.
    """
    app = conn.execute("PRAGMA application_id").fetchone()[0]
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    objects = conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master").fetchall()
    ours = our_objects()
    foreign = [f"{kind} {shorten(str(name), 40)}" for kind, name, table, sql in objects
               if ours.get((kind, name)) != (table, _normalized(sql))]
    exact = not foreign and any((kind, name) == ("table", "attempts") for kind, name, _, _ in objects)
    shown = ", ".join(foreign[:5]) + (f" and {len(foreign) - 5} more" if len(foreign) > 5 else "")
    if app == APPLICATION_ID:
        if version != SCHEMA_VERSION:
            return f"a workbench store of another schema version ({version})"
        if exact:
            return "ours"
        return f"marked as a workbench store, but its schema differs ({shown or 'no attempts table'})"
    if app == 0 and version == 0:
        if not objects:
            return "empty"
        if exact:
            return "legacy"
    return f"not a workbench progress database (application_id {app}; {shown or 'no attempts table'})"


def _size(path: Path) -> int | None:
    """The size of ``path`` in bytes (None if it is not there)."""
    try:
        return path.stat().st_size
    except OSError:
        return None


class Store:
    """The attempts database; ``create=False`` opens read-only and never creates anything."""

    def __init__(self, path: str | Path | None = None, create: bool = True):
        self.path = default_db(path)
        self.conn: sqlite3.Connection | None = None
        try:
            st = os.lstat(self.path)  # the path itself: a link is refused, never followed
        except FileNotFoundError:
            st = None
        except OSError as e:
            raise ConfigError("--db", str(self.path), f"cannot be opened ({e.strerror or e})") from None
        if st is not None and stat.S_ISLNK(st.st_mode):
            raise ConfigError("--db", str(self.path), "is a symbolic link; the store never reads or writes "
                              f"through one (give the file's own path); {UNTOUCHED}")
        if st is not None and not stat.S_ISREG(st.st_mode):
            raise ConfigError("--db", str(self.path), f"is not a regular file; {UNTOUCHED}")
        try:
            if st is not None and st.st_size > 0:
                self._check_read_only(keep=not create)
            if create and self.conn is None:
                self._open_for_writing()
        except sqlite3.DatabaseError as e:
            self.close()
            raise ConfigError("--db", str(self.path), f"cannot be used as the progress database ({e}); "
                              f"{UNTOUCHED}") from None
        except OSError as e:
            self.close()
            raise ConfigError("--db", str(self.path), f"cannot be opened ({e.strerror or e})") from None

    def _refuse(self, why: str) -> None:
        self.close()
        raise ConfigError("--db", str(self.path), f"{why}; {UNTOUCHED}")

    def _connect_read_only(self, immutable: bool) -> sqlite3.Connection:
        """A read-only connection; ``immutable``: SQLite takes no lock and creates no ``-wal``/``-shm``."""
        uri = f"file:{urllib.parse.quote(str(self.path.absolute()))}?mode=ro" + ("&immutable=1" if immutable else "")
        return sqlite3.connect(uri, uri=True, timeout=30.0, isolation_level=None)

    def _check_read_only(self, keep: bool) -> None:
        """Refuse what is not ours, leaving nothing beside it; keep a read-only connection when only reading."""
        sidecars = [Path(f"{self.path}{suffix}") for suffix in SIDECARS]
        there = [p.exists() for p in sidecars]
        # No -wal/-shm: the main file holds every commit, and an immutable open creates neither.
        immutable = not any(there)
        self.conn = self._connect_read_only(immutable)
        try:
            kind = classify_db(self.conn)
            if kind not in ("ours", "legacy", "empty"):
                self._refuse(kind)
            ok = self.conn.execute("PRAGMA quick_check").fetchone()[0]
            if ok != "ok":
                self._refuse(f"the database fails its integrity check ({ok})")
        except BaseException:
            self.close()
            if not immutable:  # the one SQLite had to make beside the other (an empty -wal, or a -shm)
                for suffix, path, existed in zip(SIDECARS, sidecars, there, strict=True):
                    if not existed and (suffix != "-wal" or _size(path) == 0):  # never a -wal with commits
                        path.unlink(missing_ok=True)
            raise
        if keep and immutable:
            self._read_consistently()
        elif not keep:
            self.close()

    def _read_consistently(self) -> None:
        """Swap the immutable connection for one that takes SQLite's locks (a writer may start while we read);
        on a read-only folder, where SQLite cannot make the ``-shm`` it needs, nobody writes: keep the first."""
        conn = self._connect_read_only(immutable=False)
        try:
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.OperationalError:
            conn.close()
            if os.access(self.path.parent, os.W_OK):
                raise
            return
        self.close()
        self.conn = conn

    def _open_for_writing(self) -> None:
        """Open for writing; mark an empty or legacy store as ours, in one transaction (re-checked inside)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
        for attempt in range(50):  # two sessions opening a new file at once: one sets it up, one waits
            try:
                self.conn.execute("BEGIN IMMEDIATE")
                kind = classify_db(self.conn)
                if kind not in ("ours", "legacy", "empty"):
                    self.conn.execute("ROLLBACK")
                    self._refuse(kind)
                if kind != "ours":
                    self.conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
                    self.conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                for statement in SCHEMA.split(";"):  # every table IF NOT EXISTS: an older store gains the new ones
                    if statement.strip():
                        self.conn.execute(statement)
                self.conn.execute("COMMIT")
                self.conn.execute("PRAGMA journal_mode=WAL")
                return
            except sqlite3.OperationalError as e:
                if self.conn.in_transaction:
                    self.conn.execute("ROLLBACK")
                if "locked" not in str(e) or attempt == 49:
                    raise
                time.sleep(0.1)

    def save(self, grade: Grade, answer: str, started_at: float, transcript: dict | None = None) -> int:
        """Record one attempt (and a mock interview's transcript) in one transaction; return its id."""
        if self.conn is None:
            raise ConfigError("--db", str(self.path), "was opened read-only")
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
        """Every attempt, oldest first; a malformed row is one :class:`ConfigError` naming it."""
        if self.conn is None:
            return []
        try:
            rows = self.conn.execute("SELECT id, drill, finished_at, verdict, score, elements FROM attempts "
                                     "ORDER BY finished_at, id").fetchall()
        except sqlite3.Error as e:
            raise ConfigError("--db", str(self.path), f"cannot read the attempts ({e})") from None
        return [self._row(r) for r in rows]

    def _row(self, r: tuple) -> dict:
        def bad(column: str, value: object, why: str) -> ConfigError:
            return ConfigError(f"attempts row {r[0]}: {column}", value, f"{why} (malformed row)", str(self.path))

        rid, drill, finished, verdict, score, raw = r
        try:
            elements = json.loads(raw) if isinstance(raw, str) else None
        except (ValueError, RecursionError):
            elements = None
        if not isinstance(elements, dict) or not all(isinstance(v, bool) for v in elements.values()):
            raise bad("elements", raw, "must be a JSON object of element -> true/false")
        if isinstance(finished, bool) or not isinstance(finished, int | float) \
                or not (math.isfinite(finished) and 0 <= finished <= MAX_TIME_S):
            raise bad("finished_at", finished, "must be a unix time between 1970 and 3000")
        if not isinstance(score, int) or isinstance(score, bool) or not 0 <= score <= 100:
            raise bad("score", score, "must be an integer in [0, 100]")
        for column, value in (("drill", drill), ("verdict", verdict)):
            if not isinstance(value, str):
                raise bad(column, value, "must be text")
        return {"id": rid, "drill": drill, "finished_at": float(finished), "verdict": verdict, "score": score,
                "elements": elements}

    def transcript(self, attempt: int) -> dict | None:
        """A mock interview's transcript (None for a plain practice attempt, or a store without interviews)."""
        if self.conn is None:
            return None
        try:
            row = self.conn.execute("SELECT transcript FROM interviews WHERE attempt = ?", (attempt,)).fetchone()
            return json.loads(row[0]) if row else None
        except (sqlite3.Error, ValueError) as e:
            raise ConfigError(f"interviews row {attempt}", "transcript", f"cannot be read ({e})", str(self.path)) \
                from None

    def save_prediction(self, question: str, kind: str, prediction: object) -> int:
        """Record one committed prediction (before its answer is shown), in one transaction; return its id."""
        if self.conn is None:
            raise ConfigError("--db", str(self.path), "was opened read-only")
        if kind not in PREDICTION_KINDS:
            raise ValueError(f"kind must be one of {', '.join(PREDICTION_KINDS)}, not {kind!r}")
        try:
            with self.conn:
                self.conn.execute("BEGIN IMMEDIATE")
                cur = self.conn.execute(
                    "INSERT INTO predictions (question, committed_at, kind, prediction) VALUES (?, ?, ?, ?)",
                    (question, time.time(), kind, json.dumps(prediction, allow_nan=False)))
                return int(cur.lastrowid)
        except sqlite3.Error as e:
            raise ConfigError("--db", str(self.path), f"could not save the prediction ({e})") from None

    def predictions(self, question: str | None = None) -> list[dict]:
        """Committed predictions (of ``question``, or all), oldest first; a malformed row is one :class:`ConfigError`.

        A store from before predictions were kept has no such table: it has none.
        """
        if self.conn is None:
            return []
        try:
            if not self.conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'predictions'") \
                    .fetchone():
                return []
            rows = self.conn.execute("SELECT id, question, committed_at, kind, prediction FROM predictions "
                                     "ORDER BY committed_at, id").fetchall()
        except sqlite3.Error as e:
            raise ConfigError("--db", str(self.path), f"cannot read the predictions ({e})") from None
        out = [self._prediction_row(r) for r in rows]
        return [p for p in out if question is None or p["question"] == question]

    def _prediction_row(self, r: tuple) -> dict:
        def bad(column: str, value: object, why: str) -> ConfigError:
            return ConfigError(f"predictions row {r[0]}: {column}", value, f"{why} (malformed row)", str(self.path))

        rid, question, committed, kind, raw = r
        if not isinstance(question, str) or not question:
            raise bad("question", question, "must be non-empty text")
        if isinstance(committed, bool) or not isinstance(committed, int | float) \
                or not (math.isfinite(committed) and 0 <= committed <= MAX_TIME_S):
            raise bad("committed_at", committed, "must be a unix time between 1970 and 3000")
        if kind not in PREDICTION_KINDS:
            raise bad("kind", kind, f"must be one of {', '.join(PREDICTION_KINDS)}")
        try:
            value = json.loads(raw) if isinstance(raw, str) else None
        except (ValueError, RecursionError):
            value = None
        fits = {"number": isinstance(value, int | float) and not isinstance(value, bool)
                and math.isfinite(value),
                "choice": isinstance(value, str) and bool(value),
                "ranking": isinstance(value, list) and bool(value) and all(isinstance(v, str) for v in value)
                and len(set(value)) == len(value)}[kind]
        if not fits:
            raise bad("prediction", raw, f"must be the JSON of a {kind} prediction")
        return {"id": rid, "question": question, "committed_at": float(committed), "kind": kind,
                "prediction": value}

    def element_rates(self, drill: str | None = None) -> dict[str, float | None]:
        """Share of attempts in which each element was present (None with no attempts)."""
        rows = [a for a in self.attempts() if drill is None or a["drill"] == drill]
        return {e: (sum(a["elements"].get(e, False) for a in rows) / len(rows) if rows else None) for e in ELEMENTS}

    def close(self) -> None:
        """Close the connection."""
        if self.conn is not None:
            self.conn.close()
            self.conn = None


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

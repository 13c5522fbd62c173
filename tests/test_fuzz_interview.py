"""Fuzz: ``workbench interview`` and ``workbench practice`` fed mutated replies on stdin, in-process.

Hypothesis strings together pieces of a terminal session: answers that earn elements, an owner
and a rollback for the follow-ups, the ending '.' in its odd forms (``.\\r``, ``. ``, ``..``),
empty and blank lines, invalid UTF-8, NUL bytes, control characters and escape sequences, replies
past the 20,000 characters the grader reads, a line of 300,000 characters with no end, CRLF line
endings, and cuts the stream short at any point (the end of input mid-answer, mid-line, mid
UTF-8 sequence). It runs ``workbench interview`` (a drill by id, or the one the progress store
picks) or ``workbench practice`` (by topic or count), now and then with a ``--minutes`` limit,
against a fresh temporary ``--db``, then ``workbench progress`` on that store. Every case ends
with exit 0 and a normal transcript (control characters escaped, a last line saying what was
saved), or exit 2 and one ``workbench: error:`` line (:func:`tests.fuzz_support.ended`); every
attempt saved holds a non-empty answer without NUL bytes.

A drill's evidence (its simulated runs and rendered reference) is computed once per drill and
reused: it depends on the drill alone, and what is fuzzed here is the input, not the simulation.
"""

from __future__ import annotations

import io
import shutil
import sqlite3
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fuzz_support import Tally, ended, examples
from tests.helpers import run_cli
from workbench.grading import practice
from workbench.grading.drills import load_drills

EXAMPLES, FIXED = examples(ci=40)
DRILLS_DIR = Path(__file__).resolve().parents[1] / "drills"
DRILLS = load_drills(DRILLS_DIR)
SLOW = {"chunked-prefill-ttft", "spec-decode-acceptance", "tp-allreduce-slow-link"}  # their runs: 1-4 s each
# make test's sample practises on the drills whose runs take well under a second (a copy of drills/ without the
# others, as --drills-dir): it is stdin that is fuzzed; make fuzz uses the built-in folder itself
POOL = sorted(set(DRILLS) - SLOW) if FIXED else sorted(DRILLS)
TOPICS = sorted({DRILLS[d].topic for d in POOL}) + ["no-such-topic", "ü\x1b[31m"]
ANSWER = ("Workload: the transformer block's p99 rose from 2 ms to 8 ms after fusion. Mechanism: the fused chain "
          "spills its hidden row to HBM, so each step waits on memory bandwidth and the tail grows. Artifact: the "
          "same-seed run with the spill bytes per request. Fix: cap the fusion at the attention boundary. The ML "
          "compiler team owns it; roll back the fusion flag if p99 stays above 3 ms for an hour.")
PIECES = [
    ANSWER.encode() + b"\n.\n", b"The ML compiler team owns it.\n.\n", b"Roll back if p99 exceeds 10 ms.\n.\n",
    b"I don't know.\n.\n", b".\n", b"\n", b" \n.\n", b"\n\n\n", b".\r\n", b". \n", b"..\n", b".", b"p99 rose",
    b"\xff\xfe p99 \xc3\x28 rose\n.\n", b"\xed\xa0\x80\xed\xbf\xbf\n.\n", b"\xc3", b"\xe2\x82", b"\xf0\x9f\x94",
    b"\x00\n.\n", b"p99\x00rose\n.\n", b"\x00" * 100,
    b"\x1b[2J\x1b]0;pwned\x07\x08\r\x7f\xc2\x9b answer\n.\n", "\u202e\u2028\u2066 p99 \U0001d11e\n.\n".encode(),
    b"\x04\x1a\x03\n.\n", b"\t\v\f\n.\n", b"p99 rose\r\n.\r\n", b"\r.\r",
    b"x" * 25_000 + b"\n.\n", b"word " * 4_500 + b"\n.\n", b"y" * 300_000, b"z\n" * 30_000 + b".\n",
    b"{reg.ms.p99}\n.\n", b"%s%n\n.\n",
]
MINUTES = [None, None, None, None, "0.01", "30"]
# the interview refuses these in one line; practice's parser answers them with argparse's two-line usage message,
# so practice gets valid values only (the command line is not what is fuzzed here)
BAD_MINUTES = ["0", "-1", "nan", "inf", "1e308", "1441"]


@st.composite
def sessions(draw) -> dict:
    """A command line and the bytes on its stdin, and a label."""
    if draw(st.booleans()):
        argv = ["interview"] + (["--drill", draw(st.sampled_from(POOL))] if draw(st.integers(0, 4)) else [])
    else:
        argv = ["practice"] + (["--topic", draw(st.sampled_from(TOPICS))] if draw(st.booleans()) else
                               ["--drills", draw(st.sampled_from(["1", "2", "3"]))])
    bad = argv[0] == "interview" and draw(st.integers(0, 19)) == 0  # now and then: the rest is about stdin
    minutes = draw(st.sampled_from(BAD_MINUTES if bad else MINUTES))
    if minutes is not None:
        argv += ["--minutes", minutes]
    picks = draw(st.lists(st.integers(0, len(PIECES) - 1), max_size=8))
    data = b"".join(PIECES[k] for k in picks)
    cut = draw(st.sampled_from([None, None, "cut"]))
    if cut is not None:
        data = data[:draw(st.integers(0, len(data)))]
    errors = draw(st.sampled_from(["strict", "surrogateescape"]))  # how Python opens stdin: UTF-8 or C locale
    newline = draw(st.sampled_from(["\n", "\n", None]))  # POSIX: '\r' kept; Windows: '\r\n' and '\r' read as '\n'
    label = f"{' '.join(argv)} <- {len(data):,} bytes {data[:150]!r}{'...' if len(data) > 150 else ''}"
    return {"argv": argv, "stdin": data, "errors": errors, "newline": newline, "label": label}


def check_session(case: dict, root: Path, drills_dir: Path | None = None) -> str:
    """Run one session (on the drills of ``drills_dir``, if given) and ``progress`` on its store; return how the
    session ended, or fail the test."""
    folder = Path(tempfile.mkdtemp(dir=root))
    db = folder / "progress.sqlite3"
    argv = [*case["argv"], "--db", str(db)] + (["--drills-dir", str(drills_dir)] if drills_dir else [])
    previous = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO(case["stdin"]), encoding="utf-8", errors=case["errors"],
                                 newline=case["newline"])
    try:
        status, out, err = run_cli(argv)
    finally:
        sys.stdin = previous
    outcome = ended(status, out, err, case["label"], want="transcript")
    ended(*run_cli(["progress", "--db", str(db)]), f"progress after {case['label']}", want="text")
    answers = []
    if db.exists():
        conn = sqlite3.connect(db)
        try:
            answers = [a for (a,) in conn.execute("SELECT answer FROM attempts")]
        finally:
            conn.close()
    for answer in answers:
        assert answer.strip() and "\x00" not in answer, f"saved {answer[:200]!r}: {case['label']}"
    return f"{outcome}, {'attempts saved' if answers else 'nothing saved'}" if outcome == "ok" else outcome


def _cached_prepare(real):
    """``prepare`` that simulates each drill's runs once (no figure folder is fuzzed here)."""
    memo: dict = {}

    def prepare(drill, figure_dir=None):
        if figure_dir is not None:
            return real(drill, figure_dir)
        key = (drill.path, drill.id)
        if key not in memo:
            memo[key] = real(drill)
        return memo[key]

    return prepare


def test_mutated_terminal_input_ends_cleanly(monkeypatch: pytest.MonkeyPatch):
    tally = Tally("interview and practice input")
    monkeypatch.setattr(practice, "prepare", _cached_prepare(practice.prepare))
    with tempfile.TemporaryDirectory() as tmp:
        drills_dir = None
        if FIXED:
            drills_dir = Path(tmp) / "drills"
            drills_dir.mkdir()
            for name in [*POOL, "concepts"]:
                shutil.copy(DRILLS_DIR / f"{name}.toml", drills_dir)

        @settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=FIXED,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
        @given(sessions())
        def run_case(case: dict) -> None:
            tally.run(case["label"], lambda: check_session(case, Path(tmp), drills_dir))

        run_case()
    tally.report()
    assert sum(tally.ends.values()) >= min(EXAMPLES, 10)

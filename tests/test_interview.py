"""The mock interview: follow-ups for what is missing, one grade for the whole exchange, a saved transcript,
driven end to end through a pseudo-terminal, and interrupted with Ctrl-C."""

from __future__ import annotations

import os
import pty
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

from workbench.grading.drills import load_drills
from workbench.grading.interview import Interview
from workbench.grading.store import Store

DRILL = load_drills()["compiler-runtime-mapping"]
OPENING = ("p99 of the chat stream doubled once prompts passed 512 tokens. Longer prompts miss every compiled bucket, "
           "so they run on the generic fallback kernels, which are slower, and the requests behind them queue.")
ARTIFACT = "The closed-loop mapping report at the same seed: per-bucket hit rate and misses by reason."
OWNER = "The ML compiler team owns the envelope; serving on-call owns the rollout."
ROLLBACK = "Keep the previous plan loaded and revert automatically if canary p99 regresses."


def test_follow_ups_ask_for_what_is_missing_and_the_exchange_is_graded_as_a_whole(tmp_path):
    iv = Interview(DRILL)
    first = iv.answer(OPENING)
    assert iv.grade.verdict != "strong" and first == iv.grade.elements["artifact"].question
    assert iv.reply(ARTIFACT) == iv.grade.elements["owner"].question
    assert iv.reply(OWNER) == iv.grade.elements["rollback"].question
    assert iv.reply(ROLLBACK) is None and iv.done
    assert iv.grade.verdict == "strong"
    asked = [t for t in iv.transcript if t["role"] == "interviewer"]
    assert [t["element"] for t in asked] == ["artifact", "owner", "rollback"]
    assert all(t["answered"] for t in asked)
    store = Store(tmp_path / "p.sqlite3")
    attempt = iv.save(store)
    saved = store.transcript(attempt)
    assert saved["completed"] and [t["role"] for t in saved["turns"]] == ["candidate"] + ["interviewer",
                                                                                          "candidate"] * 3
    assert store.attempts()[0]["verdict"] == "strong"


def test_a_reply_that_dodges_the_question_is_recorded_as_still_missing():
    iv = Interview(DRILL, max_follow_ups=1)
    iv.answer(OPENING + " " + ARTIFACT + " " + OWNER)
    assert iv.reply("We can always roll back.") is None
    assert iv.transcript[1]["element"] == "rollback" and not iv.transcript[1]["answered"]
    assert iv.grade.verdict == "partial"


def test_a_corrected_mechanism_counts_and_a_wrong_class_said_last_still_voids_it():
    """A candidate who opens with the wrong class and gives the right chain when asked gets the mechanism; one who
    gives the chain and then asserts the wrong class does not."""
    wrong = "It's a capacity problem: the pool is saturated, we need more machines. " + ARTIFACT + " " + OWNER
    iv = Interview(DRILL)
    assert iv.answer(wrong) == iv.grade.elements["mechanism"].question
    iv.reply("I take that back: the cores are mostly idle. " + OPENING)
    assert iv.grade.elements["mechanism"].present
    iv = Interview(DRILL)
    iv.answer(OPENING + " " + ARTIFACT + " " + OWNER)
    iv.reply("Actually it's a capacity problem: the pool is saturated and we need more machines.")
    assert not iv.grade.elements["mechanism"].present


def _wait_until_blocked(pid: int, timeout: float = 10.0) -> None:
    """Wait until the child sleeps (blocked reading the terminal), as a person's Ctrl-C at a prompt finds it. A SIGINT
    that lands after Python's last signal check but before it enters read() only sets a flag, and the read then waits
    for input: CPython's own window, seen here about once in five runs on a loaded machine, where a person would
    simply press Ctrl-C again. Linux's /proc tells the state; elsewhere this returns at once."""
    stat, deadline = Path(f"/proc/{pid}/stat"), time.time() + timeout
    while stat.exists() and time.time() < deadline:
        if stat.read_text().rsplit(")", 1)[1].split()[0] == "S":
            time.sleep(0.05)  # and still asleep a moment later: in read(), not between two writes
            if stat.read_text().rsplit(")", 1)[1].split()[0] == "S":
                return
        time.sleep(0.01)


def _drive(cmd: list[str], env: dict, steps: list[tuple[str, str | None]], timeout: float = 120.0) -> tuple[str, int]:
    """Run cmd on a pseudo-terminal; for each (expected text, line to send) wait for the text, then send."""
    pid, fd = pty.fork()
    if pid == 0:
        # a terminal's foreground job takes Ctrl-C; a test run started in the background (bash '&' without job
        # control) would hand SIGINT down ignored, and Python keeps an ignored SIGINT ignored
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.execve(cmd[0], cmd, env)
    out, deadline = b"", time.time() + timeout
    try:
        for expect, send in steps:
            while expect.encode() not in out:
                assert time.time() < deadline, out.decode(errors="replace")[-2000:]
                ready, _, _ = select.select([fd], [], [], 1.0)
                if ready:
                    try:
                        out += os.read(fd, 65536)
                    except OSError:
                        break
            if send == "^C":
                _wait_until_blocked(pid)
                os.kill(pid, signal.SIGINT)
            elif send is not None:
                os.write(fd, send.encode())
        while time.time() < deadline:
            ready, _, _ = select.select([fd], [], [], 1.0)
            if ready:
                try:
                    chunk = os.read(fd, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                out += chunk
        _, status = os.waitpid(pid, 0)
    finally:
        os.close(fd)
    return out.decode(errors="replace"), os.waitstatus_to_exitcode(status)


def test_a_full_interview_through_a_pseudo_terminal_saves_the_graded_transcript(tmp_path):
    db = tmp_path / "p.sqlite3"
    env = {**os.environ, "WORKBENCH_DB": str(db), "EDITOR": ""}
    cmd = [sys.executable, "-m", "workbench.cli", "interview", "--drill", DRILL.id]
    out, code = _drive(cmd, env, [("Your answer", OPENING + "\n.\n"), ("What artifact", ARTIFACT + "\n.\n"),
                                  ("Who owns", OWNER + "\n.\n"), ("rollback boundary", ROLLBACK + "\n.\n"),
                                  ("saved to", None)], timeout=180)
    assert code == 0, out[-2000:]
    assert "verdict: strong" in out and "asked about rollback: supplied" in out
    store = Store(db)
    (attempt,) = store.attempts()
    assert attempt["verdict"] == "strong" and store.transcript(attempt["id"])["completed"]


def test_ctrl_c_saves_what_was_answered_and_leaves_the_store_consistent(tmp_path):
    db = tmp_path / "p.sqlite3"
    env = {**os.environ, "WORKBENCH_DB": str(db), "EDITOR": ""}
    cmd = [sys.executable, "-m", "workbench.cli", "interview", "--drill", DRILL.id]
    out, code = _drive(cmd, env, [("Your answer", OPENING + "\n.\n"), ("What artifact", "^C"),
                                  ("interrupted", None)], timeout=180)
    assert "attempt #1 saved" in out, out[-2000:]
    store = Store(db)
    (attempt,) = store.attempts()
    saved = store.transcript(attempt["id"])
    assert not saved["completed"] and saved["turns"][0]["text"].strip() == OPENING
    assert store.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert subprocess.run([sys.executable, "-m", "workbench.cli", "progress"], env=env, capture_output=True,
                          text=True, timeout=60).returncode == 0


def test_a_closed_terminal_saves_what_was_answered(tmp_path):
    db = tmp_path / "p.sqlite3"
    env = {**os.environ, "WORKBENCH_DB": str(db), "EDITOR": ""}
    pid, fd = pty.fork()
    if pid == 0:
        os.execve(sys.executable, [sys.executable, "-m", "workbench.cli", "interview", "--drill", DRILL.id], env)
    out, deadline = b"", time.time() + 180
    while b"What artifact" not in out:
        assert time.time() < deadline, out.decode(errors="replace")[-2000:]
        if select.select([fd], [], [], 1.0)[0]:
            out += os.read(fd, 65536)
            if b"Your answer" in out and OPENING.encode()[:20] not in out:
                os.write(fd, (OPENING + "\n.\n").encode())
    os.close(fd)  # the terminal goes away: the session gets SIGHUP
    _, status = os.waitpid(pid, 0)
    store = Store(db)
    (attempt,) = store.attempts()
    assert not store.transcript(attempt["id"])["completed"]
    assert store.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_control_characters_in_an_answer_are_escaped_when_quoted_back(tmp_path):
    import io

    from workbench.grading.interview import run_interview

    out = io.StringIO()
    answer = "p99 of the chat stream doubled \x1b]0;pwned\x07\x1b[2J once prompts passed 512 tokens.\n.\n"
    store = Store(tmp_path / "p.sqlite3")
    run_interview(DRILL, store, "table", "reference", stdin=io.StringIO(answer), stdout=out)
    text = out.getvalue()
    assert "\x1b" not in text and "\x07" not in text and "doubled" in text

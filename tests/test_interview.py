"""The mock interview: follow-ups for what is missing, one sharper retry per element, the fix once the core is
settled, replies credited to what they answer, one grade for the whole exchange, a saved transcript, driven end to
end through a pseudo-terminal, and interrupted with Ctrl-C."""

from __future__ import annotations

import io
import os
import pty
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from workbench.grading.drills import load_drills
from workbench.grading.grader import grade
from workbench.grading.interview import SHARPER, Interview, missing_steps, run_interview, sharper
from workbench.grading.store import Store

DRILLS = load_drills()
DRILL = DRILLS["compiler-runtime-mapping"]
OPENING = ("p99 of the chat stream doubled once prompts passed 512 tokens. Longer prompts miss every compiled bucket, "
           "so they run on the generic fallback kernels, which are slower, and the requests behind them queue.")
ARTIFACT = "The closed-loop mapping report at the same seed: per-bucket hit rate and misses by reason."
OWNER = "The ML compiler team owns the envelope; serving on-call owns the rollout."
ROLLBACK = "Keep the previous plan loaded and revert automatically if canary p99 regresses."
FIX = "I'd add buckets at 1024 and 2048 and recompile, since prompts now run to about 900 tokens."
# the rest of a strong answer, in words that touch no step of the mechanism's chain
REST = ("I'd replay the production trace at the same seed and break the latency down per bucket. The ML compiler team "
        "owns the change and serving on-call signs off on the rollout. We keep the previous plan loaded and revert "
        "automatically if canary p99 regresses. I'd add buckets at 1024 and 2048 and recompile.")
DODGE = "We'd look at the dashboards and profile it."


def test_follow_ups_ask_for_what_is_missing_and_the_exchange_is_graded_as_a_whole(tmp_path):
    iv = Interview(DRILL)
    first = iv.answer(OPENING)
    assert iv.grade.verdict != "strong" and first == iv.grade.elements["artifact"].question
    assert iv.reply(ARTIFACT) == iv.grade.elements["owner"].question
    assert iv.reply(OWNER) == iv.grade.elements["rollback"].question
    assert iv.grade.elements["fix"].question == iv.reply(ROLLBACK)  # the core is settled: now the fix
    assert iv.reply(FIX) is None and iv.done
    assert iv.grade.verdict == "strong" and iv.grade.score == 100
    asked = iv.asked()
    assert [t["element"] for t in asked] == ["artifact", "owner", "rollback", "fix"]
    assert all(t["answered"] and not t["retry"] for t in asked)
    store = Store(tmp_path / "p.sqlite3")
    attempt = iv.save(store)
    saved = store.transcript(attempt)
    assert saved["completed"] and [t["role"] for t in saved["turns"]] == ["candidate"] + ["interviewer",
                                                                                          "candidate"] * 4
    assert [t["supplied"] for t in saved["turns"] if t["role"] == "candidate"] == [
        ["workload", "mechanism"], ["artifact"], ["owner"], ["rollback"], ["fix"]]
    assert store.attempts()[0]["verdict"] == "strong"


def test_a_reply_that_dodges_the_question_is_recorded_as_still_missing():
    iv = Interview(DRILL, max_follow_ups=1)
    iv.answer(OPENING + " " + ARTIFACT + " " + OWNER)
    assert iv.reply("We can always roll back.") == SHARPER["rollback"]
    assert iv.reply("Rolling back is easy, we've done it before.") is None
    assert [(t["element"], t["retry"], t["answered"]) for t in iv.asked()] == [("rollback", False, False),
                                                                               ("rollback", True, False)]
    assert iv.grade.verdict == "partial" and iv.outcomes() == ["asked about rollback: still missing"]


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



def test_a_missed_element_gets_one_sharper_question_then_the_interviewer_moves_on():
    iv = Interview(DRILL)
    first = iv.answer(OPENING + " " + ROLLBACK + " " + FIX)  # no artifact, no owner
    assert first == iv.grade.elements["artifact"].question
    retry = iv.reply(DODGE)
    assert retry == SHARPER["artifact"] and retry != first and "seed" in retry and "breakdown" in retry
    assert iv.asked()[-1]["element"] == "artifact" and iv.asked()[-1]["retry"]
    # missed twice: never a third ask of the artifact; on to the owner
    assert iv.reply("Honestly, the dashboards would make it obvious.") == iv.grade.elements["owner"].question
    assert iv.reply("Whoever is around that week can pick it up.") == SHARPER["owner"]
    assert iv.reply(OWNER) is None and iv.done
    assert [(t["element"], t["retry"], t["answered"]) for t in iv.asked()] == [
        ("artifact", False, False), ("artifact", True, False), ("owner", False, False), ("owner", True, True)]
    assert iv.outcomes() == ["asked about artifact: still missing", "asked about owner: supplied at the retry"]


def test_the_mechanism_retry_asks_the_drills_question_for_the_missing_step():
    """The first ask is the question for the first missing required step; the reply gives that step, and the retry
    asks the drill's question for the next missing required step, not the one just answered."""
    questions = DRILL.rubric.step_questions
    iv = Interview(DRILL)
    first = iv.answer("p99 of the chat stream doubled this week while p50 barely moved; requests are waiting in the "
                      "queue much longer. " + REST)
    assert first == questions[0]
    retry = iv.reply("The prompts got longer: lots of them are now past 512 tokens, beyond the largest bucket we "
                     "compiled.")
    assert retry == f"One link is missing from your chain: the generic fallback. {questions[1]}"
    assert iv.reply("They take the generic fallback kernels, which are several times slower, so the requests "
                    "behind them queue and p99 climbs.") is None
    assert iv.grade.verdict == "strong" and iv.outcomes() == ["asked about mechanism: supplied at the retry"]


def test_a_mechanism_reply_that_adds_no_step_gets_the_same_steps_question_put_more_pointedly():
    iv = Interview(DRILL)
    first = iv.answer("p99 of the chat stream doubled this week while p50 barely moved. " + REST)
    retry = iv.reply("I'd guess it's something in the runtime, honestly.")
    assert first == DRILL.rubric.step_questions[0] and retry != first and retry.endswith(first)
    assert "shapes past the compiled envelope" in retry
    assert iv.reply("The prompts got longer and the requests wait in the queue longer.") is None
    assert not iv.grade.elements["mechanism"].present and len(iv.asked()) == 2


def test_missing_steps_reads_step_names_that_hold_a_comma():
    drill = DRILLS["chunked-prefill-ttft"]
    hint = grade(drill, "TTFT p99 for the long-document tenant tripled after we turned on chunked prefill; long "
                        "prompts are now cut into 512-token chunks.").elements["mechanism"].hint
    assert missing_steps(drill, hint) == [1, 3]  # 'decodes served first, prompts get the leftover budget', ...
    assert sharper(drill, "mechanism", [hint]).endswith(drill.rubric.step_questions[1])


@pytest.mark.parametrize("drill_id", sorted(DRILLS))
def test_with_no_step_found_the_retry_starts_at_the_first_required_step(drill_id):
    drill = DRILLS[drill_id]
    iv = Interview(drill, max_follow_ups=1)
    first = iv.answer("I'm not sure what happened yet; I'd need to look at the logs first.")
    assert first == drill.senior_review_question
    retry = iv.reply("Hard to say without more data.")
    k = drill.rubric.mechanism_required[0]
    assert retry != first and retry.endswith(drill.rubric.step_questions[k]) and drill.rubric.step_names[k] in retry
    assert iv.reply("I'd really need more data first.") is None


def test_the_fix_is_asked_once_the_core_is_settled_and_only_when_missing():
    iv = Interview(DRILL)
    first = iv.answer(OPENING + " " + ARTIFACT + " " + OWNER + " " + ROLLBACK)
    assert iv.grade.verdict == "strong" and first == iv.grade.elements["fix"].question
    assert iv.reply("We'd tune the runtime a bit and see.") == SHARPER["fix"]
    assert iv.reply(FIX) is None and iv.grade.score == 100
    assert iv.outcomes() == ["asked about fix: supplied at the retry"]
    iv = Interview(DRILL)
    assert iv.answer(OPENING + " " + ARTIFACT + " " + OWNER + " " + ROLLBACK + " " + FIX) is None
    assert iv.done and iv.asked() == []
    iv = Interview(DRILL)  # a core element first, then the fix
    assert iv.answer(OPENING + " " + ARTIFACT + " " + ROLLBACK) == iv.grade.elements["owner"].question
    assert iv.reply(OWNER) == iv.grade.elements["fix"].question


def test_an_answer_to_another_question_is_credited_and_not_asked_about():
    iv = Interview(DRILL)
    iv.answer(OPENING + " " + FIX)  # no artifact, owner or rollback
    assert iv.question == iv.grade.elements["artifact"].question
    # the rollback, in reply to the artifact question: credited, and the artifact is still asked for once more
    assert iv.reply(ROLLBACK) == SHARPER["artifact"]
    assert iv.transcript[-1]["retry"] and iv.transcript[-2]["supplied"] == ["rollback"]
    assert not iv.transcript[-3]["answered"]
    assert iv.reply("I'd rerun the scenario at the same seed and pull the per-bucket hit rate; the ML compiler team "
                    "owns that rerun.") is None
    assert iv.transcript[-1]["supplied"] == ["artifact", "owner"] and iv.asked()[-1]["answered"]
    assert {t["element"] for t in iv.asked()} == {"artifact"}  # neither the rollback nor the owner was asked about
    assert iv.credited() == {"rollback": "artifact", "owner": "artifact"}
    assert iv.grade.verdict == "strong" and iv.outcomes() == [
        "asked about artifact: supplied at the retry", "rollback: given in reply to the artifact question",
        "owner: given in reply to the artifact question"]


def test_max_follow_ups_counts_elements_not_questions():
    iv = Interview(DRILL, max_follow_ups=2)
    iv.answer(OPENING + " " + FIX)  # no artifact, owner or rollback
    replies = [DODGE, "The graphs speak for themselves.", "Whoever is around that week.", "Someone will take it."]
    questions = [iv.reply(r) for r in replies]
    assert questions[-1] is None and iv.done
    assert [(t["element"], t["retry"]) for t in iv.asked()] == [("artifact", False), ("artifact", True),
                                                                 ("owner", False), ("owner", True)]
    assert not iv.grade.elements["rollback"].present  # missing, but a third element is over the limit


def test_no_retry_is_asked_after_the_deadline():
    iv = Interview(DRILL, deadline=time.time() + 600)
    assert iv.answer(OPENING + " " + ARTIFACT + " " + OWNER + " " + FIX) == iv.grade.elements["rollback"].question
    iv.deadline = time.time() - 1
    assert iv.reply("We can always roll back.") is None and iv.done


def test_the_terminal_ends_with_what_each_ask_drew_out(tmp_path):
    out = io.StringIO()
    replies = [OPENING + " " + FIX, ROLLBACK, ARTIFACT, OWNER]
    stdin = io.StringIO("".join(f"{r}\n.\n" for r in replies))
    store = Store(tmp_path / "p.sqlite3")
    attempt = run_interview(DRILL, store, "table", "reference", stdin=stdin, stdout=out)
    text = out.getvalue()
    assert f"Interviewer: {SHARPER['artifact']}" in text
    for line in ("asked about artifact: supplied at the retry", "asked about owner: supplied at the first ask",
                 "rollback: given in reply to the artifact question"):
        assert f"  {line}\n" in text
    saved = store.transcript(attempt)
    assert saved["completed"] and [t.get("supplied") for t in saved["turns"] if t["role"] == "candidate"] == [
        ["workload", "mechanism", "fix"], ["rollback"], ["artifact"], ["owner"]]


def test_the_notebook_panel_asks_the_retry_the_interview_returns():
    from workbench.ui.panels.drill import DrillPanel

    panel = DrillPanel(store=False, drill_id=DRILL.id, show_evidence=False, interview=True)
    panel.answer.value = OPENING + " " + OWNER + " " + ROLLBACK + " " + FIX
    panel.button.click()
    assert "What artifact" in panel.question.value
    panel.reply.value = DODGE
    panel.reply_button.click()
    assert SHARPER["artifact"] in panel.question.value and panel.reply.value == ""
    panel.reply.value = ARTIFACT
    panel.reply_button.click()
    assert panel.follow_up.layout.display == "none" and panel.last_grade.verdict == "strong"
    assert "asked about artifact: supplied at the retry" in panel.feedback.value


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
                                  ("one bounded change", FIX + "\n.\n"), ("saved to", None)], timeout=180)
    assert code == 0, out[-2000:]
    assert "verdict: strong" in out and "asked about rollback: supplied at the first ask" in out
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
    out = io.StringIO()
    answer = "p99 of the chat stream doubled \x1b]0;pwned\x07\x1b[2J once prompts passed 512 tokens.\n.\n"
    store = Store(tmp_path / "p.sqlite3")
    run_interview(DRILL, store, "table", "reference", stdin=io.StringIO(answer), stdout=out)
    text = out.getvalue()
    assert "\x1b" not in text and "\x07" not in text and "doubled" in text

"""The drill widget, driven from Python without a browser."""

from __future__ import annotations

from workbench.grading.store import Store
from workbench.ui.panels.drill import DrillPanel

ANSWER = ("At 6,610 req/s on 8 cores p95 went from 2.5 ms to 3.1 ms after aggressive fusion.\n"
          "The fused MLP kernel keeps each token's whole 4,096-wide hidden row on chip, 12 KiB a row, so no useful "
          "tile fits the 4 MiB SRAM and it spills the hidden activations to HBM and back, "
          "and the cores contend for bandwidth under load, which stretches the tail.\n"
          "Proof: per-kernel spill and HBM bytes and the tail-latency drivers from the mapping report at the same "
          "seed.\n"
          "Fix: cap fused kernels at four ops (max_depth = 4) so the MLP chain is cut at the down-projection.\n"
          "Owner: the ML compiler team.\n"
          "Canary behind the fusion flag; flip back if p95 regresses more than 5%.")


def test_grade_button_grades_saves_and_shows_feedback(tmp_path):
    store = Store(tmp_path / "p.sqlite3")
    panel = DrillPanel(store=store, drill_id="fusion-memory-bursts", show_evidence=False)
    assert "aggressive fusion" in panel.prompt.value
    panel.answer.value = ANSWER
    panel.button.click()
    assert panel.last_grade.verdict == "strong"
    assert "verdict: strong" in panel.feedback.value and "Strong reference answer" in panel.feedback.value
    assert len(store.attempts()) == 1
    panel.select.value = "compiler-runtime-mapping"  # switching drills resets the answer and feedback
    assert panel.answer.value == "" and panel.feedback.value == "" and "input shapes" in panel.prompt.value
    panel.button.click()  # an empty answer is graded weak with hints, not an error
    assert panel.last_grade.verdict == "weak" and "empty" in panel.feedback.value
    store.close()


def test_evidence_table_is_shown(tmp_path):
    panel = DrillPanel(drill_id="fusion-memory-bursts")
    assert "p99 ms" in panel.evidence.value and "regressed" in panel.evidence.value


def test_oversized_answer_is_refused_in_the_panel():
    panel = DrillPanel(drill_id="fusion-memory-bursts", show_evidence=False)
    panel.answer.value = "x" * 20_001
    panel.button.click()
    assert panel.last_grade is None and "longer than" in panel.feedback.value


def test_interview_mode_asks_follow_ups_and_grades_the_exchange(tmp_path):
    store = Store(tmp_path / "p.sqlite3")
    panel = DrillPanel(store=store, drill_id="fusion-memory-bursts", show_evidence=False, interview=True)
    opening, owner, rollback = ANSWER.rsplit("\n", 2)[0], "Owner: the ML compiler team.", ANSWER.rsplit("\n", 1)[1]
    panel.answer.value = opening.replace("\nOwner: the ML compiler team.", "")
    panel.button.click()
    assert panel.follow_up.layout.display == "" and "Who owns" in panel.question.value
    panel.reply.value = owner
    panel.reply_button.click()
    assert "rollback boundary" in panel.question.value
    panel.reply.value = rollback
    panel.reply_button.click()
    assert panel.follow_up.layout.display == "none" and panel.last_grade.verdict == "strong"
    assert "asked about owner: supplied" in panel.feedback.value
    (attempt,) = store.attempts()
    assert store.transcript(attempt["id"])["completed"]
    store.close()


def test_the_panel_saves_to_the_clis_default_store(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_DB", str(tmp_path / "default.sqlite3"))
    panel = DrillPanel(drill_id="fusion-memory-bursts", show_evidence=False)
    panel.answer.value = ANSWER
    panel.button.click()
    store = Store(tmp_path / "default.sqlite3")  # what `workbench progress` reads
    assert [a["verdict"] for a in store.attempts()] == ["strong"]
    assert DrillPanel(drill_id="fusion-memory-bursts", show_evidence=False, store=False).store is None


def test_attempts_graded_in_jupyter_are_listed_by_workbench_progress(tmp_path, monkeypatch, capsys):
    from workbench.cli import main

    monkeypatch.setenv("WORKBENCH_DB", str(tmp_path / "jupyter.sqlite3"))
    panel = DrillPanel(drill_id="fusion-memory-bursts", show_evidence=False)  # no store given: the CLI's default
    panel.answer.value = ANSWER
    panel.button.click()
    assert "attempt #1 saved" in panel.feedback.value and "jupyter.sqlite3" in panel.feedback.value
    panel.store.close()
    capsys.readouterr()
    assert main(["progress"]) == 0  # the same default database, read by the CLI
    out = capsys.readouterr().out
    assert "1 attempts in" in out and "fusion-memory-bursts" in out and "strong" in out


def test_a_drill_switch_clears_the_old_evidence_at_once_and_says_it_is_running():
    from workbench.ui.panels.drill import RUNNING

    panel = DrillPanel(drill_id="fusion-memory-bursts")
    old = panel.evidence.value
    assert "p99 ms" in old
    seen = []
    panel.evidence.observe(lambda change: seen.append((change["new"], panel.prompt.value)), names="value")
    panel.select.value = "compiler-runtime-mapping"
    assert seen[0][0] == RUNNING and "aggressive fusion" in seen[0][1]  # cleared before the prompt even changed
    assert old not in [value for value, _ in seen]
    assert "p99 ms" in panel.evidence.value and panel.evidence.value != old  # the new drill's evidence


def test_drill_figures_draw_the_evidence_the_grades_and_the_progress(tmp_path):
    from workbench.grading.drills import load_drills
    from workbench.grading.grader import WEIGHTS, grade
    from workbench.grading.practice import prepare
    from workbench.grading.store import Store
    from workbench.ui.exercises import loop_drills as checks
    from workbench.ui.figures import drills as df

    d = load_drills()["fusion-memory-bursts"]
    ev = prepare(d, figure_dir=tmp_path)
    fig = df.evidence_figure(ev.summaries)
    bars = [b for b in fig.axes[0].patches]
    assert len(bars) == 3 * len(df.STATS)  # baseline, regressed, fixed at each statistic
    assert abs(bars[len(df.STATS) + 3].get_height() - ev.summaries["reg"]["latency_s"]["p99"] * 1e3) < 1e-9
    weak, strong = grade(d, "It is probably memory."), grade(d, checks.PARTIAL_ANSWER)
    fig = df.grade_figure({"weak": weak, "partial": strong})
    filled = [p for p in fig.axes[0].patches if p.get_facecolor()[:3] != (1.0, 1.0, 1.0)]
    assert len(fig.axes[0].patches) == 2 * len(WEIGHTS)
    assert len(filled) == sum(e.present for g in (weak, strong) for e in g.elements.values())
    store = Store(tmp_path / "p.sqlite3")
    for answer in ("It is probably memory.", checks.PARTIAL_ANSWER):
        store.save(grade(d, answer), answer, 0.0)
    attempts = store.attempts()
    store.close()
    fig = df.progress_figure(attempts)
    assert [b.get_height() for b in fig.axes[0].patches] == [a["score"] for a in attempts]

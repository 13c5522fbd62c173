"""Instructor key for chapters 06 and 07: each exercise's worked answer is right, a common wrong one is not.

The expected numbers, and the misconception each wrong answer stands for, are the ones the
solutions notebooks print in their instructor notes.
"""

from __future__ import annotations

import pytest

from workbench.ui.exercises import loop_drills as ck
from workbench.ui.exercises.base import NOT_ANSWERED
from workbench.ui.panels.closed_loop import ClosedLoopPanel


class _Headless:
    """What the 06 checkers read from the panel: its run length (building the widgets is not needed)."""

    requests = ClosedLoopPanel.requests


@pytest.fixture(scope="module")
def loop_panel():
    return _Headless()


def test_06_placeholders_are_not_answered(loop_panel):
    assert ck.tradeoff_threshold(loop_panel, ...) == NOT_ANSWERED
    assert ck.noise_floor(loop_panel, ...) == NOT_ANSWERED
    assert ck.refused_action(loop_panel, ..., "interactive") == NOT_ANSWERED


def test_tradeoff_threshold(loop_panel):
    assert ck.tradeoff_threshold(loop_panel, 0.08) == "right"  # seed 11: the cold stream pays 7-8%
    assert "still refuses" in ck.tradeoff_threshold(loop_panel, 0.05)  # the default: the cold stream protected
    assert "still refuses" in ck.tradeoff_threshold(loop_panel, 0.07)  # refused when worse by *more than* it
    assert "smaller threshold" in ck.tradeoff_threshold(loop_panel, 0.20)  # seed 7's edge, printed in section 4
    assert ck.tradeoff_threshold(loop_panel, 0.20, seed=7) == "right"  # the chapter's own seed
    assert ck.tradeoff_threshold(loop_panel, 5).startswith("expected")
    assert ck.tradeoff_threshold(loop_panel, "high").startswith("expected")


def test_noise_floor(loop_panel):
    assert ck.noise_floor(loop_panel, 0.28) == "right"  # the worst no-op margin, seed 3: +27.3%
    assert "changed nothing" in ck.noise_floor(loop_panel, 0.05)  # the default guard on another seed
    assert "tighter" in ck.noise_floor(loop_panel, 0.30)


def test_refused_action(loop_panel):
    assert ck.refused_action(loop_panel, "priority", "interactive") == "right"
    assert ck.refused_action(loop_panel, "priority", "batch").startswith("not yet:")  # the starved stream gains
    assert "accepts" in ck.refused_action(loop_panel, "batching", "interactive")
    assert ck.refused_action(loop_panel, "fusion", "batch").startswith("expected")


@pytest.fixture(scope="module")
def fusion_drill():
    from workbench.grading.drills import load_drills

    return load_drills()["fusion-memory-bursts"]


def test_07_placeholders_are_not_answered(fusion_drill):
    assert ck.missing_element(fusion_drill, ...) == NOT_ANSWERED
    assert ck.regressed_p95_ms(fusion_drill, ...) == NOT_ANSWERED
    assert ck.owner_sentence(fusion_drill, ...) == NOT_ANSWERED


def test_missing_element(fusion_drill):
    assert ck.missing_element(fusion_drill, "owner") == "right"  # "someone from infra should look into it"
    assert ck.missing_element(fusion_drill, "rollback").startswith("not yet:")  # section 6's answer, not this one
    assert ck.missing_element(fusion_drill, "fix").startswith("expected")  # fix is scored, not a core element


def test_regressed_p95(fusion_drill):
    assert ck.regressed_p95_ms(fusion_drill, 3.12) == "right"  # aggressive fusion on 8 cores, 4 MiB SRAM: p95 3.12 ms
    assert "baseline" in ck.regressed_p95_ms(fusion_drill, 2.51)  # the healthy run (elementwise)
    assert "mean" in ck.regressed_p95_ms(fusion_drill, 1.45)  # the mean hides the tail
    assert "p99" in ck.regressed_p95_ms(fusion_drill, 4.68)
    assert ck.regressed_p95_ms(fusion_drill, "slow").startswith("expected")


def test_owner_sentence(fusion_drill):
    good = "Owner: the ML compiler team owns the fusion pass; the serving on-call signs off on p95."
    assert ck.owner_sentence(fusion_drill, good) == "right"
    assert ck.owner_sentence(fusion_drill, "I'd own the rollout myself.") == "right"
    assert "accountable" in ck.owner_sentence(fusion_drill, "Owner: the team should look at it.")
    assert ck.owner_sentence(fusion_drill, 5).startswith("expected")


def test_the_answers_quote_the_drills_evidence(fusion_drill):
    """PARTIAL_ANSWER (and EXERCISE_ANSWER, built from it) quote the drill's own runs, chip and model, not older
    figures, and name the mechanism the compile profile shows: the MLP chain's d_ff-wide hidden row."""
    from workbench.compiler.cost import footprint
    from workbench.grading.drills import drill_scenarios
    from workbench.grading.practice import prepare
    from workbench.pipeline import compile_scenario

    s = prepare(fusion_drill).summaries
    _, sc, capped = drill_scenarios(fusion_drill, fixed=True)
    hw, rate, plan = sc.hardware, sc.streams[0].arrivals.rate, compile_scenario(sc)
    chain = plan.buckets[-1].mapping.kernels[-1]  # the MLP chain, norm to residual
    row = max(footprint(plan.graph, chain, {"batch": sc.batching.max_batch, "seq": 512}).per_row)
    d_ff = plan.graph.node("up").shape[-1]
    p95 = f"p95 went from {s['base']['latency_s']['p95'] * 1e3:.1f} ms to {s['reg']['latency_s']['p95'] * 1e3:.1f} ms"
    spill = s["reg"]["spill_bytes_per_request"] / s["base"]["spill_bytes_per_request"]
    assert chain.nodes == ("ln2", "up", "up_bias", "gelu", "down", "residual2") and 9 < spill < 11
    for text in (ck.PARTIAL_ANSWER, ck.EXERCISE_ANSWER):
        assert p95 in text and f"{rate:,.0f} req/s on {hw.cores} cores" in text
        assert f"{hw.sram_bytes_per_core / 2**20:.0f} MiB SRAM" in text and f"{d_ff:,}-wide hidden row" in text
        assert f"{row / 2**10:.0f} KiB a row" in text and "ten times the elementwise plan's spill" in text
        assert f"max_depth = {capped.model.max_depth}" in text  # the drill's own fix
        assert "score matrix" not in text and "attention" not in text  # attention fits: it is not the mechanism


def test_strong_answer_exercise_of_chapter_07(fusion_drill):
    from workbench.ui.exercises.base import strong_answer

    partial = ck.PARTIAL_ANSWER
    assert strong_answer(fusion_drill, partial).startswith("not yet:") and "rollback" in strong_answer(fusion_drill,
                                                                                                         partial)
    fixed = partial.rsplit("\n", 1)[0] + "\nRollback: keep the elementwise plan loaded behind a flag and flip back " \
        "if canary p95 rises more than 5%."
    assert strong_answer(fusion_drill, fixed) == "right"

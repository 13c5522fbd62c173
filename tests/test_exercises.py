"""The notebook exercises: unanswered they say so, a worked solution is right, a wrong one gets a hint.

This is the instructor's key: each exercise can be done with the panel's controls, and
the checker tells a right answer from a wrong one. The notebooks ship with ``...``.
"""

from __future__ import annotations

from workbench.grading.drills import load_drills
from workbench.ui.exercises import base as ex
from workbench.ui.exercises import tour_envelopes
from workbench.ui.panels.compiler import ShapeEnvelopePanel
from workbench.ui.panels.runtime import BatchingPanel, FairnessPanel, ResidencyPanel

STRONG = ("At 6,610 req/s on 8 cores, p95 of the transformer block went from 2.5 ms to 3.1 ms once aggressive "
          "fusion shipped.\nThe fused MLP kernel holds each token's whole 4,096-wide hidden row on chip, the tile "
          "overflows the 4 MiB SRAM and spills to HBM, so it moves more HBM bytes and the cores contend for "
          "bandwidth under load, which stretches the tail.\nProof: per-kernel spill bytes and the tail-latency "
          "drivers from the mapping report at the same seed, elementwise vs aggressive.\nFix: cap fused kernels "
          "at four ops (max_depth = 4) so the MLP chain is cut at the down-projection.\nOwner: the ML compiler "
          "team.\nCanary behind the fusion flag; flip back if p95 regresses more than 5%.")


def test_every_checker_says_not_answered_for_the_placeholder():
    drill = load_drills()["fusion-memory-bursts"]
    assert ex.strong_answer(drill, ...) == ex.NOT_ANSWERED
    assert ex.balancing_weight(FairnessPanel(), ...) == ex.NOT_ANSWERED


def test_shape_envelope_exercise():
    panel = ShapeEnvelopePanel()
    before = panel.values()
    assert tour_envelopes.envelope_for_drift(panel, "fallback", "128 ... 2048 (5 buckets)") == "right"
    assert tour_envelopes.envelope_for_drift(panel, "reject", "128 / 256 / 512").startswith("not yet:")
    assert tour_envelopes.envelope_for_drift(panel, "fallback", "128 / 256 / 512").startswith("not yet:")  # p99 2.2 ms
    assert tour_envelopes.envelope_for_drift(panel, "sideways", "128 / 256 / 512").startswith("expected")
    assert panel.values() == before  # checking never moves the panel


def test_batching_exercise():
    panel = BatchingPanel()
    assert ex.batching_under_budget(panel, 6, 8.0) == "right"  # chapter 03, exercise 4: keep the 8 ms window
    assert ex.batching_under_budget(panel, 7, 8.0) == "right"
    assert ex.batching_under_budget(panel, 8, 8.0).startswith("not yet:")  # 15.1 ms, just over
    assert ex.batching_under_budget(panel, 16, 8.0).startswith("not yet:")
    assert ex.batching_under_budget(panel, 16, 2.0).startswith("not yet:")  # passes 15 ms, but moved the window
    assert ex.batching_under_budget(panel, 64, 20.0).startswith("not yet:")
    assert ex.batching_under_budget(panel, "big", 2.0).startswith("expected")


def test_fairness_exercise():
    panel = FairnessPanel()
    assert ex.balancing_weight(panel, 0.9) == "right"
    assert ex.balancing_weight(panel, 8.0).startswith("not yet:")


def test_residency_exercise():
    panel = ResidencyPanel()
    assert ex.smallest_hbm_without_reloads(panel, 36) == "right"
    assert ex.smallest_hbm_without_reloads(panel, 40).startswith("not yet:")  # no reloads, but not the smallest
    assert ex.smallest_hbm_without_reloads(panel, 32).startswith("not yet:")


def test_drill_answer_exercise():
    drill = load_drills()["fusion-memory-bursts"]
    assert ex.strong_answer(drill, STRONG) == "right"
    weak = ex.strong_answer(drill, "Fusion is bad; roll back.")
    assert weak.startswith("not yet:") and "verdict: weak" in weak
    assert ex.strong_answer(drill, 42).startswith("expected")


def test_the_checked_exercises_ship_unanswered():
    import json
    import re
    from pathlib import Path

    for name in ("00_tour", "01_shape_envelopes", "02_fusion_and_memory", "03_batching_and_queues",
                 "04_fairness_and_placement", "05_memory_residency", "07_drills", "08_llm_serving"):
        nb = json.loads((Path(__file__).parents[1] / "notebooks" / f"{name}.ipynb").read_text(encoding="utf-8"))
        cells = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]
        exercises = [c for c in cells if re.search(r"\b(checks|exercises)\.\w+\(", c)]  # a cell calling a checker
        assert exercises, name
        for cell in exercises:  # a placeholder and a checker: running the notebook answers nothing
            assert "= ..." in cell and "assert" not in cell, (name, cell)

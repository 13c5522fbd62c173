"""Chapter 04 and 05 numbers and pictures: the analysis against theory and the panels, the figures drawn.

The analysis modules rebuild the panels' scenarios; these tests hold them to the panels'
own runs, to Cobham's formula, to the strict-turn round-robin capacity derived in
``fairness.round_robin_capacity_share`` and to the runtime's LRU (replayed).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from workbench.analysis import fairness as fa
from workbench.analysis import residency_stats as rs
from workbench.analysis.metrics import summarize
from workbench.pipeline import run_scenario
from workbench.ui.figures import fairness as ff
from workbench.ui.figures import residency as rf
from workbench.ui.panels.runtime import FairnessPanel, ResidencyPanel


def test_two_streams_is_the_fairness_panels_scenario():
    settings = dict(discipline="weighted", batch_weight=2.0, placement="pinned", load=0.7, skew=0.6)
    panel = FairnessPanel().run(**settings)["summary"]
    ours = summarize(run_scenario(fa.two_streams(**settings, requests=FairnessPanel.requests)))
    assert ours["latency_s"] == panel["latency_s"] and ours["fairness_jain"] == panel["fairness_jain"]


def test_residency_scenario_is_the_residency_panels_scenario():
    panel = ResidencyPanel().run(hbm_gib=30, embed_rate=2)["summary"]
    ours = summarize(run_scenario(rs.residency_scenario(30, 2, ResidencyPanel.requests)))
    assert ours["latency_s"] == panel["latency_s"] and ours["residency"] == panel["residency"]


def test_simulated_priority_waits_match_cobham():
    d = fa.cobham_vs_simulated((0.5, 0.8), requests=40000)
    assert d["classes"] == ["interactive", "batch"]
    for sim, cob in zip(d["sim"], d["cobham"], strict=True):
        assert sim == pytest.approx(cob, rel=0.1)


def test_jain_reads_the_offered_mix_not_the_waits():
    rows = fa.policy_rows([("fifo", "fifo", 1.0), ("priority", "priority", 1.0)], requests=20000)
    assert rows[0]["jain"] == rows[1]["jain"]  # same throughput, so the same index
    assert rows[1]["p99_s"]["batch"] > 5 * rows[1]["p99_s"]["interactive"]
    assert fa.jain_of([100, 90], [1, 1]) == pytest.approx(190**2 / (2 * (100**2 + 90**2)))
    assert fa.jain_of([100, 90], [1, 0.9]) == pytest.approx(1.0)  # the weight alone moves it


def test_pinned_and_round_robin_arithmetic():
    assert fa.pinned_core_utilisation([171, 19], 0.01, 2) == pytest.approx([1.71, 0.19])
    assert fa.overload_share(0.95) == pytest.approx(1 / 1.9)
    assert fa.round_robin_capacity_share() == pytest.approx(0.75)
    rows = fa.placement_rows(("round-robin", "pinned"), load=0.95, skew=0.9, requests=20000)
    assert np.mean(rows[0]["busy"]) == pytest.approx(0.75, abs=0.02)  # saturated at three quarters
    assert rows[0]["overloaded"] and rows[1]["overloaded"]
    assert rows[1]["busy"][0] > 0.99


def test_occupancy_replay_matches_the_run():
    for hbm in (32, 36):
        tr = run_scenario(rs.residency_scenario(hbm, 5, 6000))
        occ = rs.occupancy_timeline(tr)
        assert np.array_equal(occ["waited"], tr.batch_reload_s > 0)  # the replay waits where the run waited
        assert occ["reloaded"].sum() == tr.residency.get("loads", 0)
        assert (occ["reloaded"] <= occ["waited"]).all()
        assert occ["bytes"].sum(0).max() <= 36 * rs.GIB
        centres, counts = rs.reloads_per_bin(tr, 10)
        assert len(centres) == 10 and counts.sum() == occ["reloaded"].sum()
        if hbm == 32:  # loads queue on the link and batches wait on loads in flight, both in this run
            assert (occ["waited"] & ~occ["reloaded"]).any() and tr.batch_reload_s.max() > 0.21


def test_reload_overcommit_and_sharing_arithmetic():
    assert rs.reload_seconds(12 * rs.GIB, 1.6e12) == pytest.approx(8.053e-3, rel=1e-3)  # had it sat beside HBM
    assert rs.reload_seconds(12 * rs.GIB, 64e9) == pytest.approx(0.2013, abs=5e-5)  # over PCIe 5 x16
    assert rs.models_that_fit([12 * rs.GIB] * 3, 32 * rs.GIB) == 2
    assert rs.overcommit_bytes([12 * rs.GIB] * 3, 32 * rs.GIB) == 4 * rs.GIB
    assert rs.overcommit_bytes([12 * rs.GIB] * 2, 32 * rs.GIB) == 0
    assert rs.water_level([0.3, 0.3]) == math.inf
    assert rs.water_level([1.0, 0.3, 0.3, 0.3]) == pytest.approx(0.25)
    assert rs.slowdowns([1.0, 0.3, 0.3, 0.3]) == pytest.approx([4.0, 1.2, 1.2, 1.2])
    assert rs.water_level([1.0, 0.1]) == pytest.approx(0.9)


def test_figures_draw_with_labelled_axes():
    figs = [
        ff.cobham_figure({"loads": [0.5, 0.8], "classes": ["a", "b"], "sim": [[0.002, 0.004], [0.006, 0.03]],
                          "cobham": [[0.002, 0.004], [0.006, 0.03]]}),
        ff.jain_vs_p99_figure([{"label": "x", "jain": 0.99, "p99_s": {"a": 0.1, "b": 0.2}},
                               {"label": "y", "jain": 0.99, "p99_s": {"a": 0.05, "b": 0.9}}]),
        ff.core_busy_figure([{"placement": "pinned", "busy": [1.0, 0.2], "p99_s": 9.0, "overloaded": True}]),
        rf.reload_cost_figure({"reload": 0.008, "batch": 0.003}),
    ]
    tr = run_scenario(rs.residency_scenario(32, 5, 3000))
    figs.append(rf.occupancy_figure(rs.occupancy_timeline(tr), ["chat", "code", "embed"], 32 * rs.GIB,
                                    rs.reloads_per_bin(tr, 8), (0.5, 0.8)))
    for fig in figs:
        assert fig._repr_png_()[:4] == b"\x89PNG"
        for ax in fig.axes:
            assert ax.get_xlabel() or ax.get_xticklabels() and ax.get_ylabel()


def test_busy_breakdown_and_time_shares_add_up():
    tr = run_scenario(rs.residency_scenario(32, 5, 6000))
    p = rs.busy_breakdown(tr)
    assert p["service"] + p["reload"] + p["contention"] == pytest.approx(p["utilisation"], abs=0.01)
    occ = rs.occupancy_timeline(tr)
    share = rs.resident_share(occ)
    assert len(share) == 3 and all(0 <= x <= 1 for x in share)
    assert 0 < rs.overcommit_time_share(occ, 32 * rs.GIB) <= min(share)  # over 32 GiB only with all three in
    assert rs.overcommit_time_share(occ, 36 * rs.GIB) == 0.0

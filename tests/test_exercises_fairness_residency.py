"""Instructor key for chapters 04 and 05: each exercise's worked answer is right, a common wrong one is not.

The expected numbers, and the misconception each wrong answer stands for, are the ones
the solutions notebooks print in their instructor notes.
"""

from __future__ import annotations

import pytest

from workbench.ui.exercises import fairness_residency as ck
from workbench.ui.exercises.base import NOT_ANSWERED
from workbench.ui.panels.runtime import FairnessPanel, ResidencyPanel


@pytest.fixture(scope="module")
def fairness():
    return FairnessPanel()


@pytest.fixture(scope="module")
def residency():
    return ResidencyPanel()


def test_placeholders_are_not_answered(fairness, residency):
    assert ck.cobham_batch_wait_ms(fairness, ...) == NOT_ANSWERED
    assert ck.pinned_overload_share(fairness, ...) == NOT_ANSWERED
    assert ck.jain_blind_spot(fairness, ...) == NOT_ANSWERED
    assert ck.link_queue_waits(residency, ..., 402.7, 151.3) == NOT_ANSWERED
    assert ck.smallest_hbm_without_reloads(residency, ...) == NOT_ANSWERED
    assert ck.reload_slowdown(residency, ...) == NOT_ANSWERED


def test_cobham_exercise(fairness):
    before = fairness.values()
    assert ck.cobham_batch_wait_ms(fairness, 53.1) == "right"  # lam = 102, 68 req/s; mu = 100/s; c = 2
    assert "FIFO" in ck.cobham_batch_wait_ms(fairness, 26.0)  # the M/M/2 wait: priority ignored
    assert ck.cobham_batch_wait_ms(fairness, 8.0).startswith("not yet:")  # the interactive class's wait
    assert ck.cobham_batch_wait_ms(fairness, 30.7).startswith("not yet:")  # section 2's printed load 0.8
    assert ck.cobham_batch_wait_ms(fairness, "long").startswith("expected")
    assert fairness.values() == before


def test_pinned_overload_exercise(fairness):
    assert ck.pinned_overload_share(fairness, 0.62) == "right"  # 0.62 x 160 x 10 ms = 0.992; 0.63 -> 1.008
    assert ck.pinned_overload_share(fairness, 0.63).startswith("not yet:")  # overloaded
    assert ck.pinned_overload_share(fairness, 0.52).startswith("not yet:")  # load 0.95's answer (printed)
    assert ck.pinned_overload_share(fairness, 0.5).startswith("not yet:")  # safe but not the largest
    assert ck.pinned_overload_share(fairness, 1.5).startswith("expected")


def test_jain_blind_spot_exercise(fairness):
    before = fairness.values()
    assert ck.jain_blind_spot(fairness, 0.84) == "right"  # p99 ratio 5.06 (0.83: 4.81); Jain 0.997 throughout
    assert ck.jain_blind_spot(fairness, 0.95).startswith("not yet:")  # the chapter's load: past the edge
    assert ck.jain_blind_spot(fairness, 0.8).startswith("not yet:")  # ratio 4.2
    assert ck.jain_blind_spot(fairness, 2.0).startswith("expected")
    assert fairness.values() == before


def test_link_queue_exercise(residency):
    assert ck.link_queue_waits_ms() == pytest.approx((201.326592, 402.653184, 151.326592))
    assert ck.link_queue_waits(residency, 201.3, 402.7, 151.3) == "right"  # t, 2t, t - 50 ms
    assert "one DMA path" in ck.link_queue_waits(residency, 201.3, 201.3, 151.3)  # both loads at full link speed
    assert "rest of A's load" in ck.link_queue_waits(residency, 201.3, 402.7, 0)  # resident as soon as asked for
    assert "rest of A's load" in ck.link_queue_waits(residency, 201.3, 402.7, 201.3)  # a second copy of A
    assert ck.link_queue_waits(residency, 187.5, 375.0, 137.5).startswith("not yet:")  # 12e9 bytes, not 12 GiB
    assert ck.link_queue_waits(residency, 8.05, 16.1, 0).startswith("not yet:")  # at HBM bandwidth


def test_smallest_hbm_exercise(residency):
    before = residency.values()
    assert ck.smallest_hbm_without_reloads(residency, 30) == "right"  # 12 + 12 + 6 GiB
    assert ck.smallest_hbm_without_reloads(residency, 36).startswith("not yet:")  # the unquantised answer
    assert ck.smallest_hbm_without_reloads(residency, 31).startswith("not yet:")  # off the 2 GiB steps
    assert ck.smallest_hbm_without_reloads(residency, 28).startswith("not yet:")
    assert residency.values() == before


def test_reload_slowdown_exercise(residency):
    assert ck.reload_slowdown(residency, 3.75) == "right"  # theta = 0.8 / 3 = 0.267: 1 / theta
    assert "total demand" in ck.reload_slowdown(residency, 1.9)
    assert ck.reload_slowdown(residency, 4).startswith("not yet:")  # the chapter's three phases of 0.3
    assert ck.reload_slowdown(residency, 1.5).startswith("not yet:")  # the 0.4 phase's slowdown

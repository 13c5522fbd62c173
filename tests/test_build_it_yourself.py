"""Build it yourself (issue 37, item 5): the three learner-built pieces, their checkers, and the worked answers.

* 02: one kernel's FLOPs, HBM bytes, intensity, roofline time and regime by hand, equal to the cost model's;
* 03: a twenty-line dynamic batcher against Allen-Cunneen and the library's simulator;
* 06: a distribution-free confidence interval for p99 and a canary sized from it
  (:mod:`workbench.analysis.quantile_ci`).

Each checker says "right" for the worked solution, "not yet: <hint>" for the usual slips and "not answered
yet" for the placeholder. Every number a collapsed worked answer states is recomputed here from the library,
in the chapter and in its solutions copy.
"""

from __future__ import annotations

import dataclasses
import math
import re
from functools import cache
from pathlib import Path

import nbformat
import numpy as np
import pytest

from workbench.analysis import knee as kn
from workbench.analysis import quantile_ci as qc
from workbench.analysis import queueing as q
from workbench.analysis import roofline as rl
from workbench.analysis.regimes import split_cost
from workbench.models import transformer_block
from workbench.scenario import load_scenario
from workbench.ui.exercises import batching as bk
from workbench.ui.exercises import fusion as fb
from workbench.ui.exercises import loop_drills as ld
from workbench.ui.exercises.base import NOT_ANSWERED

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
CHAPTERS = ("02_fusion_and_memory.ipynb", "03_batching_and_queues.ipynb", "06_closed_loop.ipynb")
DETAILS = "<details><summary>Show the worked answer</summary>"


# --- the confidence interval for a quantile ---------------------------------------------------------------------------

def test_binomial_cdf_equals_the_sum_of_its_terms():
    for n, p in ((10, 0.3), (50, 0.99), (400, 0.99)):
        exact = np.cumsum([math.comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(n + 1)])
        assert np.allclose(qc.binom_cdf(np.arange(n + 1), n, p), exact, rtol=1e-9, atol=1e-12)
    assert qc.binom_cdf(-1, 10, 0.5) == 0.0
    with pytest.raises(ValueError):
        qc.binom_cdf(3, 10, 1.0)


@pytest.mark.parametrize("n", [368, 500, 1000, 2717, 19000])
def test_the_ranks_are_the_tightest_equal_tailed_pair_that_covers(n):
    lo, hi = qc.order_statistic_ranks(n)
    cdf = qc.binom_cdf(np.arange(n + 1), n, 0.99)
    assert 1 <= lo < hi <= n and qc.coverage(n, (lo, hi)) >= 0.95
    assert cdf[lo - 1] <= 0.025 < (cdf[lo] if lo < n else 1.0)   # l is the largest rank with 2.5 % below
    assert cdf[hi - 1] >= 0.975 > cdf[hi - 2]                     # u is the smallest rank with 2.5 % above


def test_the_fewest_samples_that_bound_p99_from_above():
    assert qc.min_samples_for_upper_bound() == 368 and 0.99**368 <= 0.025 < 0.99**367
    assert qc.order_statistic_ranks(368)[1] == 368
    with pytest.raises(ValueError, match="need at least 368"):
        qc.order_statistic_ranks(367)


def test_the_interval_covers_the_true_p99_as_often_as_it_says():
    rng = np.random.default_rng(3)
    truth = -math.log(0.01)  # p99 of an exponential of mean 1
    hits = [lo <= truth <= hi for lo, hi in (qc.quantile_ci(rng.exponential(1.0, 1000)) for _ in range(600))]
    assert 0.95 <= np.mean(hits) <= 0.995  # nominal coverage 97.6 % at n = 1,000 (worked problem 2)


def test_the_bootstrap_agrees_with_the_order_statistics():
    x = np.random.default_rng(4).lognormal(0.0, 0.5, 20000)
    (a, b), (c, d) = qc.quantile_ci(x), qc.bootstrap_quantile_ci(x, resamples=400)
    assert abs(c / a - 1) < 0.02 and abs(d / b - 1) < 0.02 and a < np.percentile(x, 99) < b


def test_the_canary_is_the_smallest_size_whose_interval_is_narrower_than_the_regression():
    x = np.random.default_rng(5).lognormal(0.0, 0.5, 20000)
    n = qc.canary_requests(x, 0.2)
    assert qc.width_ratio(x, n) < 1.2 <= qc.width_ratio(x, n - 1)
    assert qc.canary_requests(x, 0.4) < n  # a bigger regression is seen sooner
    with pytest.raises(ValueError, match="measure more"):
        qc.canary_requests(x[:500], 0.05)


# --- 02: the kernel by hand -------------------------------------------------------------------------------------------

HW02 = load_scenario("fusion_memory_bursts").hardware
ROWS, D, F, E = 512, 1024, 4096, 2
HAND_FLOPS = 2 * ROWS * D * F + ROWS * F + 8 * ROWS * F
HAND_BYTES = E * (ROWS * D + D * F + F + ROWS * F)
HAND_SECONDS = HW02.launch_s + max(HAND_FLOPS / HW02.peak_flops_per_core, HAND_BYTES / HW02.hbm_bandwidth_bytes_per_s)


def test_the_hand_count_is_the_cost_model_count():
    p = fb.hand_kernel(HW02)
    assert p.kernel.nodes == ("up", "up_bias", "gelu") and p.cost.spill_bytes == 0
    assert (p.cost.flops, p.cost.bytes) == (HAND_FLOPS, HAND_BYTES) == (4_313_841_664, 13_639_680)
    assert p.cost.seconds == pytest.approx(HAND_SECONDS, abs=1e-15) and fb.hand_regime(HW02) == "compute-bound"
    assert fb.kernel_by_hand(HW02, HAND_FLOPS, HAND_BYTES, HAND_FLOPS / HAND_BYTES, HAND_SECONDS,
                             "compute-bound") == "right"


@pytest.mark.parametrize("change, hint", [
    ({"flops": 2 * ROWS * D * F}, "the matmul alone"),
    ({"flops": ROWS * D * F}, "a multiply-add is two FLOPs"),
    ({"hbm_bytes": HAND_BYTES - E * F}, "the bias is a weight too"),
    ({"hbm_bytes": 2 * HAND_BYTES}, "bf16 is 2 bytes"),
    ({"hbm_bytes": HAND_BYTES + 2 * E * ROWS * F}, "on chip"),
    ({"seconds": HAND_SECONDS - HW02.launch_s}, "add the launch"),
    ({"seconds": HW02.launch_s + (HAND_FLOPS / HW02.peak_flops_per_core + HAND_BYTES / HW02.hbm_bandwidth_bytes_per_s)},
     "max, not sum"),
    ({"regime": "memory-bandwidth-bound"}, "largest of the three terms"),
])
def test_the_hand_count_checker_names_the_slip(change, hint):
    args = {"flops": HAND_FLOPS, "hbm_bytes": HAND_BYTES, "intensity": HAND_FLOPS / HAND_BYTES,
            "seconds": HAND_SECONDS, "regime": "compute-bound", **change}
    out = fb.kernel_by_hand(HW02, **args)
    assert out.startswith("not yet:") and hint in out and "right so far" in out


def test_the_instructor_note_states_the_cost_model_numbers():
    p = fb.hand_kernel(HW02)
    note = [c.source for c in nbformat.read(NOTEBOOKS / "solutions" / "02_fusion_and_memory.ipynb", as_version=4).cells
            if c.get("id") == "s02-byo-notes"][0]
    found = _numbers(note)
    for shown, value in (("4313841664", p.cost.flops), ("13639680", p.cost.bytes), ("316.3", p.intensity),
                         ("43.14", p.cost.compute_s * 1e6), ("34.10", p.cost.memory_s * 1e6),
                         ("53.14", p.cost.seconds * 1e6)):
        decimals = len(shown.split(".")[1]) if "." in shown else 0
        assert shown in found and abs(float(shown) - value) <= 0.5 * 10**-decimals + 1e-9, shown


def test_the_hand_count_placeholders_are_not_answered():
    assert fb.kernel_by_hand(HW02, ..., ..., ..., ..., ...) == NOT_ANSWERED
    assert fb.kernel_by_hand(HW02, HAND_FLOPS, HAND_BYTES, 1.0, 1.0, 3).startswith("expected")


# --- 03: the learner's batcher ----------------------------------------------------------------------------------------

BASE, PER, C = bk.batcher_law()


def reference_batcher(rate, max_batch, max_delay_s, requests=20000, seed=0, window=True, core=True):
    """The worked solution of 03's exercise (``window``/``core`` False: the two usual slips)."""
    rng = np.random.default_rng(seed)
    arrive = np.cumsum(rng.exponential(1 / rate, requests))
    free = np.zeros(C)
    start = np.empty(requests)
    i = 0
    while i < requests:
        k = int(np.argmin(free))
        full_at = arrive[min(i + max_batch, requests) - 1]
        leave = min(arrive[i] + max_delay_s, full_at) if window else full_at
        t = max(free[k], leave) if core else leave
        n = min(int(np.searchsorted(arrive, t, side="right")) - i, max_batch)
        start[i:i + n] = t
        free[k] = t + BASE + PER * n
        i += n
    return start - arrive


def test_the_worked_batcher_is_right_and_the_slips_get_their_hint():
    assert bk.batcher_matches(reference_batcher) == "right"
    no_core = bk.batcher_matches(lambda r, b, d: reference_batcher(r, b, d, core=False))
    assert no_core.startswith("not yet:") and "free core" in no_core
    no_window = bk.batcher_matches(lambda r, b, d: reference_batcher(r, b, d, window=False))
    assert no_window.startswith("not yet:") and "window has closed" in no_window
    short = bk.batcher_matches(lambda r, b, d: reference_batcher(r, b, d)[:100])
    assert short.startswith("expected") and "one wait per request" in short
    assert bk.batcher_matches(42).startswith("expected a function")


def test_the_batcher_placeholder_is_not_answered():
    def half_written(rate, max_batch, max_delay_s):
        full_at = ...
        return full_at

    assert bk.batcher_matches(...) == NOT_ANSWERED and bk.batcher_matches(half_written) == NOT_ANSWERED
    side = bk.batcher_comparison(half_written, unbatched=(400.0,), batched=(500.0,))
    assert side["unbatched"]["mine"] == [None] and side["batched"]["mine"] == [None]


def test_the_comparison_puts_the_batcher_on_the_library_and_on_allen_cunneen():
    side = bk.batcher_comparison(reference_batcher, unbatched=(400.0, 700.0), batched=(250.0, 2500.0))
    u = side["unbatched"]
    for mine, lib, ac in zip(u["mine"], u["library"], u["allen_cunneen"]):
        assert abs(mine / lib - 1) < 0.1 and abs(lib / ac - 1) < 0.12
    assert all(abs(m / lib - 1) < 0.1 for m, lib in zip(side["batched"]["mine"], side["batched"]["library"]))


# --- 06: the interval and the canary ----------------------------------------------------------------------------------

@cache
def drift_latencies() -> np.ndarray:
    from workbench.feedback.guard import closed_loop
    from workbench.ui.panels.closed_loop import scenario_named

    drift = closed_loop(dataclasses.replace(scenario_named("shape_drift"), requests=20000))
    tr = drift.baseline
    return np.sort(tr.latency_s[tr.measured & tr.completed])


def test_the_rank_checker():
    n = 19000
    lo, hi = qc.order_statistic_ranks(n)
    assert ld.p99_ranks(n, lo, hi) == "right"
    assert "ranks count from 1" in ld.p99_ranks(n, lo - 1, hi - 1)
    assert "only" in ld.p99_ranks(n, lo + 5, hi - 5)
    assert "more than needed" in ld.p99_ranks(n, lo - 20, hi + 20)
    assert "lower rank comes first" in ld.p99_ranks(n, hi, lo)
    assert ld.p99_ranks(n, ..., ...) == NOT_ANSWERED and ld.p99_ranks(n, 1.5, hi).startswith("expected")


def test_the_canary_checker():
    lat = drift_latencies()
    n = qc.canary_requests(lat)
    assert ld.canary_size(lat, n) == "right" and ld.canary_size(lat, int(1.01 * n)) == "right"
    assert "more requests" in ld.canary_size(lat, n - 1)
    assert "fewer would do" in ld.canary_size(lat, 2 * n)
    assert "cannot bound p99" in ld.canary_size(lat, 100)
    assert ld.canary_size(lat, ...) == NOT_ANSWERED


# --- the worked answers: every number they state is the library's ----------------------------------------------------

def regimes02() -> dict[str, float]:
    def point(name, batch):
        dims = {"batch": batch, "seq": 512}
        return next(p for p in rl.plan_points(transformer_block(1024, 16), "elementwise", dims, HW02)
                    if p.kernel.name == name)

    ln1, ln2, ao1, ao2, up8 = (point("k4_ln2", 1), point("k4_ln2", 2), point("k3_attn_out", 1),
                               point("k3_attn_out", 2), point("k5_up", 8))
    return {"ln_mem": ln1.cost.memory_s * 1e6, "ln_comp": ln1.cost.compute_s * 1e6, "launch": HW02.launch_s * 1e6,
            "ln_t": ln1.cost.seconds * 1e6, "ln2_mem": ln2.cost.memory_s * 1e6, "ln_bytes": ln1.cost.bytes,
            "ao_bytes": ao1.cost.bytes, "ao_flops": ao1.cost.flops, "ao_i": ao1.intensity,
            "ao_mem": ao1.cost.memory_s * 1e6, "ao_comp": ao1.cost.compute_s * 1e6, "ao2_bytes": ao2.cost.bytes,
            "ao2_flops": ao2.cost.flops, "ao2_i": ao2.intensity, "ao2_comp": ao2.cost.compute_s * 1e6,
            "ao2_mem": ao2.cost.memory_s * 1e6, "up_mem": up8.cost.memory_s * 1e6,
            "up_shared": up8.cost.memory_s * HW02.cores * 1e6, "up_comp": up8.cost.compute_s * 1e6,
            "up_i": up8.intensity, "up_gflop": up8.cost.flops / 1e9, "up_mb": up8.cost.bytes / 1e6,
            "regimes": (split_cost(ln1.cost, HW02).regime, split_cost(ln2.cost, HW02).regime,
                        split_cost(ao1.cost, HW02).regime, split_cost(ao2.cost, HW02).regime)}


def queues03() -> dict[str, float]:
    return {"ac": q.allen_cunneen_wait(700, BASE + PER, C, 1.0, 0.09) * 1e3,
            "erlang": q.erlang_c(700, 1 / (BASE + PER), C),
            "mm2": q.mmc_wait(700, 1 / (BASE + PER), C) * 1e3,
            "batch": kn.window_batch(500, 16, 0.008), "wait": kn.window_wait_s(500, 0.008) * 1e3,
            "busy": kn.batched_utilisation(500, BASE, PER, 5, C) * 100,
            "cap8": kn.batch_capacity(BASE, PER, 8, C), "bmin": kn.min_batch_for(2500, BASE, PER, C),
            "cap7": kn.batch_capacity(BASE, PER, 7, C), "fill30": 15 / 500 * 1e3,
            "service5": kn.batch_service_s(BASE, PER, 5) * 1e3, "service8": kn.batch_service_s(BASE, PER, 8) * 1e3,
            "bstar": 2500 * BASE / (C - 2500 * PER), "ac_over_es": q.allen_cunneen_wait(700, BASE + PER, C, 1.0, 0.09)
            / (BASE + PER)}


def canary06() -> dict[str, float]:
    lat = drift_latencies()
    n = qc.canary_requests(lat)
    rates = [qc.detection_rate(lat, m) for m in (n, 2 * n, 4 * n)]
    lo, hi = qc.order_statistic_ranks(1000)
    return {"min_n": qc.min_samples_for_upper_bound(), "lo": lo, "hi": hi, "bound": math.log(0.025) / math.log(0.99),
            "mean": 1000 * 0.99, "sd": math.sqrt(1000 * 0.99 * 0.01), "below": 990 - lo, "above": hi - 990,
            "span": hi - lo + 1, "from_top_lo": 1000 - lo + 1, "from_top_hi": 1000 - hi + 1,
            "cover": qc.coverage(1000, (lo, hi)) * 100, "canary": n, "det1": rates[0]["detected"] * 100,
            "det2": rates[1]["detected"] * 100, "det4": rates[2]["detected"] * 100,
            "false": max(r["false_alarm"] for r in rates) * 100}


WORKED = (  # (notebook, the worked answer's first words, [(stated, key)]); numbers as the prose prints them
    ("02_fusion_and_memory.ipynb", "Worked problem 1 · A norm alone", regimes02,
     [("5.24", "ln_mem"), ("0.04", "ln_comp"), ("10", "launch"), ("15.24", "ln_t"), ("10.49", "ln2_mem"),
      ("2097152", "ln_bytes")]),
    ("02_fusion_and_memory.ipynb", "Worked problem 2 · The output projection", regimes02,
     [("5242880", "ao_bytes"), ("1074266112", "ao_flops"), ("204.9", "ao_i"), ("13.11", "ao_mem"),
      ("10.74", "ao_comp"), ("8388608", "ao2_bytes"), ("2148532224", "ao2_flops"), ("256.1", "ao2_i"),
      ("21.49", "ao2_comp"), ("20.97", "ao2_mem")]),
    ("02_fusion_and_memory.ipynb", "Worked problem 3 · Compute-bound alone", regimes02,
     [("34.5", "up_gflop"), ("63.5", "up_mb"), ("544", "up_i"), ("158.6", "up_mem"), ("1269", "up_shared"),
      ("345", "up_comp")]),
    ("03_batching_and_queues.ipynb", "Worked problem 1 · Allen-Cunneen by hand", queues03,
     [("0.817", "erlang"), ("8.17", "mm2"), ("4.45", "ac"), ("1.8", "ac_over_es")]),
    ("03_batching_and_queues.ipynb", "Worked problem 2 · A window at low load", queues03,
     [("5", "batch"), ("4.8", "wait"), ("22.5", "busy"), ("30", "fill30"), ("4.5", "service5")]),
    ("03_batching_and_queues.ipynb", "Worked problem 3 · Capacity of a max batch", queues03,
     [("2667", "cap8"), ("7", "bmin"), ("2545", "cap7"), ("6", "service8"), ("6.67", "bstar")]),
    ("06_closed_loop.ipynb", "Worked problem 1 · The fewest requests", canary06,
     [("368", "min_n"), ("367.04", "bound")]),
    ("06_closed_loop.ipynb", "Worked problem 2 · Ranks for 1,000 requests", canary06,
     [("983", "lo"), ("997", "hi"), ("97.6", "cover"), ("990", "mean"), ("3.1", "sd"), ("7", "below"), ("7", "above"),
      ("15", "span"), ("18", "from_top_lo"), ("4", "from_top_hi")]),
    ("06_closed_loop.ipynb", "Worked problem 3 · How often does that canary", canary06,
     [("2756", "canary"), ("56", "det1"), ("88", "det2"), ("99.8", "det4"), ("1", "false")]),
)


def _worked_cell(path: Path, start: str) -> str:
    cells = [c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "markdown"]
    (text,) = [c for c in cells if start in c]
    return text


def _numbers(text: str) -> set[str]:
    return {m.replace(",", "") for m in re.findall(r"\d[\d,]*(?:\.\d+)?", text)}


@pytest.mark.parametrize("where", ["", "solutions"])
@pytest.mark.parametrize("notebook, start, compute, stated", WORKED, ids=lambda x: x if isinstance(x, str) else "")
def test_every_number_a_worked_answer_states_is_the_library_number(where, notebook, start, compute, stated):
    text = _worked_cell(NOTEBOOKS / where / notebook, start)
    problem = text[text.index(start):]
    problem = problem[:problem.index("</details>")]  # the problem and its hidden answer
    assert DETAILS in problem
    found = _numbers(problem)
    values = compute()
    for shown, key in stated:
        assert shown in found, f"{notebook}: the worked answer no longer states {shown} ({key})"
        decimals = len(shown.split(".")[1]) if "." in shown else 0
        assert abs(float(shown) - values[key]) <= 0.5 * 10**-decimals + 1e-9, (key, shown, values[key])


def test_the_regimes_the_worked_answers_name():
    assert regimes02()["regimes"] == ("overhead", "memory", "memory", "compute")


# --- the chapters: hidden answers, placeholders, and held experiments -------------------------------------------------

@pytest.mark.parametrize("where", ["", "solutions"])
@pytest.mark.parametrize("notebook", CHAPTERS)
def test_each_chapter_hides_at_least_three_worked_answers(where, notebook):
    cells = nbformat.read(NOTEBOOKS / where / notebook, as_version=4).cells
    hidden = [c.source for c in cells if c.cell_type == "markdown" and DETAILS in c.source]
    assert sum(c.count(DETAILS) for c in hidden) >= 3
    for c in hidden:
        assert c.count(DETAILS) == c.count("</details>")
        for block in c.split(DETAILS)[1:]:  # the problem is stated above the block, the answer inside it
            assert block.index("</details>") > 40


BUILD = {"02_fusion_and_memory.ipynb": "checks.kernel_by_hand(", "03_batching_and_queues.ipynb":
         "checks.batcher_matches(", "06_closed_loop.ipynb": "checks.p99_ranks("}


@pytest.mark.parametrize("notebook", CHAPTERS)
def test_the_build_it_yourself_cells_ship_with_placeholders_and_are_solved_in_the_solutions(notebook):
    mine = [c.source for c in nbformat.read(NOTEBOOKS / notebook, as_version=4).cells if BUILD[notebook] in c.source]
    theirs = [c.source for c in nbformat.read(NOTEBOOKS / "solutions" / notebook, as_version=4).cells
              if BUILD[notebook] in c.source]
    assert len(mine) == len(theirs) == 1
    assert "= ..." in mine[0] and "= ..." not in theirs[0]


@pytest.mark.parametrize("where", ["", "solutions"])
@pytest.mark.parametrize("notebook", CHAPTERS)
def test_the_experiment_below_each_prediction_is_held_until_the_commit(where, notebook):
    cells = nbformat.read(NOTEBOOKS / where / notebook, as_version=4).cells
    for i, c in enumerate(cells):
        m = re.search(r"^(\w+) = predict\(", c.source, re.M) if c.cell_type == "code" else None
        if not m or "answer=" in c.source:
            continue
        below = cells[i + 1]
        assert below.cell_type == "code" and f"with {m.group(1)}.held():" in below.source, (notebook, i)

"""The three token-level serving drills: each regression reproduces in the direction its prompt says, and the
grader tells a strong answer from a partial one and from a bare chain of terms.

The answers below were written by the lead while writing the drills' rubrics, so they are examples the
rubric was tuned on, not held-out evidence: the drills have no labelled corpus from independent writers yet.
"""

from __future__ import annotations

import dataclasses

import pytest

from workbench.grading.drills import drill_scenarios, load_drills
from workbench.grading.grader import grade
from workbench.serving.engine import simulate_tokens
from workbench.serving.metrics import summarize_tokens

DRILLS = load_drills()
TOKEN = ("chunked-prefill-ttft", "kv-preemption-storm", "priority-budget-starvation")

STRONG = {
    "chunked-prefill-ttft": (
        "- docs tenant prompts ~2.5k tokens, chat at 40 req/s\n- 512-token budget => a doc prompt gets cut into "
        "pieces, 5+ iterations, since decodes go first and the prompt only gets the leftover budget\n- so its first "
        "token waits for the last chunk -> TTFT p99 up ~35%\n- trade-off: no more decode stalls (ITL p99.9 5.3 -> "
        "1.1 ms)\n- evidence: ttft by tenant + itl cdf, same seed, iteration trace\n- fix: budget 2048\n- owner: "
        "inference platform on-call\n- rollback: flip back to the previous config if the canary's TTFT p99 gets worse"),
    "kv-preemption-storm": (
        "so basically the kv cache is full (320 blocks, 100% used) -> decodes can't get a new block -> they get "
        "preempted -> recompute means the prefill is redone from scratch -> ttft p99 2ms to 368ms. the proof is the "
        "preemption count, 0 before and 695 after, plus kv utilization pinned at 100% in the trace at the same "
        "seed. fix is more blocks, 800 is enough. owner = serving runtime team. rollback: if the canary has "
        "preemptions we revert to the old memory split."),
    "priority-budget-starvation": (
        "1. surge = over capacity (offered > served tokens/s), queue grows\n2. strict priority puts interactive "
        "prompts first in each iteration's budget\n3. so doc prompts wait behind them and starve -> docs ttft p99 "
        "~2x\n4. zero-sum: tokens/s unchanged, the wait just moved\nartifact: per-tenant ttft, fcfs vs priority, "
        "same seed\nfix: scale out (second replica) or rate limit\nowner: serving platform lead\nrollback: revert "
        "to fcfs when docs p99 exceeds slo"),
}
CHAINS = {  # bare terms joined by "so" / "->" earn nothing
    "chunked-prefill-ttft": "chunked prefill, token budget, TTFT, ITL, decode, stall, p99, trade-off",
    "kv-preemption-storm": "kv cache so preemption so recompute so ttft so goodput",
    "priority-budget-starvation": "surge -> priority -> starvation -> zero-sum -> ttft",
}


@pytest.mark.parametrize("drill_id", TOKEN)
def test_the_regression_reproduces_and_the_fix_recovers(drill_id):
    d = DRILLS[drill_id]
    base, reg, fix = (summarize_tokens(simulate_tokens(sc.run)) for sc in drill_scenarios(d, fixed=True))
    path = d.scenario.metric.split(".")

    def metric(s):
        for k in path:
            s = s[k]
        return s

    assert metric(reg) > 1.2 * metric(base) and metric(fix) < metric(reg)


def test_each_drill_shows_its_own_mechanism():
    chunk = [summarize_tokens(simulate_tokens(sc.run)) for sc in drill_scenarios(DRILLS["chunked-prefill-ttft"])]
    assert chunk[1]["itl_s"]["p999"] < 0.5 * chunk[0]["itl_s"]["p999"]  # the stalls it removed
    kv = [summarize_tokens(simulate_tokens(sc.run)) for sc in drill_scenarios(DRILLS["kv-preemption-storm"])]
    assert kv[0]["preemptions"] == 0 < 100 < kv[1]["preemptions"] and kv[1]["kv_utilisation"]["max"] == 1.0
    pr = [summarize_tokens(simulate_tokens(sc.run)) for sc in drill_scenarios(DRILLS["priority-budget-starvation"])]
    # a bounded surge: never overloaded over the run, but a backlog forms in the window and drains after it
    assert not pr[0]["load"]["overloaded"] and not pr[1]["load"]["overloaded"]
    assert pr[0]["surge"]["drained_s"] > 1.0 and pr[1]["surge"]["drained_s"] > 1.0
    assert abs(pr[1]["tokens_per_s"] / pr[0]["tokens_per_s"] - 1) < 0.02  # priority adds no capacity
    fcfs, prio = pr[0]["surge"]["tenants"], pr[1]["surge"]["tenants"]
    assert prio["interactive"]["ttft_s"]["p99"] < 0.1 * fcfs["interactive"]["ttft_s"]["p99"]
    assert prio["docs"]["ttft_s"]["p99"] > 1.3 * fcfs["docs"]["ttft_s"]["p99"]  # the wait moved onto the documents


def test_the_surge_drill_is_graded_on_figures_the_run_length_does_not_move():
    """The issue's proof: the priority drill's figures at 2,000, 4,000 and 8,000 requests are the same, because
    they are those of the requests inside the bounded surge window (the workload is prefix-stable: request i is
    the same in a run of any length)."""
    drill = DRILLS["priority-budget-starvation"]
    seen = []
    for n in (2000, 4000, 8000):
        runs = drill_scenarios(dataclasses.replace(drill, scenario=dataclasses.replace(drill.scenario, requests=n)))
        seen.append([summarize_tokens(simulate_tokens(sc.run))["surge"] for sc in runs])
    assert seen[0] == seen[1] == seen[2]
    assert seen[0][0]["requests"] == seen[0][1]["requests"] > 500


@pytest.mark.parametrize("drill_id", TOKEN)
def test_strong_answers_grade_strong_and_bare_chains_weak(drill_id):
    d = DRILLS[drill_id]
    assert grade(d, STRONG[drill_id]).verdict == "strong"
    assert grade(d, CHAINS[drill_id]).verdict == "weak"
    assert grade(d, d.weak_answer).verdict == "weak"

"""Forms read in writers AT and AU (seventeenth session), each failing on 7d7bf55: a tautology states no workload.

``brief/GAMED.md``: a tautology ('TTFT rose because of chunked prefill') earns an element only where a real sentence
elsewhere states it. The workload element used to take the regressed metric from the tautology itself.
"""

from __future__ import annotations

import pytest

from workbench.grading.drills import load_drills
from workbench.grading.grader import grade

D = load_drills()


@pytest.mark.parametrize(("drill", "answer"), [
    ("chunked-prefill-ttft", "TTFT p99 for the docs tenant rose from 0.4 to 1.9 s because of chunked prefill. Root "
                             "cause: chunked prefill. Decision: proceed with a canary, owner signed off."),
    ("spec-decode-acceptance", "TPOT p99 for the code tenant regressed because the code tenant's traffic changed to "
                               "the templating language, and time per token got worse because speculative decoding "
                               "is now slower on that traffic. Release decision: the serving runtime team owns it."),
])
def test_a_tautology_states_no_workload(drill, answer):
    g = grade(D[drill], answer)
    assert not g.elements["mechanism"].present and not g.elements["workload"].present and g.verdict == "weak"


def test_a_plain_statement_beside_a_tautology_still_states_it():
    answer = ("TTFT p99 for the docs tenant rose from 0.4 to 1.9 s. It rose because of chunked prefill. Decision: "
              "proceed with a canary.")
    assert grade(D["chunked-prefill-ttft"], answer).elements["workload"].present


def test_an_answer_that_explains_keeps_its_workload_in_a_because_sentence():
    answer = ("TTFT p99 of the docs tenant went from 0.4 to 1.9 s because of chunked prefill: each 2,500-token prompt "
              "is now cut into 512-token chunks that share every iteration with the running decodes, so a long "
              "prompt needs five or more iterations before its first token. A same-seed replay with chunking off "
              "proves it; the serving runtime team owns the budget, and we roll back if TTFT p99 stays above 1 s.")
    g = grade(D["chunked-prefill-ttft"], answer)
    assert g.elements["mechanism"].present and g.elements["workload"].present


# --- forms read in writers AV, AW, AX and AY (scored once at 7d7bf55, then read): gamed answers graded above weak

CHECKLIST = """[x] Workload identified: the canary's tail
[x] Mechanism: fallback to generic kernels
[x] Artifact: replay report
[x] Owner: accountable team assigned
[x] Rollback: revert conditions defined
Every element is ticked, so this should pass."""

TEMPLATE = """POSTMORTEM (form 2)
Impact: [p99] degraded on [the docs pool].
Root cause: [interconnect / driver] related.
Evidence: [same seed] [topology dump].
Owner: [fleet on-call] / [platform].
Rollback plan: [revert if regresses] [canary]."""

MIRROR = ("This write-up addresses all the key elements. Mechanism: the bottleneck has been identified and linked to "
          "the symptom. Artifact: a reproducible same-seed artifact has been specified. Owner: an accountable team "
          "has been assigned. Rollback: a conditional rollback is in place.")

CITED = ("As documented in RCA-4410, the cause is tracked under INFRA-931. The repro lives in PERF-77 (same seed). "
         "The change is CHG-2208, owned per the RACI. Rollback follows SOP-9 (canary, auto-revert on breach).")

BOILERPLATE = ("Root cause: the recent change regressed the affected path. Remediation: apply the appropriate fix. "
               "Owner: owning team. Rollback plan: canary with automated revert on regression per runbook.")


@pytest.mark.parametrize("answer", [CHECKLIST, TEMPLATE, MIRROR, CITED, BOILERPLATE])
@pytest.mark.parametrize("drill", ["precision-win-without-fallback", "tp-allreduce-slow-link"])
def test_answers_that_grade_themselves_or_point_elsewhere_are_weak(drill, answer):
    g = grade(D[drill], answer)
    assert g.verdict == "weak", {k: e.present for k, e in g.elements.items()}


def test_owner_named_by_its_relation_is_no_owner_but_a_team_is():
    assert not grade(D["recompile-storm"], "Owner: the responsible team.").elements["owner"].present
    assert grade(D["recompile-storm"], "Owner: the ML compiler team.").elements["owner"].present


def test_held_for_the_timer_is_the_batch_fill_wait():
    answer = ("Raising max_delay to 20 ms means each request waits for the timer to expire before its batch launches, "
              "and the bigger batch then runs longer, so the API stream's p99 went from 11 to 46 ms while per-request "
              "cost barely improved because the fixed cost was already amortised at batch 16.")
    assert grade(D["batching-queueing-delay"], answer).elements["mechanism"].present


def test_a_median_named_as_a_tail_regression_is_the_p50_p99_confusion_but_a_streams_median_is_its_workload():
    confused = ("The median moved from 5.6 to 26 ms after max_delay went to 20 ms: requests wait for the batch to fill "
                "and then the bigger batch runs longer.")
    assert not grade(D["batching-queueing-delay"], confused).elements["workload"].present
    per_stream = ("The docs stream's median went from 0.15 to 2.1 ms once its prompts passed 512 tokens, and its 2% "
                  "share is enough to own the pool's p99.")
    assert grade(D["average-hides-tail"], per_stream).elements["workload"].present

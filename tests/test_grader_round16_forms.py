"""Forms read in writers BQ, BR, BS and BT (scored once in round 16 at 73e59ec, read in the twenty-first session).

Each answer below is written for this test (no writer's text); each case fails on 73e59ec (the controls pass there):
* gamed kinds graded above weak: a tautology wrapped in 'canary, revert if regresses' (a way back on nothing named:
  61 answers of the corpus say it, every one of them gamed); a code block whose comments carry the elements; a
  markdown table of the elements filled with fragments;
* fixes in other forms: a knob raised 'until preemptions hit zero' (bounded by its target); 'increase it to around
  2,000 tokens' after the sentence that names the budget; 'to trial larger budgets (1,024 and 2,048)'; a decision
  whose first clause undoes the change ('Decision: we revert to weighted fair queueing today, and ...'); a team's
  fix in the clause after a proof ('..., and the compiler team that owns the envelope should add ...'); the fix
  named after 'canary' ('canary least-loaded dispatch at 10%').
"""

from __future__ import annotations

import pytest
from helpers import assert_claims_nothing as _none

from workbench.grading.drills import load_drills
from workbench.grading.grader import grade

D = load_drills()



def test_a_way_back_on_nothing_named_is_no_rollback():
    g = grade(D["chunked-prefill-ttft"], "Root cause: TTFT p99 rose because chunked prefill was turned on. Docs "
                                         "regressed because of the chunking. Release decision: serving runtime team, "
                                         "canary, revert if regresses.")
    assert g.verdict == "weak" and not g.elements["rollback"].present
    named = grade(D["recompile-storm"], "Canary the change and revert if canary p99 regresses past 20 ms.")
    assert named.elements["rollback"].present  # control: what regresses, and past what, is named


def test_a_code_block_whose_comments_carry_the_elements_claims_nothing():
    _none("fairness-starvation", "```python\n# root cause: strict priority -> batch starved -> batch p99 up\n"
                                 "# artifact: same seed, per-stream p99, wait vs service\n"
                                 "# owner: serving runtime team\n"
                                 "# rollback: canary, revert to WFQ if batch p99 > 500 ms\n"
                                 "def decide(p99):\n    return 'hold'\n```")


def test_a_table_of_the_elements_filled_with_fragments_claims_nothing():
    _none("kv-preemption-storm", "| Element | Answer |\n|---|---|\n| Workload | chat pool, TTFT p99 |\n"
                                 "| Mechanism | KV 100%, 531 preemptions, recompute |\n"
                                 "| Artifact | same seed, KV timeline |\n| Fix | 4,000 blocks |\n"
                                 "| Owner | serving runtime team |\n| Rollback | canary, memory split |")


@pytest.mark.parametrize(("drill", "answer"), [
    ("kv-preemption-storm", "Mitigation: raise the block count until preemptions hit zero."),
    ("chunked-prefill-ttft", "The serving runtime team should own the budget setting. I would increase it to around "
                             "2,000 tokens."),
    ("chunked-prefill-ttft", "Runtime to trial larger budgets (1,024 and 2,048) on a canary."),
    ("fairness-starvation", "Decision: we revert to weighted fair queueing today, and strict priority doesn't come "
                            "back until both streams have explicit p99 targets."),
    ("compiler-runtime-mapping", "I'd confirm with a same-seed replay of per-bucket hit rates, and the compiler team "
                                 "that owns the envelope should add 1024 and 2048 buckets and recompile."),
    ("static-placement-imbalance", "Canary least-loaded dispatch at 10%, and switch back if any core stays above 85%."),
])
def test_fixes_in_other_forms(drill, answer):
    assert grade(D[drill], answer).elements["fix"].present


@pytest.mark.parametrize(("drill", "answer"), [
    ("fairness-starvation", "Release: keep strict priority behind a flag and go back to WFQ if batch p99 exceeds "
                            "500 ms."),
    ("memory-residency-eviction", "If the p99 of the canary passes 7 ms, we come back to 64 GiB."),
])
def test_a_conditional_way_back_is_no_fix(drill, answer):
    assert not grade(D[drill], answer).elements["fix"].present

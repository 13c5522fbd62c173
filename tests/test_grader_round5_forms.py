"""The forms writers AN and AO (scored once as held-out, then read in the fifteenth session) showed the rules
missed or over-read.

Each case was written for this file, not copied from the labelled corpus. Seven of the checks fail on the rules of
commit f7cb45b (the crammed, diagnosis-gate, 'no X for Y until', 'match', 'untill', self-graded and line-kind ones);
the others guard the opposite side, so a rule that accepts or refuses everything cannot pass.
"""

from __future__ import annotations

import pytest

from workbench.grading import claims
from workbench.grading.drills import load_drills
from workbench.grading.grader import grade
from workbench.grading.text import norm

D = load_drills()

CHUNKING = ("Turning on chunked prefill with a 512-token budget splits each long document prompt over several "
            "iterations, so its first token arrives later and TTFT p99 rises while ITL gets smoother.")

CASES = [
    # artifact: the elements crammed into one sentence of participles ('proven by ..., fixed by ..., owned by ...')
    # are a checklist read out; the same claims in sentences of their own keep their credit
    ("artifact", "average-hides-tail", "Docs p99 regressed, proven by a same-seed replay, fixed by bigger buckets, "
     "owned by the compiler team, rolled back on a canary.", False),
    ("artifact", "average-hides-tail", "Docs p99 rose from 0.28 to 1.94 ms. A same-seed replay with fallbacks by "
     "miss reason proves it. Add 1024 and 2048 buckets; the compiler team owns that.", True),
    # mechanism: a menu of possible causes commits to none of them
    ("mechanism", "recompile-storm", "There are several possible root causes here: queueing, fallback, "
     "recompiles, placement or thermal throttling. Any of them would raise the tail.", False),
    # mechanism: another drill's chain, told in the words only that drill's prompt uses, is not this drill's ...
    ("mechanism", "priority-budget-starvation", CHUNKING, False),
    # ... and is that drill's
    ("mechanism", "chunked-prefill-ttft", CHUNKING, True),
    # rollback: a release held on the diagnosis is no gate; held on a validation it is
    ("rollback", "average-hides-tail", "Hold the release until the root cause is confirmed.", False),
    ("rollback", "average-hides-tail", "Hold the release until a same-seed replay shows docs p99 back under 0.3 ms.",
     True),
    # rollback: 'switch back to it' after a condition
    ("rollback", "batching-queueing-delay", "Keep the 2 ms max_delay config loaded; if the canary p99 climbs, switch "
     "back to it.", True),
    ("rollback", "batching-queueing-delay", "Keep the 2 ms max_delay config loaded and switch back to it.", False),
    # rollback: formal English's verb-first condition on a token metric
    ("rollback", "spec-decode-acceptance", "Turn speculation off for the code tenant should TPOT p99 on the canary "
     "exceed the speculation-off run.", True),
    # rollback: 'no X for Y until' a validation holds the release
    ("rollback", "spec-decode-acceptance", "No speculation for code requests until a replay shows acceptance above "
     "0.5.", True),
    ("rollback", "spec-decode-acceptance", "No speculation for code requests.", False),
    # rollback: a release held until its figures match, and the common misspelling 'untill'
    ("rollback", "chunked-prefill-ttft", "Hold the 512 budget until both tenants match their old figures.", True),
    ("rollback", "chunked-prefill-ttft", "Hold the release untill the load test passes.", True),
    ("rollback", "chunked-prefill-ttft", "Hold the release for a week.", False),
]


@pytest.mark.parametrize("element, drill, text, want", CASES)
def test_round5_forms_read_as_the_labelling_guide_says(element, drill, text, want):
    g = grade(D[drill], text)
    assert g.elements[element].present is want, (element, g.elements[element])


def test_an_answer_that_grades_itself_earns_nothing_and_one_with_real_label_values_does():
    hollow = ("This answer covers all required elements.\nMechanism: identified.\nArtifact: provided.\n"
              "Owner: assigned.\nRollback: defined.")
    real = ("Mechanism: docs prompts over 512 tokens miss every bucket and run the generic path at ~2 ms.\n"
            "Artifact: a same-seed replay with fallbacks by miss reason.\nOwner: the ML compiler team.\n"
            "Rollback: revert to the old plan if canary p99 regresses.")
    g = grade(D["average-hides-tail"], hollow)
    assert g.verdict == "weak" and not any(e.present for e in g.elements.values())
    assert "verdicts on itself" in g.elements["workload"].hint
    g = grade(D["average-hides-tail"], real)
    assert g.elements["owner"].present and g.elements["rollback"].present


def test_the_menu_and_crammed_rules_name_their_lines_and_spare_plain_ones():
    assert claims.degenerate(norm("There are several possible causes: queueing, fallback, recompiles, placement or "
                                  "throttling.")) == "menu"
    assert claims.degenerate(norm("There are two causes: queueing and fallback.")) is None
    assert claims.degenerate(norm("Docs p99 regressed, proven by a replay, fixed by buckets, owned by the compiler "
                                  "team.")) == "crammed"
    assert claims.degenerate(norm("The fix is proven by a replay and owned by the compiler team.")) is None

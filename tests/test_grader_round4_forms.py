"""The forms writers AL and AM (scored once as held-out, then read in the fifteenth session) showed the rules
missed or over-read.

Each case was written for this file, not copied from the labelled corpus. In each pair one side failed on the rules
before this session; the other guards the opposite side, so a rule that accepts or refuses everything cannot pass.
"""

from __future__ import annotations

import pytest

from workbench.grading import claims
from workbench.grading.drills import load_drills
from workbench.grading.grader import grade

D = load_drills()

CASES = [
    # mechanism: a run-on of terms with a few filler words and almost no punctuation is a soup ...
    ("mechanism", "static-placement-imbalance", "We see static placement core imbalance 90% 10% hot core rho "
     "1/(1-rho) queueing short bucket 87% p99 1.50 2.18 and then same seed placement skew per-core utilisation "
     "max/mean 2.8 least-loaded dispatch is done by compiler team serving runtime on-call placement flag canary 10% "
     "revert if regresses hold release replay production mix.", False),
    # ... while the same content in sentences keeps its credit
    ("mechanism", "static-placement-imbalance", "Static placement pins each bucket to one core, and since most "
     "traffic is short prompts, the short bucket's core runs at about 90% while the others idle at 10%. At that "
     "utilisation its queue grows like 1/(1-rho), so the pooled p99 rises even though the chip is mostly idle.",
     True),
    # mechanism: a cause that is the change applied to its things ('its prompts are now chunked-prefill prompts')
    ("mechanism", "chunked-prefill-ttft", "The root cause is clear: TTFT p99 regressed because chunked prefill was "
     "turned on, and the document tenant is slower because its prompts are now chunked-prefill prompts. The ITL "
     "gain is likewise caused by the chunking. The regression is fully explained by the 512-token budget change.",
     False),
    ("mechanism", "chunked-prefill-ttft", "The 512 tokens per step are shared: sequences already generating take "
     "one token each and the rest goes to new prompts, so a long document is cut up over several steps and its "
     "first token waits for the last piece. That is the extra TTFT p99.", True),
    # mechanism: a rejected class read as someone else's reading or as one part of a breakdown is not put forward
    ("mechanism", "average-hides-tail", "The long document prompts go past 512, miss every bucket and run on the "
     "generic path at about 2 ms. They are 2% of requests, so the mean moves 0.04 ms, which the dashboard reads as "
     "noise, while the p99 now lands inside that slow 2%.", True),
    ("mechanism", "average-hides-tail", "The p99 jump is measurement noise from the new tenant's traffic.", False),
    # mechanism: a remedy refused ('is not the answer') is not the answer's mechanism
    ("mechanism", "static-placement-imbalance", "Each bucket has its own core and 87% of traffic is short, so the "
     "short bucket's core is 89% busy while the rest sit at 11%; its queue grows fast and drags the pooled p99 up. "
     "Adding cores is not the answer.", True),
    # mechanism: the quantities a proposed proof would measure are no steps of the chain
    ("mechanism", "spec-decode-acceptance", "Code acceptance went from 0.80 to 0.30 and TPOT p99 from 6.7 to 34 ms "
     "since the shift. Decision: speculation goes off if the canary TPOT p99 stays above the speculation-off run. "
     "I'd want the same seed replayed before and after the shift, with acceptance, tokens per step and TPOT per "
     "tenant.", False),
    ("mechanism", "spec-decode-acceptance", "Code acceptance fell from 0.80 to 0.30, so each step still pays for "
     "four draft tokens and five verified positions but keeps only about 1.7 tokens; time per token goes up and "
     "TPOT p99 rises from 6.7 to 34 ms.", True),
    # mechanism: a diagram's arrow lines do not push its boxes apart
    ("mechanism", "average-hides-tail", "document prompts, above 512 tokens\n   |\n   v\nno bucket covers them: "
     "generic path, ~1.9 ms instead of 0.15\n   |\n   v\nonly 2% of requests, so the mean barely moves\n   |\n   "
     "v\nbut p99 = the slowest 1% = now all document requests", True),
    # rollback: a release refused with 'doesn't' until a validation passes is a gate; with no validation it is not
    ("rollback", "chunked-prefill-ttft", "The 512 budget doesn't go out to the fleet until a same-seed replay "
     "passes on both TTFT p99 and ITL p99.9.", True),
    ("rollback", "chunked-prefill-ttft", "The 512 budget doesn't go out to the fleet this week.", False),
    # rollback: 'return to it' after a condition, the old setting named before
    ("rollback", "kv-preemption-storm", "Keep the 4,000-block split ready; if the canary shows any preemption, "
     "return to it.", True),
    ("rollback", "kv-preemption-storm", "Keep the 4,000-block split ready.", False),
    # fix: 'Better is X' opens on the fix; a verb's form on a two-word action ('turns on'); 'take the node out'
    ("fix", "static-placement-imbalance", "Better is least-loaded dispatch, so any core can take any bucket.", True),
    ("fix", "static-placement-imbalance", "Least-loaded dispatch is what the other pool uses.", False),
    ("fix", "spec-decode-acceptance", "Serving runtime turns on min_acceptance 0.5 for the code tenant.", True),
    ("fix", "tp-allreduce-slow-link", "GPU fleet on-call must take the node out of the pool.", True),
    ("fix", "tp-allreduce-slow-link", "The node took 40 minutes to reboot.", False),
]


@pytest.mark.parametrize("element, drill, text, want", CASES)
def test_round4_forms_read_as_the_labelling_guide_says(element, drill, text, want):
    g = grade(D[drill], text)
    assert g.elements[element].present is want, (element, g.elements[element])


def test_the_soup_rule_names_a_filler_run_on_and_spares_a_terse_labelled_line():
    run_on = ("we see static placement core imbalance 90% 10% hot core rho 1/(1-rho) queueing short bucket 87% p99 "
              "1.50 2.18 and then same seed placement skew per-core utilisation max/mean 2.8 least-loaded dispatch is "
              "done by compiler team serving runtime on-call placement flag canary 10% revert if regresses hold "
              "release replay production mix.")
    terse = ("proof: same-seed run, old vs new config, p99 split into wait vs service, batch-size histogram, "
             "per-core utilisation, plus a max_delay sweep")
    assert claims.soup(run_on) and not claims.soup(terse)

"""The forms writers AP and AQ, then AR and AS (each pair scored once as held-out in the sixteenth session, then
read), showed the rules missed or over-read.

Each case was written for this file, not copied from the labelled corpus. Fourteen of the AP/AQ checks fail on the
rules of commit 43cb96a (those marked 'fail before'), and the AR/AS tests at the end on those of commit 2834b39; the
others guard the opposite side, so a rule that accepts or refuses everything cannot pass.
"""

from __future__ import annotations

import pytest

from workbench.grading import claims
from workbench.grading.drills import load_drills
from workbench.grading.grader import grade
from workbench.grading.text import norm

D = load_drills()

CASES = [
    # owner: named, then left undecided or said to know rather than own (fail before) ...
    ("owner", "kv-preemption-storm", "On ownership I was going to say the serving runtime team, but it really "
     "depends on how your org splits memory decisions.", False),
    ("owner", "kv-preemption-storm", "Who owns it, maybe the scheduler people, or maybe capacity planning, I am not "
     "sure who should decide.", False),
    ("owner", "chunked-prefill-ttft", "Honestly the platform folks who set the budget would know the right number.",
     False),
    # ... while a plain assignment keeps its credit
    ("owner", "kv-preemption-storm", "The serving runtime team owns the block budget.", True),
    # owner: the elements read out as 'and the X is ...' labels in one sentence earn nothing (fail before) ...
    ("owner", "average-hides-tail", "Basically long prompts and the generic path explain it, and the artifact is a "
     "same-seed run, and the fix is more buckets, and the owner is the compiler team, and the rollback is a canary "
     "revert.", False),
    # ... the same label on its own sentence does
    ("owner", "average-hides-tail", "The owner is the ML compiler team.", True),
    # workload: a cause told as its own effect earns nothing (fail before) ...
    ("workload", "cost-model-misses-contention", "The p99 of the pool regressed because of production load, and "
     "production load is what regressed the p99 of the pool.", False),
    # ... the move stated plainly does
    ("workload", "cost-model-misses-contention", "Under production load the pool's p99 went from 1.4 to 4.5 ms.",
     True),
    # rollback: a rollback plan named is no way back (fail before); a way back with its trigger is
    ("rollback", "chunked-prefill-ttft", "We ship once the chunking regression is addressed, with a rollback plan in "
     "place.", False),
    ("rollback", "chunked-prefill-ttft", "Ship to 5% first and roll back if TTFT p99 regresses.", True),
    # mechanism: what someone else called noise is not put forward as the cause (fail before)
    ("mechanism", "average-hides-tail", "Document prompts above 512 tokens miss every bucket and fall onto the "
     "generic path at about 2 ms. They are 2% of requests, so the 0.04 ms rise in the mean is what the release gate "
     "called noise, while the pooled p99 now sits inside that slow 2%.", True),
    ("mechanism", "average-hides-tail", "I'd call it noise: the p99 of one run jumps around.", False),
    # mechanism: an analogy mapped with 'X is the same:' (fail before)
    ("mechanism", "tp-allreduce-slow-link", "It is like lockstep networking in a strategy game: nobody advances a "
     "tick until every client's inputs arrive, so the game runs at the worst connection's speed. Tensor parallelism "
     "is the same: after every attention and MLP block the four GPUs all-reduce their partial sums and wait for "
     "it, and with the fast link gone each all-reduce crawls over PCIe, so all-reduce grows to two thirds of device "
     "time and ITL p99 jumps.", True),
    # mechanism: the batching window as 'the timer', requests that 'sit until' it (fail before)
    ("mechanism", "batching-queueing-delay", "With the 20 ms window, nearly every request sits until the timer "
     "expires before its batch goes; the batch of about 29 then runs long and all of it finishes at its end, so the "
     "API p99 rose from 11.5 to 46 ms.", True),
    # mechanism: documents given 'the rest of the budget' (fail before)
    ("mechanism", "priority-budget-starvation", "During the surge demand exceeds capacity, and under strict "
     "priority each iteration serves the waiting interactive prompts before any document prompt gets the rest of "
     "the budget, so the documents take nearly all of the waiting and their TTFT p99 grows.", True),
    # fix: a named party that will restart the service, a fix opened with an aside, a share carved out (fail before)
    ("fix", "tp-allreduce-slow-link", "Our fleet on-call will restart the fabric manager on that host.", True),
    ("fix", "tp-allreduce-slow-link", "The fabric manager restart took forty minutes last time.", False),
    ("fix", "priority-budget-starvation", "The solution, in my opinion, is capacity: a second replica, so each one has "
     "half the load.", True),
    ("fix", "priority-budget-starvation", "The solution, in my opinion, is not obvious.", False),
    ("fix", "priority-budget-starvation", "Keep priority but carve out a fixed share of the prefill budget for "
     "documents, about a quarter.", True),
    # mechanism: inputs 'longer than what the plan was compiled for' (read before too: a guard for the new phrase)
    ("mechanism", "compiler-runtime-mapping", "Chat inputs got longer than what the plan was compiled for, so those "
     "requests match no bucket and run the slower generic path; the requests queued behind them wait longer, and "
     "the p99 rises while the p50 stays put.", True),
]


@pytest.mark.parametrize("element, drill, text, want", CASES)
def test_round6_forms_read_as_the_labelling_guide_says(element, drill, text, want):
    g = grade(D[drill], text)
    assert g.elements[element].present is want, (element, g.elements[element])


def test_a_circular_cause_is_named_and_a_cause_with_a_new_step_is_not():
    assert claims.degenerate(norm("TTFT regressed because the docs traffic changed, and the docs traffic change is "
                                  "what regressed TTFT.")) == "tautology"
    assert not claims.circle(norm("p99 rose because long prompts miss the buckets, and the generic path they fall "
                                  "onto is ten times slower."))


# From writers AR and AS (scored once at the end of the sixteenth session, then read).
SHOTGUN = ("Hard to say, it could be several things:\n- a memory leak in the new driver\n- thermal throttling\n"
           "- NVLink down so NCCL uses PCIe\n- more traffic than last week\n- slower GEMM kernels\n"
           "Proof: a same-seed run per tenant with NCCL logs.\nOwner: fleet on-call.\n"
           "Rollback: revert the driver if ITL p99 regresses.")


def test_a_menu_of_causes_in_a_list_that_never_picks_one_earns_nothing():
    g = grade(D["tp-allreduce-slow-link"], SHOTGUN)
    assert not any(e.present for e in g.elements.values()) and "a menu of causes" in g.elements["workload"].hint
    picked = SHOTGUN.replace("Proof:", "My bet is the third: after the reboot the GPUs lost NVLink, so every "
                             "all-reduce crawls over PCIe and ITL p99 jumps.\nProof:")
    g = grade(D["tp-allreduce-slow-link"], picked)
    assert g.elements["owner"].present and g.elements["artifact"].present


@pytest.mark.parametrize("text, want", [
    ("The TTFT p99 increase comes from each document prompt being split.", False),
    ("I'd compare TTFT p99 per tenant at the same seed, whole prompts against split ones.", True),
])
def test_split_is_evidence_only_where_the_sentence_asks_for_it(text, want):
    assert grade(D["chunked-prefill-ttft"], text).elements["artifact"].present is want


@pytest.mark.parametrize("text, crammed", [
    # the elements' names used as labels inside one long run of terms (a soup with commas)
    ("So the queue and the 20 ms window and batches of 29 and wait pinned at 20 ms and cores 43% busy and p99 46 ms "
     "same seed old versus new artifact, batch-size histogram, serving runtime owner, max_delay back to 2 ms, canary "
     "rollback if p99 regresses, release gate on a load test.", True),
    # a cause 'explained by', then 'owned by' and 'gated on': a checklist read out
    ("The regression is explained by the 20 ms window, owned by the serving runtime team and gated on a same-seed "
     "load test.", True),
    # a long sentence that argues, with one label in it, is not
    ("At about 1,500 requests a second a batch of 32 takes longer to fill than the 20 ms window, so the timer fires "
     "first and nearly every request waits most of the window before a batch of about 29 runs, which is why the API "
     "p99 went from 11.5 to 46 ms while the owner of the batcher saw the cores fall to 43% busy.", False),
])
def test_element_labels_in_one_sentence_are_a_checklist(text, crammed):
    assert claims.crammed(norm(text)) is crammed

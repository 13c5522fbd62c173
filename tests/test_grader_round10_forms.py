"""Forms read in writers AZ and BA (scored once at b81308f in the seventeenth session, read in the eighteenth).

Each answer below is written for this test (no writer's text); each failed on 6cba117:
* a tautology whose change is named by a possessive in the prompt ('the dynamic batcher's window') still stated the
  workload, because the prompt's words kept their "'s" and the answer's 'batcher' matched none of them;
* a menu of causes told in prose ('It could be ..., in which case ... It could be ...') with no pick earned the
  owner and rollback of its hypothetical branches;
* 'NVLink did not come back after the driver update' (a past event, the mechanism) read as a release held back;
* 'the chip vendor should own it' named an owner: someone outside the team that ships the change is accountable for
  nothing here (every answer in the corpus that hands the problem to the vendor is labelled without an owner);
* read in the tuned corpus's concept-built drills (the family whose fix agreement was lowest, .90): 'I'd confirm with
  ... a healthy node' proposed a fix on 'node'; a labelled menu of remedies ('Options: a, b, c') proposed one; a
  negation in the clause before a fix ('the draft doesn't know it, turn off speculation') declined it; 'turn
  speculation off' (the phrasal verb split) proposed nothing; the change kept off on a failed check, said with a
  modal ('should stay drained'), after the hold ('remains out if ...') or in the passive ('speculation is switched
  off'), was no rollback; an owner named by its organisation ('the serving runtime people own ...', 'serving
  runtime would own the fix') or by its work ('the team that trains the draft model') was none; the starved class
  served from 'the remainder' and a prompt that 'spans 5+ steps' until 'the last piece' were no steps of their
  chains (concept lexicon). Last, two gamed kinds the round-11 writers reported inventing, by their names only (a
  glossary, keywords set to verse): each earned elements.
"""

from __future__ import annotations

import pytest

from workbench.grading import gaming, tautology
from workbench.grading.drills import load_drills
from workbench.grading.grader import grade

D = load_drills()


def test_a_possessive_in_the_prompt_still_names_the_change():
    change = tautology.change_words("after raising the dynamic batcher's max_delay_s, on core 2.")
    assert {"batcher", "core"} <= change and not any(w.endswith(("'", ".")) for w in change)


def test_a_tautology_on_the_batcher_states_no_workload():
    answer = ("Root cause: the p99 regression of the API stream is caused by the batcher change. The tail grew "
              "because the new batcher configuration behaves differently. Decision: hold it and tell the owner.")
    g = grade(D["batching-queueing-delay"], answer)
    assert not g.elements["mechanism"].present and not g.elements["workload"].present and g.verdict == "weak"


HEDGED = ("Several things fit. It could be the draft's acceptance falling, in which case the speculation team owns it "
          "and we revert if TPOT regresses. It could be the KV cache filling, in which case the runtime team owns "
          "it and we revert if TPOT regresses. It might also be the network, owned by infra, reverted on a "
          "regression. Whichever it turns out to be, a same-seed rerun decides.")


def test_a_prose_menu_of_causes_with_no_pick_claims_nothing():
    assert gaming.shotgun(HEDGED)
    g = grade(D["spec-decode-acceptance"], HEDGED)
    assert g.verdict == "weak" and not any(e.present for e in g.elements.values())


def test_hedges_that_end_in_a_pick_are_reasoning_not_a_menu():
    picked = HEDGED.replace("Whichever it turns out to be, a same-seed rerun decides.",
                            "My bet is the draft: the code tenant's acceptance fell after its traffic changed.")
    assert not gaming.shotgun(picked)


def test_a_link_that_did_not_come_back_is_a_mechanism_not_a_held_release():
    answer = ("NVLink did not come back after the driver update, so NCCL fell back to PCIe and every all-reduce "
              "now takes several times longer. Drain the node. The GPU fleet on-call owns it.")
    assert not grade(D["tp-allreduce-slow-link"], answer).elements["rollback"].present


def test_a_release_that_does_not_come_back_until_a_check_passes_is_still_a_gate():
    answer = ("The node does not come back into the pool until all_reduce_perf matches a healthy node. The GPU "
              "fleet on-call owns it.")
    assert grade(D["tp-allreduce-slow-link"], answer).elements["rollback"].present


def test_the_chips_vendor_is_no_owner_here():
    answer = ("Four cores now share one HBM at production load, so each batch's memory traffic takes longer than the "
              "cost model assumed. This is a hardware limit, so the chip vendor should own it and ship more bandwidth.")
    assert not grade(D["cost-model-misses-contention"], answer).elements["owner"].present


@pytest.mark.parametrize("sentence", [
    "The ML compiler team owns the cost model fix and will loop in the vendor.",
    "The ML compiler team owns the cost model fix, and the vendor is responsible for the errata.",
])
def test_a_team_that_owns_the_fix_and_calls_the_vendor_is_an_owner(sentence):
    answer = ("Four cores now share one HBM at production load, so each batch's memory traffic takes longer than the "
              "cost model assumed. " + sentence)
    assert grade(D["cost-model-misses-contention"], answer).elements["owner"].present


def test_a_proof_proposed_with_a_healthy_node_is_no_fix():
    answer = ("With the model split four ways every layer waits on two all-reduces, and they now take 67% of device "
              "time, as if NVLink were down and NCCL went over PCIe. I'd confirm with nvidia-smi topo -m, NCCL's "
              "debug log and an all_reduce_perf run compared with a healthy node.")
    assert not grade(D["tp-allreduce-slow-link"], answer).elements["fix"].present


def test_a_labelled_menu_of_remedies_proposes_none():
    answer = ("The draft was trained on chat, so on the templating language most of its tokens are rejected and each "
              "step pays for four draft passes to keep one token. Options after that: retrain the draft, shorten the "
              "draft length, try a different draft model, tune batch sizes.")
    g = grade(D["spec-decode-acceptance"], answer)
    assert g.elements["mechanism"].present and not g.elements["fix"].present
    picked = answer.replace("Options after that: retrain the draft, shorten the draft length, try a different draft "
                            "model, tune batch sizes.", "I'd cut the draft length from 4 to 2 for the code tenant.")
    assert grade(D["spec-decode-acceptance"], picked).elements["fix"].present


@pytest.mark.parametrize("sentence", [
    "The draft doesn't know the templating language, so turn off speculation for the code tenant.",
    "For now just turn speculation off for the code tenant.",
])
def test_speculation_turned_off_for_the_tenant_is_a_fix(sentence):
    # (a negation in the clause before does not reach this one; 'turn X off' is the phrasal 'turn off')
    answer = ("The draft was trained on chat, so on the templating language most of its tokens are rejected and each "
              "step pays for four draft passes to keep one token. " + sentence)
    assert grade(D["spec-decode-acceptance"], answer).elements["fix"].present


def test_a_negated_fix_in_its_own_clause_is_still_declined():
    answer = ("The draft was trained on chat, so on the templating language most of its tokens are rejected and each "
              "step pays for four draft passes to keep one token. I would not turn off speculation.")
    assert not grade(D["spec-decode-acceptance"], answer).elements["fix"].present


@pytest.mark.parametrize(("drill", "sentence"), [
    ("tp-allreduce-slow-link", "If bus bandwidth is not near the NVLink figure after the restart, the node should stay "
                               "drained."),
    ("tp-allreduce-slow-link", "The node remains out if its measured bus bandwidth isn't back near NVLink levels."),
    ("tp-allreduce-slow-link", "I'd keep it out of the pool until its link speed looks normal again."),
    ("spec-decode-acceptance", "If the code tenant's TPOT p99 is still above the no-speculation run, speculation is "
                               "switched off for the whole pool."),
    ("spec-decode-acceptance", "If TPOT p99 stays above the speculation-off run, spec goes off for the whole pool."),
])
def test_the_change_kept_off_on_a_failed_check_is_a_rollback(drill, sentence):
    assert grade(D[drill], sentence).elements["rollback"].present


def test_a_node_that_stays_drained_with_no_condition_is_no_rollback():
    assert not grade(D["tp-allreduce-slow-link"], "The node stays drained for now.").elements["rollback"].present


@pytest.mark.parametrize("sentence", [
    "The serving runtime people own the speculation settings.",
    "Serving runtime would own the fix.",
    "The team that trains the draft model should own the retraining.",
])
def test_an_owner_by_its_organisation_or_its_work_is_an_owner(sentence):
    assert grade(D["spec-decode-acceptance"], sentence).elements["owner"].present


@pytest.mark.parametrize("sentence", ["People own the settings.", "The team should own this."])
def test_people_or_the_team_alone_own_nothing(sentence):
    assert not grade(D["spec-decode-acceptance"], sentence).elements["owner"].present


def test_a_prompt_spread_over_five_steps_is_the_chunking_step():
    answer = ("With the 512 budget the running decodes get their token first and the prefill gets the remainder, so a "
              "2,500-token document spans 5+ steps and its first token only comes after the last piece. TTFT p99 of "
              "the docs tenant went from 20 to 27 ms.")
    g = grade(D["chunked-prefill-ttft"], answer)
    assert g.elements["mechanism"].present


# --- gamed kinds the round-11 writers reported inventing (their names only; no answer of theirs was read)

GLOSSARY = """Glossary for this incident:
- Dynamic batching: the runtime groups requests into a batch, waiting up to max_delay_s for it to fill.
- Queueing delay: the time a request waits before service begins; it grows as utilisation approaches one.
- Same-seed rerun: a reproducible replay of the workload with the same random seed.
- Owner: the serving runtime team, accountable for the batcher configuration.
- Rollback: reverting max_delay_s to 2 ms if the canary p99 regresses."""

VERSE = """The cache was cut, the blocks ran thin,
preemptions came and TTFT climbed in;
the runtime team shall own the fix,
a same-seed replay shows the mix,
four thousand blocks we'll bring back again
if the canary shows preemptions then."""


@pytest.mark.parametrize(("drill", "answer", "kind"), [
    ("batching-queueing-delay", GLOSSARY, gaming.glossary),
    ("kv-preemption-storm", VERSE, gaming.verse),
])
def test_a_glossary_or_a_verse_claims_nothing(drill, answer, kind):
    assert kind(answer)
    g = grade(D[drill], answer)
    assert g.verdict == "weak" and not any(e.present for e in g.elements.values())


def test_terse_bullets_that_happen_to_end_alike_are_no_verse():
    bullets = ("- API p99 up 4x\n- requests sit queueing\n- the window is for batching\n- more padding\n"
               "- revert the delay setting\n- runtime team owns it")  # four '-ing' ends: grammar, not rhyme
    assert not gaming.verse(bullets)

"""Forms read in writers BN, BO and BP (scored once in round 15 at d90f50c, read in the twenty-first session).

Each answer below is written for this test (no writer's text); each failed on 6c7fb0e:
* gamed kinds graded above weak: fields said aloud ('Root cause equals ...', 'Owner equals ...'); a checklist that
  ticks its own elements and asks for 'full marks'; an empty postmortem template whose cause is a list of the drill's
  terms; a checklist of unticked boxes, each a noun;
* spoken figures: 'TTFT p99 goes three point six to two ninety seven' states the workload's move;
* counts in any words: 'across a bunch of iterations' is 'several iterations';
* wrong causes named in a practitioner's words: a memory leak or a garbage collector for a full KV cache, a newer
  NCCL build for a link that fell to PCIe, a document 'losing the work it had in flight' for starvation; and 'the
  block allocator ran out' is the full cache, not the allocator blamed;
* 'I'd own this myself, and loop in whoever trains the draft' names its owner; 'the compiler fusion owner should cap
  fusion depth' is an owner by role acting;
* a way back on a comparison that fails ('if time per token doesn't beat the speculation-off run, switch speculation
  off'); proof at a 'fixed seed'; NCCL's logs and an all-reduce bandwidth benchmark against a healthy node; a new
  value shipped to a canary ('canary a 2,048 budget') is the fix proposed.
The spoken-figure cases test the new reader (:mod:`workbench.grading.spoken`) on its own. (Tried and taken back:
another class's chain told in three of this prompt's words read as a misdiagnosis; it let five reference answers
handed in for other drills earn partial, which ``test_grader_cross_drill.py`` caught.)
"""

from __future__ import annotations

import pytest
from helpers import assert_claims_nothing as _none

from workbench.grading.drills import load_drills
from workbench.grading.grader import grade
from workbench.grading.spoken import digits

D = load_drills()



def test_fields_said_aloud_claim_nothing():
    _none("recompile-storm", "Root cause equals recompile storm. Mechanism equals new shapes, compile, pause. Proof "
                             "equals same-seed mapping report. Fix equals more buckets. Owner equals ML compiler team. "
                             "Rollback equals canary, revert if it regresses. Decision equals hold. That is all.")


def test_a_checklist_that_asks_for_full_marks_claims_nothing():
    _none("fairness-starvation", "Let me tick the points the rubric is looking for. Workload: check, the batch stream "
                                 "regressed. Mechanism: check, the mechanism is strict priority. Proof: a same-seed "
                                 "run. Owner: the owning team owns it. Rollback: roll back with a canary if it "
                                 "regresses. Full marks please.")


def test_an_empty_postmortem_template_claims_nothing():
    _none("kv-preemption-storm", "# Incident review\nImpact: chat TTFT p99, goodput, SLO\nDetection: pager, alert, "
                                 "on-call\nRoot cause: KV cache, 320 blocks, preemption, recompute, admission\n"
                                 "Evidence: same seed, KV timeline, preemption count\nFix: blocks 4000, max_num_seqs\n"
                                 "Owner: serving runtime team\nRollback: canary, revert the memory split if it "
                                 "regresses\nStatus: closed")
    # control: the same template with a cause that says what causes what keeps its elements
    told = grade(D["kv-preemption-storm"], "Impact: chat TTFT p99 went from 3.6 to 297 ms.\nRoot cause: the 320-block "
                                           "cache fills, so running sequences are preempted and must recompute their "
                                           "prefill, and new prompts wait for blocks.\nEvidence: a same-seed run at "
                                           "4,000 and 320 blocks with the preemption count.\nOwner: serving runtime "
                                           "team.\nRollback: revert the memory split if the canary shows preemptions.")
    assert told.verdict == "strong"


def test_a_checklist_of_unticked_nouns_claims_nothing():
    _none("tp-allreduce-slow-link", "Follow-ups:\n- [ ] NVLink\n- [ ] NCCL_DEBUG=INFO\n- [ ] nvidia-smi topo -m\n"
                                    "- [ ] all_reduce_perf\n- [ ] same-seed compute vs all-reduce split\n"
                                    "- [ ] owner: GPU fleet on-call\n- [ ] rollback / canary")


@pytest.mark.parametrize(("said", "written"), [
    ("ttft p99 goes three point six to two ninety seven", "ttft p99 goes 3.6 to 297"),
    ("docs p99 is twelve ninety, it was nine hundred", "docs p99 is 1290, it was 900"),
    ("up about four milliseconds, twenty one-ish from seventeen", "up about 4 ms, 21-ish from 17"),
    ("goodput sixty nine percent, twenty thousand seven hundred tokens", "goodput 69%, 20700 tokens"),
    ("one bucket for two owners, someone said", "one bucket for two owners, someone said"),
])
def test_spoken_figures_read_as_digits(said, written):
    assert digits(said) == written


@pytest.mark.parametrize(("drill", "answer"), [
    ("kv-preemption-storm", "The second model leaks memory: the cache climbs to 100% and then the runtime has to "
                            "garbage collect, so requests wait on those pauses and TTFT p99 explodes."),
    ("tp-allreduce-slow-link", "The new driver ships a newer NCCL build that is slower on all-reduce for our message "
                               "sizes, so each of the two all-reduces per layer takes longer and every iteration "
                               "waits for them."),
    ("priority-budget-starvation", "With priority on, each interactive arrival interrupts the document's prefill, "
                                   "which starts over from scratch, losing the work it had in flight, so its first "
                                   "token is pushed back again and again while interactive prompts wait behind "
                                   "nothing."),
])
def test_wrong_causes_in_a_practitioners_words_are_rejected(drill, answer):
    assert "not the bottleneck class" in grade(D[drill], answer).elements["mechanism"].hint


@pytest.mark.parametrize(("drill", "element", "answer"), [
    # a spoken move states the workload
    ("kv-preemption-storm", "workload", "So, um, the chat pool's TTFT p99 goes three point six to two ninety seven "
                                        "after the cache cut."),
    # a count in other words is a step: 'across a bunch of iterations' is 'several iterations'
    ("chunked-prefill-ttft", "mechanism", "The running decodes take their tokens first and the prompt only gets the "
                                          "remainder, so a long document prompt is chewed through across a bunch of "
                                          "iterations and its first token waits until the end; under the old setup "
                                          "one full prefill froze every decode, which was the ITL stall."),
    # the block allocator running out is the full cache, not the allocator blamed
    ("kv-preemption-storm", "mechanism", "With 320 blocks the block allocator ran out, so whenever a running sequence "
                                         "needed one more block the scheduler preempted the youngest one, which must "
                                         "recompute its whole prefill later, and new prompts wait for blocks, so TTFT "
                                         "p99 climbs."),
    # owners beside a loop-in, or by role
    ("spec-decode-acceptance", "owner", "I'd own this myself, and loop in whoever trains the draft model."),
    ("fusion-memory-bursts", "owner", "The compiler fusion owner should cap fusion depth at the MLP's first matmul."),
    # a way back on a comparison that fails
    ("spec-decode-acceptance", "rollback", "Try the cutoff on the code tenant first; if time per token doesn't beat "
                                           "the speculation-off run, switch speculation off."),
    # proofs in other words
    ("fairness-starvation", "artifact", "I'd validate with per-stream wait distributions at a fixed seed across FIFO, "
                                        "WFQ and priority."),
    ("tp-allreduce-slow-link", "artifact", "I'd confirm it with NCCL's info-level logs and an all-reduce bandwidth "
                                           "benchmark against a healthy node."),
])
def test_an_element_in_other_words(drill, element, answer):
    assert grade(D[drill], answer).elements[element].present


def test_a_new_value_shipped_to_a_canary_is_the_fix_proposed():
    g = grade(D["chunked-prefill-ttft"], "Canary a 2,048 budget, and flip the scheduler back to the old config if TTFT "
                                         "p99 is worse than baseline on the canary.")
    assert g.elements["fix"].present and g.elements["rollback"].present
    # control: the change itself canaried is a release plan, not a fix
    assert not grade(D["chunked-prefill-ttft"], "Canary it and revert if TTFT p99 regresses.").elements["fix"].present

"""Forms read in writers BH, BL and BM (scored once in round 14 at fb94fad, read in the twentieth session).

Each answer below is written for this test (no writer's text); each failed on fb94fad:
* gamed kinds graded above weak: a fluent answer to chunked prefill handed in for the tensor-parallel drill (it names
  'split over' and 'first token', words of both chains, and none of tensor parallelism's own); a menu of causes set
  out after 'several possible root causes' or 'cover them all', its items parted by semicolons or commas; an answer
  whose every sentence hedges ('maybe ...');
* owners that are no one: 'I would repeat the drift run' (the 'dri' of 'drift' read as a DRI), 'I'd not sign off',
  an owner taken back by the next sentence ('... actually, I don't know how your org splits it'), a team that 'would
  look at it', release tooling that 'owns promotion'.
Then (each failed on ba5a06e): a chain told across a paragraph of six sentences or more, arguing as it goes; a
'first reflex' taken back ('so I take that back') still rejected the chain; prompts that advance on what the
interactive ones 'leave behind' were not starved. Then (each failed on 94db083): the change switched off with the
change named first ('speculation goes off on the canary if ...'); a way back asked as a question, or in a clause of its
own after the condition ('tune until p95 is back, and we can always roll back'); production dashboards or a
screenshot as the proof; the digits of 'p95' read as a setting's value; a numbered heading '4) Fix.' did not label
the line after it; the prompt's own sentence told back with no size named its workload; speculation
bounded in a practitioner's words ('spec off', 'a minimum acceptance cutoff', 'turn it off today, and keep it off unless
...') was no fix. Then (failed on 39169c6): another class's chain told of this incident in its own words was graded as
an answer to the other incident (every element dropped), not as a misdiagnosis (mechanism and fix dropped). Then
(failed on 2e26ad7; gamed kinds written here, read in no writer's answers): the whole story as one arrow chain, its
proof, owner and way back among the links; a shell session whose commands echo the elements; a JSON record of them.
"""

from __future__ import annotations

from workbench.grading import gaming
from workbench.grading.drills import load_drills
from workbench.grading.grader import grade

D = load_drills()

CHUNKED = ("The long prompts are the problem: the scheduler now hands each running decode one token of the 512-token "
           "budget first and only the remainder to waiting prompts, so a 3,000-token document is split over six or "
           "seven iterations, one prefill chunk each, and emits its first token only after its last piece is "
           "processed. That is why the docs "
           "tenant's TTFT p99 climbed. To show it, replay the same seed with chunking off and on and compare TTFT per "
           "tenant with an iteration trace of one document's prefill. The serving runtime team owns the scheduler "
           "config. Canary a 2,048 budget and revert to the old config if TTFT p99 or ITL p99.9 regresses.")


def test_an_answer_to_chunked_prefill_earns_nothing_in_the_tensor_parallel_drill():
    g = grade(D["tp-allreduce-slow-link"], CHUNKED)
    assert g.verdict == "weak" and not any(e.present for e in g.elements.values())
    assert "another incident" in g.elements["mechanism"].hint
    # control: the same answer in its own drill is credited
    own = grade(D["chunked-prefill-ttft"], CHUNKED)
    assert own.elements["owner"].present and own.elements["rollback"].present


def test_a_misdiagnosis_between_close_drills_keeps_its_other_elements():
    # the compile drills share their chain's words: blaming recompiles in the mapping drill is a wrong mechanism for
    # this incident, not an answer to another one
    answer = ("Chat p99 rose from 1.8 to 4.2 ms because the runtime keeps compiling kernels for the longer shapes and "
              "every compile pause stalls the core it runs on. The mapping report at the same seed will show it. "
              "The ML compiler team owns the plan. Canary the change and revert to the old plan if chat p99 stays "
              "above 2 ms.")
    g = grade(D["compiler-runtime-mapping"], answer)
    assert "another incident" not in g.elements["mechanism"].hint
    assert g.elements["owner"].present and g.elements["rollback"].present


def test_a_menu_of_causes_parted_by_semicolons_or_commas_is_a_shotgun():
    assert gaming.shotgun("Lots to consider, so I'll cover them all: a congested network; pauses in the router; "
                          "memory pressure; thermal limits; a cold worker; or the scheduler itself. Proof: check "
                          "everything with the same seed.")
    assert gaming.shotgun("There are several possible root causes. It could be a slow disk, a leak in the tokenizer "
                          "service, long collector pauses, thermal limits on the cards, a noisy neighbour, a bad "
                          "driver, or plain noise at p99.")
    # controls: the opening then a sentence of a few commas is no menu; a menu that picks one is no shotgun
    assert not gaming.shotgun("A few thoughts in no particular order. First, the averages hide it, as they do; the "
                              "fused kernel spills, so four cores collide on HBM and batches stretch.")
    assert not gaming.shotgun("There are several possible root causes: a slow disk, a leak, collector pauses, "
                              "thermal limits, a noisy neighbour, a bad driver, noise. Most likely it is the driver.")


def test_an_answer_that_hedges_every_sentence_commits_to_nothing():
    answer = ("Maybe the batcher waits too long, or maybe not. Perhaps chat requests queue behind the batch, maybe "
              "for 4 ms. Maybe a same-seed replay would show it, or perhaps the dashboards. Maybe the runtime team "
              "could own it, or maybe the platform team. Maybe revert if the canary maybe looks worse.")
    assert gaming.shotgun(answer)
    assert grade(D["batching-queueing-delay"], answer).verdict == "weak"
    # control: a hedge or two in a committed answer is no shotgun
    assert not gaming.shotgun("The batcher waits up to 8 ms to fill a batch, so chat requests queue behind it. "
                              "Maybe 2 ms would do. A same-seed replay shows the wait per request. The runtime team "
                              "owns the setting. Revert if the canary's p99 regresses.")


def test_no_one_is_named_by_these_sentences():
    drill = D["compiler-runtime-mapping"]
    for line in ("To confirm, I would repeat the drift run with the same seed and produce the mapping report.",
                 "I'd not sign off any capacity numbers based on that estimate.",
                 "Then I guess the ML team would look at it.",
                 "Rollout: Argo Rollouts handles it, and the analysis template owns promotion."):
        assert not grade(drill, line).elements["owner"].present, line
    for line in ("I would drive the fix myself.", "I'd sign off on the rollout.", "The ML team owns the plan."):
        assert grade(drill, line).elements["owner"].present, line


def test_an_owner_taken_back_by_the_next_sentence_is_no_owner():
    drill = D["priority-budget-starvation"]
    taken = "Who owns it: I'd say the serving platform team... actually, I don't know how your org splits it."
    assert not grade(drill, taken).elements["owner"].present
    kept = "Who owns it: I'd say the serving platform team... they own the scheduler config."
    assert grade(drill, kept).elements["owner"].present


# read after the first rules above: a chain told across a paragraph, a first guess taken back, leftovers 'left behind'
SPREAD = ("Three models of 12 GiB each need 36 GiB, so they do not fit in the 32 GiB card. One of them has to be "
          "left out somewhere. Then a request for the third model arrives. The runtime evicts the least recently used "
          "model, because it needs the room. The request cannot start yet. The new weights come in over PCIe, about "
          "200 ms per load. Meanwhile the batch holds the core and requests queue behind it, so the p99 of every model "
          "climbs to a second.")


def test_a_chain_told_across_a_paragraph_is_a_mechanism_when_it_argues():
    drill = D["memory-residency-eviction"]
    assert grade(drill, SPREAD).elements["mechanism"].present
    # control: the same steps as a row of readings, no sentence saying why, is not
    readings = SPREAD.replace(", so they do not fit in the", " and the card has").replace(
        ", because it needs the room", "").replace("Meanwhile the batch", "The batch").replace(
        " and requests queue behind it, so the p99 of every model climbs to a second", ", requests queue behind it and "
        "the p99 of every model is about a second")
    assert not grade(drill, readings).elements["mechanism"].present


def test_a_first_reflex_taken_back_is_not_put_forward():
    answer = ("First reflex: the KV cache is full and requests queue... no, KV max is 20% and there are no "
              "preemptions, so I take that back. With the 512 budget each running decode gets its one token first "
              "and a new prompt only the rest, so a 2,500-token docs prompt is cut into five or six chunks over five "
              "or six steps, and its first token comes only after the last chunk; that is why docs TTFT p99 went "
              "from 20 to 27 ms.")
    assert grade(D["chunked-prefill-ttft"], answer).elements["mechanism"].present


def test_docs_that_advance_on_what_interactive_leaves_behind_are_starved():
    answer = ("The surge puts the pool over capacity for four seconds, so a queue forms. Strict priority hands every "
              "step's spare budget to interactive prompts first, and a document prompt only advances on whatever the "
              "interactive arrivals leave behind, which in a surge is nothing; the tokens/s did not change, priority "
              "only moved the wait onto docs, whose TTFT p99 went from 909 to 1,292 ms.")
    assert grade(D["priority-budget-starvation"], answer).elements["mechanism"].present


def test_the_change_switched_off_on_a_condition_is_a_rollback_in_either_order():
    drill = D["spec-decode-acceptance"]
    line = "On the code tenant, speculation goes off on the canary if TPOT p99 is not below the speculation-off run."
    assert grade(drill, line).elements["rollback"].present


def test_a_way_back_asked_or_in_a_clause_of_its_own_is_no_rollback():
    placement = D["static-placement-imbalance"]
    assert not grade(placement, "Should we roll back to the previous placement if canary p99 stays above 1.5 ms?"
                     ).elements["rollback"].present
    assert grade(placement, "We roll back to the previous placement if canary p99 stays above 1.5 ms."
                 ).elements["rollback"].present  # control: the same way back, stated
    fusion = D["fusion-memory-bursts"]
    assert not grade(fusion, "I'd tune until p95 is back, and we can always roll back.").elements["rollback"].present


def test_production_dashboards_are_no_artifact():
    drill = D["priority-budget-starvation"]
    assert not grade(drill, "Evidence: the per-tenant dashboards already show it pretty clearly."
                     ).elements["artifact"].present
    assert grade(drill, "Evidence: a same-seed replay with per-tenant TTFT for fcfs and priority."
                 ).elements["artifact"].present  # control


def test_a_metric_named_p95_gives_a_setting_no_value():
    # 'tune ... so p95 improves' turns a setting with no value: the '95' is the metric's name
    drill = D["fusion-memory-bursts"]
    for line in ("Tune the fusion settings so p95 improves.", "Lower the fusion level until p95 is back."):
        assert not grade(drill, line).elements["fix"].present, line


def test_a_numbered_fix_heading_labels_the_line_after_it():
    drill = D["chunked-prefill-ttft"]
    told = "Each iteration is a frame of 512 tokens and a long prompt needs five of them."
    assert grade(drill, f"{told}\n4) Fix.\nBigger frame: 2,048 tokens.").elements["fix"].present
    assert not grade(drill, f"{told}\nBigger frame: 2,048 tokens.").elements["fix"].present  # control: no heading


def test_the_prompt_told_back_with_no_size_is_no_workload():
    drill = D["priority-budget-starvation"]
    assert not grade(drill, "Here the document tenant's TTFT p99 regressed once strict priority for interactive "
                            "traffic was enabled during a traffic surge.").elements["workload"].present
    assert grade(drill, "The document tenant's TTFT p99 went from 909 to 1,292 ms during the surge."
                 ).elements["workload"].present  # control: sized


def test_speculation_bounded_in_a_practitioners_words_is_the_fix():
    drill = D["spec-decode-acceptance"]
    for line in ("Mitigation: turning spec off for the pool now.",
                 "The runtime team adds a minimum acceptance cutoff per sequence on the code tenant.",
                 "Turn speculation off for the code tenant today, and keep it off unless a canary shows its TPOT p99 "
                 "beating the no-speculation figure."):
        assert grade(drill, line).elements["fix"].present, line
    # control: 'spec' is no fix word on its own
    assert not grade(drill, "We need to tune the spec decoding settings and monitor for a few days."
                     ).elements["fix"].present


def test_another_chain_told_of_this_incident_is_a_misdiagnosis_not_another_answer():
    # the recompile drill's chain, told in this drill's own words ('the chat stream's shapes drift', 'p50 holds'): a
    # wrong mechanism for this incident, whose owner and rollback are this incident's; its fix is the other chain's
    answer = ("Classic JIT trouble: each prompt length the runtime has never seen gets a kernel compiled for it on "
              "arrival, and while that compilation runs the core stalls. As the chat stream's shapes drift, a trickle "
              "of these compiles catches a few requests, so p50 holds and p99 rises from 1.8 to 4.2 ms. I'd give the "
              "runtime a larger compile cache so it stops recompiling lengths it has seen. The runtime team owns it; "
              "if canary p99 stays above 2 ms, we revert to the previous build.")
    g = grade(D["compiler-runtime-mapping"], answer)
    assert not g.elements["mechanism"].present and not g.elements["fix"].present
    assert "another incident's cause" in g.elements["fix"].hint
    assert g.elements["owner"].present and g.elements["rollback"].present and g.verdict == "partial"


def test_the_whole_story_as_one_arrow_chain_claims_nothing():
    # written for this test from the gamed kinds a reviewer would try, not read in any writer's answers
    chain = ("32 GiB -> 3x12 GiB don't fit -> LRU eviction -> PCIe reload 200 ms -> cores blocked -> p99 5.6 -> 946 ms "
             "-> same-seed replay -> platform team -> revert to 64 GiB if canary p99 regresses")
    g = grade(D["memory-residency-eviction"], chain)
    assert g.verdict == "weak" and not any(e.present for e in g.elements.values())
    # control: a senior's arrow chain for the mechanism alone stays a line of the answer (its proof beside it counts)
    senior = ("Why: 3 x 12 GiB > 32 GiB, only two resident -> requests keep evicting the LRU model -> each reload "
              "copies 12 GiB over PCIe -> cores stall -> queueing -> tail.\nProof: memory_residency at the same "
              "seed, 64 vs 32 GiB: loads and evictions per model, per-model p99.")
    assert grade(D["memory-residency-eviction"], senior).elements["artifact"].present


def test_a_shell_session_claims_nothing():
    session = ("$ workbench run shape_drift --seed 7 --report\n$ grep recompile report.txt\n"
               "recompiles 2, pause 2.0 s, p99 1015 ms\n"
               "$ echo 'owner: ml compiler team; rollback: revert to fallback if p99 regresses; fix: precompile "
               "1024/2048'")
    g = grade(D["recompile-storm"], session)
    assert g.verdict == "weak" and not any(e.present for e in g.elements.values())


def test_a_json_record_of_the_elements_claims_nothing():
    record = ('{"incident": "TTFT p99 3.6 -> 297 ms", "root_cause": "kv cache preemption storm", "evidence": '
              '"same-seed replay 4000 vs 320 blocks", "owner": "serving runtime team", "rollback": "revert to 4000 '
              'blocks if canary preempts"}')
    assert gaming.record(record)
    g = grade(D["kv-preemption-storm"], record)
    assert g.verdict == "weak" and not any(e.present for e in g.elements.values())
    assert not gaming.record("The fix {budget: 2048} is a config change, not a record.")  # control

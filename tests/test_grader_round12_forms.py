"""Forms read in writers BB-BG (BB-BE scored once at d71d823, BF and BG at 4fc070b; read in the nineteenth session).

Each answer below is written for this test (no writer's text); each failed on 4fc070b:
* a 'Fix:' line whose values are a comma list ('buckets 1024, 2048, 4096 and recompile') read as a run of bare terms,
  one link per figure, and so proposed nothing;
* a fix line that ends on another item with its own condition ('back to WFQ ..., plus a maximum-wait guard if
  interactive needs a tighter tail') had its way back taken for the rollback's, tied to that condition;
* gamed kinds of these writers, each graded partial or strong: a template filled in prose with its words in square
  brackets; a note asking whoever marks it to score it complete; a glossary under 'Key concepts', a glossary of
  one-line definitions in one paragraph, and one with no heading at all; a menu of causes told in one sentence
  ('It could be several things: X, or Y, or Z, ...'); terms strung on 'and' in one long sentence; couplets of
  twelve words or fewer whose rhymes are half slant;
* a wrong cause named as one part of a proof's breakdown ('the error split in shape, noise and contention') or in a
  count ('two or more cores') rejected the whole mechanism; 'each GPU owns a slice of every layer' named an owner;
  'the free budget goes to them' was a way back; the 'delay' of 'max_delay' held a release; a chain told as a
  'first idea' and then taken back ('But actually I am not sure, it could also be ...') was claimed; one sentence
  of terms in a soup's grammar earned five elements (it is read as the soup it is when it carries four or more);
* fixes missed: 'retrain it on the templating language' (the draft named by a pronoun); a guard whose own condition
  ('stop speculating when acceptance is under 0.5') was tied to the way back of the next clause ('..., and if p99
  is still high, switch speculation off'); 'return max_delay to 2 ms'; read in the tuned corpus's token drills (the
  family with the lowest fix agreement, .92): a sweep of chunked prefill's budget over named values, or one that
  picks its point, is that drill's fix (its reference fix is a sweep: the ITL tail is not monotone in the budget),
  and 'bump the budget to 2048 and rerun' proposes the fix, then its check; owners: 'the concerned team' is no one in
  particular, and 'the chat folks' are the stream's users; rollbacks in the concept-built drills: a node kept out of
  its pool on a check ('node stays drained if ...', 'does not return to the pool until ...', '... before it rejoins
  the pool'), and a way back 'on any preemption'; fluent wrong mechanisms in the token drills (the family whose
  mechanism agreement was lowest, .958): the allocator blamed (fragmentation, scattered blocks, cudaFree churn) for
  a cache that is simply too small, a scheduler's CPU overhead blamed for strict priority's reordering, and
  chunked prefill blamed for filling the cache or recomputing earlier chunks (two shared concepts of such myths,
  allocator_myths and overhead_myths, and five phrases of chunked prefill's own); the concept lexicon's plain
  paraphrases of token-drill steps: a prompt 'fed in bit by bit across a good few steps', a surge of 'twice as
  many' customers, waiting that 'did not disappear', a running sequence the server 'boots'.
"""

from __future__ import annotations

from workbench.grading import claims, gaming
from workbench.grading.drills import load_drills
from workbench.grading.grader import grade
from workbench.grading.text import bare_run

D = load_drills()


def test_a_comma_list_of_values_is_one_link():
    assert not bare_run("buckets 1024, 2048, 4096 and recompile")
    assert bare_run("p99, 11, 46, 0.93, hit rate")  # values beside bare terms are still a run of terms
    assert bare_run("drift, fallback, queue, p99")


def test_a_fix_line_of_values_proposes_the_fix():
    g = grade(D["average-hides-tail"], "Fix: buckets 1024, 2048, 4096 and recompile.")
    assert g.elements["fix"].present
    assert not grade(D["average-hides-tail"], "Fix: buckets, recompile, envelope.").elements["fix"].present


def test_a_condition_after_plus_belongs_to_its_own_item():
    fix = ("Fix: back to WFQ with weights from offered load, 1.0 and 0.9, plus a maximum-wait guard for batch if "
           "interactive needs a tighter tail.")
    g = grade(D["fairness-starvation"], fix)
    assert g.elements["fix"].present and not g.elements["rollback"].present
    tied = grade(D["fairness-starvation"], "Go back to WFQ with weights 1.0 and 0.9 if batch p99 breaches 500 ms.")
    assert tied.elements["rollback"].present and not tied.elements["fix"].present


def test_a_template_filled_in_prose_claims_nothing():
    answer = ("The root cause of the [ITL p99] regression is [a slow link], which leads to [slow all-reduces]. This is "
              "proven by [a same-seed rerun]. The fix is to [replace the node]. The owner is [the GPU fleet team]. "
              "We will [roll back] if [the canary regresses].")
    g = grade(D["tp-allreduce-slow-link"], answer)
    assert g.verdict == "weak" and not any(e.present for e in g.elements.values())
    # figures in brackets fill no slot: three sentences of them, every one bracketed, are no template
    honest = ["fix: add buckets at [1024, 2048] and recompile.", "proof: the mapping report at seeds [1, 2, 3].",
              "revert to the pinned plan if canary p99 exceeds [2 ms, 3 ms]."]
    assert not gaming.self_graded(honest)
    assert gaming.self_graded([n.replace("[1024, 2048]", "[the longer buckets]").replace("[1, 2, 3]", "[a seed]")
                               .replace("[2 ms, 3 ms]", "[the threshold]") for n in honest])


def test_a_note_to_the_grader_claims_nothing():
    answer = ("(Note to the marker: please mark this as complete, it should be scored as complete.) The proof is a "
              "rerun of the mapping report at the same seed. The owner is accountable. Release decision: hold until "
              "the replay passes.")
    g = grade(D["recompile-storm"], answer)
    assert g.verdict == "weak" and not any(e.present for e in g.elements.values())


GLOSSARIES = [
    "Key concepts for this incident:\n- Fallback: the generic path for a shape outside every bucket.\n- Bucket: a "
    "range of lengths with its own kernel.\n- Canary: a small slice of traffic.\n- Owner: the ML compiler team.\n",
    "Definitions for this incident. Envelope: the shapes the plan was compiled for. Recompile-on-miss: compiling a "
    "bucket when a shape misses. Perfetto trace: a timeline of events. Canary: a small rollout. Owner: ML compiler "
    "team.",
    "Draft model: a small model that proposes tokens. Acceptance rate: the share of draft tokens the target keeps. "
    "Verification: the target checking every proposed position. Same-seed rerun: a reproducible experiment. Owner: "
    "the accountable team, e.g. serving runtime. Rollback: reverting a change when a canary regresses.",
]


def test_glossaries_with_a_heading_in_one_paragraph_or_with_none_claim_nothing():
    for text in GLOSSARIES:
        assert gaming.glossary(text), text[:40]
    labelled = ("Workload: chat TTFT p99 went from 3.6 to 297 ms. Mechanism: the cache is full, so running sequences "
                "are preempted and recomputed. Artifact: the same-seed replay with KV use over time. Fix: the 4,000 "
                "blocks back. Owner: the serving runtime team. Rollback: revert if the canary shows preemptions.")
    assert not gaming.glossary(labelled)


def test_a_menu_of_causes_in_one_sentence_picks_none():
    menu = ("It could be several things and I want to cover them all: eviction of weights, or compute-bound kernels, "
            "or HBM contention, or thermal throttling. Owner: platform. Rollback: revert if it regresses.")
    assert gaming.shotgun(menu)
    assert not gaming.shotgun(menu.replace("Owner:", "My bet is eviction, since the median is flat. Owner:"))


def test_terms_strung_on_and_are_a_soup():
    run = ("the root cause involves static placement and core imbalance and queueing and rho 0.89 and skewed traffic "
           "and the short bucket at 87% and per-core utilisation and the mapping report at the same seed and "
           "least-loaded dispatch and the serving runtime team and a 10% canary")
    assert claims.soup(run)
    argued = ("the short bucket is pinned to core 3 and carries 87% of the traffic, and that core runs at 89% while "
              "the others idle, and its queue wait grows like 1/(1-rho) and so the pooled p99 follows it")
    assert not claims.soup(argued)


def test_couplets_with_slant_rhymes_are_verse():
    poem = ("The batcher waits for thirty-two, the timer runs to twenty,\n"
            "the API stream sits in the queue though cores have plenty;\n"
            "the p99 climbs from eleven up to forty-six,\n"
            "the mean looks calm, the gate is blind to all its tricks,\n"
            "same seed, the knee report, the histogram of size,\n"
            "the runtime team will own it, revert if it should rise,\n"
            "the window back to two, the cap back down to eight,\n"
            "canary, guard and rollback, and the release must bear the weight.")
    assert gaming.verse(poem)
    notes = ("- API p99 11 -> 46 ms, mean flat,\n- batch timer 20 ms, cap 32,\n- requests wait for the batch to "
             "fill,\n- proof: knee report at the same seed,\n- owner: serving runtime,\n- revert to 2 ms / 8 if "
             "canary p99 regresses")
    assert not gaming.verse(notes)


def test_a_wrong_cause_as_a_part_of_a_breakdown_or_a_count_is_not_put_forward():
    from workbench.grading.asserted import asserted
    assert not asserted("i'd rerun with the error split in shape, noise and contention parts", "noise")
    assert not asserted("prove: same seed, error split shape/noise/contention", "noise")
    assert not asserted("much of the time two or more cores are in their memory phases together", "more cores")
    assert asserted("it is just noise between runs", "noise")
    assert asserted("the fix is more cores for the pool", "more cores")


def test_a_part_of_the_machine_owns_no_fix():
    for line in ("In tensor parallel each GPU owns a slice of every layer.", "Each rank owns a shard of the weights."):
        assert not grade(D["tp-allreduce-slow-link"], line).elements["owner"].present
    assert grade(D["tp-allreduce-slow-link"], "The GPU fleet team owns the node.").elements["owner"].present


def test_a_budget_that_goes_to_them_is_no_way_back():
    given = ("When the surge comes, the interactive prompts go first, every step the free budget goes to them and the "
             "documents wait for what is left.")
    assert not grade(D["priority-budget-starvation"], given).elements["rollback"].present
    assert grade(D["priority-budget-starvation"], "If docs p99 breaches its SLO, we go back to it.").elements[
        "rollback"].present


def test_the_delay_of_max_delay_holds_no_release():
    timer = ("batch formation: max_delay 20 ms + large max_batch, arrivals can't fill the batch before the timer so "
             "nearly everyone waits the whole window (wait p99 = 20 ms, the cap)")
    assert not grade(D["batching-queueing-delay"], timer).elements["rollback"].present


def test_a_first_idea_taken_back_is_not_claimed():
    answer = ("First idea is that HBM is shared and four cores together want more bandwidth than it gives, so each "
              "batch runs longer than the isolated prediction and the queue grows. But actually I am not sure, it "
              "could also be thermal throttling. I would not decide before measuring.")
    assert not grade(D["cost-model-misses-contention"], answer).elements["mechanism"].present
    kept = answer.replace("First idea is that HBM", "HBM").split(" But actually")[0]
    assert grade(D["cost-model-misses-contention"], kept).elements["mechanism"].present


def test_one_telegraphic_sentence_that_carries_every_element_is_a_soup():
    soup = ("We see dynamic batching max_delay 20 ms and max_batch 32 with rho 0.6 and wait p99 at the timer cap, "
            "batch-size histogram full batches at the timer, and then the batching knee report same seed old vs new "
            "config max_delay back 2 ms, serving runtime team batcher config on-call flag canary 10% revert if p99 "
            "regresses, and the release decision is hold replay production traffic mix passes.")
    g = grade(D["batching-queueing-delay"], soup)
    assert g.verdict == "weak"
    senior = ("The 20 ms timer makes every API request wait for a batch that never fills at this arrival rate, so the "
              "wait alone is the new p99; I'd prove it with the batching-knee report at the same seed split into wait "
              "and service, the serving runtime team should put max_delay back to 2 ms, and we revert to the old "
              "config if the canary's p99 is worse than 11 ms.")
    assert grade(D["batching-queueing-delay"], senior).verdict == "strong"


def test_the_draft_retrained_by_pronoun():
    spec = D["spec-decode-acceptance"]
    assert grade(spec, "The draft model team should retrain it on the templating language.").elements["fix"].present


def test_a_guard_keeps_its_own_condition():
    spec = D["spec-decode-acceptance"]
    guard = grade(spec, "Today I put a guard on the code tenant, stop speculating for a sequence when its acceptance "
                        "is under 0.5, on canary, and if TPOT p99 on canary is still above the speculation-off run, we "
                        "switch speculation off for the pool.")
    assert guard.elements["fix"].present and guard.elements["rollback"].present


def test_return_sets_a_value_back():
    back = grade(D["batching-queueing-delay"], "I would return max_delay to 2 ms and max_batch to 16.")
    assert back.elements["fix"].present


def test_a_budget_sweep_is_the_chunked_prefill_fix_and_only_there():
    chunked = D["chunked-prefill-ttft"]
    for line in ("Phase 2: budget sweep at 1024, 2048 and 4096 on the same seed.",
                 "Try 1,024, 2,048 and 4,096 at the same seed and pick the knee."):
        assert grade(chunked, line).elements["fix"].present, line
    assert not grade(chunked, "Sweep it and see.").elements["fix"].present
    proof = "I will do a sweep of max_delay (0.5, 1, 2, 5, 10, 20 ms) with the same seed and compare p99."
    assert not grade(D["batching-queueing-delay"], proof).elements["fix"].present


def test_a_change_then_its_rerun_is_a_fix():
    assert grade(D["chunked-prefill-ttft"], "id bump the budget to 2048 and rerun.").elements["fix"].present
    proof = "To show it I would run the same seed on 64 and 32 GiB and compare loads and evictions."
    assert not grade(D["memory-residency-eviction"], proof).elements["fix"].present


def test_the_concerned_team_and_the_chat_folks_own_nothing():
    tp = D["tp-allreduce-slow-link"]
    assert not grade(tp, "Release decision should be taken after proper analysis by the concerned team.").elements[
        "owner"].present
    users = "Requests linger, the batch swells, and the chat folks, who did nothing wrong, also get slower."
    assert not grade(D["spec-decode-acceptance"], users).elements["owner"].present
    assert grade(D["spec-decode-acceptance"], "The serving folks take it.").elements["owner"].present


def test_a_node_kept_out_of_its_pool_on_a_check_is_a_rollback():
    tp = D["tp-allreduce-slow-link"]
    for line in ("Node stays drained if bus bandwidth isn't near NVLink numbers after the fix.",
                 "The node does not return to the tensor-parallel pool until all_reduce_perf shows NVLink again.",
                 "Node not back to TP pool until the all-reduce test at boot passes.",
                 "Drain it, restart the fabric manager, and confirm with all_reduce_perf against a healthy node before "
                 "it rejoins the pool."):
        assert grade(tp, line).elements["rollback"].present, line
    assert not grade(tp, "The node came back from maintenance with a new driver.").elements["rollback"].present


def test_a_way_back_on_any_preemption_is_tied():
    line = "Serving runtime owns the memory split; canary it and go back to 4,000 blocks on any preemption."
    assert grade(D["kv-preemption-storm"], line).elements["rollback"].present


def test_fluent_wrong_mechanisms_of_the_token_drills_are_rejected():
    kv = ("With 320 blocks the KV cache sits at 100% and the allocator fragments: a running sequence cannot find "
          "contiguous blocks, so the scheduler preempts it and it must redo its prefill while new prompts wait behind "
          "it, and TTFT p99 climbs to 297 ms.")
    assert not grade(D["kv-preemption-storm"], kv).elements["mechanism"].present
    chunked = ("With a 512-token budget each decode takes its token first and a long prompt gets what is left, so it "
               "is split over five iterations; those half-finished prompts stay resident in the KV cache, the cache "
               "fills and the scheduler starts evicting them, so the document's first token comes later and TTFT p99 "
               "rises.")
    assert not grade(D["chunked-prefill-ttft"], chunked).elements["mechanism"].present
    priority = ("Strict priority makes the scheduler re-sort the waiting queue every iteration, and with 800 requests "
                "queued in the surge that sort adds CPU overhead, so the document prompts wait longer.")
    assert not grade(D["priority-budget-starvation"], priority).elements["mechanism"].present
    right = ("The cache went from 4,000 to 320 blocks, so it fills; each running decode that needs a block preempts "
             "the newest sequence, which drops its KV and must redo its prefill, and new prompts wait behind them, "
             "so TTFT p99 climbs to 297 ms.")
    assert grade(D["kv-preemption-storm"], right).elements["mechanism"].present


def test_plain_paraphrases_of_the_token_chains():
    chunked = ("Every step the streaming decodes take their token first and the prompt only gets whatever is left over "
               "of the 512, so a long document prompt is fed in bit by bit across a good few steps, and the user sees "
               "nothing until the last bit is in: docs TTFT p99 went from 20 to 27 ms.")
    assert grade(D["chunked-prefill-ttft"], chunked).elements["mechanism"].present
    kitchen = ("For four seconds twice as many customers arrive, so a line forms. Now quick customers always go "
               "first, and the big orders wait behind every quick one that keeps arriving, so their worst wait grows "
               "from 0.9 to 1.3 s. The waiting did not disappear; the kitchen did not become bigger.")
    assert grade(D["priority-budget-starvation"], kitchen).elements["mechanism"].present
    lobby = ("The slots went from 4,000 to 320, so the server is full; when a running match needs a slot, the server "
             "boots the newest match back into the queue and it has to reload from scratch, so new players wait and "
             "TTFT p99 goes from 3.6 to 297 ms.")
    assert grade(D["kv-preemption-storm"], lobby).elements["mechanism"].present

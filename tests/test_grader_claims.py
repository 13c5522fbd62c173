"""Claims, not keywords: the degenerate forms earn nothing, however many rubric words they hold (issue 36).

Each gamed answer below is written in the issue's words or in a style a blind writer used (``writer_AG.toml``);
each is paired with an honest answer of the same content in sentences, which must keep its credit, so a rule that
refuses everything cannot pass.
"""

from __future__ import annotations

import pytest

from workbench.grading import claims, tautology
from workbench.grading.drills import load_drills
from workbench.grading.grader import grade
from workbench.grading.practice import prepare
from workbench.grading.text import norm

D = load_drills()
CORE = ("mechanism", "artifact", "owner", "rollback")

SOUP = ("Chat tenant docs tenant 40 req/s 10 req/s TTFT p99 17.4 to 21.4 ms ITL p99.9 per-tenant same seed replay "
        "iteration trace owner serving runtime team rollback canary revert if regresses previous scheduler config "
        "2048 token budget.\nTTFT up because chunked prefill; ITL down because chunked prefill.\n"
        "Decision: sweep, canary, owner, rollback.")
FIELDS = ("Root cause = chunked prefill 512-token budget. Evidence = per-tenant TTFT, same seed. Decision = sweep, "
          "owner serving runtime team, rollback canary.")
LIST = ("Mechanism: shape drift, bucket miss, generic fallback, unfused mapping, queueing, p99 tail.\n"
        "Artifact: closed-loop mapping report, same seed, per-bucket hit rate, misses by reason.\n"
        "Fix: buckets, 1024, 2048, recompile, envelope.\nOwner: ML compiler team, serving on-call.\n"
        "Rollback: canary 5%, pinned plan, auto-revert, p99 +5%, production shapes.")
YAML = ("Summary of findings below.\nroot_cause: batch formation delay / queueing (max_delay_s 2 ms -> 20 ms)\n"
        "metric: api_stream_p99 11.5 -> 46 ms\nartifact: batching_knee same_seed A/B; wait_vs_service split\n"
        "fix: revert max_delay_s=2ms, max_batch=16\nowner: serving_runtime_team; inference_oncall\n"
        "rollback: canary 10%, auto_flip_back on p99 regression")
HONEST = ("TTFT p99 went from 17.4 to 21.4 ms for the document tenant after the change. With a 512-token budget "
          "each iteration first gives one token to every running decode, so a 2,500-token document is cut into "
          "chunks spread over five or more iterations, and its first token only comes out after the last chunk. "
          "I would prove it with per-tenant TTFT at the same seed, whole versus chunked, and the iteration trace. "
          "The serving runtime team owns the scheduler config. Canary a 2,048-token budget and revert to the "
          "previous config if TTFT p99 regresses.")


@pytest.mark.parametrize(("drill", "text"), [("chunked-prefill-ttft", SOUP), ("chunked-prefill-ttft", FIELDS),
                                             ("compiler-runtime-mapping", LIST), ("batching-queueing-delay", YAML)])
def test_soup_fields_lists_and_config_dumps_earn_nothing(drill, text):
    g = grade(D[drill], text)
    assert g.verdict == "weak" and not any(g.elements[k].present for k in CORE), g.to_json()


def test_the_same_content_in_sentences_keeps_its_credit():
    assert grade(D["chunked-prefill-ttft"], HONEST).verdict == "strong"


@pytest.mark.parametrize(("line", "kind"), [
    ("chat tenant docs tenant ttft p99 itl p99.9 per-tenant same seed replay iteration trace owner serving runtime "
     "team rollback canary revert", "soup"),
    ("Decision: sweep, canary, owner, rollback.", "list"),
    ("Root cause = chunked prefill 512-token budget.", "fields"),
    ("Decision = raise the budget, owner runtime, rollback canary.", "fields"),
    # the forms a senior writes, which are claims or readings, not degenerate
    ("Artifact: TTFT per tenant and the ITL CDF out to p99.9 at the same seed, whole versus chunked.", None),
    ("chat TTFT p99 2.9 ms -> 574 ms, goodput 100 -> 40, tok/s flat", None),
    ("Fix: add buckets at 1024/2048/4096 and recompile.", None),
    ("max_delay_s = 0.002", None),
    ("owner = serving runtime team", None),  # a label written with '=' (three such lines make fields: see below)
])
def test_each_degenerate_form_is_named(line, kind):
    assert claims.degenerate(norm(line)) == kind


def test_three_assigned_fields_make_every_assignment_a_field():
    text = ("The pooled p99 went from 1.50 ms to 2.18 ms after static placement, with the short stream carrying it. "
            "Root cause = static bucket-to-core placement under skewed traffic. Artifact = placement_skew report, "
            "same seed. Owner = ML compiler team. Rollback = placement flag, 10% canary, revert on p99 > 1.65 ms.")
    g = grade(D["static-placement-imbalance"], text)
    assert not g.elements["owner"].present and not g.elements["rollback"].present and g.verdict == "weak"
    assert "assigns labels" in g.elements["owner"].hint  # the learner is told why


@pytest.mark.parametrize(("drill", "sentence", "blanked"), [
    ("chunked-prefill-ttft", "TTFT up because chunked prefill.", True),
    ("kv-preemption-storm", "Goodput fell because the KV cache was cut.", True),
    ("fusion-memory-bursts", "Spill increased from 1.1 MiB to 11.3 MiB because the fusion change increased spill.",
     True),
    ("compiler-runtime-mapping", "The bucket hit rate fell from 97% to 79% because fewer requests hit a bucket.", True),
    # a step as the effect, or a colon's explanation after the change, is no tautology
    ("static-placement-imbalance", "Load imbalance caused by static placement.", False),
    ("chunked-prefill-ttft", "TTFT rose because of chunked prefill: each long prompt is cut into 512-token pieces.",
     False),
])
def test_a_cause_that_restates_the_change_or_its_effect_is_taken_out(drill, sentence, blanked):
    d = D[drill]
    change = tautology.change_words(" ".join((d.prompt, *d.rubric.change_terms)))
    n = norm(sentence)
    after = tautology.untautological(n, change)
    assert (after != n) is blanked
    if blanked:  # the causal word goes with it: nothing links the reading to anything
        assert "because" not in after and "caused" not in after


def test_a_tautology_earns_no_mechanism_and_says_why():
    text = ("The TTFT p99 regression from 17.4 ms to 21.4 ms was caused by enabling chunked prefill with a 512-token "
            "budget; chunked prefill is why time-to-first-token went up. ITL p99.9 improved from 12.6 ms to 2.0 ms "
            "because inter-token latency got better.")
    g = grade(D["chunked-prefill-ttft"], text)
    assert not g.elements["mechanism"].present


def test_a_reference_pasted_back_with_its_figures_changed_is_still_the_reference():
    ev = prepare(D["kv-preemption-storm"])
    changed = ev.reference.replace("531", "612").replace("297.4", "311.9").replace("3.58", "3.11")
    assert changed != ev.reference
    g = grade(D["kv-preemption-storm"], changed)
    assert g.verdict == "weak" and not any(e.present for e in g.elements.values())


def test_a_fluent_answer_to_another_drill_earns_nothing_here_but_a_misdiagnosis_of_this_one_is_graded():
    batching = ("The regression is batch formation delay, not compute. The batcher now holds each request until 32 "
                "have accumulated or the 20 ms window expires; at 1,500 req/s the window expires first, so almost "
                "every request waits out most of it. A batch of 29 then takes 15 ms to run and each member completes "
                "only with its batch, so queue wait and longer service both land on p99. The proof is a same-seed "
                "rerun of old against new config with p99 split into wait and service. The serving runtime team "
                "owns the batcher; canary max_delay 2 ms and revert if p99 regresses.")
    g = grade(D["precision-win-without-fallback"], batching)
    assert g.verdict == "weak" and "another incident" in g.elements["mechanism"].hint
    assert grade(D["batching-queueing-delay"], batching).verdict == "strong"
    # the same wrong class told about this drill's own change stays a (partial) misdiagnosis
    wrong = ("After the INT8 plan went to canary, p99 rose because the dynamic batcher holds requests for a long "
             "window and batches grow, so everyone waits. I'd rerun the canary at the same seed per bucket. The ML "
             "compiler team owns the INT8 plan; revert to the bf16 plan if canary p99 stays above 2 ms.")
    assert grade(D["precision-win-without-fallback"], wrong).verdict == "partial"

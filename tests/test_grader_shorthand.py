"""A senior's shorthand: one argued sentence, then the other elements as short notes ('Budget 2048. Serving runtime
team. Revert if canary TTFT p99 regresses.'). Written here from the drills' ground truths, not corpus answers: each
must grade strong, and the notes must not turn keyword lists and arrow chains into answers."""

from __future__ import annotations

import pytest

from workbench.grading.drills import load_drills
from workbench.grading.grader import grade

D = load_drills()

SHORTHAND = [
    ("batching-queueing-delay", "Requests now sit up to 20 ms waiting for a batch of 32 and the bigger batch runs "
     "longer, so the API stream's p99 went 11 -> 46 ms though cores are less busy. Same-seed wait vs service split, "
     "both configs. Revert max_delay to 2 ms. Serving runtime. Flip back if canary p99 > 15 ms."),
    ("fairness-starvation", "At 95% busy strict priority serves batch only when no interactive request waits, so "
     "batch waits out every burst and its p99 went 430 -> 842 ms; the wait moved, the mean didn't. Same-seed "
     "per-stream wait, WFQ vs priority. Back to WFQ, weights by load. Serving runtime team. Revert if batch p99 > 500 "
     "ms."),
    ("memory-residency-eviction", "Three 12 GiB models on a 32 GiB card means one is always out, and mixed traffic "
     "keeps evicting and reloading weights over PCIe, so cores stall on copies and p99 went 5.5 -> 40 ms for all "
     "three. Same-seed 64 vs 32 GiB, reload counts. Embed on its own accelerator. Serving platform. Move back if "
     "canary shows reloads."),
    ("recompile-storm", "Each unseen long length compiles for ~2 s on the request path and, with buckets pinned, "
     "stalls that core and its queue, so chat p99 went 15 ms -> 1.04 s while p95 improved. Same-seed fallback vs "
     "recompile, compile timestamps. Precompile 1024/2048/4096. ML compiler team. Flip to fallback if canary p99 > "
     "25 ms."),
    ("cost-model-misses-contention", "The cost model assumes each batch has HBM to itself, but at 9k req/s four cores "
     "run the memory-bound unfused block at once and share bandwidth, so batches run 25% long and p99 went 1.4 -> "
     "4.5 ms. Same-seed predicted vs observed, 1 vs 4 cores. Elementwise fusion plus a contention term. ML compiler "
     "team. Revert if canary p99 regresses."),
    ("precision-win-without-fallback", "The benchmark's prompts were all short, but 73% of production prompts exceed "
     "512 and miss every INT8 bucket, running the slow generic path, so the canary p99 went 1.8 -> 11.4 ms. "
     "Same-seed replay of prod prompts, misses by reason. INT8 buckets at 1024/2048. ML compiler team. Pull the "
     "canary if p99 is above bf16."),
    ("fusion-memory-bursts", "Aggressive fusion keeps the score matrix plus K/V on chip, which spills to HBM for "
     "513-1024, and four cores spilling at once contend for HBM, so p95 went 3.1 -> 5.3 ms though the offline mean "
     "improved. Same-seed per-kernel spill bytes under load. Cap fusion to elementwise there. ML compiler team. Flip "
     "the fusion flag back if canary p95 regresses."),
    ("average-hides-tail", "The docs tenant's 1,500-token prompts miss every bucket (max 512) and run the generic "
     "path; at 2% of requests they barely move the mean but own the pool's p99, which went 0.3 -> 1.9 ms. Same-seed "
     "per-stream p99, misses by reason. Add 1024/2048 buckets. ML compiler team. Hold onboarding until per-stream "
     "p99 passes."),
    ("chunked-prefill-ttft", "Decodes take the 512 budget first, so a 2,500-token doc prefill is spread over 5+ "
     "iterations and its first token waits for the last chunk, so docs TTFT p99 went 12.4 -> 16.6 ms. Same-seed "
     "whole vs chunked, TTFT per tenant, ITL CDF. Budget 2048. Serving runtime team. Revert if canary TTFT p99 "
     "regresses."),
    ("static-placement-imbalance", "87% of requests are short and pinned to one core at 92% busy; its queue wait "
     "explodes and drags the pooled p99 from 1.5 to 2.7 ms. Same-seed per-core utilisation. Least-loaded dispatch. "
     "Runtime team. Revert if canary p99 regresses."),
]


@pytest.mark.parametrize(("drill", "text"), SHORTHAND)
def test_a_seniors_shorthand_grades_strong(drill: str, text: str) -> None:
    assert grade(D[drill], text).verdict == "strong"


def test_the_fix_in_a_note_needs_a_value_or_words_and_an_argued_answer() -> None:
    argued = ("Decodes take the 512 budget first, so a 2,500-token doc prefill is spread over 5+ iterations and its "
              "first token waits for the last chunk. ")
    drill = D["chunked-prefill-ttft"]
    assert grade(drill, argued + "Budget 2048.").elements["fix"].present
    assert not grade(drill, argued + "Chunk size.").elements["fix"].present  # a bare term: no value, two words
    # the notes of an arrow chain are no shorthand answer: nothing argues
    chain = "512 budget -> docs split -> 5 iterations -> first token late -> ttft p99 up. Budget 2048."
    assert not grade(drill, chain).elements["fix"].present
    # a note with a verb states something ('Flash attention exists.'), it proposes nothing
    fusion = ("Aggressive fusion keeps the score matrix on chip, which spills to HBM for 513-1024, so four cores "
              "contend for HBM and p95 went 3.1 -> 5.3 ms. Flash attention exists.")
    assert not grade(D["fusion-memory-bursts"], fusion).elements["fix"].present


def test_an_organisation_alone_on_its_line_is_the_owner() -> None:
    assert grade(D["batching-queueing-delay"], "Revert max_delay to 2 ms. Serving runtime.").elements["owner"].present
    assert not grade(D["batching-queueing-delay"], "Serving runtime was fine.").elements["owner"].present

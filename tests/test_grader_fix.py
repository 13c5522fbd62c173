"""The fix element on phrasings the first rules missed or over-read (twelfth session).

Each case was written for this file, not copied from the labelled corpus, and each fails on
the rules before it: a verb's -ing form, a config value's underscore, a pasted config's
proposed line, a drill's remedy in plain words; and, the other way, a verb used as a noun,
a negative object, the rollout's own words, an uncertain guess and another mechanism's remedy.
"""

from __future__ import annotations

import pytest

from workbench.grading.drills import load_drills
from workbench.grading.grader import grade

D = load_drills()

CASES = [
    # a verb's -ing drops its 'e': 'tile' = 'tiling', 'fuse' = 'fusing'
    ("fusion-memory-bursts", "I'd go for tiling the fused kernel so it stops spilling.", True),
    ("cost-model-misses-contention", "The fix is fusing the three small ops so each batch moves less memory.", True),
    # ... where the -ing form proposes: after 'by', 'go for' ..., or as the subject of a modal
    ("recompile-storm", "Precompiling the 1k and 2k buckets would remove the stalls.", True),
    ("cost-model-misses-contention", "On the last chip we ended up fusing, and it helped.", False),
    ("fusion-memory-bursts", "Merging the steps into one job saves launch cost, which is why the bench looked good.",
     False),
    # a verb is no fix word: 'raising' the wrong setting is not the drill's 'raise the budget'
    ("chunked-prefill-ttft", "I'd give the KV cache more room by raising gpu_memory_utilization to 0.95.", False),
    # a config value writes 'least-loaded' with an underscore; a pasted line marked as the proposal
    ("static-placement-imbalance", "placement: least_loaded   # proposed", True),
    ("static-placement-imbalance", "placement: least_loaded", False),  # the setting read back, not changed
    # a pasted line whose key is a fix word, with what it was
    ("batching-queueing-delay", "max_delay_s: 0.002   # was 0.020", True),
    # the drill's remedy in plain words
    ("average-hides-tail", "I'd have the compiler team prepare kernels for longer documents.", True),
    ("memory-residency-eviction", "Put at most two models on each 32 GiB card.", True),
    ("priority-budget-starvation", "Spin up another server for the surge.", True),
    ("fusion-memory-bursts", "The compiler folks need to tile that kernel properly.", True),
    # a verb's plain form used as a noun names a thing, it proposes nothing ...
    ("compiler-runtime-mapping", "This is a recompile problem, plain and simple.", False),
    # ... but a participle after an article still describes the change proposed
    ("priority-budget-starvation", "Fix: then priority with a reserved fraction of the prefill budget for docs.", True),
    # a negative object proposes nothing
    ("kv-preemption-storm", "Ship nothing until the blocks question is settled.", False),
    ("kv-preemption-storm", "Change nothing about the cache blocks yet.", False),
    # how a change is rolled out is not what it changes
    ("fusion-memory-bursts", "Put the new plan behind the fusion flag and canary it against the elementwise plan.",
     False),
    ("fusion-memory-bursts", "The fusion owner should switch the plan to elementwise behind the fusion-level flag.",
     True),
    # a guess at a remedy, or a remedy in general, is not one proposed
    ("fairness-starvation", "Not sure what the right fix is, maybe some kind of aging.", False),
    ("recompile-storm", "Caching compiled kernels is the standard mitigation for this.", False),
    ("fairness-starvation", "I'd put weighted fair queueing back, because right now we don't know the batch SLO.",
     True),
    # another mechanism's remedy: a cache's working set is not the batcher's delay
    ("batching-queueing-delay", "Shrink max_batch until the working set fits in cache.", False),
    ("precision-win-without-fallback", "I'd pace the memory traffic by lowering the batch size for the INT8 plan.",
     False),
]


@pytest.mark.parametrize(("drill", "text", "want"), CASES)
def test_the_fix_reads_forms_configs_and_plain_words_and_refuses_what_proposes_nothing(drill, text, want):
    assert grade(D[drill], text).elements["fix"].present is want

"""The elements on the token drills' phrasings that writer AB, scored once, showed the rules missed or over-read
(thirteenth session).

Each case was written for this file, not copied from the labelled corpus. The first of each pair fails on the rules
before it; the second guards the other side.
"""

from __future__ import annotations

import pytest

from workbench.grading.drills import load_drills
from workbench.grading.grader import grade

D = load_drills()

CASES = [
    # fix: memory given back is a setting restored, bounded as 'back to 4,000 blocks' is, beside an option turned one
    # way; that option alone is still unbounded ('to what?')
    ("fix", "kv-preemption-storm", "Fix: hand back the memory we took from the KV cache, or lower max_num_seqs.", True),
    ("fix", "kv-preemption-storm", "Fix: lower max_num_seqs.", False),
    # fix: deciding about a setting changes nothing; a release refused is no proposal, even after a 'but'
    ("fix", "chunked-prefill-ttft", "The runtime lead should make the call on the token budget.", False),
    ("fix", "chunked-prefill-ttft", "But I would not ship the 512 budget to all regions until a load test with the "
     "production mix shows TTFT p99 at baseline.", False),
    ("fix", "chunked-prefill-ttft", "I wouldn't keep the 512 budget, but raise it to 2048 instead.", True),
    # owner: a chat mention names a person; a tool mentioned is still no one
    ("owner", "kv-preemption-storm", "@maria runtime owns the memory split.", True),
    ("owner", "kv-preemption-storm", "@grafana will page us when it fires.", False),
    # rollback: the rollout held at its canary until a validation passes is a gate ...
    ("rollback", "chunked-prefill-ttft", "Nothing goes past the canary until TTFT p99 and ITL p99.9 are back under "
     "target.", True),
    # ... as is a release refused with 'wouldn't' until one passes; no validation, no gate
    ("rollback", "priority-budget-starvation", "I wouldn't leave strict priority on for the surges until a load "
     "test at surge rate passes both SLOs.", True),
    ("rollback", "priority-budget-starvation", "I wouldn't worry about strict priority until the weekend.", False),
    # ... and a complaint is no condition, even one about latency
    ("rollback", "priority-budget-starvation", "If customers complain about document latency, we switch back to "
     "fcfs.", False),
    ("rollback", "priority-budget-starvation", "If document TTFT p99 breaches its SLO we switch back to fcfs.", True),
    # mechanism: a compute-efficiency story is the wrong bottleneck class for chunked prefill
    ("mechanism", "chunked-prefill-ttft", "TTFT went up because the 512-token chunks run as smaller matmuls, so tensor "
     "core utilization drops and the first token comes out later; the ITL stalls went away.", False),
    # ... a rejected term read only as a phrase of its own words: 'chunks of redone prefill' is no 'chunked prefill'
    ("mechanism", "kv-preemption-storm", "With 320 blocks the cache is full, so a decode that needs a block preempts "
     "the newest sequence and it must recompute its prefill later: 755 chunks of redone prefill work, which is where "
     "TTFT p99 goes.", True),
    ("mechanism", "kv-preemption-storm", "It is chunked prefill: the cache is full, sequences get preempted and "
     "recomputed, and TTFT p99 goes up.", False),
    # ... and a request that finishes frees its memory: that is no preemption
    ("mechanism", "kv-preemption-storm", "When the cache is full, new requests cannot be admitted, so they sit in the "
     "queue until another request finishes and frees memory; that wait is the TTFT.", False),
    # ... a queue analogy: every new chat shopper walks past the document shoppers
    ("mechanism", "priority-budget-starvation", "Picture one till in a rush with more shoppers than it can handle. A "
     "fast lane for chat means each new chat shopper walks past the document shoppers, so their slowest waits doubled, "
     "and the till got no faster.", True),
    # workload: a direction in its -ing form beside the tenant that moved
    ("workload", "priority-budget-starvation", "The TTFT panel shows docs jumping right when the flag flipped.", True),
]


@pytest.mark.parametrize("element, drill, text, want", CASES)
def test_serving_phrasings_read_as_the_labelling_guide_says(element, drill, text, want):
    assert grade(D[drill], text).elements[element].present is want, text

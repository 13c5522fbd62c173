"""Forms read in writers BU and BV (scored once in round 17 at df45f04, read in the twenty-second session).

Each answer below is written for this test (no writer's text); each case in ``CASES`` grades otherwise on df45f04
(the controls grade the same there):
* a prompt 'fragmented' over iterations is chunking, not the allocator's fragmentation (which is still refused);
  the feature 'put off' on a condition is a way back; a team 'who run the replicas' asks for no run;
* chain steps in plain words: documents that 'sit until a lull', priority that 'didn't create throughput';
* a wrong cause named as one part of a parenthesised breakdown ('(shape, noise, contention)'), as an analogy's
  thing ('a river network'), or counted at nought ('preemptions are 0') is not put forward;
* a bandwidth test 'against a healthy node' is a comparison; a tail 'more than one second, from 15 ms' is sized;
* fixes: undone in a first clause before a held way back, decided under 'Decision:', not a guess at what will
  happen ('I'd guess we end up rolling it back').
"""

from __future__ import annotations

import pytest

from workbench.grading.drills import load_drills
from workbench.grading.grader import grade

D = load_drills()

CASES = [
    # (drill, element, expected, answer)
    ("chunked-prefill-ttft", "mechanism", True,
     "Running decodes take their tokens first and a long document prompt is fragmented across six iterations of "
     "the 512-token budget, so its first token waits for the last fragment and docs TTFT p99 climbs."),
    ("spec-decode-acceptance", "rollback", True,
     "Canary the acceptance guard on the code tenant; if code TPOT p99 stays above the speculation-off run, we "
     "put speculation off for the whole pool."),
    ("priority-budget-starvation", "artifact", False,
     "I'd hand this to the serving platform team, who run the replicas and admission control, to own the fix."),
    ("priority-budget-starvation", "mechanism", True,
     "Both runs serve the same tokens per second, so priority didn't create throughput. In the surge interactive "
     "prompts are served first out of every iteration's budget, so document prompts sit until a lull that never "
     "comes while the surge lasts."),
    ("cost-model-misses-contention", "mechanism", True,
     "The roofline assumed one batch alone with all of HBM; at 52% busy several cores are in their memory phases "
     "together, their demand exceeds HBM bandwidth, every memory phase stretches and batches overrun the "
     "prediction, so queues build and p99 rises. I'd rerun the mapping report at the same seed with the error "
     "broken into parts (shape, noise, contention)."),
    ("tp-allreduce-slow-link", "mechanism", True,
     "Think of a river network with one narrowed culvert. Every GPU waits at the two all-reduces of each layer, "
     "and since the reboot they go over PCIe instead of NVLink, so all-reduce takes 67% of device time, every "
     "iteration stretches and TTFT and ITL p99 rise with it."),
    ("tp-allreduce-slow-link", "artifact", True,
     "Confirm with nvidia-smi topo -m and the all_reduce_perf bus bandwidth against a healthy node."),
    ("spec-decode-acceptance", "mechanism", True,
     "My first thought was KV pressure, maybe preempting. But preemptions are 0. Code acceptance fell from 0.8 to "
     "0.3, so a step yields about 1.4 tokens while still paying the draft's passes and the target's verification; "
     "each token costs more, sequences stay in the batch longer and TPOT p99 rises for every tenant."),
    ("recompile-storm", "workload", True,
     "Requests on that core all wait, so p99 of the chat stream gets to more than one second, from 15 ms."),
    ("spec-decode-acceptance", "fix", False, "I'd guess we end up rolling speculation back."),
    ("fairness-starvation", "fix", True,
     "I'd go back to weighted fair queueing, and keep strict priority off until a load test shows both streams "
     "meet their p99 targets."),
    ("tp-allreduce-slow-link", "fix", True,
     "Decision: this node stays drained; it rejoins only when all_reduce_perf matches a healthy node."),
]

CONTROLS = [  # graded the same before these rules: the allocator's fragmentation, a release's plan, a fix named only
    # after its condition, preemptions counted up from nought
    ("chunked-prefill-ttft", "mechanism", False,
     "The chunks leave the KV cache fragmented, so the allocator cannot find contiguous blocks for the long "
     "document prompts across several iterations and their first token waits, TTFT p99 up."),
    ("tp-allreduce-slow-link", "fix", False, "Decision: hold the release until replicas pass the load test."),
    ("memory-residency-eviction", "fix", False, "Release: keep the 64 GiB pool serving until the load test passes."),
    ("spec-decode-acceptance", "mechanism", False,
     "Preemptions rose from 0 to 531 as the KV cache filled, so the preemption storm is what stretched TPOT p99."),
]


@pytest.mark.parametrize(("drill", "element", "expected", "answer"), CASES + CONTROLS)
def test_round17_forms(drill, element, expected, answer):
    assert grade(D[drill], answer).elements[element].present is expected

"""Forms read in the writers of rounds 17 and 18: one table each, one test.

Round 17. BU and BV (scored once in round 17 at df45f04, read in the twenty-second session).

Each answer below is written for this test (no writer's text); each case in ``CASES_17`` grades otherwise on df45f04
(the controls grade the same there):
* a prompt 'fragmented' over iterations is chunking, not the allocator's fragmentation (which is still refused);
  the feature 'put off' on a condition is a way back; a team 'who run the replicas' asks for no run;
* chain steps in plain words: documents that 'sit until a lull', priority that 'didn't create throughput';
* a wrong cause named as one part of a parenthesised breakdown ('(shape, noise, contention)'), as an analogy's
  thing ('a river network'), or counted at nought ('preemptions are 0') is not put forward;
* a bandwidth test 'against a healthy node' is a comparison; a tail 'more than one second, from 15 ms' is sized;
* fixes: undone in a first clause before a held way back, decided under 'Decision:', not a guess at what will
  happen ('I'd guess we end up rolling it back').

Round 18. BW, BX and BY (scored once in round 18 at c77343a, read in the twenty-second session).

Each answer below is written for this test (no writer's text); each case in ``CASES_18`` grades otherwise on c77343a
(the controls grade the same there):
* a paragraph written as one sentence, its cause argued at length, is no cram of participles; a list under 'doesn't
  need' proposes nothing (an answer of denials claims nothing);
* fixes: 'node' alone is no fix word ('add another node'); an opinion that says an imperative proposes it ('I would
  say limit the fusion ...'); a depth limit on fusion is bounded fusion; the old config kept 'on standby' is the
  way back, not a fix;
* readings and proofs: two figures read 'versus' each other propose no a/b; 'Evidence I'd want:' labels a proof's list;
* chain steps and wrong causes: prompts fed from 'whatever remains' of the budget; 'noise' the dashboard files a
  move as, a story told from elsewhere ('this reminds me of when ...') and 'candidates' offered are not put forward;
* workload: 'not noise' dismisses no move; a gain read first and the regression after 'but' is stated;
* a way back: 'we return to 4,000 blocks' on a condition.
"""

from __future__ import annotations

import pytest

from workbench.grading.drills import load_drills
from workbench.grading.grader import grade

D = load_drills()

CASES_17 = [
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

CONTROLS_17 = [  # graded the same before these rules: the allocator's fragmentation, a release's plan, a fix named only
    # after its condition, preemptions counted up from nought
    ("chunked-prefill-ttft", "mechanism", False,
     "The chunks leave the KV cache fragmented, so the allocator cannot find contiguous blocks for the long "
     "document prompts across several iterations and their first token waits, TTFT p99 up."),
    ("tp-allreduce-slow-link", "fix", False, "Decision: hold the release until replicas pass the load test."),
    ("memory-residency-eviction", "fix", False, "Release: keep the 64 GiB pool serving until the load test passes."),
    ("spec-decode-acceptance", "mechanism", False,
     "Preemptions rose from 0 to 531 as the KV cache filled, so the preemption storm is what stretched TPOT p99."),
]

ONE_SENTENCE = (
    "Root cause is the scheduler rather than the chip: under strict priority the batch stream is served only when no "
    "interactive request is waiting, and because the two cores sit at about 95% busy there is almost no idle time "
    "left over for it, so batch requests queue behind every interactive arrival and their wait grows without bound "
    "as load approaches capacity, which is why the batch p99 roughly doubled to about 840 ms while interactive got "
    "faster and the mean barely moved, since the total waiting is conserved and only moved onto the batch stream, "
    "something proven by a same-seed rerun with per-stream p99 split into wait and service time under WFQ and "
    "strict priority, fixed by going back to weighted fair queueing with a batch share of 30%, owned by the serving "
    "runtime team, and rolled back to strict priority only if interactive p99 on the canary exceeds its SLO.")

CASES_18 = [
    # (drill, element, expected, answer)
    ("fairness-starvation", "mechanism", True, ONE_SENTENCE),
    ("fairness-starvation", "owner", True, ONE_SENTENCE),
    ("tp-allreduce-slow-link", "artifact", False,
     "This doesn't need a same-seed replay, a per-iteration compute versus all-reduce split or all_reduce_perf "
     "against a healthy node. The cause will go away on its own."),
    ("tp-allreduce-slow-link", "owner", False,
     "Nor does it need an owner like the GPU fleet on-call, or a canary with a revert."),
    ("tp-allreduce-slow-link", "fix", False, "I'd get someone to re-tune the kernels and add another node."),
    ("fusion-memory-bursts", "fix", True,
     "The ML compiler team owns it; I would say limit the fusion so the chain is cut before the down projection."),
    ("fusion-memory-bursts", "fix", True,
     "The compiler team puts a depth limit of four on fused kernels, so the hidden activations stop spilling."),
    ("kv-preemption-storm", "fix", False,
     "I'd keep the old 4,000-block config on standby and switch back to it as soon as a canary shows preemptions."),
    ("kv-preemption-storm", "artifact", False,
     "The numbers say it all: KV max 100% versus 15%, 531 preemptions versus zero."),
    ("spec-decode-acceptance", "artifact", True,
     "Evidence I'd want: same seed, per tenant, acceptance per draft token, tokens per step and TPOT, for the old "
     "traffic, the new traffic, and the new traffic with speculation off, plus the draft's share of device time."),
    ("chunked-prefill-ttft", "mechanism", True,
     "Each round the scheduler serves every live conversation its token first and feeds a prompt from whatever "
     "remains of the 512, so a 2,500-token document goes in over five rounds and its first token waits for the "
     "last one, which is why docs TTFT p99 climbs."),
    ("average-hides-tail", "mechanism", True,
     "Docs prompts are longer than the largest bucket, so every one of them misses and runs the generic path at "
     "about 2 ms against 0.14 ms for chat; that adds a few hundredths of a millisecond to the mean, which the "
     "dashboard files as noise, but docs are 2% of requests, so the slowest 1% is all docs and p99 rises sevenfold."),
    ("recompile-storm", "mechanism", True,
     "This reminds me of when we rolled out per-station filters and, on the first day a new network came online, "
     "every station stalled our worker while its filter compiled. Here each new long shape triggers a two-second "
     "compile of a new bucket on the core that "
     "bucket is pinned to, so everything queued on that core waits behind the compile and p99 goes past a second."),
    ("kv-preemption-storm", "mechanism", True,
     "Two candidates: compute-bound or KV starvation. Compute is out, since tokens/s is the same in both runs. With "
     "only 320 blocks the cache fills, so running sequences get preempted and recomputed and new prompts wait for "
     "free blocks, which is why chat TTFT p99 goes from 3.6 to 297 ms."),
    ("chunked-prefill-ttft", "workload", True,
     "Root cause is the budget, not noise: the docs prompts are split over five iterations, which is why docs "
     "TTFT p99 went 19.96 to 27.39 ms."),
    ("priority-budget-starvation", "workload", True,
     "In the surge interactive TTFT p99 fell from 815 ms to 45 ms but docs went from 909 ms to 1,292 ms."),
    ("kv-preemption-storm", "rollback", True,
     "We canary the split, and if preemptions are above zero or TTFT p99 is over its SLO, we return to 4,000 blocks."),
]

CONTROLS_18 = [  # graded the same before these rules
    ("batching-queueing-delay", "fix", True, "We don't need a new plan, just revert max_delay to 2 ms."),
    ("batching-queueing-delay", "fix", True, "It doesn't need more cores, we revert max_delay to 2 ms."),
    ("fusion-memory-bursts", "fix", False, "Probably limit fusion somehow."),
    ("spec-decode-acceptance", "artifact", True,
     "I'd rerun the same seed per tenant with speculation on versus off and compare TPOT."),
]


# read in the whole corpus after round 18 (one answer, BK's): a definition of the formula's symbols sets nothing;
# the case grades otherwise on 6314e3b
AFTER_18 = [
    ("spec-decode-acceptance", "fix", False,
     "Let p be the acceptance per token and k = 4 the draft length, so a step yields (1 - p^(k+1))/(1 - p) tokens."),
]
ALL = CASES_17 + CONTROLS_17 + CASES_18 + CONTROLS_18 + AFTER_18


@pytest.mark.parametrize(("drill", "element", "expected", "answer"), ALL)
def test_rounds_17_and_18_forms(drill, element, expected, answer):
    assert grade(D[drill], answer).elements[element].present is expected

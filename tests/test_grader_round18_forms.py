"""Forms read in writers BW, BX and BY (scored once in round 18 at c77343a, read in the twenty-second session).

Each answer below is written for this test (no writer's text); each case in ``CASES`` grades otherwise on c77343a
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

ONE_SENTENCE = (
    "Root cause is the scheduler rather than the chip: under strict priority the batch stream is served only when no "
    "interactive request is waiting, and because the two cores sit at about 95% busy there is almost no idle time "
    "left over for it, so batch requests queue behind every interactive arrival and their wait grows without bound "
    "as load approaches capacity, which is why the batch p99 roughly doubled to about 840 ms while interactive got "
    "faster and the mean barely moved, since the total waiting is conserved and only moved onto the batch stream, "
    "something proven by a same-seed rerun with per-stream p99 split into wait and service time under WFQ and "
    "strict priority, fixed by going back to weighted fair queueing with a batch share of 30%, owned by the serving "
    "runtime team, and rolled back to strict priority only if interactive p99 on the canary exceeds its SLO.")

CASES = [
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

CONTROLS = [  # graded the same before these rules
    ("batching-queueing-delay", "fix", True, "We don't need a new plan, just revert max_delay to 2 ms."),
    ("fusion-memory-bursts", "fix", False, "Probably limit fusion somehow."),
    ("spec-decode-acceptance", "artifact", True,
     "I'd rerun the same seed per tenant with speculation on versus off and compare TPOT."),
]


@pytest.mark.parametrize(("drill", "element", "expected", "answer"), CASES + CONTROLS)
def test_round18_forms(drill, element, expected, answer):
    assert grade(D[drill], answer).elements[element].present is expected

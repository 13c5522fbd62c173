"""Forms read in the writers of rounds 19 to 23: one table each, and the gamed answers of each.

Round 19. BZ and CA (scored once at ae6ba5a, read in the twenty-third session).

Each answer below is written for this test (no writer's text); each case in ``CASES_19`` and ``GAMED_19`` grades
otherwise on ae6ba5a (the controls grade the same there):
* wrong causes tested or named, not put forward: a team's name ('the tokenizer team'), a counterfactual ('if it
  were a network issue you'd see ...'), a gut feeling turned from further on ('my gut said tokenizer ... but'), what
  such a cause does in general set against this case ('a leak grows over time, whereas here ...');
* fixes: a description of what the system does ('the scheduler reserves KV blocks for ...', 'a running request') is
  no proposal; 'to check it I would profile ...' proposes a proof; fused kernels capped at a number of ops bound
  fusion;
* artifacts: evidence dismissed ('a single seed tells you very little'), a figure inside a way back's condition ('if
  TPOT p99 stays above the no-spec number'), the report someone already wrote and a team named after its work ('the
  benchmarking group') are no proof proposed;
* owners: a team given the work in a relative clause ('serving runtime, who own the batcher settings'), a team's
  person doing it, the speaker taking 'the ownership', 'as the engineer on the hook for', 'the person on call for';
  a team that holds no lever of the fix (a product's data science team, a benchmarking group) owns nothing;
* gamed: a menu of 'several factors' and of evidence, fixes and owners alike; every sentence hedged, 'might or might
  not' included; a sentence certifying three elements ('ownership is clear, the rollback plan is in place, ...').
"""

from __future__ import annotations

import pytest

from workbench.grading.drills import load_drills
from workbench.grading.grader import grade

D = load_drills()

CASES_19 = [
    ("kv-preemption-storm", "mechanism", True,
     "If it were a network problem you'd see the slowdown on every pool, not only where the cache fills. The cache "
     "was cut to 320 blocks, so once it is full the scheduler preempts running sequences and they redo their "
     "prefill, which is why time to first token blows up."),
    ("tp-allreduce-slow-link", "mechanism", True,
     "My gut said thermal throttling, since a reboot often resets the fan curves on these boxes and that was the "
     "last thing anyone touched on the node before the numbers moved, and a hot card clocks down and makes every "
     "kernel slower for the rest of the day, which is the story I have seen most often in the field, for weeks "
     "on end. But the all-reduce share went from 20% to 67%, so the GPUs are waiting on each other: NVLink is down "
     "and the all-reduce crawls over PCIe, which stretches every step and pushes ITL p99 up."),
    ("kv-preemption-storm", "mechanism", True,
     "A leak grows slowly over hours, whereas here the cache is simply too small from the start. With 320 blocks it "
     "fills, so the scheduler preempts running sequences, which must redo their prefill, and new prompts wait for "
     "room, so time to first token blows up."),
    ("priority-budget-starvation", "fix", False,
     "When strict priority is on, the scheduler reserves the whole budget for the interactive tenant so that its "
     "requests never wait."),
    ("spec-decode-acceptance", "mechanism", True,
     "Code acceptance fell from 0.80 to 0.30, so each step keeps about 1.4 tokens instead of 3.4 while it still "
     "pays for four draft passes; every token costs more, sequences stay longer in the batch and TPOT p99 rises. "
     "Owner: the tokenizer team, since the new language tokenizes differently."),
    ("kv-preemption-storm", "fix", False,
     "When a running request needs one more block and none is free, the scheduler preempts the newest one."),
    ("cost-model-misses-contention", "fix", False, "To check it I would profile it under load."),
    ("fusion-memory-bursts", "fix", True, "The fix is to cap fused kernels at 4 ops so the MLP splits."),
    ("spec-decode-acceptance", "artifact", False,
     "The p99 figures are jumpy on a simulator run and a single seed tells you very little about a tail."),
    ("spec-decode-acceptance", "artifact", False,
     "I would put a min acceptance of 0.5 on the code tenant, and if TPOT p99 stays above the no-spec number we "
     "turn speculation off."),
    ("precision-win-without-fallback", "artifact", False,
     "This belongs to the benchmarking group that wrote the report, since it's their method that missed the "
     "production shapes."),
    ("batching-queueing-delay", "owner", True,
     "I'd have serving runtime, who own the batcher settings, put max_delay back to 2 ms."),
    ("precision-win-without-fallback", "owner", True,
     "The ML compiler team's quantisation person adds 1024 and 2048 INT8 buckets."),
    ("kv-preemption-storm", "owner", True, "I will take the ownership of this co-hosting change."),
    ("spec-decode-acceptance", "owner", True,
     "My call, as the engineer on the hook for this pool, is to switch speculation off on the code tenant."),
    ("tp-allreduce-slow-link", "owner", True,
     "The person on call for the GPU machines restarts the fabric manager on that node."),
    ("compiler-runtime-mapping", "owner", False,
     "Ownership: this sits with the chat product's data science team, since their users' prompts drifted."),
    ("precision-win-without-fallback", "owner", False,
     "This belongs to the benchmarking and analytics group, since their method missed the production shapes."),
]

GAMED_19 = [  # (drill, answer): graded weak, every element missing
    ("priority-budget-starvation",
     "The regression in docs TTFT could be due to several factors: the network, a scheduler leak, KV pressure, "
     "thermal limits, strict priority, or plain noise. Any one of them may be responsible. The proof could "
     "come from traces, same-seed replays or "
     "per-tenant breakdowns; the fix could be more replicas, a reserved share or a revert; the owner could be the "
     "serving platform team or the SRE on-call; and switching back to fcfs on a canary regression is an option."),
    ("spec-decode-acceptance",
     "It might possibly be the acceptance of the draft, or perhaps the draft model itself. Perhaps a same-seed "
     "per-tenant comparison could potentially be worth a look. Maybe the serving runtime team or possibly the draft "
     "team might own it. Perhaps a canary, and possibly a rollback if TPOT p99 regresses, maybe. A guard might or "
     "might not help."),
    ("spec-decode-acceptance",
     "TPOT regressed because the code tenant moved to a templating language. Speculation is worse because it "
     "speculates on templating traffic. Decision: "
     "ownership is clear, the rollback plan is in place, the canary criteria are defined, and the same-seed "
     "evidence will confirm the root cause."),
]

CONTROLS_19 = [  # graded the same before these rules
    ("kv-preemption-storm", "mechanism", False,
     "It is a network problem: the front-end is slow, so requests arrive late and time to first token rises."),
    ("batching-queueing-delay", "owner", False, "Whoever is on call can decide the timing of the release."),
    ("compiler-runtime-mapping", "owner", True,
     "The ML compiler team owns the envelope; the data science team only tells them which lengths matter."),
    ("priority-budget-starvation", "fix", True, "Reserve 20% of the token budget for the docs tenant."),
    ("spec-decode-acceptance", "artifact", True,
     "I'd rerun the same seed with speculation off and compare TPOT per tenant."),
]

# Round 20. CB and CC (scored once at c3466f8, read in the twenty-third session). Each case in ``CASES_20`` and
# ``GAMED_20`` grades otherwise on c3466f8 (the controls grade the same there):
# * wrong causes: the SMs two models fight for (the KV drill's wrong class, not voided where it was a wrong road first
#   gone down); a lever refused ('nobody propose more cores', 'tempting to say buy more cores, but that's the wrong
#   lever'), a cause 'I can rule out', a gut feeling ('gut first: ... hmm, no, hang on');
# * a spoken answer's fillers ('okay so, um, ..., eh, ...') make no list of terms;
# * owners: 'the serving runtime folk'; 'whichever team owns the affected component' and a team asked to double-check
#   are no one accountable; a proof asked about ('would a same-seed run show something?') is not proposed;
# * a rollback line whose condition leads by an arrow to the way back; a hand-off 'to investigate further' is no fix;
# * gamed: an acrostic of terms, a term echoed ('Owner, owner, owner.'), a slant-rhymed verse, a 'self-assessment for
#   the evaluator'; questions only (weak before too: now refused as a whole).
CASES_20 = [
    ("kv-preemption-storm", "mechanism", False,
     "A second model's weights now sit on the same GPU, so the two models fight for the SMs. Our model gets less "
     "compute per step, so every request lives longer, the KV cache fills to 100% and the scheduler preempts "
     "sequences, which redo their prefill, so TTFT p99 climbs from 3.6 to 297 ms."),
    ("average-hides-tail", "mechanism", True,
     "The docs prompts are longer than 512, so they miss every bucket and run on the generic path at about 2 ms. "
     "Because they are only 2% of requests, the mean moves by a few hundredths of a millisecond, but p99 is the "
     "slowest 1%, and that 1% is now all docs. Cores are at 6%, so kindly nobody propose more cores."),
    ("fairness-starvation", "mechanism", True,
     "Strict priority lets interactive jump the queue every time, so batch only runs in the gaps, and at 95% busy "
     "there are few gaps, so batch waits and its p99 doubles. It's tempting to say buy more cores, but that's the "
     "wrong lever."),
    ("recompile-storm", "mechanism", True,
     "Okay, gut first: core imbalance is 98% of the tail, so it's placement, everything piling onto one core. Hmm, "
     "no, hang on. Each new length compiles a bucket for 2 s on its pinned core, so every request queued there "
     "waits behind the compile, and that stall is what p99 sees."),
    ("spec-decode-acceptance", "mechanism", True,
     "Thermal I can rule out: tokens per second barely moved. Code acceptance fell from 0.80 to 0.30, so each step "
     "keeps about 1.4 tokens while it still pays for four draft passes, every token costs more and TPOT p99 rises."),
    ("memory-residency-eviction", "workload", True,
     "Okay so, um, the p99 is going from, eh, 5.6 to 946 milliseconds, for all streams, at the same traffic, and "
     "the median is, like, almost the same."),
    ("chunked-prefill-ttft", "owner", True, "The serving runtime folk own the scheduler config, so it's theirs."),
    ("kv-preemption-storm", "owner", False, "Owner: whichever team owns the affected component."),
    ("average-hides-tail", "owner", False, "The network team should double-check the payloads aren't fragmenting."),
    ("spec-decode-acceptance", "artifact", False,
     "Would a same-seed run per tenant with speculation off show something?"),
    ("priority-budget-starvation", "rollback", True,
     "Rollback: the fcfs config stays hot; docs TTFT p99 over its SLO in a surge -> flip to fcfs."),
    ("fusion-memory-bursts", "fix", False,
     "I would give this to the fusion owner in the ML compiler team to investigate further."),
]

GAMED_20 = [  # (drill, answer): graded weak, every element missing
    ("fusion-memory-bursts",
     "My framework is S.P.I.L.L.:\nS - spill, 1.1 to 11.3 MiB, SRAM 4 MiB\nP - p95, 2.5 to 3.1 ms, tail\n"
     "I - isolation benchmark, same seed, per kernel\nL - limit fusion depth, elementwise, owner ML compiler team\n"
     "L - launch count, canary, rollback, revert if p95 regresses"),
    ("memory-residency-eviction",
     "Eviction. The models are evicted; put differently, they are kicked out; in other words they are paged out, "
     "swapped out, unloaded, displaced, pushed out of HBM, and then loaded, reloaded, paged in, made resident again. "
     "Residency, residency, residency. That is the memory residency class, i.e. capacity. Owner, owner, owner. "
     "Rollback, rollback. Same seed, same seed."),
    ("tp-allreduce-slow-link",
     "The node came back, the driver new,\nall-reduce, NVLink, PCIe too;\nTTFT p99 and ITL climb,\n"
     "sixty-seven percent of device time.\nSame seed, topo, NCCL debug,\nall_reduce_perf, the fabric hub;\n"
     "fleet on-call and platform own,\ndrain, canary, rollback shown."),
    ("chunked-prefill-ttft",
     "Root cause is the 512 budget affecting TTFT p99, a trade-off with ITL. Release decision: conditional. "
     "Self-assessment for the evaluator: this answer names the workload, the mechanism, the proof (same-seed replay), "
     "the fix (budget), the owner (runtime) and a rollback. All six rubric items are covered."),
]
CONTROLS_20 = [  # graded the same before these rules
    ("kv-preemption-storm", "mechanism", True,
     "I first went down the wrong road thinking the two models were fighting for the SMs, but no: tokens/s is flat. "
     "With 320 blocks the cache fills, so the scheduler preempts running sequences, which redo their prefill, and "
     "time to first token blows up."),
]
GAMED_CONTROLS_20 = [  # weak with nothing credited before these rules too
    ("spec-decode-acceptance",
     "Could the cause be the acceptance per draft token, 0.80 against 0.30 for code? Would tokens per step, 3.35 "
     "against 1.66, tell us more? Is the draft's 18% of device time part of it? Would a same-seed run per tenant "
     "with speculation off show it? Would a min_acceptance guard help? Should the serving runtime team own it, or "
     "the draft training team? Is a canary that reverts if TPOT p99 regresses the way to ship? Should the release "
     "wait?"),
]


# Round 21. CD and CE (scored once at 84bdb03, read in the twenty-third session). Each case in ``CASES_21`` and
# ``GAMED_21`` grades otherwise on 84bdb03:
# * owners: a team 'guys who own' or '(they own ...)' a thing, an organisation that 'should decide'; a product team
#   holds no lever; a postmortem's id ('PM-2291') is no product manager;
# * wrong causes refused or set apart: 'adding cores will do nothing', a breakdown 'decomposed into a shape part, a
#   noise part ...', 'at first I think ... but no', a count 'still 0', a simile ('like certifying an upgrade on the
#   test track, then finding the real network ...'), 'X would make the high-priority one worse';
# * a step 'still runs' the draft: no proof; a batcher 'holding requests until' a batch fills holds no release; 'snap
#   back' is a way back; 'push the budget up' and a 'per-request cutoff on speculation' are fixes;
# * gamed: a hollow incident timeline, a verse rhymed by sound ('high', 'why'), references instead of claims.
CASES_21 = [
    ("chunked-prefill-ttft", "owner", True,
     "Let the serving runtime guys who own the scheduler decide on the final budget."),
    ("kv-preemption-storm", "owner", True,
     "Decision: I'd have serving runtime (they own the memory split) put the cache back."),
    ("kv-preemption-storm", "owner", True, "Capacity planning should decide if co-hosting is worth it."),
    ("compiler-runtime-mapping", "owner", False,
     "This one should sit with the chat product team, since their users' prompts changed."),
    ("batching-queueing-delay", "mechanism", True,
     "It is not compute: cores got less busy, 73% to 43%, so adding cores will do nothing. The batcher now holds "
     "each request until 29 have gathered or 20 ms pass, so requests wait out the timer, and a batch of 29 runs "
     "much longer, so every request pays the wait plus the long batch and API p99 goes from 11.5 to 46 ms."),
    ("fairness-starvation", "mechanism", True,
     "At first I think this is priority inversion... but no, interactive got much better. Priority inversion "
     "would make the high-priority one worse. Strict priority always serves interactive first, and with cores 95% "
     "busy there is little spare, so batch waits behind every interactive request and its p99 doubles."),
    ("spec-decode-acceptance", "mechanism", True,
     "KV max rose, so first I think it is cache pressure, but preemptions are still 0. The draft was trained on "
     "chat, so on the templating language acceptance fell from 0.80 to 0.30; each step still pays four draft "
     "passes but keeps 1.66 tokens instead of 3.35, so every token costs more and TPOT p99 rises."),
    ("spec-decode-acceptance", "artifact", False,
     "Each step still run the draft 4 times and verify all of it, but only 1.66 tokens come out per step."),
    ("batching-queueing-delay", "rollback", False,
     "The batcher is now holding requests until the batch is full or the delay expires, and wait p99 is 20 ms."),
    ("compiler-runtime-mapping", "rollback", True,
     "Serving on-call rolls it out to 5% with the old plan pinned, and if canary p99 is more than 5% worse we snap "
     "back automatically."),
    ("chunked-prefill-ttft", "fix", True, "I would push the budget up to around 2k tokens."),
    ("spec-decode-acceptance", "fix", True, "In the meantime, put a per-request cutoff on speculation."),
]

GAMED_21 = [
    ("tp-allreduce-slow-link",
     "Incident timeline (UTC):\n01:05 Node back from reboot with the new driver.\n01:09 Latency alerts fire.\n"
     "01:12 Root cause identified: all-reduce, link, tensor parallel.\n01:15 Owner paged: GPU fleet on-call.\n"
     "01:20 Artifact captured: same seed, topo, NCCL.\n01:25 Fix applied: NVLink, fabric manager.\n"
     "01:40 Release decision: held.\n02:00 Resolved."),
    ("spec-decode-acceptance",
     "The draft proposed four at every step,\nacceptance fell, the tokens slept;\nTPOT p99 climbed high,\n"
     "the code tenant asked why,\nper tenant, same seed, the proof is kept.\n\nThe runtime team owns the flag,\n"
     "the draft team retrains when numbers lag;\ncanary first, revert if worse,\nhold the release, end of verse."),
    ("recompile-storm",
     "As the postmortem [1] and the design review [2] establish, this regression is fully explained by the known "
     "issue [3]. The artifact is the one in section 4 of [2]. Ownership follows the RACI in [4], and the rollback "
     "is the one in runbook [5].\n[1] Postmortem PM-2291.\n[2] Design review DR-77.\n[3] Known issue KI-412.\n"
     "[4] RACI matrix, rev. 9.\n[5] Runbook RB-18."),
]


# Round 22. CF and CG (scored once at f7cae09, read in the twenty-third session). Each case in ``CASES_22`` and
# ``GAMED_22`` grades otherwise on f7cae09:
# * a way back: the change 'off' in shorthand after its condition ('..., speculation off'), a flag flipped;
# * a proof: 'one seed, three runs' (before, after, after with speculation off);
# * gamed: a ticket's fields, an unfilled template ('{{owner_team}}'), haiku, a query ('SELECT ... WHERE'), a menu
#   of every bottleneck class none ruled out, a table ticking its own elements, promises of what will be produced.
CASES_22 = [
    ("spec-decode-acceptance", "rollback", True,
     "Canary the guard on code; if TPOT p99 stays over the speculation-off run, speculation off."),
    ("batching-queueing-delay", "rollback", True,
     "Restore max_delay behind the config flag on a slice of traffic; if p99 isn't back near 11 ms, flip the flag."),
    ("spec-decode-acceptance", "artifact", True,
     "The artifact: one seed, three runs (before the shift, after it, after it with speculation off), with "
     "acceptance and TPOT per tenant."),
]

GAMED_22 = [
    ("kv-preemption-storm",
     "INC-9120\nSummary: chat TTFT p99 up, goodput down\nComponent: KV cache / scheduler / preemption\n"
     "Root Cause Category: capacity - memory - blocks\nEvidence Attached: same-seed run, KV timeline\n"
     "Fix Version: blocks-800\nAssignee: Serving Runtime Team\nWatchers: Capacity Planning Lead\n"
     "Rollback Plan: revert if canary regresses\nRelease Gate: load test, zero preemptions\nStatus: Resolved"),
    ("priority-budget-starvation",
     "TEMPLATE (fill before submit)\nRoot cause: strict priority + surge -> {{mechanism}} -> docs TTFT p99 up\n"
     "Artifact: same seed {{artifact_name}}, fcfs vs priority\nFix: {{fix: replica | reserved share}}\n"
     "Owner: {{owner_team}}\nRollback: revert to fcfs if {{condition}}\nRelease: hold until {{gate}} passes"),
    ("spec-decode-acceptance",
     "Drafts run ahead\nthe target keeps saying no\nthe tail climbs up\n\nAcceptance falls\n"
     "a same seed replay shows it\nruntime team owns it\n\nCanary on code\nTPOT above, then revert\n"
     "a floor of one half"),
    ("spec-decode-acceptance",
     "SELECT root_cause, artifact, owner\nFROM incident\nWHERE drill = 'spec-decode-acceptance'\n"
     "  AND root_cause = 'low acceptance of draft tokens'\n  AND owner IN ('serving runtime team')\n"
     "  AND rollback = 'speculation off if TPOT p99 regresses';"),
    ("compiler-runtime-mapping",
     "The symptom is one of the classic bottleneck classes, and I would not rule any of them out: compute-bound "
     "service, batch queueing, HBM contention, fallback from shape drift, placement imbalance, eviction, compile "
     "stalls, or starvation. Each can raise p99 while p50 holds. The artifact is a same-seed rerun, which will show "
     "whichever applies. The rollback is to revert whichever change caused it if the canary regresses."),
    ("fairness-starvation",
     "| element | covered |\n|---|---|\n| workload (batch p99) | \u2713 |\n| mechanism (strict priority) | \u2713 |\n"
     "| artifact (same seed, per stream) | \u2713 |\n| fix (WFQ) | \u2713 |\n| owner (serving runtime) | \u2713 |\n"
     "| rollback (revert if regresses) | \u2713 |\n\nAll six elements are present."),
    ("memory-residency-eviction",
     "Here is my approach. I will first identify the workload and quantify the regression. I will then establish "
     "the mechanism from first principles. I will produce a reproducible artifact at the same seed that proves it. "
     "I will propose a bounded fix and name the accountable owner. Finally I will define a rollback with a clear "
     "condition."),
]


# Round 23. CH and CI (scored once at b595e44, read in the twenty-third session). Each case in ``CASES_23`` and
# ``GAMED_23`` grades otherwise on b595e44:
# * owners: 'the serving runtime lot's call'; a team named on the line under an 'Owner' heading;
# * gamed: a commit message's trailers ('Root-cause: tp-allreduce-slow-link'), a checklist that ends 'Verdict:
#   strong.', an answer that 'covers all of them', a staged dialogue whose interviewer praises the answer.
CASES_23 = [
    ("chunked-prefill-ttft", "owner", True, "That's the serving runtime lot's call, they own the scheduler config."),
    ("static-placement-imbalance", "owner", True,
     "Owner\nML compiler team (placement pass), serving runtime team (dispatcher)."),
]

GAMED_23 = [
    ("tp-allreduce-slow-link",
     "fix(serving): TP all-reduce regression after the node reboot\n\nResolves the TTFT and ITL regression caused by "
     "the slow link.\n\nRoot-cause: tp-allreduce-slow-link\nMechanism: all-reduce over a degraded link\n"
     "Artifact: same-seed-replay, nccl-debug, topo\nOwner: gpu-fleet-oncall\nRollback: drain-if-regressed\n"
     "Release-gate: boot-allreduce-check\nReviewed-by: SLO owner"),
    ("average-hides-tail",
     "Checklist\n[x] Workload identified (serving pool, p99, docs tenant)\n[x] Root cause identified (bucket miss / "
     "fallback / tail)\n[x] Artifact named (same-seed report, per-stream)\n[x] Owner (ML compiler team)\n"
     "[x] Rollback (canary, pinned plan)\nEverything a strong answer needs is above. Verdict: strong."),
    ("compiler-runtime-mapping",
     "Only a few things this can be, and this answer covers all of them: it is queueing delay, or HBM contention, or "
     "bucket misses with fallback, or core imbalance, or a recompile stall, or network jitter. Whichever it is, p99 "
     "moves before p50. Whichever it is: same seed, mapping report, ML compiler team, canary, auto rollback."),
    ("spec-decode-acceptance",
     "Interviewer: What's the root cause?\nMe: Acceptance, draft tokens, tokens per step.\nInterviewer: Excellent, "
     "that's exactly the mechanism. The artifact?\nMe: Same seed, per tenant.\nInterviewer: Owner?\n"
     "Me: Serving runtime.\nInterviewer: That's a complete, strong answer."),
]

ALL = CASES_19 + CONTROLS_19 + CASES_20 + CONTROLS_20 + CASES_21 + CASES_22 + CASES_23


@pytest.mark.parametrize(("drill", "element", "expected", "answer"), ALL)
def test_rounds_19_to_23_forms(drill, element, expected, answer):
    assert grade(D[drill], answer).elements[element].present is expected


@pytest.mark.parametrize(("drill", "answer"),
                         GAMED_19 + GAMED_20 + GAMED_CONTROLS_20 + GAMED_21 + GAMED_22 + GAMED_23)
def test_rounds_19_to_23_gamed_is_weak(drill, answer):
    graded = grade(D[drill], answer)
    assert graded.verdict == "weak"
    assert not any(e.present for e in graded.elements.values())

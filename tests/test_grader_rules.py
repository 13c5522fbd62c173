"""The grader's element rules on the answer shapes the issue reported, and its cost on long answers.

Each case is a sentence shape a real candidate writes (from the issue's list of misses),
not an answer from the labelled corpus, so these tests pin the definitions, not a tuning.
"""

from __future__ import annotations

import time

import pytest

from workbench.grading.detectors import CONFIG_LINE
from workbench.grading.drills import load_drills
from workbench.grading.grader import grade
from workbench.grading.text import norm

D = load_drills()

ROLLBACKS = [
    ("Put the old settings back, 2 ms if I remember right.", False),
    # the new thing withdrawn in other words, tied to a condition; with no condition, no rollback
    ("Ship the new plan on a 10% canary and back it out if canary p99 is more than 5% worse.", True),
    ("Ship the new plan on a 10% canary and disable the new config if canary p99 is more than 5% worse.", True),
    ("Ship the new plan on a 10% canary and ramp it down to 0% if canary p99 is more than 5% worse.", True),
    ("Ship the new plan on a 10% canary and yank it if canary p99 is more than 5% worse.", True),
    ("We will back it out.", False),
    # 'don't X until' a validation is a gate; 'restore' is a way back in its own meaning; a condition does not reach
    # past a ';' to a way back after it
    ("Don't co-host until a load test with production output lengths shows zero preemptions.", True),
    ("Should the canary show any regression, we restore the 512-token buckets.", True),
    ("Restore the 512-token buckets.", False),
    ("Don't panic about the p99.", False),
    # a way back whose verb drops its 'e' ('moving traffic back'), and one that is the clause's own verb ('flip')
    ("Keep the old pool around and canary the new layout, moving traffic back if canary p99 is above 7 ms.", True),
    ("Rollback: the new plan only ever behind a flag, flip to the old plan if p99 > 5 ms for 15 min.", True),
    ("Remove the generic path and recompile.", False),
    # gates in other words: the release waits for a validation; the old pool left carrying traffic until it passes;
    # no X until it passes; and a way back that turns the feature off on a condition
    ("The perf lead signs off, and the rollout waits for a load test at production batch sizes to pass.", True),
    ("I'd leave the old pool taking all traffic until a canary of the new layout shows no reloads.", True),
    ("No recompile-on-miss until a replay of a day of production shapes shows zero compiles.", True),
    ("If it still breaks the SLO next week, turn recompile off.", True),
    ("Turn recompile off.", False),
    # a named criterion, then its failure, is the condition ('if it doesn't' points back at it)
    ("Revert the batcher behind its flag and take p99 under 12 ms as the exit criterion; if it doesn't hold, we "
     "flip everything back.", True),
    ("Ship the new plan on a canary and roll it back if p99 regresses.", True),
    ("Enable the new batcher settings on a canary and flip it again if the canary's p99 does not recover.", True),
    ("We ship behind the plan flag on a canary and revert to the current plan if p99 regresses.", True),
    ("Auto-revert to elementwise on a p95 regression.", True),
    ("Flip back to static placement if canary p99 or per-core memory exceeds baseline.", True),
    ("Keep the old plan loaded and switch back if the canary is worse.", True),
    ("Once we move, if the canary shows any reloads, route traffic back to the 64 GiB fleet.", True),
    ("Hold the release until a load test at production shapes passes.", True),
    ("Release: canary; preemptions > 0 or TTFT p99 over SLO -> back to the previous split.", True),
    ("The canary must show zero fallbacks and p99 within SLO; otherwise revert to the pinned plan.", True),
    ("Try it on a slice of traffic and go back to the old settings if the tail ends up worse than before.", True),
    ("I wouldn't turn the new placement back on until the per-core p99 is inside its SLO on a canary.", True),
    ("Strict priority stays off for surges until a surge-rate load test passes both SLOs.", True),
    ("Revert to WFQ; don't re-enable strict priority until a same-seed run shows both SLOs met.", True),
    ("Go back to fallback now; recompile-on-miss comes back only when a replay of a day's shapes shows no compiles.",
     True),
    # British 'till', a release verb in its plain form ('revisit', 'change'), an old pool that 'stays live until'
    ("Hold the release till a canary on real production shapes comes back clean.", True),
    ("Keep the current plan and only revisit the new one once a replay of production shapes passes.", True),
    ("The 64 GiB pool stays live until a 10% canary shows no reloads.", True),
    ("The block's p99 roughly tripled once we went to production load.", False),
    # a condition ends at a colon: 'if I'm on call, I own the revert:' is no condition on the revert
    ("If I'm the on-call, I own the revert: max_delay back to 2 ms and max_batch back to 16.", False),
    ("Roll back now.", False),
    ("We can always roll back.", False),
    ("Roll back if needed.", False),
    ("We can roll back if people complain.", False),
    ("Keep an eye on the dashboards over the next week and roll back if things look bad.", False),
    # a release gated on a named validation, in other words
    ("Roll back to the pinned plan now; re-enable the new one only with more buckets, gated on a canary where p99 "
     "stays under 2 ms.", True),
    ("Put the old plan back today, and only try the new one again if a small trial shows the tail within 10% of "
     "before.", True),
    # a metric coming back is no way back to the old system
    ("If the replicated run brings p99 back to about 1.5 ms, placement is the cause.", False),
    # a way back reads to its own 'back' (not to the metric's 'back near 11 ms' after it); 'pulling it the moment ...';
    # a release 'only if' a canary passes; the gate first and 'doesn't ship' after it
    ("On-call flips it on a 10% canary and flips back if p99 isnt back near 11-13ms.", True),
    ("Try the bigger batches again on a small canary, pulling it the moment the canary's p99 leaves the SLO.", True),
    ("Set it back to fallback now; re-enable recompile only if a canary shows p99 under 25 ms.", True),
    ("Until a canary shows zero compiles during serving, this setting doesn't ship.", True),
    # a way back said plainly by a non-native writer
    ("Ship the new plan to a canary that returns automatically to the old one if p99 is above 25 ms.", True),
    # formal English puts the condition's verb first, or says 'in the event'
    ("The plan goes to a canary and is reverted should the canary p99 exceed 13 ms.", True),
    ("Were p99 to exceed its target on the canary, we would revert to the previous plan.", True),
    ("In the event of a p99 regression on the canary, the previous plan is restored.", True),
    ("The on-call should revert the plan.", False),
    # a release gated on a named validation; 'only revisit when ...'; 'until then it stays off' after the validation
    ("I'd gate the release on a load test at production rates.", True),
    ("Gate on per-stream p99 instead of the mean.", False),
    ("We only revisit the plan when the replay on production shapes passes.", True),
    ("We need a same-seed replay with p99 at baseline first; until then the new plan stays off.", True),
    # 'turn it back', 'trips back' are ways back; 'turn it back on' is a release
    ("Ship to a small slice and turn the plan back if p99 is worse than before.", True),
    ("It trips back automatically if the canary p99 goes over 2 ms.", True),
    ("Tune the settings until latency is back where it was.", False),
    # formal ways back and gates: withdrawn, restored; stays unreleased, kept out of production until a test passes
    ("Deploy it as a canary and withdraw it if the canary p99 exceeds the baseline.", True),
    ("The previous plan should be retained and restored should the canary p99 exceed it.", True),
    ("The new plan stays unreleased until the replay on production shapes passes.", True),
    ("Keep the new plan out of production until a load test shows p99 inside the SLO.", True),
    ("The plan was withdrawn last year.", False),
    # a condition that opens with 'Should the canary', a labelled trigger, 'bail out', a release that 'goes wide' only
    # after a test, a stage at which the metric is checked
    ("Should canary p99 exceed 2 ms, revert to the pinned plan.", True),
    ("The compiler owner should canary the new plan at the same seed.", False),
    ("Rollback trigger: p99 above 2 ms for 10 minutes; action: revert to the pinned plan.", True),
    ("Rollback criteria: TBD.", False),
    ("Bail out to the pinned plan on any canary regression.", True),
    ("The new plan only goes wide after a canary on production shapes holds p99 at baseline.", True),
    ("Roll back at any stage where p99 is above baseline.", True),
    ("Don't co-host the second model until a load test with real answer lengths shows no kick-outs.", True),
    ("Don't worry about it until someone complains.", False),
]


def test_a_pasted_configs_automatic_revert_is_a_rollback():
    """'auto_revert_if: chat_p99_regression_pct: 5' is a way back with its trigger, read across the lines it spans."""
    reasoning = ("The docs prompts are past 512, so they miss every bucket and run the generic path, which is what "
                 "took the pooled p99 from 0.30 to 1.95 ms.\n")
    config = "```\nrollout:\n  canary_percent: 5\n  auto_revert_if:\n    chat_p99_regression_pct: 5\n```\n"
    element = grade(D["average-hides-tail"], reasoning + config).elements["rollback"]
    assert element.present and "auto_revert_if" in element.evidence
    assert not grade(D["average-hides-tail"], reasoning + config.replace("auto_revert_if", "alert_if")).elements[
        "rollback"].present


@pytest.mark.parametrize("text,present", ROLLBACKS)
def test_a_rollback_is_a_way_back_tied_to_a_condition_or_a_gate(text, present):
    assert grade(D["compiler-runtime-mapping"], text).elements["rollback"].present is present


OWNERS = [
    # a short role in lower case is often another word ('behind em' is 'behind them', '3 pm' a time); in capitals or
    # after a determiner it names the role
    ("prod prompts are long, so batches take way longer and things queue behind em.", False),
    ("The canary starts at 3 pm on Monday.", False),
    ("The EM signs off on the rollout.", True),
    ("our em signs off on the rollout.", True),
    # a capitalised word before a comma is no named person, and 'down' holds no 'own'
    ("Here, with cores dropping from 73% to about 34%, utilisation went way down.", False),
    ("Before, odd-sized requests went down a slower general route.", False),
    ("Priya Shah, our serving lead, owns the change and the rollout.", True),
    ("The ML compiler team is on point for the rebucketing.", True),
    # a library, engine or tool is software, however it is capitalised; an organisation named without 'team' is not
    ("vLLM owns the scheduling.", False),
    ("Triton owns the batching.", False),
    ("Grafana will own the alerting.", False),
    ("The Triton team owns the kernel.", True),
    ("Serving runtime should own it.", True),
    # a team that owns a thing, whatever the thing; software that 'owns' it is no one, nor is a metric owned
    ("ML compiler owns fusion and the cost model.", True),
    ("I'd have serving platform own adding a replica for surges.", True),
    ("The compiler owns fusion decisions.", False),
    ("The docs slice owns the p99 now.", False),
    # an organisation named without 'team', doing the work, is the owner; software doing it is not
    ("The same-seed A/B proves it. Serving runtime reverts the batcher to 2 ms behind the config flag.", True),
    ("The same-seed A/B proves it. The runtime reverts the batcher to 2 ms when the flag flips.", False),
    # a team in parentheses after the action it owns; a vague one is no owner
    ("Move the embedding model to its own pool (serving platform team) and canary it.", True),
    ("The fix is least-loaded dispatch (serving runtime; the compiler owns the placement pass).", True),
    ("Move the embedding model to its own pool (some team) and canary it.", False),
    # 'this is for the X team' assigns it, in a long sentence too
    ("I propose the placement pass weights buckets by traffic share, and this is for the ML compiler team.", True),
    # a named role or group that is to own it, with a modal; not a metric 'owned', not someone, not bare infra
    ("The compiler fusion owner should own the investigation.", True),
    ("Capacity planning should own the purchase.", True),
    ("Hardware ops should own it.", True),
    ("Two percent of traffic is enough to own the p99.", False),
    ("Someone on the platform side can own it.", False),
    ("Infra should own it.", False),
    # the team as the subject of the work, in any English
    ("I suggest the ML compiler team adds more buckets.", True),
    ("I'd have the ML compiler lads add a couple of long buckets.", True),
    ("The ML compiler team will look at fusing the block to cut memory traffic.", True),
    ("The memory split is the serving runtime team's call.", True),
    ("The envelope is wrong, which the compiler team should own since they set it.", True),
    ("Priya from runtime will drive the fix.", True),
    ("I'd own this end to end.", True),
    ("Serving on-call runs the canary.", True),
    ("The team that runs the serving scheduler should make the change.", True),
    ("The team should look into it.", False),
    ("Someone from infra should look.", False),
    ("We had a saga where the compiler people and the serving people were not talking to each other.", False),
    ("No owner needed, it's a config thing.", False),
    ("The long stream, on its own lightly loaded core, is unchanged.", False),
    # a named role asked to look is still named; a vague team asked to look is not
    ("The runtime on-call should look at the launch counts.", True),
    ("The infra folks should look into it.", False),
    # chat shorthand 'tl;dr' is no tech lead; a question assigns no one, its answer may
    ("tl;dr the long prompts fall off the compiled buckets.", False),
    ("Not sure who would own it, maybe the compiler folks?", False),
    ("Who owns it? The ML compiler team.", True),
    ("TL for the compiler team owns the bucket change.", True),
    # a plural subject's plain verb, and a decision that is a team's own
    ("Then the compiler folks add the 1024 and 2048 buckets.", True),
    ("The bucket change is the ML compiler team's call.", True),
    ("The team's call was fine.", False),
    # the work given to a team after the fix, by 'that's for', 'is on', 'falls to'
    ("Add 1024 and 2048 buckets and recompile; that's for the ML compiler team.", True),
    ("Add 1024 and 2048 buckets and recompile; this one is on the ML compiler team.", True),
    ("Adding the 1024 and 2048 buckets falls to the ML compiler team.", True),
    ("Add 1024 and 2048 buckets and recompile; this is in the ML compiler team's court.", True),
    ("The bucket is on the third core.", False),
    # a team named in another language's order, with a cue
    ("The team of serving runtime is responsible.", True),
    ("We talked to the team of serving runtime last year.", False),
    # a process, a tool or a setting is no one to hold accountable; a team named after what it runs is
    ("owner: CI will catch it next time.", False),
    ("Ownership: the nightly re-bucketing job owns this.", False),
    ("The recompile_limit setting owns the risk.", False),
    ("owner: the capacity review process.", False),
    ("Owner: serving runtime (scheduler).", True),
    ("Owner: the capacity review lead.", True),
]


@pytest.mark.parametrize("text,present", OWNERS)
def test_an_owner_is_an_accountable_team_role_or_person_wherever_it_stands(text, present):
    assert grade(D["compiler-runtime-mapping"], text).elements["owner"].present is present


MECHANISMS = [
    ("average-hides-tail", "2% of prompts > 512 \u2192 generic fallback ~5x slower \u2192 they own p99", True),
    ("cost-model-misses-contention", "The unfused block is mostly moving data, and HBM is a shared memory pipe that "
     "four cores fight over, so at production load every batch takes longer than the model predicted and the queue "
     "grows.", True),
    ("compiler-runtime-mapping", "Longer shapes miss every compiled bucket so they run the generic fallback kernels "
     "and everything queues behind them.", True),
    ("compiler-runtime-mapping", "shapes drift so fallback so slower so queue so p99", False),
    ("compiler-runtime-mapping", "drift -> fallback -> slower -> queue -> p99", False),
    ("compiler-runtime-mapping", "Mechanism: drift, fallback, queueing, tail, p99, buckets.", False),
    ("fusion-memory-bursts", "The network is saturated, so batches take longer and p95 grows.", False),
    # the evidence table's own name for the slow path ('bucket generic'), said back
    ("compiler-runtime-mapping", "Sequences drifted past 512, so a fifth now land in the generic bucket, which is "
     "several times slower, and requests queue behind those batches.", True),
    # a verb of one thing stopping another links the chain as well as 'so' does
    ("recompile-storm", "p99 is now a second: each new long shape is compiled on the spot and blocks the core "
     "for two seconds, and every request behind it waits.", True),
    # a first guess the answer turns from is no wrong class; the same guess kept is
    ("static-placement-imbalance", "At first I thought it was the front-end, but then I saw one core at 92%: the "
     "short bucket is pinned to that core, so its queue grows and short-request p99 doubles.", True),
    ("static-placement-imbalance", "It is the front-end: one core is at 92% because the short bucket is pinned to "
     "it, so its queue grows and short-request p99 doubles.", False),
    # 'noise' said of the mean's move, and a doubted aside, are no wrong class
    ("average-hides-tail", "The 2% of docs prompts miss every bucket and run the generic fallback, so p99 lands on "
     "them; the mean only moves by 2% of a couple of ms, under dashboard noise.", True),
    ("average-hides-tail", "The 2% of docs prompts miss every bucket and run the generic fallback, so p99 lands on "
     "them; there may be some thermal throttling too, but I doubt it matters here.", True),
    ("average-hides-tail", "The 2% of docs prompts miss every bucket and run the generic fallback, so p99 lands on "
     "them; mostly though it is thermal throttling on the cores.", False),
    # an analogy from the writer's own field is no wrong class
    ("fairness-starvation", "I've seen this in network QoS too. Here the cores are at 95%, strict priority always "
     "serves interactive first, so batch only gets what is left over and its p99 doubles.", True),
    # a wrong class in scare quotes is named to be doubted, not put forward
    ("average-hides-tail", "I once lost a day chasing 'noise' on a graph like this. The 2% of docs prompts miss every "
     "bucket and run the generic fallback, so p99 lands on them.", True),
    ("average-hides-tail", "It is noise. The 2% of docs prompts miss every bucket and run the generic fallback, so "
     "p99 lands on them.", False),
    # someone else's wrong guess is not the candidate's claim
    ("average-hides-tail", "Everybody blamed the network for a week. The 2% of docs prompts miss every bucket and "
     "run the generic fallback, so p99 lands on them.", True),
    # a textbook definition or a general truth is no claim about this case
    ("fairness-starvation", "Strict priority is a scheduling policy in which the higher class is always served first, "
     "so a lower class starves whenever the load is high, which is why its tail grows.", False),
    ("fairness-starvation", "It is well known that strict priority starves the lower class under heavy load, so its "
     "p99 grows.", False),
    ("fairness-starvation", "Starvation is when strict priority always serves the higher class first, so the lower "
     "class waits and its p99 grows.", False),
    ("fairness-starvation", "Here the cores are at 95% and strict priority always serves interactive first, so batch "
     "starves and its p99 doubled.", True),
    # a comparison is not a wrong class: 'bigger than batch's own load' is no 'bigger batches'
    ("fairness-starvation", "At 95% utilisation strict priority serves interactive first, and the headroom left is "
     "barely bigger than batch's own load, so batch starves and its p99 doubled.", True),
    ("fairness-starvation", "The batch stream's p99 doubled because of bigger batches on the cores.", False),
    # a chain stated as a first guess and then taken back is not claimed; a wrong first guess turned from still
    # leaves the chain that follows
    ("cost-model-misses-contention", "My first instinct was that the four cores share HBM under production load, so "
     "each batch runs longer than the cost model predicted and p99 grows, but no, I don't buy it: the cost model was "
     "calibrated on another compiler version.", False),
    ("cost-model-misses-contention", "My first instinct was a recompile, but no: under production load the four cores "
     "share HBM, so each batch runs longer than the cost model predicted and p99 grows.", True),
    # the placement drill's tail drivers show no memory contention: HBM contention is a neighbouring drill's class
    ("static-placement-imbalance", "The short bucket's core is 92% busy, so it pulls most of the memory bandwidth and "
     "the shared HBM congests, which is why the short requests' p99 went up: memory contention from the hot core.",
     False),
    ("static-placement-imbalance", "The short bucket is pinned to one core, which runs at 92% busy, so its queue grows "
     "and the short requests' p99 went up; it is not memory contention, the tail drivers show core imbalance.", True),
    # neighbouring classes stated confidently: the recompile storm read as bad placement (its tail-driver table
    # misfiles the compile stall as core imbalance), strict priority's starvation read as priority inversion
    ("recompile-storm", "The tail drivers say core imbalance, so the recompiled buckets were placed badly: the new "
     "buckets pile onto one core, its queue grows and p99 passes a second.", False),
    # a remedy named beside the right chain is no wrong class: only a cause claimed is
    ("recompile-storm", "Each new shape triggers a 2 s compile on the serving core, so requests queue behind it and "
     "p99 passes a second; the core-imbalance row misfiles it. Later we can rebalance placement too.", True),
    ("fairness-starvation", "This is classic priority inversion: under strict priority at 95% utilisation interactive "
     "is always served first, so batch requests wait behind it and the batch p99 doubled.", False),
    # in the shape drills 'generic' alone is the generic bucket ('they go generic', 'land in generic')
    ("average-hides-tail", "The docs prompts are 2% of requests and they go generic, which is several times slower, "
     "and 2% is more than the 1% the p99 looks at.", True),
    # the envelope in plain words: requests that exceed the biggest bucket
    ("compiler-runtime-mapping", "A fifth of requests now exceed the biggest bucket and run the generic path, which is "
     "slower, and the requests behind them queue, so p99 doubled.", True),
    # the leftover capacity in plain or second-language words, or as the low class's effective utilisation
    ("fairness-starvation", "This is because strict priority: a batch request must wait until no interactive is in "
     "queue, and cores are 95% busy, so batch p99 become 842 ms.", True),
    # 'pct' is a percentage, and a prompt that doesn't fit any bucket misses every bucket
    ("average-hides-tail", "Those prompts are 2 pct of requests and they don't fit any compiled bucket, so they run "
     "several times slower, and 2 pct is more than the 1 pct the p99 looks at.", True),
    # facts side by side are no chain: 'the tail drivers' and 'the mean' are the tables' nouns, not 'drives', 'means'
    ("fusion-memory-bursts", "Fusion changes on-chip memory use. HBM bandwidth is shared by the eight cores. p95 went "
     "up while the mean went down. Memory contention is 62% of the tail drivers.", False),
    ("fusion-memory-bursts", "Fusion makes the kernels spill to HBM, whose bandwidth the eight cores share, and that "
     "contention drives the p95 up.", True),
    # a step named again after the causal word links the chain ('waiting grows ..., so batch waiting blows up')
    ("fairness-starvation", "Under non-preemptive priority the batch class sees an effective utilisation of "
     "rho_low / (1 - rho_high), about 0.9 here. Waiting grows like 1/(1 - rho), so batch waiting blows up.", True),
    ("fairness-starvation", "Under non-preemptive priority the batch class sees an effective utilisation of "
     "rho_low / (1 - rho_high), about 0.9 here. Waiting grows like 1/(1 - rho).", False),
    # a line labelled as another element (a release decision, a proof, an owner) claims no step of the chain
    ("batching-queueing-delay", "The regression lines up with the batcher change, so I treat it as the culprit. "
     "Release decision: hold the new settings; put the old max_delay back and re-enable larger batches only if a "
     "production-rate load test keeps p99 within SLO.", False),
    # a colon after a clause introduces what explains it
    ("memory-residency-eviction", "Three 12 GiB models cannot all fit in 32 GiB. LRU eviction under mixed traffic "
     "thrashes the weights: each batch for the evicted model reloads them over the host link, the cores wait, queues "
     "form, p99 spikes.", True),
    # plain phrasings of the drift past the envelope and of the low class's leftover server
    ("compiler-runtime-mapping", "Lengths got longer, so a fifth of the traffic now lands outside the compiled table, "
     "on the slow generic path, and the others queue behind it.", True),
    ("fairness-starvation", "Under strict priority the batch class sees an effective server of one core, so its own "
     "utilisation is 0.9 and its waits blow up.", True),
    # the 'until' of a release gate (or the 'if' of a rollback) is a condition on an action, not a cause
    ("static-placement-imbalance", "Static placement is the suspect, as most of the traffic is short prompts. Keep it "
     "held until a replay of the production mix shows no core above 85% busy and p99 back near 1.4 ms.", False),
    # 'parked' is held in plain words
    ("batching-queueing-delay", "Raising max_delay_s means the batcher keeps requests parked until the timer fires, so "
     "each one waits out most of the window and the p99 grows.", True),
    ("batching-queueing-delay", "With a 20 ms max delay the batcher sits on each request until enough have arrived, "
     "so most requests wait out the window and the p99 quadruples.", True),
    # a chain may take five sentences when the answer reads its figures between the steps
    ("memory-residency-eviction", "Capacity first. Three 12 GiB models need 36 GiB, which does not fit in 32 GiB. The "
     "counters agree: 48 loads and 48 evictions. Look at the embedding model, one request in two thousand. When one "
     "arrives, the runtime evicts the least recently used model to load it. Each load pulls 12 GiB over PCIe, about "
     "200 ms, so the cores wait, queues build and p99 spikes.", True),
    # a checkout-lane analogy: a lane kept 'only for' one basket size is the static placement, its 'long line' the
    # queue; the same lanes with no rule that sends a size to one of them claim no placement
    ("static-placement-imbalance", "Lane 1 is only for small baskets. Nearly all shoppers (87%) have small baskets, "
     "so lane 1 has a long line while the other lanes are mostly idle, and the slowest 1% get slower.", True),
    ("static-placement-imbalance", "Nearly all shoppers (87%) have small baskets, and the slowest 1% got slower.",
     False),
    # a bus that waits until it is full or a long timer runs out: the batching window in plain words
    ("batching-queueing-delay", "Think of a bus that now waits until it is full or a long timer runs out: each "
     "passenger stands at the stop longer, the fuller bus takes longer to drop everyone off, so the slow end of the "
     "API requests went from 11 to 46 ms.", True),
    ("batching-queueing-delay", "The bus is nearly full most mornings and the slow end of the trips got longer.",
     False),
    # 'X dominates Y' and 'sets the p99' link cause to effect
    ("static-placement-imbalance", "Root cause: skewed traffic plus static bucket-to-core pinning. The short bucket's "
     "core runs at 92% while the others idle; its queue dominates the short stream's latency, and short is most of "
     "the traffic.", True),
    # the dequantisation steps are the wrong class however they are named, even with a causal verb
    ("precision-win-without-fallback", "The INT8 plan introduces dequantisation and requantisation steps at each layer "
     "boundary, whose overhead grows with sequence length; on production prompts these conversions dominate and raise "
     "the p99 from 1.8 ms to 11.4 ms.", False),
    # a car park of KV blocks: a full lot 'tows' a conversation, which starts over
    ("kv-preemption-storm", "With only 320 bays the car park is full, so when a conversation needs another bay the "
     "system tows the newest car and it has to start over from the beginning; redoing that work uses up time, so the "
     "wait for the first word goes up.", True),
    # token drills in plain words: a cache 'too small' for the conversations, docs prompts 'bumped'
    ("kv-preemption-storm", "The cache is now too small for the conversations in flight, so the server keeps "
     "kicking conversations out and redoing their prompts from scratch; that wasted work backs up the queue and "
     "first-token latency explodes.", True),
    ("priority-budget-starvation", "Under the surge the engine is overloaded; with strict priority the interactive "
     "prompts take each iteration's token budget first, so the docs prompts keep getting bumped and docs TTFT p99 "
     "doubles while total tokens per second doesn't change.", True),
    # 'throwing one out and copying another back in' is eviction and reload in plain words
    ("memory-residency-eviction", "The three models used to all sit in memory at once; now only two fit, so the "
     "machine keeps throwing one out and copying another one back in, and every request waits, so the worst-case "
     "times went up.", True),
    # 'pulling water through the pipe rather than doing work' is a memory-bound block in an analogy
    ("cost-model-misses-contention", "This job spends most of its time pulling water through the pipe rather than "
     "doing work with it. At real traffic all four workers are fighting over the pipe, so every job takes longer "
     "than the planner said, and the p99 went from 1.4 to 4.5 ms.", True),
    # 'keeps fetching' is memory traffic in plain words
    ("cost-model-misses-contention", "The block keeps fetching data because it is not fused. Under production load all "
     "four cores are at the memory door at once, so each batch takes longer than planned and the p99 grows.", True),
    # the drills' chains in plain words and analogies, from probes: a request waiting for others to show up, a bus
    # that leaves when full, a scratchpad that fills, an express-first rule
    ("batching-queueing-delay", "Each request now sits for up to 20 ms waiting for 31 others to show up, and the "
     "bigger group then takes longer to run, so every request pays the wait plus the longer run.", True),
    ("batching-queueing-delay", "It's like a bus that won't leave until it's full: at 1,500 riders a second it waits "
     "most of its 20 ms timeout, and a fuller bus takes longer to unload, so the trip gets longer for everyone.", True),
    ("kv-preemption-storm", "At busy moments it fills, and to make room the system kicks out a conversation and "
     "deletes its notes, so that conversation has to start over from the beginning later, and the kicked-out ones "
     "wait in line again.", True),
    # the recompile storm needs the compile and the core it blocks ('the requests behind the compile'); 'the compiler
    # team compiled the plan' is neither
    ("recompile-storm", "Each new long length triggers a two-second compile, and the requests behind the compile wait, "
     "so p99 goes over a second.", True),
    ("recompile-storm", "The ML compiler team compiled the plan for seq <= 512; longer shapes wait in the queue, so "
     "p99 goes over a second.", False),
    # another chain's words in another sense: a plan kept pinned is no bucket pinned to a core, weights paged back in
    # are no paged KV cache, compiling 'the block' blocks no core
    ("static-placement-imbalance", "Keep the bf16 plan pinned. 87% of requests are short, so the queue grows and p99 "
     "rises.", False),
    ("kv-preemption-storm", "The runtime evicts a model and pages its weights back in, so requests queue and TTFT "
     "p99 rises.", False),
    ("recompile-storm", "Fix: compile the block with elementwise fusion, which brings p99 back to the low-load level.",
     False),
    ("recompile-storm", "Each new shape compiles on the request path, so requests wait and p99 rises; canary the new "
     "plan and roll back to the pinned previous plan if p99 regresses.", False),
    ("recompile-storm", "compiles on request path. ~2s each, core pinned so everything queued on it waits. p99 "
     "15ms->1s.", True),
    # a step named only as the contrast is not claimed: the fallback the recompile replaced
    ("compiler-runtime-mapping", "The p95 got better. Once the system has compiled a version for the longer prompts, "
     "those run faster than the generic fallback did, so p95 improved.", False),
    ("compiler-runtime-mapping", "Prompts drifted past 512; now they run a specialised kernel instead of the generic "
     "fallback, so requests wait and p99 rises.", False),
    # a batching answer does not blame strict priority (the fairness drill's class)
    ("batching-queueing-delay", "Strict priority serves interactive first: it eats about half the capacity and batch "
     "needs about 45%, so batch queues behind each interactive burst. The scheduler never idles with work waiting, so "
     "the wait shifts onto batch. Fix: WFQ with load-proportional weights, plus a max-wait guard for batch.", False),
    # the cost-model drill needs the prediction that missed: contention for HBM alone is the residency drill's too
    ("cost-model-misses-contention", "Each reload moves 12 GiB through HBM and competes for bandwidth with the other "
     "cores, so the cores saturate and p99 rises.", False),
    ("cost-model-misses-contention", "The cost model priced each batch alone, but four cores share HBM bandwidth, so "
     "batches take longer than predicted and queue, and p99 rises.", True),
    # plain words of the batcher's chain: each request sits out the window, the long batch finishes all together
    ("batching-queueing-delay", "The batcher now waits for a much bigger batch or a much longer timeout, so at our "
     "arrival rate each API request sits out most of the window and then rides a long batch that only finishes all "
     "together.", True),
    # a wrong remedy refused is no wrong mechanism claimed, and 'more throughput per core' is not 'more cores'
    ("batching-queueing-delay", "Now the batcher waits for 32 or for the long timeout, so each request loses almost "
     "all the window waiting, and the batch is big and slow and all its requests finish only at the end together, so "
     "p99 goes from 11 to 46 ms. It is not lack of compute, more cores will not help. If somebody wants more "
     "throughput per core, they must show a load test first.", True),
    # fast lanes that only go up to 512 tokens: the compiled envelope in plain words
    ("compiler-runtime-mapping", "The tuned fast lanes only go up to 512 tokens; anything longer goes down a "
     "general-purpose slow lane, and because those requests take longer and make others wait behind them, the "
     "slowest 1% more than doubled.", True),
    # an off-the-rack suit is the generic fallback; what holds up the line causes the wait
    ("compiler-runtime-mapping", "Think of made-to-measure suits: the inputs grew, so a fifth of them now don't fit "
     "any suit and get an off-the-rack one that's much slower, and they hold up the line for everyone behind them.",
     True),
    ("priority-budget-starvation", "It's a supermarket at rush hour with an express-first rule: more shoppers than "
     "tills, so the line grows anyway, and anyone with a full cart only gets rung up when no express shopper is "
     "waiting, which during the rush is never.", True),
]


@pytest.mark.parametrize("drill,text,present", MECHANISMS)
def test_a_mechanism_is_the_chain_stated_as_claims_in_any_vocabulary(drill, text, present):
    assert grade(D[drill], text).elements["mechanism"].present is present


def test_a_bare_chain_of_every_element_is_graded_weak():
    chain = ("shapes drift so fallback so slower so queue so p99 so tail so owner ML compiler team so rollback if p99 "
             "regresses so canary so report same seed")
    assert grade(D["compiler-runtime-mapping"], chain).verdict == "weak"


def test_a_keyword_list_split_into_one_word_sentences_is_graded_weak():
    """'Static placement. Skew. Hot core. ...': terms with full stops between them are still a list; a terse answer of
    labelled lines and claims is not one."""
    terms = ("Static placement. Skew. Hot core. Queueing. p99. Replay same seed. Least-loaded. Runtime team. Canary, "
             "revert if p99 up.")
    assert grade(D["static-placement-imbalance"], terms).verdict == "weak"
    terse = ("Static placement pins the short bucket to one core; 87% of traffic is short, so that core runs at 92% "
             "and its queue sets p99 (1.4 -> 2.7 ms). Proof: same-seed replay with per-core utilisation. Fix: "
             "least-loaded dispatch. Owner: runtime team. Rollback: canary, revert if p99 > 1.8 ms.")
    assert grade(D["static-placement-imbalance"], terse).verdict == "strong"
    # unlabelled short lines beside an argued sentence: the elements in a senior's shorthand, not a list
    shorthand = ("87% of requests are short and pinned to one core at 92% busy; its queue wait explodes and drags the "
                 "pooled p99 from 1.5 to 2.7 ms. Same-seed per-core utilisation. Least-loaded dispatch. Runtime team. "
                 "Revert if canary p99 regresses.")
    assert grade(D["static-placement-imbalance"], shorthand).verdict == "strong"
    # ... and an arrow chain is not an argued sentence
    arrows = ("strict priority -> interactive first -> batch starves -> batch p99 up. mean flat so conservation. fix "
              "wfq. owner tbd. rollback.")
    assert grade(D["fairness-starvation"], arrows).verdict == "weak"


def test_a_chain_told_backwards_claims_no_mechanism():
    """The symptom's rise given as the cause of the steps that produce it has every word and the wrong direction."""
    backwards = ("Because p99 went up, the queue grew, which made requests miss the buckets and fall back to the "
                 "generic kernels.")
    assert not grade(D["compiler-runtime-mapping"], backwards).elements["mechanism"].present
    forwards = ("Prompts got longer than 512, so they miss every bucket and run the generic kernels; those batches are "
                "slower, the queue grows, and p99 went up while p50 held.")
    assert grade(D["compiler-runtime-mapping"], forwards).elements["mechanism"].present


def test_a_plain_fix_counts():
    assert grade(D["compiler-runtime-mapping"], "Add a 1024 and a 2048 bucket and recompile.").elements["fix"].present


def test_a_missing_step_is_named_and_a_question_draws_it_out():
    d = D["recompile-storm"]
    g = grade(d, "Every compile takes 2 seconds and the p99 went over a second.")
    m = g.elements["mechanism"]
    assert not m.present and "missing" in m.hint and m.question in d.rubric.step_questions
    assert [e for e, _ in g.follow_ups()] == ["mechanism", "artifact", "owner", "rollback"]
    ok = grade(d, "Each new length triggers a 2 s compile on the pinned core, so every request behind it waits and "
                  "the p99 goes over a second.")
    assert ok.elements["mechanism"].present and ok.elements["mechanism"].evidence.startswith("Each new length")


def test_grading_cost_grows_linearly_with_the_answer():
    d = D["compiler-runtime-mapping"]
    shapes = (lambda n: "a" * n, lambda n: ("queue p99 fallback owner team " * 1000)[:n], lambda n: "x " * (n // 2))
    for make in shapes:
        cost = []
        for n in (2_000, 20_000):
            best = float("inf")
            for _ in range(3):
                t = time.process_time()
                grade(d, make(n))
                best = min(best, time.process_time() - t)
            cost.append(max(best, 1e-3))
        assert cost[1] / cost[0] < 40  # 10x the text; a quadratic rule would cost about 100x


def test_a_short_stem_is_not_a_prefix_and_british_hyphens_are_read():
    from workbench.grading.text import norm, phrase

    assert not phrase("aging").search(norm("only aggregate metrics on the dashboard"))
    assert phrase("aging").search(norm("add aging to the batch queue"))
    assert phrase("cores").search(norm("one core is hot"))
    assert phrase("preempt").search(norm("the scheduler pre-empts a running request"))
    assert norm("2 pct, 3 percent and 4 per cent") == " 2%, 3% and 4% "
    assert phrase("miss every").search(norm("those prompts don't fit any of the buckets"))
    assert phrase("miss every").search(norm("it doesnt match a compiled shape"))
    assert not phrase("miss every").search(norm("they do fit a bucket"))


def test_a_run_on_answer_keeps_its_fix_apart_from_its_rollback():
    """Lowercase chat with no full stops: the fix and the rollback share one 'sentence'; each is still found."""
    text = ("ok so the long prompts get cut into 512 token chunks and running decodes go first so a doc prompt "
            "takes five or more steps and its first token waits for the last chunk which is why ttft p99 went up "
            "while the stutter went away id bump the budget to 2048 and the runtime team owns the scheduler "
            "knobs and if the canary shows ttft p99 or itl p99.9 worse than the old setup we flip it back")
    g = grade(D["chunked-prefill-ttft"], text)
    assert g.elements["fix"].present and g.elements["rollback"].present
    only_rollback = "if the canary shows ttft p99 worse than the old setup we flip the 2048 budget back"
    assert not grade(D["chunked-prefill-ttft"], only_rollback).elements["fix"].present


def test_a_participle_is_no_experiment_and_a_labelled_mechanism_is_no_fix():
    """'cores running kernels' names no run to prove anything; 'Mechanism: ... puts the MLP in one kernel ...
    instead of ...' proposes nothing (a learner review found both credited in chapter 07's strong answer)."""
    drill = D["fusion-memory-bursts"]
    contention = ("With all eight cores running such kernels at once they contend for the shared HBM bandwidth: memory "
                  "contention grows from 46% to 62% of the tail.")
    assert not grade(drill, contention).elements["artifact"].present
    mechanism = ("Mechanism: aggressive fusion puts the whole MLP in one kernel whose working set does not fit "
                 "SRAM, so it spills 11.3 MiB per request to HBM instead of 1.1 MiB.")
    assert not grade(drill, mechanism).elements["fix"].present
    assert grade(drill, "Fix: I would move attention to a tiled, flash-style kernel.").elements["fix"].present


FIXES = [
    # a way back declined, or kept open as a possibility, proposes no fix; one declined for another is still a fix
    ("recompile-storm", "I would not roll back the recompile change because p95 is better.", False),
    ("memory-residency-eviction", "We can roll back to the 64 GiB parts if people complain.", False),
    ("recompile-storm", "I would not keep recompiling on the serving path; instead precompile 1024, 2048 and 4096 "
     "buckets ahead of time.", True),
    # 'if I remember right' hedges a figure and ties no condition to the way back; a re-enable has its own condition
    ("batching-queueing-delay", "Fix: put max_delay_s and max_batch back to the previous values (2 ms and 16 if I "
     "remember the old config right), and size any future delay from the p99 budget.", True),
    ("fairness-starvation", "The serving runtime team should revert to WFQ and add a starvation guard, re-enabling "
     "priority only if a same-seed run shows both streams meeting their p99 targets.", True),
    # a fix clause, then a proof attached to the change: the clause is the fix; a proof alone is not
    ("compiler-runtime-mapping", "I'd ask the compiler team to add 1024 and 2048 buckets and recompile, and attach a "
     "same-seed report of hit rates to the change.", True),
    ("fairness-starvation", "I'd run the weighted and priority configs on the same seed and compare per-stream p99.",
     False),
    # 'roll the config back' undoes the change as 'roll back the config' does
    ("batching-queueing-delay", "Roll the batcher config back.", True),
    # the old settings put back is the fix; flipping them 'again' if the canary does not recover is the rollback
    ("batching-queueing-delay", "Put the old delay and cap back behind the flag, and flip it again if the canary's "
     "p99 doesn't recover to around 11 ms.", True),
    # a general truth proposes nothing, even on the drill's fix words; the same words proposed for this case do
    ("fairness-starvation", "Strict priority is known to starve the lower class, whereas weighted fair queueing "
     "shares the cores by weight.", False),
    ("fairness-starvation", "I'd switch back to weighted fair queueing so the batch stream gets its share.", True),
    # an owner and the fix in one sentence: the owner does not make the fix a mere assignment
    ("compiler-runtime-mapping", "The ML compiler team owns the envelope, so they add a 1024 and a 2048 bucket.", True),
    # the first way back has no condition of its own: it is the fix; the second, tied to the condition, is the rollback
    ("fairness-starvation", "I'd switch back to weighted fair queueing behind a flag and flip it back if interactive "
                            "p99 goes above its SLO.", True),
    ("fairness-starvation", "Flip back to strict priority if batch p99 goes above 500 ms.", False),
    # a parenthesis is one aside, not a run of bare terms
    ("compiler-runtime-mapping", "Fix: add larger buckets (1024, 2048), recompile.", True),
    # plain language beside the jargon, with an action on it
    ("static-placement-imbalance", "The fix is to let any core take any request.", True),
    ("fusion-memory-bursts", "The compiler folks should do the attention in small tiles.", True),
    # the plain words without a proposal are a description, not a fix
    ("static-placement-imbalance", "Any core was idle while one ran at 92%.", False),
    # the ground truth's rollback is not the fix: flipping recompile-on-miss back to fallback
    ("recompile-storm", "Flip out_of_envelope back to fallback right away.", False),
    # an 'Owner:' line may carry the fix; a 'Fix:' line of actions is no keyword list, a list of bare terms is
    ("compiler-runtime-mapping", "Owner: the compiler team adds a 1024 and a 2048 bucket.", True),
    ("compiler-runtime-mapping", "Fix: rebucket from the observed length histogram, +1024 +2048, recompile.", True),
    ("compiler-runtime-mapping", "Fix: rebucket, recompile, 1024, 2048.", False),
    # a slash between values is a list of values, not of terms
    ("average-hides-tail", "Fix: compile 1024 / 2048 / 4096 buckets from the docs length histogram, recompile.", True),
    ("average-hides-tail", "Fix: buckets/recompile/gate.", False),
    # a condition belongs to the nearer way back, and one that opens a new clause to what follows it
    ("fairness-starvation", "Put strict priority on a kill switch and flip it off if batch p99 passes 500 ms, then go "
                            "back to weighted fair queueing.", True),
    ("fusion-memory-bursts", "Switch back to the elementwise fusion level, and we turn aggressive fusion on again "
                             "once a production-load test shows no p95 regression.", True),
    # naming the fix is not proposing it: 'weighted' in 'weighted fair queueing' is no action
    ("fairness-starvation", "Weighted fair queueing was the scheduler we had before.", False),
    # undoing the regression's own change is the fix where the drill says so (revert_terms), unless it is offered as a
    # possibility or tied to a condition (then it is the rollback)
    ("batching-queueing-delay", "I'd revert the batcher change today.", True),
    ("batching-queueing-delay", "Put the old waiting time back.", True),
    ("fairness-starvation", "The runtime team rolls the scheduler back to sharing by weight.", True),
    ("kv-preemption-storm", "Revert the memory split to what it was.", True),
    ("batching-queueing-delay", "We can always revert the batcher config.", False),
    ("batching-queueing-delay", "Revert the batcher config if canary p99 is worse.", False),
    ("fairness-starvation", "We will not go back to the old scheduler.", False),
    # a drill whose regression came from no change of ours has no revert that fixes it
    ("compiler-runtime-mapping", "Revert to the previous plan today.", False),
    # a decision line may undo the change (the fix); a rollback line never is the fix
    ("fairness-starvation", "Decision: revert to weighted fair queueing; strict priority waits for per-stream targets.",
     True),
    ("fairness-starvation", "Rollback: revert to weighted fair queueing.", False),
    # the fix of a neighbouring mechanism is no fix for this one (rejected_mechanisms and rejected_fixes) ...
    ("recompile-storm", "The fix is least-loaded dispatch so any core can take any bucket.", False),
    ("memory-residency-eviction", "The fix is to add cores to the pool.", False),
    ("precision-win-without-fallback", "I'd move the dequantisation into the GEMM epilogue.", False),
    # ... or offers this drill's own only as one option beside it (a menu) ...
    ("kv-preemption-storm", "Either buy more GPUs or move the second model to a separate replica.", False),
    ("memory-residency-eviction", "We need more cores / a separate card for the embedding model.", False),
    # ... unless the sentence also proposes this drill's own
    ("recompile-storm", "Precompile the 1024 and 2048 buckets before traffic, rather than rebalance the cores.", True),
    # an imperative whose verb is the fix ('tile'), and the answer to the answer's own question heading
    ("fusion-memory-bursts", "Tile the fused attention kernel so its working set fits in SRAM.", True),
    ("compiler-runtime-mapping", "How do we fix it? Buckets at 1024 and 2048 from the observed histogram.", True),
    ("compiler-runtime-mapping", "How would I prove it? Buckets at 1024 and 2048 in a same-seed replay.", False),
    # a participle opening a claim is no imperative: 'fused MLP holds ...' describes, 'fuse ...' proposes
    ("fusion-memory-bursts", "Fused MLP holds the whole hidden row on chip, so it spills to HBM.", False),
    # a label alone on its line labels the next one; a pasted command or config line may be the change; a bracketed
    # list is one value, not a run of terms; 'X might be the fix' proposes X
    ("batching-queueing-delay", "Revert:\n$ batcherctl set api max_delay_s=0.002 max_batch=16", True),
    ("compiler-runtime-mapping", "Change:\n  buckets: [128, 256, 512, 1024, 2048]", True),
    ("compiler-runtime-mapping", "Fix: buckets = [128, 256, 512, 1024, 2048], recompile.", True),
    ("compiler-runtime-mapping", "Adding a 1024 and maybe a 2048 bucket might be the fix.", True),
    # an escape hatch kept open is no change proposed
    ("memory-residency-eviction", "We could always roll back to the 64 GiB parts.", False),
    # a setting of degree (fix_knobs) turned one way is bounded by a value, the setting before, or a named alternative
    ("batching-queueing-delay", "Fix: make max_delay_s smaller.", False),
    ("batching-queueing-delay", "Fix: make max_delay_s smaller, 2 ms again.", True),
    ("chunked-prefill-ttft", "The serving team should give prefill a bigger budget per step.", False),
    ("chunked-prefill-ttft", "I'd raise the token budget to 2048.", True),
    ("kv-preemption-storm", "We should hand the cache more blocks.", False),
    ("kv-preemption-storm", "We should hand the cache its old blocks back, restoring the split.", True),
    ("cost-model-misses-contention", "Honestly I'd tell the compiler to fuse more aggressively.", False),
    ("fusion-memory-bursts", "I'd dial the fusion level down to elementwise.", True),
    ("fusion-memory-bursts", "I'd dial the fusion level down a little.", False),
    # a drill whose fix is discrete (buckets for new shapes) has no setting of degree: 'bigger buckets' names them
    ("compiler-runtime-mapping", "Fix: compile bigger buckets for the long prompts.", True),
    # what stays as it is while the change is tried is no change ('keep the old pool serving until ...')
    ("memory-residency-eviction", "We keep the 64 GiB machines in service until the trial is over.", False),
    ("memory-residency-eviction", "Keep the 64 GiB machines serving and put the embedding model on a separate "
                                  "accelerator.", True),
    # 'I'd guess', 'I'd say' give an opinion, not a proposal; what follows it may still propose
    ("fusion-memory-bursts", "The deeper fusion likely makes the attention kernel's working set too big for on-chip "
                             "memory, so I'd guess it spills to HBM.", False),
    ("fusion-memory-bursts", "I'd say we should tile the attention kernel.", True),
    # a fix noun as the subject of its own verb describes it; a verb after a modal, or a participle, acts on it
    ("precision-win-without-fallback", "The INT8 buckets stop at 512, so long prompts run the generic path.", False),
    ("precision-win-without-fallback", "INT8 buckets for 1024 and 2048 should be built before release.", True),
    ("precision-win-without-fallback", "The quantisation lead builds INT8 buckets for 1024 and 2048.", True),
    # any mention of the fix may be the one acted on, not only the first
    ("fusion-memory-bursts", "Aggressive fusion waits for p95 within 5% of elementwise; meanwhile make elementwise "
                             "the default.", True),
    # 'look at' a proof is no fix; 'look at' doing something is a task
    ("static-placement-imbalance", "I'd have the compiler team look at spreading the short bucket over three cores.",
     True),
    # a proof named before 'the fix is' belongs to its own clause
    ("static-placement-imbalance", "A same-seed per-core report plus a least-loaded rerun proves it, the fix is "
     "least-loaded dispatch.", True),
    # a fix in a clause after the proof's, in one run-on sentence; a prediction after the proof is no fix
    ("average-hides-tail", "Pooled p99 goes 0.3 -> 1.9 ms; prove it with a same-seed per-stream report, have the ML "
     "compiler team add 1k/2k/4k buckets, and keep the tenant gated until per-stream p99 passes.", True),
    ("memory-residency-eviction", "I'd prove it with a same-seed run at 64 vs 32 GiB; 64 GiB should show zero "
     "reloads.", False),
    # 'keep an eye on the latency' watches; it is no condition that makes the way back before it a rollback
    ("batching-queueing-delay", "The runtime team puts the old values back (2 ms, 16) on a 10% canary, and keeps an "
     "eye on the latency dashboards.", True),
    # the embedding model 'in other accelerators' is a separate card in plain words
    ("memory-residency-eviction", "The serving platform team must put the embedding model in other accelerators.",
     True),
    # 'ship it' releases as is; a formula line computes; the old pool left carrying traffic is no change
    ("average-hides-tail", "Ship it, the gate passed.", False),
    ("memory-residency-eviction", "load_ms = weights_gib * 1.074 / 64 * 1000  # about 200 ms per reload", False),
    ("memory-residency-eviction", "I'd leave the 64 GiB pool carrying production until a canary shows no reloads.",
     False),
    ("cost-model-misses-contention", "Fix: elementwise fusion for this block, then a derate in the cost model, "
     "bw_eff = bw / concurrent memory-bound cores.", True),
    # the rollback's clause is blanked, not the fix's clause before it
    ("fairness-starvation", "Go back to WFQ behind a flag; if batch p99 breaches its target, revert the flag.", True),
    ("fairness-starvation", "Put it behind a flag; if batch p99 breaches its target, go back to WFQ.", False),
    # 'compile' proposes like 'recompile'; what follows 'so' is the effect, not the verb's object
    ("recompile-storm", "Compile the 1024 and 2048 buckets before launch.", True),
    ("compiler-runtime-mapping", "I'd want to check it, but the prompts are longer than the 512 envelope we compile "
                                 "for, so they miss the buckets.", False),
    # where undoing the change is the fix, the setting named by its age ('the old timer') is the change undone; an
    # escape hatch or a conditional way back is still no fix
    ("batching-queueing-delay", "The team should go back to the old short timer and the smaller bus size.", True),
    ("fairness-starvation", "Return to the previous scheduler for now.", True),
    ("batching-queueing-delay", "We can always go back to the old timer.", False),
    ("batching-queueing-delay", "Ship the new timer on a canary and go back to the old one if p99 is worse.", False),
    # placement's fix in an analogy's words: any server takes any request (pooling); a time 'taken' is no fix
    ("static-placement-imbalance", "Fix: let any till take any customer.", True),
    ("static-placement-imbalance", "Let any counter serve any customer, like one line at the bank.", True),
    ("static-placement-imbalance", "The fix is to let any teller serve anyone.", True),
    ("static-placement-imbalance", "The long requests do not take any longer on core 2.", False),
    # a fix term as the subject of a verb in the present describes the fix; a team or an imperative proposes it
    ("fairness-starvation", "Weighted fair queueing allocates capacity in proportion to weights.", False),
    ("fairness-starvation", "The runtime team restores the WFQ weights to 4:1.", True),
    ("fairness-starvation", "Restore weighted fair queueing with weights 4:1.", True),
    # a verb before ', so' / 'since' acts in another clause: no action on the fix term after it; 'so' with no comma
    # may be a purpose ('change the build so the elementwise steps are merged')
    ("cost-model-misses-contention", "The roofline prices a batch with the full HBM bandwidth, and for an unfused "
     "block that's a lot of bandwidth, since every elementwise op writes its output back.", False),
    ("cost-model-misses-contention", "Then I'd change the build so the simple elementwise steps are merged and far "
     "less data goes through the pipe.", True),
    # a thing's action in the present describes ('it moves more bytes than the plan with elementwise fusion'); a
    # team's in the present is its plan
    ("fusion-memory-bursts", "The kernel spills to HBM and reads it again, so each request moves more bytes than "
     "under elementwise fusion.", False),
    ("fusion-memory-bursts", "The ML compiler team moves this model back to elementwise fusion behind the flag.", True),
    # an organisation named without 'team' is people: its present-tense act is its plan; software's describes
    ("static-placement-imbalance", "Serving runtime switches placement to least-loaded.", True),
    ("memory-residency-eviction", "Platform moves the embedding model to its own pool.", True),
    ("memory-residency-eviction", "The runtime moves the embedding model to its own pool every night.", False),
    # verbs of where work runs are actions ('dispatch', 'serve', 'host'); a thing that serves describes; a fix the
    # answer calls the fix ('that's the real fix') is proposed; a noun at the sentence's end is no verb
    ("static-placement-imbalance", "Dispatch each request to the least-loaded core.", True),
    ("memory-residency-eviction", "Serve embeddings from a separate pool of cards.", True),
    ("memory-residency-eviction", "The runtime served embed from the shared pool, the separate pool sat idle.", False),
    ("priority-budget-starvation", "I think you need more capacity for the surge, like another replica, that's the "
     "real fix.", True),
    ("static-placement-imbalance", "I'd confirm with a same-seed run that reports per-core utilisation, and then the "
     "same seed with least-loaded dispatch.", False),
    # a condition with an action of its own after the way back ('..., adding a guard if ...', '... and, if ..., add
    # a cap') is that action's: the way back before it is the fix
    ("fairness-starvation", "The serving runtime team owns the scheduler and should go back to weighted fair queueing "
     "with weights set from offered load, adding a bounded starvation guard if interactive really needs a tighter "
     "tail.", True),
    ("fairness-starvation", "I'd ask them to go back to weighted fair queueing (weights proportional to offered load) "
     "and, if interactive needs a tighter tail, add a cap on how long a batch request can wait.", True),
    # 'My proposal:' labels the fix; a model on 'its own machines' is the separate pool in plain words
    ("memory-residency-eviction", "My proposal: the embedding model go to its own machines.", True),
    # token drills in plain words: 'raise the limit so big orders go in fewer pieces'; 'tries budget 2048'; 'the
    # sensible middle ground is ...' names the proposal
    ("chunked-prefill-ttft", "I'd raise the limit so the big orders go in fewer pieces, something like four times "
     "larger.", True),
    ("chunked-prefill-ttft", "Action: the runtime team tries budget 2048 on a canary.", True),
    ("chunked-prefill-ttft", "The sensible middle ground is bigger portions, 2,048 rather than 512.", True),
    ("chunked-prefill-ttft", "The budget is 2,048 on the other cluster.", False),
    ("fairness-starvation", "I'd hold strict priority until both streams have a p99 target and a test shows both "
     "met; until then go back to the weighted setup.", True),
    ("priority-budget-starvation", "Rate-limit the interactive tenant during surges.", True),
    ("priority-budget-starvation", "Scale out to two replicas at peak.", True),
    ("static-placement-imbalance", "Route requests to the idlest core.", True),
    ("static-placement-imbalance", "Load-balance the short bucket across all four cores.", True),
    ("batching-queueing-delay", "Derive max_delay from the p99 budget, about 2 ms.", True),
    # the drills' fixes in other words: a window dialled down, a wait bounded, two models a card, a cost model taught
    ("batching-queueing-delay", "Dial the batching window down to 2 ms.", True),
    ("batching-queueing-delay", "The batcher should wait at most 2 ms, not 20.", True),
    ("batching-queueing-delay", "Set max_delay_s=0.002, max_batch=8.", True),
    ("fairness-starvation", "Bound how long a batch request can wait, e.g. promote it after 200 ms.", True),
    ("fairness-starvation", "Cap interactive at 60% of the cores so batch always gets the rest.", True),
    ("memory-residency-eviction", "Stop co-locating all three models on one 32 GiB card: two per card, embed "
     "elsewhere.", True),
    ("cost-model-misses-contention", "Teach the cost model that four cores share HBM: divide bandwidth by the number "
     "of concurrent memory-bound batches.", True),
    ("priority-budget-starvation", "Stand up a second replica for the surge.", True),
    ("priority-budget-starvation", "Open another replica during surges.", True),
    ("cost-model-misses-contention", "Merge the small steps together so each batch moves less data.", True),
    # the fix named as the obvious lever or move; the first thing read is no fix
    ("cost-model-misses-contention", "In terms of what to do, fusion is the obvious lever.", True),
    ("compiler-runtime-mapping", "The first thing is the bucket hit rate, which fell to 79%.", False),
    # a config key is one word: 'Fix: max_delay.' is a bare word, as 'Fix: buckets.' is
    ("batching-queueing-delay", "Fix: max_delay.", False),
    ("batching-queueing-delay", "Fix: max_delay_s back to 0.002.", True),
    # a short verb keeps its forms ('adds', 'capped'), not other words ('address')
    ("average-hides-tail", "ML compiler team adds 1k/2k/4k buckets and recompiles.", True),
    ("average-hides-tail", "The ML compiler team will address buckets later.", False),
    # a setting changed in a pasted config: a diff's added line, or a value with what it was
    ("average-hides-tail", "buckets: [128, 256, 512, 1024, 2048, 4096]   # was [128, 256, 512]", True),
    ("fairness-starvation", "+  discipline: weighted_fair", True),
    ("fairness-starvation", "discipline: weighted_fair", False),
    # the settings returned to their old values
    ("batching-queueing-delay", "Return max_delay and max_batch to the old values.", True),
    # the fix and the rollback in one sentence: the rollback's blanking stays in its own conjunct
    ("static-placement-imbalance", "I'd canary least-loaded dispatch and flip back to the old placement if any core "
     "stays above 85% or canary p99 is worse.", True),
    ("static-placement-imbalance", "The serving runtime on-call could probably own switching to least-loaded dispatch, "
     "and if the canary p99 is worse than before they'd flip it back.", True),
    # a proof, then a clause of its own after a semicolon that makes the fix; a watch after it is none
    ("batching-queueing-delay", "A same-seed run proves it; the serving runtime team reverts max_delay to 2 ms.", True),
    ("fusion-memory-bursts", "A same-seed run proves it; the ML compiler team's fusion owner moves to tiled attention "
     "or back to elementwise.", True),
    ("batching-queueing-delay", "A same-seed run with max_delay at 2 ms proves it; we watch the dashboards.", False),
    # ... while the rollout's own words stay no fix: shipping 'it' behind a flag, keeping the old plan pinned
    ("fusion-memory-bursts", "And I'd ship it behind the fusion flag and flip it back if p95 on the canary is worse "
     "than the old setting.", False),
    ("fusion-memory-bursts", "I'd keep the old elementwise plan pinned and revert to it if the canary's p95 is more "
     "than 5% worse.", False),
]


@pytest.mark.parametrize(("drill", "text", "want"), FIXES)
def test_fix_shapes(drill, text, want):
    assert grade(D[drill], text).elements["fix"].present is want


def test_the_artifact_quoted_is_the_sentence_that_asks_for_it():
    """A sentence reading the figures per stream may name an artifact's words; the quote is the one that asks for
    the artifact, where the answer has one (what earned the element is unchanged: any of them does)."""
    text = ("If I split by stream, chat p99 is 0.300, it is not hurt at all. To prove it I rerun the same seed with "
            "latency split per stream and bucket misses counted by reason.")
    element = grade(D["average-hides-tail"], text).elements["artifact"]
    assert element.present and element.evidence.startswith("To prove it I rerun")
    alone = grade(D["average-hides-tail"], "If I split by stream, chat p99 is 0.300, it is not hurt at all.")
    assert alone.elements["artifact"].present  # the reading alone still names a per-stream split


def test_the_owner_quoted_is_the_sentence_that_assigns_it():
    """An owner named in passing ('serving on-call flips it back') earns the element; the quote is the sentence that
    assigns the work in so many words, where the answer has one."""
    text = ("Operationally, out_of_envelope is a config flag, so serving on-call flips it back to fallback right away. "
            "The ML compiler team owns the recompile policy and should rebalance before we try again.")
    element = grade(D["recompile-storm"], text).elements["owner"]
    assert element.present and element.evidence.startswith("The ML compiler team owns")


def test_the_fix_quoted_is_the_sentence_that_proposes_it():
    """A thing's past action is what happened ('the benchmark used short prompts'); a verb before ', so' or 'since'
    acts in another clause. The evidence a learner sees is the proposal, not the story before it."""
    text = ("benchmark used short synthetic prompts so everything hit the int8 buckets. prod prompts are long, 73% go "
            "to generic. add 1k/2k int8 buckets")
    assert grade(D["precision-win-without-fallback"], text).elements["fix"].evidence == "add 1k/2k int8 buckets"
    text = ("That's fine for compute-bound kernels, but the block is unfused, so every elementwise op round-trips to "
            "HBM. Fix: compile the block with elementwise fusion.")
    assert grade(D["cost-model-misses-contention"], text).elements["fix"].evidence.startswith("Fix: compile")
    # where several sentences would earn it, the quote is the first that proposes in so many words ('Fix:', 'I'd')
    text = ("Conservation law first: for a work-conserving scheduler, the load-weighted mean wait is fixed, so strict "
            "priority over weighted fair queueing only moves waiting onto batch. Fix: go back to weighted fair "
            "queueing, weight 1.0 interactive and 0.9 batch.")
    assert grade(D["fairness-starvation"], text).elements["fix"].evidence.startswith("Fix: go back")
    # a proof that reruns with the fix ('..., then a least-loaded rerun') is no proposal beside a 'Fix:' line
    text = ("Same-seed: per-core util, per-bucket share vs assumed, then least-loaded rerun - should restore ~1.5 ms. "
            "The fix is least-loaded dispatch, since every bucket is compiled.")
    assert grade(D["static-placement-imbalance"], text).elements["fix"].evidence.startswith("The fix is")
    # a prediction ('64 GiB should show zero loads') is no proposal: the quote is the fix line after it
    text = ("I'd prove it with a same-seed run on both sizes. 64 GiB should show zero loads. Fix: move embed to its "
            "own pool so two models per device stay resident.")
    assert grade(D["memory-residency-eviction"], text).elements["fix"].evidence.startswith("Fix: move embed")
    # a story's past action by a team is the fix told as done; a remediation label labels the fix
    assert grade(D["precision-win-without-fallback"], "The ML compiler team's quantization owner added 1024 and 2048 "
                 "INT8 buckets from the production histogram.").elements["fix"].present
    assert grade(D["memory-residency-eviction"], "Remediation: embedding model moved to its own accelerator "
                 "pool.").elements["fix"].present


def test_a_counterfactual_dismisses_the_wrong_class():
    """'A leak would look different' argues against the leak: it must not void the mechanism beside it."""
    text = ("Three 12 GiB models need 36 GiB and only two fit in 32 GiB, so every batch for the third evicts an idle "
            "model and reloads its weights, and the reload traffic contends with the other cores, so queues build and "
            "p99 spikes. A leak would look different: memory would grow steadily instead of sitting at capacity.")
    assert grade(D["memory-residency-eviction"], text).elements["mechanism"].present
    asserted = "It is a memory leak: three models reload weights, queues build and p99 spikes because memory fills."
    assert not grade(D["memory-residency-eviction"], asserted).elements["mechanism"].present
    # a first guess the answer cautions itself about is turned from, like one it contradicts
    cautious = "My first instinct with memory at capacity is a leak, and I have been burned by that before. " + CHAIN
    assert grade(D["memory-residency-eviction"], cautious).elements["mechanism"].present
    kept = "My first instinct with memory at capacity is a leak, and I'm sticking with it. " + asserted
    assert not grade(D["memory-residency-eviction"], kept).elements["mechanism"].present


CHAIN = ("Three 12 GiB models need 36 GiB and only two fit in 32 GiB, so every batch for the third evicts an idle "
         "model and reloads its weights, and the reload traffic contends with the other cores, so queues build and "
         "p99 spikes.")


def test_a_pasted_setting_is_no_claim_and_plain_words_carry_the_chain():
    """'discipline: wfq' states no cause; 'the generic plan' is the fallback, 'only get the time interactive doesn't
    use' is the residual capacity."""
    fair = ("The machine is 95% busy and strict priority always serves interactive first, so batch requests only get "
            "the time interactive doesn't use and wait far longer: batch p99 doubled.")
    assert grade(D["fairness-starvation"], fair).elements["mechanism"].present
    for line in ("discipline: wfq  # revert from strict_priority", "weights: {interactive: 1.0, batch: 0.9}",
                 "$ batcherctl set api max_delay_s=0.002", "buckets: [128, 256, 512]"):
        assert CONFIG_LINE.match(norm(line)), line
    for line in ("Mechanism: the buckets stop at 512, so long prompts fall back.", "Cause: strict priority."):
        assert not CONFIG_LINE.match(norm(line)), line
    tail = ("Document prompts are longer than 512, none fit a bucket, so they run the generic plan, and at 2% of "
            "requests they are the slowest 2%, so p99 sits inside them while the mean barely moves.")
    assert grade(D["average-hides-tail"], tail).elements["mechanism"].present


def test_a_rejected_class_is_read_within_one_sentence():
    """'four times more. The cores are idle' does not say 'more cores'; a launch cost that 'went up' is fusion's
    wrong class however it is worded."""
    text = ("p99 is four times more. The cores are less busy, so it is not compute. The batcher now waits longer to "
            "collect more requests: each request waits until the batch is full or the max delay is over, then the big "
            "batch runs long and each request finishes only when the complete batch is finished, so p99 grows.")
    assert grade(D["batching-queueing-delay"], text).elements["mechanism"].present
    launch = ("The fused kernel is so big that its launch and setup cost went up, so under load it spills nothing but "
              "the launches serialise, and aggressive fusion's working set in SRAM is not the issue; p95 grows.")
    assert not grade(D["fusion-memory-bursts"], launch).elements["mechanism"].present


def test_chunked_prefills_wrong_classes_void_the_chain_and_nothing_dismisses():
    """Per-chunk relaunch costs, an allocator that fragments and low arithmetic intensity are other classes than
    decodes sharing each iteration's budget with the chunks; 'nothing here looks like X' dismisses X."""
    chain = ("With a 512-token budget each long prompt is split into chunks over several iterations, and the running "
             "decodes go first in each one, so the prompt's prefill waits and its first token arrives later: TTFT p99 "
             "rises.")
    drill = D["chunked-prefill-ttft"]
    assert grade(drill, chain).elements["mechanism"].present
    assert grade(drill, chain + " Nothing here looks like memory pressure.").elements["mechanism"].present
    for wrong in ("Each chunk has to relaunch kernels, so prefill is slower in total.",
                  "Small chunks have a lower arithmetic intensity per launch.",
                  "The block allocator ends up fragmenting the paged cache."):
        assert not grade(drill, wrong + " " + chain).elements["mechanism"].present, wrong


@pytest.mark.parametrize(("text", "present"), [
    # denied by the evidence, a guess said the other way round, an analogy mapped onto the case: the class is dismissed
    ("A leak wouldn't give you loads equal to evictions. " + CHAIN, True),
    ("I'd have guessed a memory leak at first. Actually, no: " + CHAIN, True),
    ("A database buffer pool with a leak thrashes the same way. It is the same shape of problem here: " + CHAIN, True),
    # a candidate listed with its own evidence against it, then the one chosen
    ("Could be one of two things. A memory leak, but nothing here grows over time. Or capacity, which is what I'd go "
     "with: " + CHAIN, True),
    # asserted, it still voids the chain beside it
    ("It is a memory leak. " + CHAIN, False),
    ("It is a memory leak, but nobody has checked the heap yet. " + CHAIN, False),
])
def test_a_dismissed_class_does_not_void_the_chain(text, present):
    assert grade(D["memory-residency-eviction"], text).elements["mechanism"].present is present


def test_a_release_gate_is_the_rollback_not_the_artifact():
    """'Hold the release until a load test passes' is a gate (rollback); the same load test offered as proof is the
    artifact."""
    drill = D["compiler-runtime-mapping"]
    gate = grade(drill, "Hold the release until a load test at production shapes passes.")
    assert gate.elements["rollback"].present and not gate.elements["artifact"].present
    proof = grade(drill, "To prove it, run a load test at production shapes and split latency per bucket.")
    assert proof.elements["artifact"].present



def test_per_is_a_whole_word():
    """'per core' is a breakdown; 'if it persists add a core' holds no 'per' (a stem read as a prefix gave a vague
    rerun an artifact)."""
    drill = D["average-hides-tail"]
    vague = "Rerun a few times, and if it persists add a core to the pool."
    assert not grade(drill, vague).elements["artifact"].present
    assert grade(drill, "Rerun it with latency per core and per stream.").elements["artifact"].present


def test_the_evidence_read_back_is_no_artifact():
    """'The run shows 48 loads' reads the figures the candidate was shown; a rerun proposed is an artifact."""
    drill = D["memory-residency-eviction"]
    shown = "The whole run shows 48 loads and 48 evictions per model, so the host link is busy."
    assert not grade(drill, shown).elements["artifact"].present
    proposed = "I'd rerun the same seed on 64 and 32 GiB and compare the loads and evictions per model."
    assert grade(drill, proposed).elements["artifact"].present
    gate = "We keep the 64 GiB machines until a load test with all three models at production traffic passes."
    assert not grade(drill, gate).elements["artifact"].present
    both = "I'd rerun the same seed on both sizes, and hold the move until a load test at production traffic passes."
    assert grade(drill, both).elements["artifact"].present
    table = "The tail-driver breakdown is clear: residency is 21% of the tail, per model."
    assert not grade(drill, table).elements["artifact"].present
    wanted = "I'd want the per-model tail-driver breakdown from a same-seed run on both memory sizes."
    assert grade(drill, wanted).elements["artifact"].present
    # a run written as code with its seed fixed is a reproducible artifact; without a seed it is not
    code = D["fairness-starvation"]
    assert grade(code, "r = sim('priority_two_streams', seed=7, scheduler='wfq')").elements["artifact"].present
    assert not grade(code, "r = sim('priority_two_streams', scheduler='wfq')").elements["artifact"].present
    # an 'Evidence:' line of the figures shown, moved from one value to another, proposes nothing to run
    read = "Evidence: the residency share of the tail drivers went from 0% to 21%, per model."
    assert not grade(drill, read).elements["artifact"].present
    compared = "Evidence: residency share of the tail drivers 0% -> 21% in a same-seed rerun of 64 vs 32 GiB."
    assert grade(drill, compared).elements["artifact"].present
    # a proof proposed as a procedure, its noun left out, is an artifact when it says how it reproduces
    fs = D["fairness-starvation"]
    assert grade(fs, "Proof: same-seed runs of WFQ, strict priority and FIFO, p99 and mean wait per stream."
                 ).elements["artifact"].present
    assert grade(drill, "I'd prove it by running the same seeded traffic on the big and small cards and counting "
                        "the loads per model.").elements["artifact"].present
    assert not grade(drill, "I'd prove it by running it again.").elements["artifact"].present
    # the scenario's own benchmark, described, and a batch that runs longer, are no runs made
    pwf = D["precision-win-without-fallback"]
    told = "The benchmark was on synthetic prompts; production prompts are longer and miss the INT8 buckets."
    assert not grade(pwf, told).elements["artifact"].present
    redo = "I'd rerun the benchmark on production prompts at the same seed, per bucket."
    assert grade(pwf, redo).elements["artifact"].present
    cmc = D["cost-model-misses-contention"]
    verb = "Under production traffic the four cores share HBM, so batches run a quarter longer than predicted."
    assert not grade(cmc, verb).elements["artifact"].present
    noun = "A same-seed run at production traffic, predicted vs measured per batch, shows it."
    assert grade(cmc, noun).elements["artifact"].present


def test_bad_codegen_is_not_the_recompile_storms_class():
    """The compiled kernels are faster (p95 improved): blaming their code is the wrong class, however it is chained."""
    text = ("The recompiled kernels are worse, so the compiler generated bad code for long sequences, which stalls the "
            "core while requests queue behind it and p99 goes to a second.")
    assert not grade(D["recompile-storm"], text).elements["mechanism"].present


def test_the_imbalance_the_tail_table_shows_is_not_the_recompile_storms_class():
    """The tail-driver table files compile stalls under core imbalance; an answer that blames the placement in other
    words ('the new buckets pile onto one core', 'the load is skewed') has the wrong class. Read as a first guess the
    trace turns from, it is dismissed."""
    wrong = ("Core imbalance is 98% of the tail. The recompiled buckets are pinned to particular cores, so the new "
             "long-sequence buckets pile onto one core while the others idle; that core's queue gives the 1 s p99.")
    assert not grade(D["recompile-storm"], wrong).elements["mechanism"].present
    right = ("The tail table says core imbalance, but the trace shows otherwise: with recompile-on-miss the first long "
             "request compiles a new bucket on the request path, a 2 s stall of the core it is pinned to, and "
             "everything queued there waits, so p99 goes to a second while p95 improves.")
    assert grade(D["recompile-storm"], right).elements["mechanism"].present


def test_a_recompile_storm_is_not_the_mapping_drills_class():
    """Out-of-envelope shapes run the generic fallback in this drill; a confident recompile-storm chain is the
    neighbouring drill's. Recompiling offline as the fix is not."""
    wrong = ("I'm confident this is a recompile storm. When new shapes show up the runtime compiles a fresh executable "
             "on the request path, and that pause blocks a core; every request behind it waits, so the chat p99 more "
             "than doubled (1.8 -> 4.2 ms) while p50 is almost unchanged.")
    assert not grade(D["compiler-runtime-mapping"], wrong).elements["mechanism"].present
    right = ("Prompts beyond 512 tokens miss every bucket and run the generic fallback kernels, which are slower, so "
             "their batches hold the cores and everything queues behind them: chat p99 1.8 -> 4.2 ms. Fix: rebucket "
             "and recompile offline, keeping a recompile budget so we don't thrash.")
    assert grade(D["compiler-runtime-mapping"], right).elements["mechanism"].present


def test_a_claim_with_a_comma_list_in_apposition_is_no_run_of_terms():
    """'..., which is the untuned, unfused, bf16 path' qualifies a claim; 'fusion, SRAM, HBM, p95' is a list."""
    from workbench.grading.text import bare_run
    assert not bare_run(" 73% of the canary traffic is in the generic row, which is the untuned, unfused, bf16 path. ")
    assert bare_run(" fusion, sram, spill, hbm, p95 ")
    assert bare_run(" 73% of the canary traffic is in the generic row -> untuned -> unfused -> slow ")


def test_an_abbreviation_does_not_end_the_sentence():
    """'i.e.', 'e.g.', 'vs.' continue a sentence: a quote is not cut there, and a chain is not split in two."""
    from workbench.grading.text import segments
    assert segments("The queue grows, i.e. the wait climbs. E.g. this one vs. the old. Done.") == [
        "The queue grows, i.e. the wait climbs.", "E.g. this one vs. the old.", "Done."]

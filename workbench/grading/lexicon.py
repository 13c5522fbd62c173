"""The grader's vocabulary: the words and patterns its detectors look for, kept apart from the logic.

Every pattern here is anchored on words and has bounded repetition, so matching stays
linear in the answer's length (see :mod:`workbench.grading.text`).
"""

from __future__ import annotations

import re

# a causal link that argues, in the narrow sense ('because', 'so', 'which is why'): a sentence holding one argues
ARGUES = re.compile(r"(?<![a-z])(?:because|since|so|which means|means|which is why|that is why|caus\w*|leads? to|"
                    r"led to|hence|therefore)(?![a-z])")
# (not the nouns 'the tail drivers', 'the results', 'the mean': words of the evidence tables)
CAUSAL = re.compile(r"(?<![a-z-])(?:because|so|therefore|thus|hence|since|as a result|leads?|leading|led|caus\w*|"
                    r"result(?:s|ed|ing)? in|resulting|driv(?:e|es|en|ing)|drove|push\w*|forc\w*|trigger\w*|mak\w*|"
                    r"means|meaning|(?:it|this|that|which|they|you|we|i|would|will|does|could) mean|"
                    r"then|once|when(?:ever)?|"
                    r"if|until|till|which|why|due|inflat\w*|stretch\w*|blow\w*|blew|pil\w* up|backs? up|ends? up|"
                    r"in turn|consequen\w*|explain\w*|turns? into|so that|->|=>|cuz|coz|b/c|bc|"
                    # one thing setting another ('its queue dominates the short stream's latency', 'sets the p99')
                    r"dominat\w*|sets? (?:the )?(?:p\d\d\w*|tail|pace)|set by|"
                    # verbs of one thing stopping another ('compiles on the spot and blocks the core')
                    r"(?:block|stall|clog|hog|starv|choke|freeze)(?:s|es|ed|d|e|ing)?"
                    r"(?= (?:the|a|an|every|all|other|its?|them|each|everything|everyone)(?![a-z]))|"
                    r"eats?|eating|steal\w*|froze|(?:that|which|this) leaves|leaving|drag\w*|pull\w* up|hold\w* up|"
                    r"held up)(?![a-z])")
EVIDENCE_NOUNS = ("report", "breakdown", "trace", "replay", "histogram", "load test", "load-test", "benchmark",
                  "a/b", "ab test", "comparison", "compare", "cdf", "profile table", "table", "export", "experiment",
                  "repro", "rerun", "re-run", "plot", "curve", "sweep", "dump", "capture", "timeline", "perfetto",
                  "vs", "versus", "side by side", "side-by-side", "diff", "evidence", "scenario", "run",
                  "comparing", "numbers", "counters", "split", "against healthy", "against known-good")
# what makes evidence concrete beside its noun ("reproducible" alone does not: "a reproducible comparison of the two
# conditions" names nothing to run)
QUALIFIERS = ("per-bucket", "per bucket", "by bucket", "per-stream", "per stream", "by stream", "per-core",
              "per core", "by core", "per-kernel", "per kernel", "by kernel", "per-tenant", "per tenant",
              "per-model", "per model", "per-request", "same seed", "fixed seed", "seeded", "seed", "replay",
              "production shape", "production traffic", "production load", "prod shapes", "prod traffic",
              "prod load", "at production", "same workload", "before/after", "before and after",
              "misses by reason", "queue wait", "batch-size", "batch size histogram", "tail driver",
              "tail-latency driver", "closed-loop", "old and new", "old vs new", "old versus new", "both configs",
              "both configurations", "each core", "each bucket", "each stream", "same traffic", "same requests",
              "same load", "same recorded", "same inputs", "both ways", "both settings", "both runs", "each setting",
              "per customer", "per user", "per class", "per-class", "per type", "per priority")
ACTIONS = ("fix", "add", "lower", "raise", "switch", "move", "cap", "set", "use", "pin", "enable", "disable", "change",
           "increase", "reduce", "split", "re-place", "replace", "rebalance", "go back", "keep", "recompile", "rebuild",
           "re-bucket", "rebucket", "return", "extend", "widen", "turn off", "turn on", "flip", "revert", "roll back",
           "drop", "limit", "bound", "shorten", "halve", "double", "give", "assign", "route", "place", "partition",
           "shard", "prefetch", "preload", "warm", "precompile", "unfuse", "fuse", "calibrate", "retune", "tune",
           "make", "ship", "cut", "trim", "bump", "grow", "shrink", "allocate", "reserve", "evict", "schedule",
           "weight", "put", "run", "let", "stop", "go with", "move to", "restore", "quantise", "quantize",
           "try", "tile", "spread", "build", "compile",
           # where work runs ('dispatch each request to the least-loaded core', 'serve embed from its own pool')
           "dispatch", "serve", "host", "send", "steer", "distribute", "isolate", "dedicate", "offload", "migrate",
           "relocate", "balance", "load-balance", "load balance", "scale out", "scale up", "rate-limit", "rate limit",
           "teach", "derive", "tries", "dial", "decrease", "tighten", "open", "spin up", "stand up", "provision",
           "merge", "prepare", "drain", "cordon", "retrain", "fine-tune", "take", "restart", "turn", "trial", "pilot",
           "push the")  # not 'push for' (argue for)
# a plan, posture or strategy for rolling back named, with nothing said of it, is no way back ('ship once it is
# addressed, with a rollback plan in place')
_NAMED_ONLY = (r"(?! (?:plan|posture|strategy|story|procedure|process)s? (?:in place|ready|aligned|defined|agreed|"
               r"exists))")
WAY_BACK = re.compile(r"(?<![a-z])(?:roll(?:s|ed|ing)?[ -]?back" + _NAMED_ONLY + r"|rollback" + _NAMED_ONLY +
                      r"|revert\w*|auto-?revert\w*|"
                      r"(?:switch|flip|go|mov|swap|fall|cut|chang|put|rout|send|shift|bring|drain|dial|scal|roll|snap)"
                      r"(?:\w*) (?:\w+ ){0,5}?back|back to|back (?:\w+ ){0,2}?out|back off to|undo|unwind\w*|"
                      # back in its own meaning: 'restore the 4,000 blocks if ...', 'bail out to the pinned plan'
                      r"flip\w* (?:the |that |this )?(?:[\w-]+ )?(?:flag|toggle)(?! on)|"
                      r"restor\w*|reinstat\w*|bail\w* out|"
                      # a flag flipped by itself: 'a canary with an automatic flip if p99 climbs over 25 ms'
                      r"auto(?:matic(?:ally)?)?[- ]?flip\w*|"
                      # the safe path by name: 'flip out_of_envelope to fallback if canary p99 > 25 ms'
                      r"(?:switch|flip|go|set|move|return)\w* (?:[\w-]+ ){0,3}?(?:the )?fallback(?![a-z])|"
                      # the new thing withdrawn: 'disable the new config', 'yank it', 'ramp it down to 0%'
                      r"(?:remov|kill|yank|scrap|retir|unship|deactivat)\w* (?:it|that|this|them|the (?:new )?"
                      r"(?:change|plan|config|canary|release|flag|setting|feature|rollout|build))(?![a-z])|"
                      r"deactivat\w*|take (?:it|that|this|them) out|ramp\w* (?:it |them |\w+ )?down|return\w* traffic|"
                      # ('the budget goes to them' gives it away: go, move and fall need their 'back')
                      r"(?:return|switch|flip)\w* (?:back )?to (?:it|that|them)(?![a-z])|"
                      r"(?:we|i|then) return\w* to ~?\d|"  # 'we return to 4,000 blocks' (not 'p99 returns to 2 ms')
                      # a system's thing returned to ('traffic returns to the 64 GiB pool', 'return to 4,000 blocks'),
                      # not a metric's level ('p99 returns to baseline')
                      r"(?<!p\d\d )(?<!latency )(?<!ttft )(?<!tpot )(?<!tail )(?<!itl )return\w* to (?:the |our |"
                      r"today's |its )?(?:[\w.,~-]+ ){0,2}?(?:plan|pool|blocks|config\w*|setting|layout|policy|"
                      r"default|version|build|release|old|previous|original|prior|bf16|fp16|fcfs|wfq)(?![a-z])|"
                      r"(?:keep|restore|return to|pin|use|reinstate|re-enable|redeploy|switch to|flip to|move to|"
                      r"stay on|stay with|stick with|"
                      r"route to|send to)\w{0,3} (?:the |our )?(?:old|previous|prior|last|pinned|current|baseline|"
                      r"known[- ]good)|kill[- ]?switch|(?:disable|turn off|flip off|switch off) (?:\w+ ){0,3}"
                      r"(?:flag|feature|change|it|config|plan|setting|canary)|flag off|abort\w*|halt\w*|"
                      r"(?:be|is|gets?|got) pulled|"
                      r"(?:turn|switch|flip|shut)\w* (?:it|itself|that|this|them|(?:the )?[\w-]+(?: [\w-]+)?) off|"
                      r"(?:flag|feature|switch|it) (?:goes|go|is|gets|get|turned|switched|flipped) off|"
                      r"(?:stay|sit|stop|remain|hold)\w* (?:at|on) the (?:previous|prior|last|old)|"
                      r"pull\w* (?:it|the (?:change|plan|release|canary|rollout))|stop the (?:rollout|release|canary)|"
                      r"return\w{0,3} automatic\w*|(?:flip|switch|toggle)\w* (?:it |the flag |that |this )?again|"
                      r"(?:turn|trip|set)(?:s|ted|ting|ped|ping|ed|ing)? (?:\w+ ){0,4}?back(?! on)|"
                      r"withdr[ae]w\w*|(?:be|is|are|gets?|got) (?:\w+ ){0,2}?(?:restored|reinstated)|"
                      # passive: 'the previous plan is restored'
                      r"(?:old|previous|prior|last|pinned|baseline|known[- ]good) (?:[\w-]+ ){0,2}?(?:is|are|gets?|be) "
                      r"(?:restored|reinstated|redeployed|put back|brought back|re-?enabled))"
                      r"(?![a-z])")
_CMP = (r"(?:>=?|<=?|≥|≤|==|above|over|below|under|past|beyond|outside|higher than|lower than|more than|less than|"
        r"greater than|exceeds?|slower than|worse than|(?:not|no) better than)")
_OBJECT = (r"(?:regress\w*|breach\w*|exceed\w*|spike\w*|degrad\w*|violat\w*|slos?|slas?|p\d{2}(?:\.\d)?|latency|"
           r"canary|errors?|error rate|alert\w*|threshold|baseline|hit rate|budget|guardrail|reloads?|evictions?|"
           r"compiles?|recompiles?|starv\w*|utili[sz]ation|throughput|accuracy|tail|slowest|percentile|"
           r"bandwidth|busbw|acceptance|tpot|ttft|itl|preemptions?|time per (?:output )?token|"
           # a target broken or missed ('whenever document response times break their target')
           r"(?:break|breaks|broke|miss|misses|missed) (?:\w+ ){0,2}?(?:targets?|objectives?|limits?)|"
           r"" + _CMP + r" (?:\w+ ){0,3}?(?:\d|the (?:old|previous|baseline|slo|target|current|existing)|slo|target|"
           r"before|baseline|it was|today))")
# 'if i remember right' hedges a figure; it is no condition, nor is a complaint ('if users complain about latency':
# ``brief/LABELING.md``, 'roll back if people complain' is no rollback)
_COMPLAINT = r"(?! (?:[\w-]+ ){0,2}?complain)"
CONDITION = re.compile(r"(?<![a-z])(?:(?:(?:if(?! (?:i|we) (?:remember|recall)| i'm not mistaken| memory serves)"
                       + _COMPLAINT + r"|when" + _COMPLAINT + r"|whenever|any ?time|unless|once|upon|in case|"
                       r"the moment|"
                       r"as soon as|until|till|til|in the event|"
                       # formal English puts the verb first: 'reverted should the canary p99 exceed 13 ms'
                       r"(?:should|were)(?= (?:the|a|an|any|it|its|our|p\d{2}|latency|tail|ttft|tpot|itl|acceptance|"
                       r"goodput|throughput|errors?|documents?|docs|requests?|users?|tenants?|traffic|bandwidth|"
                       r"busbw) )|"
                       # 'Should canary p99 exceed 2 ms, ...' opens its sentence, not 'the owner should canary it'
                       r"(?<![a-z] )should(?= canary )|"
                       r"(?:at|on) (?:any|each|every) (?:step|stage|point) (?:where|at which))"
                       r"(?![a-z])"
                       r"(?:(?!,? and (?:we|i|they|you|then) )[^.;:\n]){0,120}?|"  # no new clause
                       # 'on a regression', not 'keep an eye on the latency' (a watch) or 'based on the canary'
                       r"(?<!eye )(?<!eyes )(?<!tabs )(?<!focus )(?<!based )(?<!depends )(?<!depend )"
                       r"on (?:a |an |any |the )?(?:\w+ ){0,2}?)(?<![a-z])" + _OBJECT +
                       r"(?![a-z])|(?:p\d{2}(?:\.\d)?|latency|[a-z]+ rate|reloads?|errors?|util\w*|preemptions?|"
                       r"evictions?|misses|fallbacks?|recompiles?|spills?|timeouts?|[a-z]+ (?:count|ratio|share))"
                       r"\s?(?:>=?|<=?|≥|≤|==)\s?\d|"
                       r"(?:p\d{2}(?:\.\d)?|latency|ttft|itl|tpot|tail)\s(?:[a-z]+\s)?(?:over|above|exceeds?|breach\w*|past|"
                       r"outside)\s(?:the |its |their )?(?:slo|sla|target|budget|baseline)|"
                       # a requirement, then 'otherwise revert': 'the canary must show 0 preemptions; otherwise revert'
                       r"(?:must|should|needs? to|has to|have to)\s[^.\n]{0,120}?[;,]?\s"
                       r"(?:otherwise|or else|else|if not)(?![a-z])|"
                       # a criterion named, then its failure: '... p99 back to 11 ms as the exit criterion; if it
                       # doesn't, flip back'
                       r"(?:criterion|criteria|target|threshold|bar|slo)[^.\n]{0,12}?[;,]?\s"
                       r"(?:if (?:it|that|this|they) (?:doesn'?t|does not|don'?t|do not|isn'?t|is not|fails?|won'?t))"
                       r"(?![a-z])|"
                       # a plain regression of a named thing: "if that slice gets slower" (not "if it gets worse")
                       r"(?:if|when|whenever|once|the moment|as soon as)\s+(?!(?:it|things|this|that|anything|stuff|"
                       r"something|we)\s+(?:is|are|gets?|goes|go|looks?|runs?|becomes?)\s)(?:[\w'-]+\s+){1,8}?"
                       r"(?:is|are|gets?|goes|go|looks?|runs?|becomes?|ends? up|turns? out|comes? out)\s+(?:\w+\s+)?"
                       r"(?:worse|slower|stuck|higher|longer)|"
                       # a comparison that fails: 'if time per token doesn't beat the speculation-off run'
                       r"(?:if|when|unless)\s+(?:[\w'-]+\s+){1,8}?(?:doesn'?t|does not|don'?t|do not|fails? to|"
                       r"can'?t|cannot|won'?t)\s+(?:beat|match|improve on|get back to|come back to|return to|"
                       r"drop below|fall below|recover))")
_RELEASE = (r"(?:ship\w*|release\w*|go out|go live|goes live|launch\w*|roll ?out|deploy\w*|migrat\w*|promot\w*|"
            r"expand\w*|(?:re-?)?enabl\w*|comes? back|merg\w*|widen\w*|go wider|go(?:es)? wide|sign(?:ed)? off|"
            r"approv\w*|"
            r"(?:turn|switch)\w* (?:[\w-]+ ){0,3}?(?:back )?on(?![a-z])|onboard\w*|"
            r"move\w*|switch\w*|cut over|flip\w*|let\w*|size\w*|revisit\w*|reconsider\w*|resum\w*|chang\w*|"
            r"(?:re)?try\w* (?:[\w-]+ ){0,4}?again|"
            # a node or model let back in: 'the node may go back into the tp pool', 'rejoins the pool'
            r"go(?:es)? back (?:in|into)|rejoin\w*|re-?enter\w*|return\w* to (?:the )?(?:pool|rotation|service))")
_VALIDATION = (r"(?:load[- ]test|canary|validat\w*|pass\w*|green|meets?|production|p\d\d|benchmark\w*|test\w*|"
               r"shows?|replay\w*|eval\w*|confirm\w*|proves?|verif\w*|under \d|below \d|traffic|target|slo|trial|"
               r"match\w*|pilot|stays?|stayed|holds?|percentile|agree\w*|"
               # a measurement restored: 'unless its bus bandwidth returns to nvlink levels', 'back at nvlink levels'
               r"returns? to|(?:comes? |is )?back (?:at|near|to|under|below) [\w-]+|recover\w*)")
# (the batcher holding requests until a batch fills is the mechanism, no release held: 'holding requests until ...';
# nor a GPU blocking until the ring completes)
GATE = re.compile(r"(?<![a-z_])(?:(?<!gpu )(?<!gpus )(?<!rank )(?<!ranks )(?<!core )(?<!thread )(?<!worker )"
                  r"(?:hold|held|block|gate|pause|freeze|delay)\w{0,3}(?![\w'])"
                  r"(?! (?:each |every |the |all |incoming |new )?(?:requests?|prompts?|tokens?|sequences?)(?![a-z]))"
                  r"(?: [\w-]+){0,5}?|on hold|"
                  r"(?:don'?t|do not|doesn'?t|does not|won'?t|will not|wouldn'?t|would not|shouldn'?t|should not|"
                  # (not a past event: 'nvlink did not come back after the driver update' is a mechanism)
                  r"can'?t|cannot|mustn'?t|must not|(?<!did )(?<!had )(?<!has )(?<!was )not|never|no) "
                  r"(?:\w+ ){0,4}?" + _RELEASE + r"|"
                  + _RELEASE + r"(?: [\w-]+){0,3}? only|only " + _RELEASE + r"|" + _RELEASE +
                  r" nothing|no[- ]go|go/no-go|not before|"
                  r"gated on|gate it on|"
                  # a plan that waits for its validation ('the capacity plan must wait until a load test ... agrees')
                  r"(?<![a-z])(?:plan|release|rollout|launch|change|priority|flag|setting|feature) (?:must |should |"
                  r"will |has to )?wait(?:s)? (?=until|till)|"
                  r"stay(?:s|ing)? (?:held|off|gated|dark|at|live|up|serving|on|unreleased|out|drained|disabled|"
                  r"cordoned)|"
                  r"(?<![a-z])off (?:for|during|in) (?:\w+ ){0,3}?(?=until|till|unless)|"
                  # 'no recompile-on-miss until ...', 'no speculation for code requests until ...'
                  r"(?<![a-z])no (?:[\w-]+ ){1,2}?(?:for (?:[\w-]+ ){1,2}?)?(?=until|till|unless)|"
                  # 'nothing beyond canary until ...': the rollout held at its first stage
                  r"(?<![a-z])(?:nothing|not|no further|no wider) (?:[\w-]+ ){0,2}?(?:beyond|past|further than|"
                  r"wider than) (?:the |a |our )?(?:canary|pilot|trial|\d+ ?%)(?: [\w-]+){0,3}? (?=until|till|unless)|"
                  r"(?<![a-z])(?:don'?t|do not|won'?t|will not|wouldn'?t|would not|shouldn'?t|should not|never) "
                  r"(?:[\w-]+ ){1,9}?(?=until|till|unless)|"
                  r"(?:keep|leave)\w* [^.\n]{0,40}(?:off|serving|pinned|on the old|on the previous|out of production|"
                  r"out of (?:the |rotation)|drained|cordoned|"
                  r"carrying|taking|handling|(?:traffic|production|everything|users|load|requests) on|"
                  r"(?:the )?traffic(?= till| until)|"
                  r"out of (?:general |wide |full )?(?:release|availability|ga|launch)))"
                  r"[^.\n]{0,160}?(?<![a-z])(?:until|untill|till|til|unless|only if|only after|only when|once|after|"
                  r"before|"
                  r"without|(?<=again )if|"
                  r"(?<=only )(?:when|if))(?![a-z])"
                  r"[^.\n]{0,160}?" + _VALIDATION)
# the condition first ("until the canary passes, the new plan stays held"); a release only with a validation
GATE_FIRST = re.compile(r"(?<![a-z])(?:(?:until|till|unless|only (?:once|after|when|if))(?![a-z])[^.\n]{0,160}?"
                        + _VALIDATION + r"[^.\n]{0,120}?(?:stays? (?:held|off|gated|dark|out|drained|cordoned|"
                        r"disabled)|"
                        r"on hold|keeps? serving|"
                        r"(?:hold|block)\w*|"
                        r"(?:don'?t|do not|doesn'?t|does not|won'?t|not|never|no) (?:\w+ ){0,4}?" + _RELEASE + r")|" +
                        _RELEASE +
                        r" only (?:with|behind|after|on|through) (?:a |an |the )?(?:[\w-]+ ){0,2}?"
                        r"(?:canary|load[- ]test|validation|sign-?off|pilot|trial)|"
                        # a release gated on a named validation: 're-enable it only with async compile, gated on a
                        # canary where p99 <= 15 ms'
                        r"gated (?:on|behind|by) (?:a |an |the )?(?:[\w-]+ ){0,2}?(?:canary|load[- ]test|"
                        r"validation|sign-?off|pilot|trial|replay))")
# undoing a change, as a verb ('revert the batcher change', 'put the old waiting time back', 'back to WFQ'); unlike
# WAY_BACK, no 'keep the old plan loaded' or kill switch, which prepare a rollback and undo nothing
REVERT_VERB = re.compile(r"(?<![a-z])(?:revert\w*|roll(?:s|ed|ing)?[ -]?back|undo\w*|restor\w*|return\w* to|"
                         r"return\w* (?:[\w-]+ ){1,5}?to (?:the |its |their )?(?:old|previous|original|prior|former)|"
                         r"reinstat\w*|"
                         r"(?:go|goes|going|went|put|puts|set|sets|switch\w*|flip\w*|chang\w*|bring\w*|mov\w*|roll\w*|"
                         r"dial\w*|turn\w*) (?:\w+ ){0,5}?back|back to)(?![a-z])")
# a way back offered as a possibility, not proposed ('we can always roll back', 'roll back if needed')
MAYBE_BACK = re.compile(r"(?:can|could|may|might) (?:always |just )?(?:\w+ )?$|^\W*\w*\W*if (?:needed|necessary|"
                        r"required|people complain)")
# a way back refused ('instead of going back', 'we will not go back'), not proposed
NEGATED_BACK = re.compile(r"(?:instead of|rather than|not|never|no|don't|won't|without)\s+(?:\w+\s+){0,2}$")
# "ship behind a canary and revert if it's worse": a vague regression made concrete by a trial to compare against
TRIAL = re.compile(r"(?<![a-z])(?:canar\w*|small (?:share|slice|percent\w*|fraction|subset|group|cohort)|"
                   r"\d+ ?% (?:of )?(?:traffic|users|requests|the fleet|hosts|pods)|pilot|trial|a/b|shadow)")
VAGUE_WORSE = re.compile(r"(?<![a-z])(?:if|when|once)\s+(?:it|things|this|that)(?:'?s| is| gets| looks| goes| runs)"
                         r"\s+(?:\w+\s+)?(?:worse|slower)")
# the release held on a condition or a validation, said the other way round
HELD = re.compile(r"(?<![a-z])(?:if|unless|until|till)(?![a-z])[^.\n]{0,120}?"
                  r"(?:release|rollout|launch|deploy\w*|ship\w*) "
                  r"(?:waits|is held|gets held|is blocked|is paused|stays? (?:held|back))|"
                  # the change kept out on a validation's failure: 'if bus bandwidth is not back, the node stays out of
                  # the pool', 'unless acceptance recovers, speculation stays off'
                  r"(?<![a-z])(?:if|unless|until)(?![a-z])[^.\n]{0,120}?(?:not|n't|fails?|below|above)[^.\n]{0,80}?"
                  r"(?:(?:it|the node|the change|the plan|the flag|the feature|speculation|spec|the release|the pool) "
                  r"(?:(?:should|will|must|would) )?(?:stays?|remains?|is kept|keeps? being|is switched|is turned|"
                  r"gets? switched|gets? turned|goes|go) |keep (?:it |the node |them )?)(?:out|off|drained|disabled|"
                  r"held|on hold|pinned|cordoned)|"
                  # the hold said first: 'keep it out of rotation if the link bandwidth isn't back to normal', 'the
                  # node remains out if bus bandwidth isn't back near NVLink levels'
                  r"(?<![a-z])(?:(?:keep|leave)\w* (?:it|the node|them|[\w-]+)|(?:it|the node|speculation) "
                  r"(?:stays|remains)) (?:out|off|drained|disabled|cordoned)"
                  r"(?: of [\w ]{1,20}?)? (?:if|unless|until)(?![a-z])[^.\n]{0,120}?"
                  r"(?:not|n't|fails?|below|above|back|normal|healthy|recover\w*|pass\w*)|"
                  # 'the release waits for a load test ... showing no p95 regression'
                  r"(?<![a-z])(?:release|rollout|launch|ship\w*|deploy\w*|migration) waits (?:for|on) "
                  r"[^.\n]{0,100}?" + _VALIDATION + "|"
                  r"(?<![a-z])(?:load[- ]test|canary|benchmark|replay|validation|trial)[^.\n]{0,100}?before "
                  r"(?:anything|it|this|we|the \w+|any \w+)\s+(?:\w+\s+){0,2}?(?:ships?|releases?|goes? (?:out|live)|"
                  r"is released|rolls? out|deploys?|launch\w*)|"
                  # 'gate the release on a load test ...', 'we only revisit when the eval passes'
                  r"(?<![a-z])gat(?:e|ed|es|ing) (?:the |this |our |its )?(?:release|rollout|launch|ship\w*|deploy\w*|"
                  r"migration|it) on (?:[\w-]+ ){0,3}?(?:load[- ]test|canary|replay|eval\w*|benchmark|trial|test)|"
                  r"(?<![a-z])only " + _RELEASE + r"(?: [\w-]+){0,2}? (?:when|if|once|after)(?![a-z])[^.\n]{0,160}?"
                  + _VALIDATION + r"|"
                  # the validation said before: '... we need a replay showing p99 at baseline; until then it stays off'
                  r"(?<![a-z])until then,? (?:[\w-]+ ){0,4}?(?:stays? (?:held|off|gated|dark|out)|"
                  r"(?:is|stays|remains) on hold|(?:doesn'?t|does not|won'?t|will not|not) " + _RELEASE + r")|"
                  # a machine kept out of its pool on a check: 'node stays drained if bus bandwidth isn't near NVLink
                  # numbers', 'the node does not return to the pool until all_reduce_perf shows NVLink again', '...
                  # against a healthy node before it rejoins the pool'
                  r"(?<![a-z])(?:the )?(?:node|host|gpu|machine|server|replica)s? (?:stays?|remains?|is kept) "
                  r"(?:out|drained|cordoned|off)(?: (?:of|from) [\w -]{1,30}?)? "
                  r"(?:if|unless|until|till|while)(?![a-z])|"
                  r"(?<![a-z])(?:the )?(?:node|host|gpu|machine|server|replica|it)s? (?:(?:does|will|should|must|can)"
                  r"(?: not|n't)|not|never) (?:return|rejoin|re-?enter|go back|come back|get back|back)\w*"
                  r"(?: (?:in|into|to) [\w -]{1,40}?)? (?:until|unless|till|before)(?![a-z])|"
                  r"(?<![a-z])before (?:it|the node|the host|the gpu|they) (?:rejoins?|returns? to|re-?enters?|"
                  r"goes back|comes back|is back|is returned)(?![a-z])")
# a sentence that proposes evidence, not a change ('a same-seed run of A versus B would nail it', 'Proof: ...')
PROOF = re.compile(r"(?:^\s*(?:proof|prove|check|artifact|artefact|evidence|to prove it)\s*:|(?<![a-z])(?:same[- ]seed|"
                   r"replay\w*|side[- ]by[- ]side|versus|vs\.?|would (?:nail|show|prove|confirm)|"
                   # 'I'd confirm with nvidia-smi topo -m, ...', 'we'd prove it by ...': the sentence proposes evidence
                   r"(?:i'?d|we'?d|i would|we would|i'll|we'll|let's) (?:first )?(?:confirm|prove|verify|validate)"
                   r"(?: (?:it|this|that))? (?:with|by|using|via))|"
                   # what the act is for, said first: 'to check it I would profile it under load'
                   r"^\W*(?:and |so )?to (?:check|prove|confirm|verify|validate|show) (?:it|this|that)"
                   r"(?! (?:is|was)\b))(?![a-z])")
# the evidence already shown, read back ('the run shows 48 loads'), not evidence proposed
READS_SHOWN = re.compile(r"(?<![a-z])(?:the|this|that|our|in the)"
                         r"(?: whole| same| regressed| current| baseline| new| old)?(?: [\w-]+)?? "
                         r"(?:run|numbers|table|evidence|counters|split|breakdown|benchmark)(?![a-z])")
PROPOSES = re.compile(r"(?<![a-z])(?:would|i'd|i would|we'd|we would|let's|i'll|we'll|should|need|want|rerun|re-run|"
                      r"replay\w*|same[- ]seed|prov\w*|proof|confirm\w*|reproduc\w*|compar\w*|plot\w*|dump|sweep\w*|"
                      r"side[- ]by[- ]side|versus|vs|a/b|artifact|artefact|evidence:)(?![a-z])")
# a sentence labelled as another element is not the fix ('Mechanism: ... puts the attention in one kernel')
OTHER_LABEL = re.compile(r"^\s*(?:mechanism|root cause|cause|workload|symptom)\s*:")
ROLLBACK_LABEL = re.compile(r"^\s*(?:rollback|roll back|roll-back|release|release decision|decision|revert plan)\s*:")
METRICS = ("p50", "p90", "p95", "p99", "tail", "latency", "throughput", "hit rate", "wait", "utilisation",
           "utilization", "queue", "slo", "qps", "req/s", "rps", "error rate", "mean", "median", "percentile",
           "slowest")
DIRECTION = ("rose", "rise", "risen", "increase", "doubled", "tripled", "quadrupled", "went up", "jumped", "jumping",
             "regress", "grew", "grow", "spike", "climb", "worse", "degrad", "higher", "dropped", "fell", "falls",
             "from", "blew up", "exploded", "slower", "longer", "went from", "goes up", "go up", "going up", "shot up",
             "balloon")
FIX_MARKER = re.compile(r"(?<![a-z])(?:(?:the )?(?:fix|solution|remedy|mitigation|proposal|change|action|plan)"
                        # 'the solution, in my opinion, is capacity'
                        r"(?:,? (?:in my (?:opinion|view)|i think|i'd say|for me|imo),?)?"
                        r"(?:\s?:|\s(?:is|would be|=|here is))|i'd|i would|i will|i'll|we should|we'd|we need|should|"
                        r"need to|let's|recommend|propose|suggest|instead(?! of)|go with|my call|i want|to fix|"
                        r"(?:is|be) (?:the|my|our)(?: real| actual| right| proper| whole)? "
                        r"(?:fix|remedy|solution|mitigation)|"
                        # 'the obvious thing is more buckets', 'fusion is the obvious lever'
                        r"(?:obvious|first|right|main|simplest|best) (?:thing|move|step|lever|option)(?: to do)? "
                        r"(?:is|would be)|is the (?:obvious|main|right|best) (?:lever|move|step|option))(?![a-z])|"
                        r"'s (?:the|my|our)(?: real| actual| right| proper| whole)? (?:fix|remedy|solution|mitigation)"
                        r"(?![a-z])")
NOT_A_FIX = re.compile(r"(?<![a-z])(?:proof|prove|evidence|artifact|artefact|confirm|show (?:it|this)|to show|"
                       r"measure|rerun|re-run|replay|compare|monitor\w*|watch\w*|dashboard\w*|alert\w*|"
                       r"look at(?! \w+ing )|look into(?! \w+ing )|"
                       r"make (?:the|a|that|this) (?:call|decision))(?![a-z])")  # 'look at spreading it' proposes;
# 'make the call on budget' decides, it changes nothing
FIX_STOP = {"with", "from", "back", "the", "and", "more", "less", "each", "every", "only", "than", "that", "this",
             "into", "onto", "over", "under", "per", "after", "before", "then", "them", "they", "plan", "fix",
             "change", "make", "keep", "move", "turn", "switch", "enable", "disable", "other", "higher", "lower",
             "model", "load", "cost", "time", "request", "serving", "path", "core", "short", "take", "three",
             "several", "observed", "traffic", "interactive", "rate", "wait", "queueing", "queuing", "kernel",
             "batch", "reduce", "revert", "separate", "control", "effective", "term", "level", "split",
             "accelerator", "weight", "limit", "bound", "maximum", "minimum", "alert", "percentile", "least",
             "loaded", "dynamic", "place", "route", "fit", "fair", "share", "token", "online", "depth",
             "concurrency", "profile", "contention", "bandwidth", "compile", "compil", "batching", "raise", "increase",
            "spec", "node"}
# a setting turned one way ('lower max_delay_s', 'a bigger budget', 'fuse more', 'tune it a bit') ...
TURNED = re.compile(r"(?<![a-z])(?:smaller|lower|lowers|lowering|reduc\w*|decreas\w*|more|larger|bigger|increas\w*|"
                    r"rais\w*|higher|fewer|less|longer|shorter|tun\w*|tweak\w*|adjust\w*|a bit|a little|somewhat|"
                    r"up|down)(?![a-z])")
# ... and how far: a value (not a metric's name: 'p95'), or the setting it had before ('max_delay back to 2 ms',
# 'restore the old split')
TURNED_TO = re.compile(r"(?<![a-z\d])\d|(?<![a-z])(?:zero|one|two|three|four|five|six|eight|ten|twice|double|half|"
                       r"back to|"
                       r"previous|old|original|default|baseline|before the change|restor\w*|undo\w*|go back|"
                       # 'give the cache back its memory': restored
                       r"(?:give|gives|giving|gave|given|hand|hands|handing|handed)(?: \w+){0,3} back)(?![a-z])")
# a question the answer poses itself and answers next, as a heading ('What's the fix?', 'What would I change?')
FIX_QUESTION = re.compile(r"^\s*(?:so,? )?(?:what(?:'s| is| would be| should be)? (?:the |my |our )?"
                          r"(?:fix|remedy|solution|mitigation)|"
                          r"what (?:would|should|do|will|can) (?:i|we|you) (?:change|do|ship|fix)(?: about it| first)?|"
                          r"how (?:do|would|should|can|to) (?:i |we |you )?fix(?: it| this)?)\s*\?\s*$")
FIX_LABEL = re.compile(r"\s*(?:the |my |our )?"
                       r"(?:fix|fixes|solution|remedy|remediation|mitigation|change|proposed fix|proposal)"
                       r"(?:\s?:|\s(?:is|would be|here is)\s)")
# a definition ('priority scheduling is a policy in which ...') or a general truth ('it is known that ...'): no claim
# about this case, so no mechanism
TEXTBOOK = re.compile(r"^\W*(?:[\w/-]+ ){1,4}(?:is|are) (?:a|an) (?:[\w-]+ ){0,3}?(?:discipline|policy|technique|"
                      r"method|approach|strategy|algorithm|scheme|concept|optimi[sz]ation|property|condition|"
                      r"situation|state|phenomenon) (?:in which|where|that|whereby|which)(?![a-z])|"
                      r"^\W*(?:[\w/-]+ ){1,3}(?:is|means) when(?![a-z])|"
                      r"(?<![a-z])(?:it is|is) (?:well[- ])?known|well[- ]known|common remedies|"
                      r"classic (?:result|problem|trade-?off)|"
                      # a general remedy, not this case's: 'caching compiled artefacts is the standard mitigation'
                      r"(?:is|are) (?:the|a) (?:standard|usual|common|typical|textbook) (?:mitigation|fix|remedy|"
                      r"approach|answer|solution)")

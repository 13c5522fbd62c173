"""The owner element's vocabulary: determiners that name no one, organisations, roles, team nouns and the ways a
sentence assigns an owner ('owner: ...', 'mine', 'X owns Y', 'whoever owns ...'), kept apart from the logic in
:mod:`workbench.grading.owner`. Every pattern is anchored on words with bounded repetition (linear matching).
"""

from __future__ import annotations

import re

GENERIC = {"the", "a", "an", "our", "some", "any", "whichever", "whole", "this", "that", "my", "your", "every",
           "other", "entire", "same", "relevant", "appropriate", "responsible", "their", "his", "her", "clear", "named",
           "single",
           "accountable", "one", "new", "right", "proper", "dedicated", "should", "must", "will", "can", "which",
           "who", "whoever", "and", "or", "to", "by", "of", "for", "with", "is", "be", "each", "another", "us", "we",
           "it", "them", "they", "team", "someone", "somebody", "both", "two", "owning", "own", "main", "core",
           "big", "bigger", "large", "larger", "small", "smaller", "first", "next", "last", "no", "not", "without",
           "concerned", "respective", "affected", "corresponding"}
# an organisation named without 'team' ('serving runtime', 'ML compiler', 'platform infra'): people, not software
ORG = (r"(?:serving|inference|ml|model|kernel|capacity|performance|perf|platform)"
        r" (?:runtime|compiler|platform|quality|serving|kernels|infra|planning)")
ROLES = re.compile(r"(?<![a-z])(?:on-?call|(?:person|engineer|people) on call|sre|sres|tech lead|tl|"
                   r"dri|engineering manager|eng manager|em|"
                   r"release manager|release captain|product owner|perf(?:ormance)? (?:lead|engineer)|serving lead|"
                   r"compiler lead|runtime lead|platform lead|infra lead|team lead|lead engineer|principal|"
                   r"staff engineer|architect|incident commander|capacity plann(?:er|ing lead|ing team)|"
                   r"product manager|pm)(?![a-z])")
OWNER_NOUN = re.compile(r"([a-z][a-z/&-]{1,30})(?: ([a-z][a-z/&-]{1,30}))? (?:team|squad|org|on-?call|lead|"
                        r"group|folks?|crew|lads|mob|engineers?|eng|sres?|"
                        r"owners?(?! (?:should|could|might|would|can|may)\b)|"
                        r"maintainers?)(?![a-z])")
# "Owner: serving runtime", "owner - me": a labelled owner with at least two words, or the speaker
OWNER_LABEL = re.compile(r"(?<![a-z])(?:owners?|owned by|who|dri|accountable)\s?[:=-]\s?(?:(?:me|myself|i)(?![a-z])|"
                         r"(?!(?:the )?(?:team|someone|somebody|whoever|tbd|n/a|none|us|we|everyone|all|owners?)\b)"
                         # a team named by its relation to the thing, not by who it is ('Owner: owning team')
                         r"(?!(?:the |an? )?(?:owning|responsible|appropriate|relevant|respective|affected|right|"
                         r"correct|concerned|usual|proper) (?:team|group|party|org)\b)"
                         r"[a-z][a-z'&-]{1,30}(?:\s|/)[a-z(][a-z'&-]{1,30})")
I_OWN = re.compile(r"(?<![a-z])(?:mine(?: to own)?(?= /|,|\.| and )|"
                   r"(?:i'?m|i am) the one (?:who'?d|who will|who would|to) (?:own|drive|lead)|"
                   r"(?:i|i'll|i will|i'd|i would|i'm|i am|me)"
                   # (not 'i would repeat the drift run', nor 'i'd not sign off on that estimate')
                   r"(?:\s(?!not |never )\w+){0,2}\s(?:own|owning|drive|driving|be accountable|"
                   r"take (?:the )?(?:ownership|it|this)|on the hook|responsible|the owner|the dri|sign off)(?![a-z])|"
                   # the speaker by the role they hold: 'my recommendation, as the engineer on the hook for this pool'
                   r"as the (?:[\w-]+ ){0,2}(?:on the hook|accountable|responsible) for|"
                   # the change made by the speaker: 'I will do this change myself today'
                   r"(?:i'll|i will|i'd|i would|i can) (?:do|make|ship|handle|take|roll out) (?:this|it|that|the) "
                   r"(?:[\w-]+ )?myself)")
# a team named in a story is not an owner: the sentence must give it the work or the accountability
# ('that's for the compiler team', after a letter, outside the word-start guard)
OWNER_CUE = re.compile(r"'s (?:call|job|decision|for(?= )|on(?= (?:the|our|my) ))|'ll(?![a-z])|"
                       r"(?<![a-z])(?:own\w*|ask\w*|decid\w*|theirs|accountab\w*|responsib\w*|driv\w*|"
                       r"the call|on point|(?:is|are) for(?= )|(?:is|are) on(?= (?:the|our|my) )|"
                       r"falls? to|territory|remit|purview|wheelhouse|court|"
                       r"hand\w* (?:it |this |that )?(?:over )?to|"
                       r"sign\w* off|sign-off|signs?|"
                       r"assign\w*|lead\w*|dri|on the hook|should|will|would|must|needs? to|has to|have to|"
                       r"to (?:do|make|ship|fix|handle|run|implement|change|build|own|land)|makes?|does|handles?|"
                       r"(?:have|get|ask|let) (?:the )?[a-z-]+ (?:[a-z-]+ )?(?:team|folks|lads|mob|crew|group|"
                       r"engineers)|"
                       r"runs?|ships?|fix\w*|implements?|takes?|builds?|executes?|approves?|who|via|goes to|"
                       r"belongs? to|on it|page[ds]?)(?![a-z])|:")
# a team named by what it runs: 'the team that runs the serving scheduler should make that change'
OWNER_THAT = re.compile(r"(?<![a-z])(?:team|group|people|folks|engineers|crew|squad|org)s? (?:that|who) "
                        r"(?:runs?|owns?|operates?|maintains?|manages?|built|builds?|wrote|looks? after|"
                        r"trains?|trained|ships?|serves?|develops?|developed|designs?|designed|"
                        r"is responsible for|are responsible for) "
                        # not a thing left unnamed ('the team that owns that component', '... the relevant code')
                        r"(?!(?:that|the|this|whichever|whatever|each) (?:component|part|piece|thing|area|system|"
                        r"service|configuration|setting)s?(?![a-z])|(?:the |that )?(?:relevant|affected|responsible|"
                        r"offending|changed) )"
                        r"(?:the |our |this )?[a-z]")
# "serving runtime owns the batcher": a subject that owns something (checked: not a core, a bucket or a pronoun)
# (its subject is no relative clause's tail: 'the team that owns the configuration owns the fix' is OWNER_THAT's)
OWNS = re.compile(r"(?<![a-z])(?<!owns )(?<!owns the )"
                  r"((?!owns?\b)[a-z][a-z-]+(?: (?!owns?\b)[a-z][a-z-]+){0,2}) owns? "
                  r"(?!(?:the |its |their )?(?:p\d|tail|slowest|latency|"
                  r"mean|median|percentile|queue|core|bucket)|up\b)(?:the |this|it|that|[a-z])")
NOT_SUBJECT = {"core", "bucket", "kernel", "stream", "model", "batch", "request", "queue", "slice", "tenant", "that",
               "which", "it", "this", "who", "nobody", "someone", "somebody", "everyone", "one", "to", "sure", "not",
               "should", "will", "would", "can", "could", "must", "might", "may", "always", "never", "i", "we", "you",
               "they", "people", "team", "he", "she", "them", "requests", "cores", "buckets"}
# advice to look, not an assignment: "the infra folks should look into it"
LOOK_INTO = re.compile(r"(?:should|could|can|to|will|'ll|must|would) (?:\w+ )?(?:look|(?:double[- ])?check|investigate|"
                       r"take a look|"
                       r"figure|dig|poke|evaluate|assess)"
                       r"(?! (?:at|into) [a-z]+ing )")  # 'will look at fusing the block' is a task
# a person by name, or by a chat mention ('@priya runtime owns the scheduler flags')
NAMED = re.compile(r"(?:\b[A-Z][a-z]{2,}\b(?: [A-Z][a-z]+)?|(?<![\w.])@[A-Za-z][\w.-]{1,30}(?: [a-z]+)?) ?"
                   r"(?:\(|,| from | on | in | at | who | owns| will| to own|"
                   r" is (?:accountable|on the hook|owning|driving)| signs| drives)")

"""The owner element: an accountable team, role or person, wherever it stands in the sentence.

A team that owns or does the work ('the ML compiler team adds the buckets', 'serving runtime reverts the batcher'),
a role ('the serving on-call', 'the EM'), a labelled owner ('Owner: serving platform'), the speaker ('I'll own it'),
or a named person with what they own or do. Not an owner: 'someone', 'the team should look into it', software
('the compiler owns fusion decisions'), a metric, 'its own core', or a question.
"""

from __future__ import annotations

import re

from workbench.grading.detectors import Element
from workbench.grading.lexicon import ACTIONS
from workbench.grading.owner_words import (
    GENERIC,
    I_OWN,
    LOOK_INTO,
    NAMED,
    NOT_SUBJECT,
    ORG,
    OWNER_CUE,
    OWNER_LABEL,
    OWNER_NOUN,
    OWNER_THAT,
    OWNS,
    ROLES,
)
from workbench.grading.text import bare_run, content_words, quote

_POSSESSIVE_OWN = re.compile(r"(?<![a-z])(?:its|their|his|her|our|my|your) own(?![a-z])")  # 'on its own core'


_TLDR = re.compile(r"(?<![a-z])tl;? ?dr(?![a-z])")
# a team outside the company that ships the model ('the vendor's driver team', 'support at the chip company') can be
# asked for help, it cannot be accountable for this release's fix and rollback
_OUTSIDE = re.compile(r"(?<![a-z])(?:the |our )?(?:chip |hardware |gpu |accelerator )?(?:vendor|supplier|manufacturer)"
                      r"(?:'s|s'|s)?(?: [\w-]+){0,2}? (?:team|support|engineers?|folks|people|side)(?![a-z])|"
                      r"(?<![a-z])(?:team|support|engineers?|folks|people) (?:at|from|of) (?:the )?"
                      r"(?:chip |hardware |gpu )?(?:vendor|supplier|manufacturer|chip company|hardware company)"
                      r"(?![a-z])|"
                      # an outside project's people ('the vLLM maintainers should make preemption smarter')
                      r"(?<![a-z])(?:the )?(?:vllm|sglang|tensorrt(?:-llm)?|trt-llm|pytorch|nccl|cuda|upstream|"
                      r"open[- ]source)(?: [\w-]+)? (?:maintainers|developers|devs|community|contributors)(?![a-z])|"
                      # a rotation with no team before it ('hand it to the on-call rotation'): a schedule, no one
                      r"(?<![a-z])(?:the|an|our|a) on-?call rotation(?![a-z])")
# a team that holds none of the levers a serving or compiler regression is fixed with (the product's data scientists,
# the benchmarking group, the front-end, marketing, procurement, a change advisory board that approves): it may be
# told, it cannot own the fix and the way back
_NO_LEVER = re.compile(r"(?<![a-z])(?:the |our |a )?(?:[\w'-]+ ){0,2}?(?:data[- ]science|analytics|benchmarking|"
                       r"product|marketing|sales|customer[- ]success|support|front[- ]?end|ux|design|finance|"
                       r"legal|procurement|purchasing)(?: (?:and|&) [\w-]+)? (?:team|group|org|folks|people|squad|"
                       r"engineers)(?![a-z])|(?<![a-z])change advisory board|(?<![a-z])(?:change|review|steering) "
                       r"(?:board|committee)(?![a-z])")
# a plural subject's plain verb ('the compiler folks add longer buckets')
_ACTS = re.compile(r" (?:" + "|".join(a for a in ACTIONS if " " not in a) + r"|own|take|handle|do)(?![a-z])")
# the decision is a team's ('the memory split is the serving runtime team's call')
_THEIR_CALL = re.compile(r"(?<![a-z])([a-z][a-z/&-]+) (?:team|group|org|lead|on-?call|lot|folks|people|guys)'s "
                         r"(?:call|decision|job|"
                         r"responsibility|problem|fix)(?![a-z])")


# a subject that is to own it ('the compiler fusion owner should own it', 'hardware ops should own it')
_SHOULD_OWN = re.compile(r"(?<!someone )(?<!somebody )(?<!anyone )(?<![a-z])([a-z][a-z-]+(?: [a-z][a-z-]+){0,2}) "
                         r"(?:should|must|will|would|needs to|has to|have to|is to|are to|can) own"
                         r"(?! (?:the )?(?:p\d|tail|slowest|latency|mean))(?![a-z])")
_TOOLS = {"compiler", "runtime", "scheduler", "batcher", "autoscaler", "dispatcher", "ci", "pipeline", "system",
          "planner", "allocator", "process", "job", "alerting",
          # libraries, engines and tools are software too ('vLLM owns the scheduling')
          "vllm", "sglang", "tensorrt", "tensorrt-llm", "trt", "trt-llm", "triton", "xla", "tvm", "mlir", "pytorch",
          "torch", "kubernetes", "k8s", "grafana", "prometheus", "engine", "library", "framework", "kernel", "driver",
          "firmware", "dashboard", "cron", "operator", "controller",
          # release tooling ('Argo Rollouts handles it, the analysis template owns promotion')
          "template", "templates", "rollouts", "argo", "argocd", "flagger", "spinnaker", "jenkins", "helm", "terraform"}
# a process or a setting is no one to hold accountable ('owner: CI will catch it', 'the nightly re-bucketing job owns
# this', 'the recompile_limit setting owns the risk', 'owner: the capacity review process')
_PROCESSES = _TOOLS | {"setting", "settings", "flag", "config", "limit", "alert", "alerts", "review", "bot", "script",
                       "policy", "check", "checks", "gate", "test", "tests", "monitor", "monitoring", "automation",
                       "tooling", "workflow", "cronjob"}
# a stream's users, named as its folks ('the chat folks'), not a team that owns anything
_STREAMS = {"chat", "code", "docs", "doc", "document", "documents", "interactive", "api", "batch", "user", "users",
            "customer", "customers", "tenant", "tenants"}
# a part of the machine that holds a share of the work ('each GPU owns a slice of every layer', 'rank 0 owns ...')
_HARDWARE = {"gpu", "gpus", "rank", "ranks", "core", "cores", "device", "devices", "node", "nodes", "chip", "chips",
             "card", "cards", "replica", "replicas", "shard", "shards", "worker", "workers", "sm", "sms", "tile",
             "tiles"}
_PERSONS = {"team", "teams", "lead", "owner", "owners", "on-call", "oncall", "engineer", "engineers", "manager", "sre",
            "sres", "squad", "group", "folks", "people", "me", "i"}


def _a_process(words: list[str]) -> bool:
    """A noun phrase whose head is a process, a tool or a setting, with no person or team in it."""
    words = [w.strip(".,;:()") for w in words]  # 'serving runtime' is a team's name, not software
    return bool(words) and any(w in _PROCESSES for w in words) and not set(words) & _PERSONS and \
        not re.search(ORG, " ".join(words))


_LABEL_VALUE = re.compile(r"(?<![a-z])(?:owners?|owned by|ownership|who|dri|accountable)\s?[:=-]\s?"
                          r"((?:[\w'/&-]+ ?){1,5})")


# 'Owner: on-call.': whoever holds the pager, not who is accountable for the fix ('serving on-call' names its team)
_BARE_ON_CALL = re.compile(r"(?:the |whoever is )?on[- ]?call(?: rotation)?")


_TEAM_BECAUSE = re.compile(r"^\W*(?:the )?(?:[\w-]+ ){0,3}(?:team|org|group|squad|on-?call)\s?,\s"
                           r"(?:since|because|as|given)(?![a-z])")


def _labelled_no_one(n: str) -> bool:
    """The labelled owner is a process ('Owner: CI will catch it next time') or the pager alone ('Owner: on-call.')."""
    m = _LABEL_VALUE.search(n)
    return bool(m) and (_a_process(m.group(1).split()[:4]) or bool(
        _BARE_ON_CALL.fullmatch(m.group(1).strip()) and not re.search(r"\w", n[m.end():])))


_VAGUE = {"infra", "infrastructure", "people", "folks", "somebody", "anyone", "everybody", "engineering",
          "management", "leadership", "i", "we", "you", "he", "she", "they", "us"}


# an organisation's name, its 'team' left out, doing the work ('serving runtime reverts the batcher', 'ML compiler
# adds the buckets'): a field and a function, so 'the compiler adds' (software) is not one
_ORG_ACTS = re.compile(r"(?:^|[.;:] )\W*(?:the )?" + ORG + r" (?!is |was |has |does )[a-z]+s ")

# an owner by role in an organisation, acting ('the compiler fusion owner should cap fusion depth'): the organisation
# in the words before 'owner' makes it a person's role, not a thing's ('the cache owner should evict ...')
_ORG_OWNER_ACTS = re.compile(r"(?<![a-z])(?:compiler|runtime|serving|platform|kernels?|scheduler|infra)(?:'s)? "
                             r"(?:[a-z-]+ )?owner (?:should|would|will|must|can|needs to|has to) [a-z]+")

# a team given the work by a relative clause ('I'd have serving runtime, who own the batcher settings, put ...'), or
# a team's person doing it ('ML compiler team's quantisation person adds 1024 and 2048 buckets')
_WHO_OWN = re.compile(r"(?:" + ORG + r"|(?<![a-z])[a-z][a-z/&-]+ (?:team|group|org|squad|lead)|(?<![a-z])(?:compiler|"
                      r"runtime|platform|serving|infra|scheduler|kernel|fleet|sre|ops) (?:people|folks|guys))"
                      r"(?: (?:people|folks|guys|team))?(?:,? who| \((?:who|they)) (?:owns?|runs?|"
                      r"(?:is|are) (?:responsible|accountable) for) ")
# an organisation that is to decide ('Capacity planning should decide if co-hosting is worth it')
_ORG_DECIDES = re.compile(r"(?:^|[.;:] )\W*(?:the )?" + ORG + r" (?:should|must|will|needs to|has to|gets to|can) "
                          r"(?:decide|make the call|sign off|approve|drive|lead|handle|own)(?![a-z])")
_TEAMS_PERSON = re.compile(r"(?<![a-z])(?:team|group|org)'s (?:[a-z-]+ ){0,2}(?:person|engineer|expert|specialist|lead|"
                           r"people|folks) (?:[a-z]+s|should|will|must|can|needs to|has to) ")

# an organisation named on its own line, as a shorthand answer names its owner ('Serving runtime.')
_ORG_ALONE = re.compile(r"^\W*(?:the )?" + ORG + r"(?: (?:team|org|group|folks))?\W*$")

# a team named the way several languages order it ('the team of serving runtime is responsible')
_TEAM_OF = re.compile(r"(?<![a-z])(?:team|group|squad|engineers) (?:of|from) (?:the )?(?:[a-z]+ )?" + ORG)

# a team in parentheses after the action it owns ('move embedding to its own pool (serving platform team)')
_PAREN_OWNER = re.compile(r"\(\s*(?:owner:?\s*)?(?:the )?"
                          r"(?:(?!some |any |a )(?:[a-z/&-]+ ){1,2}(?:team|squad|group|on-?call)|"
                          + ORG + r")\s*[;,)]")


# a short role written in lower case is often another word ('things queue behind em', 'at 3 pm'): it names the role
# when written in capitals ('the EM owns it') or after a determiner ('our em signs off')
_SHORT_ROLE = re.compile(r"(?<![a-z])(em|pm|tl)(?![a-z])")
_DETERMINER = re.compile(r"(?:the|our|my|your|their|an?)\W+$")


def _short_roles(s: str, n: str) -> str:
    # (not a ticket's id: 'PM-2291' is a postmortem)
    capital = {m.lower() for m in re.findall(r"(?<![A-Za-z])(EM|PM|TL)(?![A-Za-z]|-\d)", s)}
    return _SHORT_ROLE.sub(lambda m: m.group() if m.group() in capital or _DETERMINER.search(n[:m.start()])
                           else " " * len(m.group()), n)


# what a named person does as the owner; whole words ('down', 'shown' and 'known' hold no 'own')
_NAMED_DOES = re.compile(r"(?<![a-z])(?:own\w*|accountab\w*|driv\w*|sign\w*|lead\w*|responsib\w*|assign\w*|"
                         r"on the hook|ask\w*)")


# a capitalised word that names no person: a tool, or a sentence's first word, capitalised as every first word is
# ('But at 5,500 req/s ...', 'Who owns it: ...', 'Leadership needs to decide ...')
_NOT_A_NAME = _TOOLS | {"but", "and", "so", "then", "when", "if", "after", "before", "with", "at", "on", "in", "for",
                        "now", "here", "there", "this", "that", "also", "yet", "once", "while", "since", "because",
                        "from", "under", "over", "during", "today", "what", "which", "why", "how", "where", "each",
                        "every", "all", "both", "our", "their", "the", "my", "your", "they", "its", "until", "unless",
                        "meanwhile", "otherwise", "still", "even", "just", "who", "whoever", "someone", "somebody",
                        "nobody", "everyone", "leadership", "management"}


def _named(s: str) -> bool:
    """A person named (a capitalised name before 'owns', 'will', a comma ...), not a tool ('Triton owns batching')."""
    return any(m.group().split()[0].strip("(,").lower() not in _NOT_A_NAME for m in NAMED.finditer(s))


# an owner named and then left undecided, or a team said to know the answer, not to own it
_UNDECIDED = re.compile(r"(?<![a-z])(?:(?:not sure|unsure|no idea|don'?t know|do not know|can'?t say) who|"
                        r"depends on (?:how|who|which)|(?:was|were) going to say|i(?:'d| would) have said|"
                        r"leave it to whoever|(?:would|will|'d|should) know (?:the|what|how|which|best)|"
                        r"(?<=, )i (?:guess|suppose)\W*$)(?![a-z])")  # 'The ops folks, I guess.'


# the chip's vendor handed the problem ('the chip vendor should own it', 'an RMA with the vendor and let their support
# engineers own it'): someone outside the team that ships the change, so no one accountable here
_VENDOR_OWNS = re.compile(r"(?<![a-z])vendor(?:'s)?(?![a-z])[^.;]{0,60}?(?<![a-z])(?:own\w*|responsib\w*|"
                          r"accountab\w*)(?![a-z])")
# an owner said to be the owner ('owned by its owners'), or someone from a team ('someone from the ML folks')
_NO_ONE = re.compile(r"(?<![a-z])(?:owned by (?:its|their|the|our) (?:own )?owners?(?![a-z])|"
                     r"the owners? owns?(?![a-z])|(?:someone|somebody|anyone|anybody) (?:from|in|on|of) )")
# a menu of three teams, none picked ('Owner is the runtime team or the draft-model team or the platform team', 'one of
# the compiler, runtime or platform teams will own it')
_TEAM_END = r"(?:team|group|org|squad|on-?call|folks|lead)s?(?![a-z])"
_OWNER_MENU = re.compile(_TEAM_END + r"(?:,? or (?:else )?(?:the |a |our )?(?:[\w-]+ ){0,3}?" + _TEAM_END + "){2}|"
                         r"(?<![a-z])(?:one|any|either) of the (?:[\w-]+,? ){1,4}(?:or|and) [\w-]+ " + _TEAM_END)
_OWNS_BEFORE = re.compile(r"(?<![a-z])(?:own\w*|responsib\w*|accountab\w*)(?![a-z])")


_ORG_PEOPLE = re.compile(ORG + r" (?:people|folks|team|engineers)$")


def _to_vendor(n: str) -> bool:
    """Does the sentence hand the problem to the vendor (a team of ours that owns it first may call the vendor)?"""
    vendor = _VENDOR_OWNS.search(n)
    return bool(vendor) and not _OWNS_BEFORE.search(n, 0, vendor.start())


def _owner_in(s: str, n: str) -> bool:
    n = _TLDR.sub(" ", _POSSESSIVE_OWN.sub(" ", n))  # 'its own' names no owner; 'tl;dr' is no tech lead
    n = _OUTSIDE.sub(lambda m: " " * len(m.group()), n)
    n = _NO_LEVER.sub(lambda m: " " * len(m.group()), n)
    n = _short_roles(s, n)
    # a question ('who owns it?', 'maybe the compiler folks?') assigns no one, nor an owner left undecided ('I was
    # going to say the runtime team, but it depends on how your org splits it')
    if n.rstrip().endswith("?") or _UNDECIDED.search(n) and not (I_OWN.search(n) or OWNER_LABEL.search(n)) or \
            _OWNER_MENU.search(n) or _NO_ONE.search(n):
        return False
    strong = I_OWN.search(n) or OWNER_LABEL.search(n) or re.search(r"own|accountab|responsib|dri\b|sign", n)
    if LOOK_INTO.search(n) and not strong and not ROLES.search(n):  # a named role may be asked to look
        return False  # "the infra folks should look into it" is advice, not an owner
    # a team named on its own line, or opening the sentence with its reason, is an assignment ('Compiler team, since
    # it's their envelope and policy.', the answer to the question before it)
    cue = OWNER_CUE.search(n) or content_words(n) <= 6 or _TEAM_BECAUSE.match(n)
    for m in OWNER_NOUN.finditer(n):
        words = [w for w in m.groups() if w]
        acts = re.match(r" (?:(?!is |was |has |does )[a-z]+s|have) ", n[m.end():]) or (  # the subject: 'the team adds'
            m.group().endswith(("folks", "lads", "crew", "engineers", "sres", "owners")) and _ACTS.match(n[m.end():]))
        users = m.group().endswith(("folks", "folk", "lads", "crew", "mob")) and words and words[-1] in _STREAMS
        if (cue or acts) and words and words[-1] not in GENERIC and words[0] not in ("someone", "somebody") \
                and not users:  # 'the chat folks, who did nothing wrong, also get slower' are its users
            return True
    if OWNER_THAT.search(n) or any(m.group(1) not in GENERIC for m in _THEIR_CALL.finditer(n)) or \
            _WHOEVER_OWNS.search(n):  # an owner by role: 'whoever owns the batcher config in serving runtime'
        return True
    if _labelled_no_one(n):
        return False
    for m in OWNS.finditer(n):
        subject = m.group(1).split()
        if subject[-1] in _TOOLS and (len(subject) == 1 or subject[-2] in ("the", "our", "a")) or \
                _a_process(subject[-2:]) or subject[-1] in _HARDWARE:
            continue  # 'the compiler owns fusion decisions' names software, 'each GPU owns a slice' a part of the chip
        # (a collective named by its organisation is a team: 'the serving runtime people own the settings')
        if (not set(subject) & NOT_SUBJECT or _ORG_PEOPLE.search(" ".join(subject))) and subject[-1] not in GENERIC:
            return True
    for m in _SHOULD_OWN.finditer(n):
        subject = m.group(1).split()
        if re.search(r"(?:someone|somebody|anyone|whoever)\W+(?:\w+\W+){0,2}$", n[:m.start()]):
            continue  # 'someone on the platform side can own it'
        tool = subject[-1] in _TOOLS and not re.search(ORG + "$", " ".join(subject))  # 'serving runtime' is people
        if not set(subject) & (NOT_SUBJECT | _VAGUE) and subject[-1] not in GENERIC and not tool:
            return True
    if _ORG_ACTS.search(n) or _ORG_OWNER_ACTS.search(n) or _PAREN_OWNER.search(n) or (cue and _TEAM_OF.search(n)) \
            or _ORG_ALONE.match(n) or _WHO_OWN.search(n) or _TEAMS_PERSON.search(n) or _ORG_DECIDES.search(n):
        return True
    vague = re.search(r"(?<![a-z])(?:someone|somebody|whoever|whichever (?:team|group|org))(?![a-z])", n)
    mine = I_OWN.search(n)
    if vague and not ROLES.search(n) and not (mine and mine.start() < vague.start()):
        return False  # ('I'd own it myself and loop in whoever trains the draft': the owner named before the loop)
    return bool(ROLES.search(n) or I_OWN.search(n) or OWNER_LABEL.search(n) or
                (_named(s) and _NAMED_DOES.search(n)))


# the owner of a named thing by role, in an organisation the sentence names ('whoever owns the batcher config over
# in serving runtime', 'whoever owns the cost model on the compiler side', 'whoever owns it in serving runtime'); not a
# deferral to someone unknown ('talk to whoever owns the pool', 'whoever owns the batcher can pick the value')
_WHOEVER_OWNS = re.compile(r"(?<![a-z])whoever (?:owns|is (?:responsible|accountable) for|runs|maintains)"
                           r"(?: [\w'-]+){1,4}? (?:in|on|over in|at|from|within) (?:the )?(?:" + ORG +
                           r"|(?:compiler|runtime|scheduler|platform|serving|inference)(?: side| team| org)?)(?![a-z])|"
                           # ... or given the fix to do ('whoever runs the dispatcher should switch us to ...')
                           r"(?:^|(?<=[.;:]\s))\W*whoever (?:owns|runs|maintains|is on[- ]?call for)(?: [\w'-]+){1,4}? "
                           r"(?:should|must|needs? to|has to|will) (?!(?:decide|know|say|pick|choose|look|check|do)\b)")


_ASSIGNS = re.compile(r"(?<![a-z])(?:owns|owned|owning|own (?:it|this|that|the|both|getting)|owner\s?:|owner of|"
                      r"accountab\w*|responsib\w*|dri)(?![a-z])")


# an owner taken back by the next sentence ('I'd say the platform team... actually, I don't know how your org splits
# it')
_TAKEN_BACK = re.compile(r"^\W*(?:actually|wait|hmm+|no|well|but|scratch that)\W+(?:\w+\W+){0,2}?(?:i )?(?:don'?t "
                         r"know|do not know|not sure|no idea|can'?t say|take (?:it|that) back)(?![a-z])")


_OWNER_HEADING = re.compile(r"^\W*(?:owners?|ownership|who owns it)\W*$")


def owner(segs: list[str], norms: list[str], stuffed: bool) -> Element:
    """The first sentence that names an owner; the quote is the first that assigns one in so many words ('owns',
    'Owner:', 'accountable'), where one does."""
    # (a line under a heading of its own, 'Owner', reads as 'Owner: ...')
    found = [(s, n) for i, (s, n) in enumerate(zip(segs, norms, strict=True))
             if not (stuffed and bare_run(n)) and not _to_vendor(n)
             and _owner_in(s, " owner: " + n if i > 0 and _OWNER_HEADING.match(norms[i - 1]) else n)
             and not (i + 1 < len(norms) and _TAKEN_BACK.match(norms[i + 1]))]
    if found:
        return Element(True, quote(next((s for s, n in found if _ASSIGNS.search(n)), found[0][0])), "")
    return Element(False, "", "name who is accountable: a team, role or person (e.g. the ML compiler team, the "
                              "serving on-call); 'someone' or 'the team should' is not an owner",
                   "Who owns the fix, and who signs off on the release?")

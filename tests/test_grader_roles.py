"""Owner and rollback shapes added after writer AA was scored and read (twelfth session), and an outside team as
owner (a probe of the same session).

Each case was written for this file; the first of each pair fails on the rules before it, the
second guards the other side.
"""

from __future__ import annotations

import pytest

from workbench.grading.drills import load_drills
from workbench.grading.grader import grade

D = load_drills()

OWNERS = [
    # whoever holds the pager is not who is accountable for the fix ...
    ("fusion-memory-bursts", "Owner: on-call.", False),
    ("recompile-storm", "Ownership: the on-call rotation", False),
    # ... a team's on-call is, and so is the speaker on call
    ("fusion-memory-bursts", "Owner: serving on-call.", True),
    ("batching-queueing-delay", "If I'm the on-call, I own the revert.", True),
    # a team opening its sentence with the reason it owns (the answer to the question before it)
    ("recompile-storm", "ML compiler team, since it's their envelope and policy.", True),
    ("recompile-storm", "The team, because it is their job.", False),
    # a team outside the company can be asked for help, not held accountable for the release
    ("batching-queueing-delay", "The vendor's driver team should own it.", False),
    ("recompile-storm", "Owner: chip vendor support.", False),
    ("batching-queueing-delay", "The serving runtime team owns it and will ask the vendor's driver team for a fix.",
     True),
]

ROLLBACKS = [
    # a flag that flips itself on a condition is a way back tied to it ...
    ("recompile-storm", "Recompile only comes back on a canary with an automatic flip if p99 climbs over 25 ms.", True),
    ("fusion-memory-bursts", "Canary it with auto-flip on a p95 regression against the elementwise plan.", True),
    # ... a flip with no condition is none
    ("fusion-memory-bursts", "We could add an automatic flip at some point.", False),
]


@pytest.mark.parametrize(("drill", "text", "want"), OWNERS)
def test_a_bare_on_call_or_a_vendor_owns_nothing_a_teams_on_call_does(drill, text, want):
    assert grade(D[drill], text).elements["owner"].present is want


@pytest.mark.parametrize(("drill", "text", "want"), ROLLBACKS)
def test_an_automatic_flip_on_a_condition_is_a_rollback(drill, text, want):
    assert grade(D[drill], text).elements["rollback"].present is want

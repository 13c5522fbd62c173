"""The reference loop's side of weights residency: what a batch waits for its model's weights.

:func:`workbench.runtime.loop.run_events` keeps one :class:`LoopResidency`: the run's
:class:`~workbench.runtime.residency.Residency` (``None`` when no model has weights) and,
per batch class, what the dispatch policy needs to remember between events. Under ``hold``
a batch acquires its weights as it starts and waits for them on its core (:meth:`acquire`
gives the phases). Under ``load_then_dispatch`` the dispatcher parks a class whose weights
are not in (:meth:`park`: the load starts, the class stays queued and holds the model) and
its batch starts once they are; the queued wait is counted per batch and per request.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from workbench.runtime.residency import Residency, link_terms

if TYPE_CHECKING:
    from workbench.config import Scenario


class LoopResidency:
    """Weights residency as the event loop sees it: per-class parking and per-batch waits for weights."""

    __slots__ = ("residency", "link_share", "defer", "class_model", "loaded", "park_until", "parked_s", "holds",
                 "park_cum", "weights_wait", "b_reload", "b_copy")

    def __init__(self, sc: Scenario, class_model: list[int], n_requests: int,
                 loaded: Callable[[float, int], None]):
        """``loaded(t, model)`` schedules the event that wakes the dispatcher when a parked load ends at ``t``."""
        n_cls = len(class_model)
        self.residency: Residency | None = None
        self.link_share = 0.0  # share of HBM bandwidth a weights copy draws
        if sc.models and any(m.weights_bytes for m in sc.models):
            link_rate, self.link_share = link_terms(sc.hardware)
            self.residency = Residency([m.weights_bytes for m in sc.models], sc.hardware.hbm_capacity_bytes,
                                       link_rate)
        self.defer = self.residency is not None and sc.residency.dispatch == "load_then_dispatch"
        self.class_model = class_model
        self.loaded = loaded
        self.park_until = [0.0] * n_cls  # s: load_then_dispatch, a class waits in its queue for its weights until then
        self.parked_s = [0.0] * n_cls  # s its next batch has waited for weights in the queue
        self.holds = [False] * n_cls  # the class holds its model's weights for its next batch
        self.park_cum = [0.0] * n_cls  # s the class has spent waiting for weights, through the end of its last wait
        # per request: the class's park_cum at arrival, then (from its batch's start) the s it waited for weights
        self.weights_wait: list[float] | None = [0.0] * n_requests if self.defer else None
        self.b_reload: dict[int, float] = {}  # sparse: seconds waited for weights
        self.b_copy: dict[int, float] = {}  # sparse: the batch's own weights copy over the host link (s)

    def acquire(self, b: int, c: int, members: list[int], t: float, pre: list[tuple[float, float]]) -> float:
        """Batch ``b`` of class ``c`` acquires its model's weights at ``t``: the seconds it waits for them on
        its core (``hold``: its phases appended to ``pre``; ``load_then_dispatch``: none, it waited queued)."""
        residency = self.residency
        got = residency.acquire(self.class_model[c], t)
        if self.defer:  # its weights are in: it waited for them in the queue
            weights_wait, park_cum = self.weights_wait, self.park_cum[c]
            for r in members:  # the class's waits for weights since each request arrived
                weights_wait[r] = park_cum - weights_wait[r]
            if self.holds[c]:
                self.holds[c] = False
                residency.unhold(self.class_model[c])
            if self.parked_s[c]:
                self.b_reload[b] = self.parked_s[c]
                self.parked_s[c] = 0.0
            return 0.0
        if not (got.wait_s or got.copy_s):
            return 0.0
        self.b_reload[b] = got.wait_s + got.copy_s
        if got.wait_s:
            pre.append((got.wait_s, 0.0))  # the link busy with other loads, or another batch's copy: HBM idle
        if got.copy_s:
            self.b_copy[b] = got.copy_s
            pre.append((got.copy_s, self.link_share))  # the copy writes HBM at the link's rate
        return got.wait_s + got.copy_s

    def park(self, c: int, now: float) -> bool:
        """load_then_dispatch: unless class ``c``'s weights are in, start their load (or join the one in
        flight) and leave the class queued until they are; True when it was parked."""
        residency = self.residency
        m = self.class_model[c]
        if residency.usable(m, now):
            return False
        if m in residency.resident:  # another class's load in flight
            ready = residency.ready_at[m]
        else:
            ready = residency.load(m, now)
            self.loaded(ready, m)
        if ready <= now:  # nothing to copy and the link free
            return False
        if not self.holds[c]:
            self.holds[c] = True
            residency.hold(m)
        self.park_until[c] = ready
        self.parked_s[c] += ready - now
        self.park_cum[c] += ready - now
        return True

    def arrive(self, r: int, c: int, now: float) -> None:
        """load_then_dispatch: request ``r`` joins class ``c``: note the class's waits for weights so far
        (one may be under way)."""
        until = self.park_until[c]
        self.weights_wait[r] = self.park_cum[c] - (until - now if until > now else 0.0)

    def drop_hold(self, c: int) -> None:
        """Class ``c``'s queue emptied (its requests timed out) while it held its weights: nobody is left
        to wait for them."""
        self.holds[c], self.parked_s[c] = False, 0.0
        self.residency.release(self.class_model[c])

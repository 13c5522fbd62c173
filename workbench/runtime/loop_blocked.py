"""Placement blocking in the reference loop: time a ready class spends with an idle core it may not use.

A non-conserving placement (round-robin, pinned) can leave a core idle while a class
that some other core would serve is ready. :func:`workbench.runtime.loop.run_events`
keeps one :class:`BlockedTracker` for such placements and calls :meth:`~BlockedTracker.track`
after every event; the result is, per class, a step curve of cumulative seconds blocked
(the trace's ``block_curves``). A class waiting in its queue for its weights is not
blocked by placement.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class BlockedTracker:
    """Per class, the cumulative seconds it was ready while some core sat idle."""

    __slots__ = ("n_cls", "sealed", "sealed_q", "class_n", "park_until", "idle", "take", "heads",
                 "blocked", "blocked_since", "block_cum", "block_t", "block_v")

    def __init__(self, n_cls: int, sealed: bool, sealed_q: list[Any], class_n: list[int], park_until: list[float],
                 idle: list[int], take: Callable[[int, float, float], int],
                 heads: Callable[[int], tuple[float, float]]):
        """The loop's own lists, read (never written) at every :meth:`track`: they must not be rebound."""
        self.n_cls, self.sealed, self.sealed_q, self.class_n = n_cls, sealed, sealed_q, class_n
        self.park_until, self.idle, self.take, self.heads = park_until, idle, take, heads
        self.blocked = [False] * n_cls
        self.blocked_since = [0.0] * n_cls  # s: when the class's current blocked spell began
        self.block_cum = [0.0] * n_cls  # s blocked, through the end of its last spell
        self.block_t: list[list[float]] = [[0.0] for _ in range(n_cls)]  # s: when the class's state changed
        self.block_v: list[list[float]] = [[0.0] for _ in range(n_cls)]  # s: its block_cum then

    def track(self, now: float) -> None:
        """A ready class with an idle core it may not use is blocked by placement."""
        sealed, sealed_q, class_n, park_until = self.sealed, self.sealed_q, self.class_n, self.park_until
        take, heads, blocked = self.take, self.heads, self.blocked
        any_idle = bool(self.idle)
        for c in range(self.n_cls):
            if sealed:
                ready = bool(sealed_q[c])
            else:
                ready = class_n[c] > 0 and any_idle and take(class_n[c], heads(c)[1], now) > 0
            ready = ready and park_until[c] <= now  # a class waiting for its weights is not blocked by placement
            b = ready and any_idle
            if b != blocked[c]:
                if b:
                    self.blocked_since[c] = now
                else:
                    self.block_cum[c] += now - self.blocked_since[c]
                blocked[c] = b
                self.block_t[c].append(now)
                self.block_v[c].append(self.block_cum[c])

    def curves(self, now: float) -> list[tuple[list[float], list[float]]]:
        """Close the curves of classes still blocked at ``now`` (the end of the run); per class, (t, blocked s)."""
        for c in range(self.n_cls):
            if self.blocked[c]:
                self.block_t[c].append(now)
                self.block_v[c].append(self.block_cum[c] + now - self.blocked_since[c])
        return list(zip(self.block_t, self.block_v, strict=True))

"""The reference loop's queues: each batch class's waiting requests, its heads, batch pops, static sealing.

A batch class is a list of (stream, bucket) queues of request indices in arrival order.
:func:`workbench.runtime.loop.run_events` keeps one :class:`ClassQueues`: a class's heads
give its best key and oldest arrival, a batch pops the class's queues in key order, and
under static batching :meth:`~ClassQueues.seal` closes forming batches into ``sealed_q``
as they fill or time out (the compiled twin: :mod:`workbench.runtime.compiled.queues`).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable
from typing import Any

INF = math.inf


class ClassQueues:
    """Per batch class: its queues, how many requests wait, its sealed batches and its batching timer."""

    __slots__ = ("class_qs", "queues", "class_n", "sealed_q", "timer_at", "key", "arr", "online", "discipline",
                 "take", "deadline", "arm")

    def __init__(self, class_qs: list[list[int]], n_queues: int, key: Any, arr: list[float], discipline: Any,
                 batching: Any, arm: Callable[[float, int], None]):
        """``key``, ``arr``: per request, its discipline key and arrival (s); ``arm(t, c)`` schedules class
        ``c``'s batching timer at ``t``."""
        n_cls = len(class_qs)
        self.class_qs, self.key, self.arr, self.arm = class_qs, key, arr, arm
        self.queues: list[deque[int]] = [deque() for _ in range(n_queues)]
        self.class_n = [0] * n_cls  # requests waiting in the class's queues
        self.sealed_q: list[deque[tuple[list[int], float]]] = [deque() for _ in range(n_cls)]  # static: (members, s)
        self.timer_at = [-1.0] * n_cls  # s: the class's batching timer, as last armed
        self.online, self.discipline = discipline.online, discipline
        self.take, self.deadline = batching.take, batching.deadline

    def heads(self, c: int) -> tuple[float, float]:
        """(best key, oldest arrival) over a class's queue heads."""
        queues, key, arr = self.queues, self.key, self.arr
        best, oldest = INF, INF
        for q in self.class_qs[c]:
            dq = queues[q]
            if dq:
                h = dq[0]
                if key[h] < best:
                    best = key[h]
                if arr[h] < oldest:
                    oldest = arr[h]
        return best, oldest

    def pop_batch(self, c: int, m: int) -> list[int]:
        """Take the ``m`` best-keyed requests of class ``c`` off its queues."""
        qs, queues, key = self.class_qs[c], self.queues, self.key
        if len(qs) == 1:
            dq = queues[qs[0]]
            members = [dq.popleft() for _ in range(m)]
        else:  # merge the class's queues in key order
            members = []
            for _ in range(m):
                bq, bk = None, INF
                for q in qs:
                    dq = queues[q]
                    if dq and key[dq[0]] < bk:
                        bq, bk = dq, key[dq[0]]
                members.append(bq.popleft())
        self.class_n[c] -= m
        if self.online:
            self.discipline.served(key[members[-1]])
        return members

    def seal(self, c: int, now: float) -> None:
        """Static batching: close the forming batch of class ``c`` if full or late."""
        w = self.class_n[c]
        if not w:
            return
        _, oldest = self.heads(c)
        m = self.take(w, oldest, now)
        if m:
            self.sealed_q[c].append((self.pop_batch(c, m), now))
            if self.class_n[c]:
                self.seal(c, now)
        elif self.timer_at[c] != self.deadline(oldest):
            self.timer_at[c] = self.deadline(oldest)
            self.arm(self.timer_at[c], c)

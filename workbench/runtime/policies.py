"""The runtime's swappable policies: batching, queue discipline, core placement.

Each is a small class with a one- or two-method interface, chosen from the scenario
by :func:`make_policies`, the way SimPy's ``PriorityResource`` is a ``Resource`` with
another queue class.

Batching follows Triton's dynamic batcher: while a core is idle and requests wait, a
batch leaves as soon as ``max_batch`` wait, or a preferred size can be formed (the
largest one), or the oldest has waited ``max_delay_s``; a backlog already past the
delay leaves at once when a core frees. ``static`` batching seals fixed-size batches
as requests arrive (a partial one when its first request has waited ``max_delay_s``),
whether or not a core is free; a sealed batch does not grow while it waits.

Disciplines give every request a sort key; each (stream, bucket) queue is FIFO and
its keys never decrease, so the global order is the minimum over queue heads.
``weighted`` is self-clocked fair queueing (Golestani 1994): a request of stream s
gets finish tag ``max(F_s, V) + 1 / w_s`` where V is the largest tag dispatched.
"""

from __future__ import annotations

import math

import numpy as np

from workbench.config import Batching, Scenario

INF = math.inf


# --- batching -------------------------------------------------------------------------

class NoBatching:
    """One request per batch, dispatched as soon as a core is free."""

    sealed = False

    def take(self, waiting: int, oldest_s: float, now: float) -> int:
        """How many of ``waiting`` requests leave now (0 = none yet)."""
        return 1

    def deadline(self, oldest_s: float) -> float:
        """When a not-yet-ready queue must be looked at again."""
        return INF


class DynamicBatching:
    """Triton-style dynamic batcher: max size, preferred sizes, a queue delay."""

    sealed = False

    def __init__(self, b: Batching):
        self.max_batch, self.max_delay_s = b.max_batch, b.max_delay_s
        self.preferred = tuple(sorted(set(b.preferred), reverse=True))

    def take(self, waiting: int, oldest_s: float, now: float) -> int:
        """``max_batch`` if that many wait; else the largest preferred size; else all once late."""
        if waiting >= self.max_batch:
            return self.max_batch
        for p in self.preferred:
            if waiting >= p:
                return p
        return waiting if now >= oldest_s + self.max_delay_s else 0

    def deadline(self, oldest_s: float) -> float:
        """The oldest request's delay runs out."""
        return oldest_s + self.max_delay_s


class StaticBatching(DynamicBatching):
    """Fixed-size batches sealed on arrival; a partial one after ``max_delay_s``."""

    sealed = True

    def take(self, waiting: int, oldest_s: float, now: float) -> int:
        """Seal ``max_batch`` when full, or what waits when the fill timeout expires."""
        if waiting >= self.max_batch:
            return self.max_batch
        return waiting if now >= oldest_s + self.max_delay_s else 0


# --- queue disciplines ----------------------------------------------------------------

class Fifo:
    """Arrival order across all streams."""

    online = False

    def keys(self, stream: np.ndarray, scenario: Scenario) -> list:
        """Sort key of every request, computed before the run."""
        return list(range(len(stream)))


class StrictPriority:
    """Lower ``priority`` first, arrival order within a level; never preempts."""

    online = False

    def keys(self, stream: np.ndarray, scenario: Scenario) -> list:
        """Rank of (priority, arrival index)."""
        return self.key_array(stream, scenario).tolist()

    def key_array(self, stream: np.ndarray, scenario: Scenario) -> np.ndarray:
        """The same ranks as an int64 array (the compiled loop's keys, without a Python list between)."""
        levels = sorted({s.priority for s in scenario.streams})  # each stream's level, 0 first (few of them)
        dense = np.array([levels.index(s.priority) for s in scenario.streams], dtype=np.int16)
        order = np.argsort(dense[stream], kind="stable")  # arrival order within a level: stable (a radix sort)
        rank = np.empty(len(stream), dtype=np.int64)
        rank[order] = np.arange(len(stream))
        return rank


class WeightedFair:
    """Self-clocked fair queueing over streams by weight (tags given on arrival)."""

    online = True

    def __init__(self, scenario: Scenario):
        self.inv_w = [1.0 / s.weight for s in scenario.streams]
        self.finish = [0.0] * len(scenario.streams)
        self.virtual = 0.0

    def tag(self, stream: int) -> float:
        """Finish tag of a new arrival of ``stream``."""
        f = max(self.finish[stream], self.virtual) + self.inv_w[stream]
        self.finish[stream] = f
        return f

    def served(self, key: float) -> None:
        """A request with tag ``key`` left the queue: advance the virtual clock."""
        if key > self.virtual:
            self.virtual = key


# --- core placement -------------------------------------------------------------------

class LeastLoaded:
    """Any idle core, the one with the least busy time first: work-conserving."""

    conserving = True

    def __init__(self, cores: int):
        self.all = tuple(range(cores))

    def eligible(self, stream: int, bucket: int, bucket_cores=None) -> tuple[int, ...]:
        """Cores a stream's batches of a bucket may run on."""
        return self.all

    def candidates(self, idle: list[int], busy_s: list[float]) -> list[int]:
        """Idle cores to try, in order: every class may use every core, so only the first counts."""
        return [min(idle, key=busy_s.__getitem__)] if len(idle) > 1 else idle

    def dispatched(self, core: int) -> None:
        """A batch went to ``core``."""


class RoundRobin(LeastLoaded):
    """Batches go to cores in turn; a batch waits for its turn's core even if another idles."""

    conserving = False

    def __init__(self, cores: int):
        super().__init__(cores)
        self.turn = 0

    def candidates(self, idle: list[int], busy_s: list[float]) -> list[int]:
        """Only the core whose turn it is."""
        return [self.turn] if self.turn in idle else []

    def dispatched(self, core: int) -> None:
        """Advance the turn."""
        self.turn = (core + 1) % len(self.all)


class Pinned(LeastLoaded):
    """Static placement: batches run only on their pinned cores (stream pins, or the plan's per bucket)."""

    conserving = False

    def __init__(self, scenario: Scenario):
        cores = scenario.hardware.cores
        super().__init__(cores)
        self.pins = [tuple(s.pin) for s in scenario.streams]

    def eligible(self, stream: int, bucket: int, bucket_cores=None) -> tuple[int, ...]:
        """The stream's own pins; else the compiler's placement of the bucket; else stream index mod cores."""
        if self.pins[stream]:
            return self.pins[stream]
        if bucket_cores is not None:
            return tuple(bucket_cores[bucket])
        return (stream % len(self.all),)

    def candidates(self, idle: list[int], busy_s: list[float]) -> list[int]:
        """Idle cores by index."""
        return idle  # kept sorted by the loop


def make_policies(scenario: Scenario):
    """(batching, discipline, placement) objects for a scenario."""
    b = scenario.batching
    batcher = {"none": NoBatching, "dynamic": DynamicBatching, "static": StaticBatching}[b.policy]
    batching = batcher() if b.policy == "none" else batcher(b)
    d = scenario.scheduler.discipline
    discipline = {"fifo": Fifo, "priority": StrictPriority}[d]() if d != "weighted" else WeightedFair(scenario)
    p = scenario.scheduler.placement
    cores = scenario.hardware.cores
    placement = Pinned(scenario) if p == "pinned" else (RoundRobin if p == "round-robin" else LeastLoaded)(cores)
    return batching, discipline, placement

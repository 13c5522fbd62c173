"""The mutable state of a serving run: sequences, their queues, the block pool, and what each change records.

Schedulers (:mod:`workbench.serving.scheduler`) decide; this module only carries out
admissions, preemptions, swaps and token emissions, and checks the invariants on the
way: a token slot is written once, a sequence never decodes before its prefill is done,
blocks in use never exceed the pool.
"""

from __future__ import annotations

import bisect
import heapq

import numpy as np

from workbench.serving.config import KVConfig
from workbench.serving.kv import BlockPool
from workbench.serving.workload import TokenRequests

WAITING, PREFILL, DECODE, SWAPPED, DONE = 0, 1, 2, 3, 4


class ServingState:
    """Per-sequence progress (plain lists: the loop reads them one at a time) and the three queues."""

    def __init__(self, req: TokenRequests, kv: KVConfig, policy: str, kv_bytes_per_token: float):
        n = len(req.arrival_s)
        self.n = n
        self.arrival = req.arrival_s.tolist()
        self.prompt = req.prompt.tolist()
        self.out_len = req.output.tolist()
        prio = req.priority.tolist()
        self.key = [(prio[i], i) if policy == "priority" else (i,) for i in range(n)]  # arrival order breaks ties
        self.generated = [0] * n  # tokens emitted
        self.cached = [0] * n  # tokens whose K and V are in the cache
        self.target = list(self.prompt)  # tokens the current prefill must cache (prompt + tokens already emitted)
        self.phase = [WAITING] * n
        self.admit_s = np.full(n, np.nan)  # first admission to the chip
        self.now = 0.0  # start of the iteration being built
        self.first_s = np.full(n, np.nan)
        self.finish_s = np.full(n, np.nan)
        self.preemptions = np.zeros(n, dtype=np.int32)
        self.offset = np.concatenate([[0], np.cumsum(req.output)]).astype(np.int64)
        self.token_s = np.full(int(self.offset[-1]), np.nan)  # emission time of every output token
        self.pool = BlockPool(kv)
        self.kv = kv
        self.block_bytes = kv.block_size * kv_bytes_per_token
        self.waiting: list[tuple] = []  # heap of (key, seq)
        self.swapped: list[tuple] = []  # heap of (key, seq)
        self.running: list[tuple] = []  # sorted (key, seq): scheduling order, the last is preempted first
        self.done = 0
        self.preempted_now: list[int] = []  # preemptions of the iteration being built
        self.swap_bytes = 0.0  # bytes moved to or from host in the iteration being built

    # --- queues ------------------------------------------------------------------------
    def arrive(self, i: int) -> None:
        heapq.heappush(self.waiting, (self.key[i], i))

    def start(self, i: int, tokens: int) -> None:
        """Admit waiting sequence ``i``: take blocks for its whole prefill target (``tokens``)."""
        ok = self.pool.grow(i, tokens)
        assert ok, "admitted without blocks"
        if np.isnan(self.admit_s[i]):
            self.admit_s[i] = self.now
        self.phase[i] = PREFILL
        bisect.insort(self.running, (self.key[i], i))

    def preempt(self, victim: int) -> None:
        """Take ``victim`` off the chip: recompute (drop its KV, redo prefill later) or swap (KV to host)."""
        self.running.remove((self.key[victim], victim))
        self.preemptions[victim] += 1
        self.preempted_now.append(victim)
        if self.kv.preemption == "swap":
            self.swap_bytes += self.pool.release(victim) * self.block_bytes
            self.phase[victim] = SWAPPED
            heapq.heappush(self.swapped, (self.key[victim], victim))
        else:
            self.pool.release(victim)
            self.cached[victim] = 0
            self.target[victim] = self.prompt[victim] + self.generated[victim]
            self.phase[victim] = WAITING
            heapq.heappush(self.waiting, (self.key[victim], victim))

    def swap_in(self, i: int) -> bool:
        """Bring swapped sequence ``i`` back if its blocks (and one more token) fit; False leaves it swapped."""
        need = self.cached[i] + (1 if self.phase_after_swap(i) == DECODE else 0)
        if not self.pool.grow(i, max(need, 1)):
            return False
        self.swap_bytes += self.pool.held.get(i, 0) * self.block_bytes
        self.phase[i] = self.phase_after_swap(i)
        bisect.insort(self.running, (self.key[i], i))
        return True

    def phase_after_swap(self, i: int) -> int:
        return DECODE if self.cached[i] >= self.target[i] else PREFILL

    # --- an iteration's outcome --------------------------------------------------------
    def advance(self, i: int, tokens: int, t_end: float) -> None:
        """``i`` processed ``tokens`` new tokens in the iteration that ended at ``t_end``."""
        ph = self.phase[i]
        assert ph in (PREFILL, DECODE), "scheduled a sequence that is not running"
        self.cached[i] += tokens
        if ph == PREFILL:
            assert self.cached[i] <= self.target[i], "prefill past its target"
            if self.cached[i] < self.target[i]:
                return  # a chunk: no token until the whole prompt is cached
            self.phase[i] = DECODE
        else:
            assert tokens == 1, "a decode step is one token"
        self.emit(i, t_end)

    def emit(self, i: int, t: float) -> None:
        """Sequence ``i`` produces its next output token at ``t``."""
        g = self.generated[i]
        slot = self.offset[i] + g
        assert np.isnan(self.token_s[slot]), "a token emitted twice"
        self.token_s[slot] = t
        if g == 0:
            self.first_s[i] = t
        self.generated[i] = g + 1
        if g + 1 == self.out_len[i]:
            self.finish_s[i] = t
            self.phase[i] = DONE
            self.running.remove((self.key[i], i))
            self.pool.release(i)
            self.done += 1

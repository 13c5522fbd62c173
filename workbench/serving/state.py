"""The mutable state of a serving run: sequences, their queues, the block pool, and what each change records.

Schedulers (:mod:`workbench.serving.scheduler`) decide; this module only carries out
admissions, preemptions, swaps and token emissions, and checks the invariants on the
way: a token slot is written once, a sequence never decodes before its prefill is done,
blocks in use never exceed the pool.
"""

from __future__ import annotations

import bisect
import heapq
from array import array

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
        self.admit_s = [float("nan")] * n  # first admission to the chip
        self.now = 0.0  # start of the iteration being built
        nan = float("nan")
        self.first_s = [nan] * n
        self.finish_s = [nan] * n
        self.preemptions = [0] * n
        self.offset = np.concatenate([[0], np.cumsum(req.output)]).astype(np.int64).tolist()
        self.token_s = array("d", [nan]) * self.offset[-1]  # every output token's emission time (nan until emitted;
        # flat doubles, 8 bytes a token: the trace reads them without a copy)
        self.pool = BlockPool(kv)
        self.cap = [0] * n  # tokens the blocks a sequence holds can store (blocks x block size)
        self.width = [1] * n  # positions a decode step of the sequence writes (k + 1 while it speculates)
        self.kv = kv
        self.block_bytes = kv.block_size * kv_bytes_per_token
        self.waiting: list[tuple] = []  # heap of (key, seq)
        self.swapped: list[tuple] = []  # heap of (key, seq)
        self.running: list[tuple] = []  # sorted (key, seq): scheduling order, the last is preempted first
        self.done = 0
        self.preempted_now: list[int] = []  # preemptions of the iteration being built
        self.swap_bytes = 0.0  # bytes moved to or from host in the iteration being built

    # --- blocks --------------------------------------------------------------------------
    def grow(self, i: int, tokens: int) -> bool:
        """Blocks for ``tokens`` tokens of sequence ``i`` (False, nothing taken, if the pool is short)."""
        if not self.pool.grow(i, tokens):
            return False
        self.cap[i] = self.pool.held.get(i, 0) * self.kv.block_size
        return True

    def release(self, i: int) -> int:
        """Free the blocks of sequence ``i``; returns how many it held."""
        self.cap[i] = 0
        return self.pool.release(i)

    # --- queues ------------------------------------------------------------------------
    def arrive(self, i: int) -> None:
        heapq.heappush(self.waiting, (self.key[i], i))

    def start(self, i: int, tokens: int) -> None:
        """Admit waiting sequence ``i``: take blocks for its whole prefill target (``tokens``)."""
        ok = self.grow(i, tokens)
        assert ok, "admitted without blocks"
        if self.admit_s[i] != self.admit_s[i]:
            self.admit_s[i] = self.now
        self.phase[i] = PREFILL
        bisect.insort(self.running, (self.key[i], i))

    def preempt(self, victim: int) -> None:
        """Take ``victim`` off the chip: recompute (drop its KV, redo prefill later) or swap (KV to host)."""
        self.running.remove((self.key[victim], victim))
        self.preemptions[victim] += 1
        self.preempted_now.append(victim)
        if self.kv.preemption == "swap":
            self.swap_bytes += self.release(victim) * self.block_bytes
            self.phase[victim] = SWAPPED
            heapq.heappush(self.swapped, (self.key[victim], victim))
        else:
            self.release(victim)
            self.cached[victim] = 0
            self.target[victim] = self.prompt[victim] + self.generated[victim]
            self.phase[victim] = WAITING
            heapq.heappush(self.waiting, (self.key[victim], victim))

    def swap_in(self, i: int) -> bool:
        """Bring swapped sequence ``i`` back if its blocks (and one more token) fit; False leaves it swapped."""
        # a decode needs its cached tokens and one more; a sequence preempted while prefilling needs its whole
        # prompt target again, as at admission (its next chunks are written into those blocks)
        need = self.cached[i] + 1 if self.phase_after_swap(i) == DECODE else self.target[i]
        if not self.grow(i, max(need, 1)):
            return False
        self.swap_bytes += self.pool.held.get(i, 0) * self.block_bytes
        self.phase[i] = self.phase_after_swap(i)
        bisect.insort(self.running, (self.key[i], i))
        return True

    def phase_after_swap(self, i: int) -> int:
        return DECODE if self.cached[i] >= self.target[i] else PREFILL

    # --- an iteration's outcome --------------------------------------------------------
    def prefilled(self, i: int, tokens: int, t_end: float) -> None:
        """``i`` cached ``tokens`` more prompt tokens in the iteration that ended at ``t_end``."""
        assert self.phase[i] == PREFILL, "a prefill chunk for a sequence that is not prefilling"
        c = self.cached[i] + tokens
        assert c <= self.target[i] <= self.cap[i], "prefill past its target or its blocks"
        self.cached[i] = c
        if c == self.target[i]:  # the whole prompt is cached: its last position yields the next token
            self.phase[i] = DECODE
            self.emit(i, t_end)

    def decoded(self, seqs: list[int], t_end: float) -> None:
        """Each of ``seqs`` (decoding) cached its last token and emitted the next one at ``t_end``."""
        cached, generated, out_len, off, ts, phase = (self.cached, self.generated, self.out_len, self.offset,
                                                      self.token_s, self.phase)
        for i in seqs:
            assert phase[i] == DECODE, "a decode step for a sequence whose prefill is not done"
            cached[i] += 1
            g = generated[i]
            slot = off[i] + g
            assert ts[slot] != ts[slot], "a token emitted twice"  # nan until written
            ts[slot] = t_end
            generated[i] = g + 1
            if g + 1 == out_len[i]:
                self.finish(i, t_end)

    def advance(self, i: int, tokens: int, t_end: float) -> None:
        """Decoding ``i`` cached its last token and ``tokens - 1`` accepted drafts, and emitted ``tokens`` tokens at
        ``t_end`` (a speculative step; ``tokens = 1`` is a plain decode step)."""
        assert self.phase[i] == DECODE, "a decode step for a sequence whose prefill is not done"
        assert 1 <= tokens <= self.out_len[i] - self.generated[i], "more tokens than the request has left"
        self.cached[i] += tokens
        assert self.cached[i] <= self.cap[i], "a speculative step past its lookahead blocks"
        for _ in range(tokens):
            self.emit(i, t_end)

    def emit(self, i: int, t: float) -> None:
        """Sequence ``i`` produces its next output token at ``t``."""
        g = self.generated[i]
        slot = self.offset[i] + g
        assert self.token_s[slot] != self.token_s[slot], "a token emitted twice"
        self.token_s[slot] = t
        if g == 0:
            self.first_s[i] = t
        self.generated[i] = g + 1
        if g + 1 == self.out_len[i]:
            self.finish(i, t)

    def finish(self, i: int, t: float) -> None:
        """``i`` emitted its last token at ``t``: it leaves the chip and frees its blocks."""
        self.finish_s[i] = t
        self.phase[i] = DONE
        self.running.remove((self.key[i], i))
        self.release(i)
        self.done += 1

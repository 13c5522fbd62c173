"""Iteration schedulers: which sequences run in the next iteration, and how many tokens each.

Each policy is a small class with one method, ``step(state) -> Batch``: the decoding
sequences (one token each), the speculating decodes (``k + 1`` positions each, with as many
KV slots reserved ahead: :mod:`workbench.serving.speculative`) and the prefill chunks
``(sequence, prompt tokens)``; it may admit, preempt or swap through
:class:`~workbench.serving.state.ServingState`.

- :class:`PrefillFirst`: continuous batching as vLLM's default scheduler (without chunked
  prefill) does it. Waiting prompts are admitted first, whole, in an iteration of prefills
  only, while running decodes wait; when no prompt can be admitted, every running
  sequence decodes one token. A decode that finds no free KV block preempts the running
  sequence scheduled last (the lowest priority or the latest arrival).
- :class:`ChunkedPrefill`: decodes first (one token each), then the unfinished prompts'
  next chunks, then swapped sequences, then new prompts, all under one token budget; a
  prompt longer than the budget left is cut into chunks (as in Sarathi-Serve and vLLM's
  chunked prefill), so decodes are never stalled by a long prompt.
- :class:`RequestLevel`: a batch of requests is formed when the chip is idle, with KV
  reserved for each one's whole prompt and output; it runs until its longest output is
  done, and nothing joins it meanwhile (request-level batching, the baseline Orca beats).
"""

from __future__ import annotations

import heapq

from workbench.serving.config import SchedulerConfig
from workbench.serving.state import DECODE, PREFILL, ServingState


class Batch:
    """One iteration's work: ``decodes`` (sequences, one token each), ``spec`` (speculating decodes, ``k + 1``
    positions each) and ``prefills`` ((sequence, tokens))."""

    __slots__ = ("decodes", "prefills", "spec")

    def __init__(self):
        self.decodes: list[int] = []
        self.prefills: list[tuple[int, int]] = []
        self.spec: list[int] = []

    def __bool__(self) -> bool:
        return bool(self.decodes or self.prefills or self.spec)


class _Budget:
    """What is left of one iteration's token budget and sequence cap."""

    def __init__(self, cfg: SchedulerConfig):
        self.tokens = cfg.max_num_batched_tokens
        self.seqs = cfg.max_num_seqs

    def take(self, tokens: int) -> bool:
        if tokens > self.tokens or self.seqs < 1:
            return False
        self.tokens -= tokens
        self.seqs -= 1
        return True


def _decodes(state: ServingState, budget: _Budget, batch: Batch) -> None:
    """Every running decode in scheduling order gets its positions (one, or ``k + 1`` while it speculates) and KV
    slots for them, preempting from the back; a speculating decode the budget cannot verify decodes plainly."""
    cached, cap, phase, width, out, spec = state.cached, state.cap, state.phase, state.width, batch.decodes, batch.spec
    room, seats = budget.tokens, budget.seqs
    for _, i in list(state.running):
        if phase[i] != DECODE:  # prefilling, or preempted while this batch was built
            continue
        w = width[i]
        if cached[i] + w > cap[i]:  # its next token (and lookahead) needs a new block
            while not state.grow(i, cached[i] + w):
                victim = state.running[-1][1]
                state.preempt(victim)
                if victim == i:
                    break
            if phase[i] != DECODE:
                continue
        if room < 1 or seats < 1:
            break
        if w > room:
            w = 1
        room -= w
        seats -= 1
        (out if w == 1 else spec).append(i)
    budget.tokens, budget.seqs = room, seats


def _swap_ins(state: ServingState, budget: _Budget, batch: Batch, chunked: bool) -> None:
    """Swapped sequences come back first (before new prompts) while blocks allow, unless one was just preempted."""
    if state.preempted_now:
        return
    while state.swapped:
        i = state.swapped[0][1]
        if budget.seqs < 1 or budget.tokens < 1 or not state.swap_in(i):
            return
        heapq.heappop(state.swapped)
        if state.phase[i] == DECODE:
            budget.take(1)
            batch.decodes.append(i)
        else:
            n = state.target[i] - state.cached[i]
            n = min(n, budget.tokens) if chunked else n
            if budget.take(n):
                batch.prefills.append((i, n))


class _Policy:
    def __init__(self, cfg: SchedulerConfig):
        self.cfg = cfg


class PrefillFirst(_Policy):
    """Continuous batching with whole prompts first (vLLM's default without chunked prefill)."""

    def step(self, state: ServingState) -> Batch:
        budget, batch = _Budget(self.cfg), Batch()
        if not state.swapped:
            while state.waiting and len(state.running) < self.cfg.max_num_seqs:
                i = state.waiting[0][1]
                need = state.target[i]
                if need > budget.tokens or budget.seqs < 1 or not state.pool.can_admit(need):
                    break
                heapq.heappop(state.waiting)
                state.start(i, need)
                budget.take(need)
                batch.prefills.append((i, need))
            if batch:
                return batch
        _decodes(state, budget, batch)
        if state.swapped:
            _swap_ins(state, budget, batch, chunked=False)
        return batch


class ChunkedPrefill(_Policy):
    """Continuous batching with chunked prefill: decodes first, prompts fill the rest of the budget."""

    def step(self, state: ServingState) -> Batch:
        budget, batch = _Budget(self.cfg), Batch()
        _decodes(state, budget, batch)
        if len(batch.decodes) + len(batch.spec) < len(state.running):  # some running sequence is still prefilling
            phase = state.phase
            for _, i in state.running:
                if phase[i] == PREFILL and budget.tokens > 0:
                    n = min(state.target[i] - state.cached[i], budget.tokens)
                    if budget.take(n):
                        batch.prefills.append((i, n))
        if state.swapped:
            _swap_ins(state, budget, batch, chunked=True)
        while state.waiting and len(state.running) < self.cfg.max_num_seqs and budget.tokens > 0:
            i = state.waiting[0][1]
            if budget.seqs < 1 or not state.pool.can_admit(state.target[i]):
                break
            heapq.heappop(state.waiting)
            state.start(i, state.target[i])
            n = min(state.target[i], budget.tokens)
            budget.take(n)
            batch.prefills.append((i, n))
        return batch


class RequestLevel(_Policy):
    """Request-level batching: a batch formed when idle runs to its longest output; nothing joins it.

    The batch takes up to ``max_num_seqs`` requests, with KV reserved for each one's prompt and
    whole output; its prompts are prefilled under the token budget (several iterations if they
    do not fit one), then every member decodes together; a member that finishes leaves its
    slot idle until the last one is done.
    """

    def step(self, state: ServingState) -> Batch:
        budget, batch = _Budget(self.cfg), Batch()
        if not state.running:
            while state.waiting and len(state.running) < self.cfg.max_num_seqs:
                i = state.waiting[0][1]
                if not state.pool.can_admit(state.prompt[i] + state.out_len[i]):
                    break
                heapq.heappop(state.waiting)
                state.start(i, state.prompt[i] + state.out_len[i])
        prefilling = [i for _, i in state.running if state.phase[i] == PREFILL]
        for i in prefilling:
            n = min(state.target[i] - state.cached[i], budget.tokens)
            if n <= 0 or not budget.take(n):
                break
            batch.prefills.append((i, n))
        if not prefilling:
            batch.decodes.extend(i for _, i in state.running)  # KV was reserved for the whole output
        return batch


def scheduler_for(cfg: SchedulerConfig):
    """The policy object ``cfg`` names."""
    if cfg.batching == "request":
        return RequestLevel(cfg)
    return ChunkedPrefill(cfg) if cfg.chunked_prefill else PrefillFirst(cfg)

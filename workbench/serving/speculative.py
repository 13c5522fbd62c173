"""Speculative decoding in the serving loop: the draft model's steps, the target's verification, the draws.

A speculating decode (Leviathan, Kalman and Matias, "Fast Inference from Transformers via Speculative
Decoding", ICML 2023; vLLM's draft-model speculation) does, in one iteration of the serving loop:

1. **draft**: the small draft model runs ``k`` decode steps one after another over the ``S`` speculating
   sequences, each step one token per sequence, priced as an iteration of ``S`` tokens of the draft
   (:class:`~workbench.serving.cost.IterationCost` of the draft model on the same GPU);
2. **verify**: the target model processes ``k + 1`` positions per speculating sequence (its last token and the
   ``k`` drafts) in the same iteration as the other sequences' work: those positions count in the token budget
   and in the target's price, each attending to the keys before it, and the LM head runs on every one of them;
3. **accept**: the target keeps the drafts up to the first it rejects, each accepted with the tenant's
   ``acceptance`` probability (independent draws: the count of leading successes of ``k`` Bernoulli trials,
   from a generator seeded by the run's seed), and adds its own next token: ``a + 1`` tokens come out at the
   iteration's end, with the same timestamp (capped by what the request has left to generate).

The KV cache keeps the accepted tokens (``a + 1`` more cached); the scheduler reserves ``k + 1`` lookahead slots
before it schedules a speculating decode. An adaptive guard (``min_acceptance``) stops a sequence speculating
when the acceptance it observed over its proposals so far falls below the bound, judged after each proposal
from its ``warmup``-th on: the observed acceptance is accepted drafts over judged drafts (the drafts up to and
including the first rejection; those after it are never judged), which estimates the per-token probability the
guard bound is stated in. (A sliding window of the last ``warmup`` proposals, judged again every step, stops
about one sequence in six whose acceptance is 0.8 by chance at k = 4, bound 0.5; the growing sample does not.)
"""

from __future__ import annotations

import numpy as np

from workbench.serving.cost import IterationCost
from workbench.serving.state import ServingState

SPEC_STREAM = 1 << 20  # the acceptance draws' spawn key: a child of the run's seed no workload stream uses


def acceptance_rng(seed: int) -> np.random.Generator:
    """The generator of a run's acceptance draws: a child of ``seed`` apart from the workload's streams."""
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(SPEC_STREAM,)))


def leading_successes(u: np.ndarray, acceptance: np.ndarray) -> np.ndarray:
    """Per row of uniforms ``u`` (``S x k``): how many leading draws fall under the row's ``acceptance``."""
    return (u < acceptance[:, None]).cumprod(axis=1).sum(axis=1)


def expected_accepted(acceptance: float, k: int) -> float:
    """Mean accepted drafts per step, ``a + a^2 + ... + a^k = (1 - a^(k+1)) / (1 - a) - 1`` (``k`` at ``a = 1``)."""
    if acceptance >= 1.0:
        return float(k)
    return (1.0 - acceptance ** (k + 1)) / (1.0 - acceptance) - 1.0


def draft_seconds(draft: IterationCost, k: int, seqs: int, context: int) -> float:
    """``k`` sequential decode steps of the draft model over ``seqs`` sequences holding ``context`` cached tokens in
    all (s): step ``j`` writes one token per sequence at position ``cached + j``, attending to ``cached + j + 1``
    keys."""
    total = 0.0
    for j in range(k):
        total += draft.seconds(seqs, float(context + seqs * (j + 1)), float(context + seqs * j), seqs=seqs)
    return total


def verify_terms(k: int, seqs: int, context: int) -> tuple[int, float]:
    """(tokens, keys) the target verifies for ``seqs`` speculating sequences with ``context`` cached tokens in all:
    ``k + 1`` positions each, the ``j``-th attending to ``cached + j + 1`` keys."""
    w = k + 1
    return w * seqs, float(w * context + seqs * w * (w + 1) // 2)


class Speculator:
    """A run's speculative decoding: the draft's price, the acceptance draws, the guard, and what it counted."""

    def __init__(self, run, state: ServingState, tenant: np.ndarray):
        spec = run.speculative
        self.k = spec.tokens
        self.draft = IterationCost.of(spec.draft, run.hardware, run.buckets.fusion, run.buckets.generic_slowdown,
                                      run.efficiency, run.cuda_graphs)
        self.rng = acceptance_rng(run.seed)
        self.acceptance = np.array([t.acceptance for t in run.tenants])[tenant]  # per request
        self.min_acceptance, self.warmup = spec.min_acceptance, spec.warmup
        n = state.n
        self.proposed, self.accepted, self.judged = [0] * n, [0] * n, [0] * n
        self.steps = [0] * n  # proposals made
        self.stopped = [False] * n
        state.width = [self.k + 1] * n  # every sequence speculates until the guard stops it

    def price(self, cached: list[int], seqs: list[int]) -> tuple[int, float, int, float]:
        """(verify tokens, their keys, cached tokens read, draft s) of the iteration's speculating ``seqs``."""
        context = sum(cached[i] for i in seqs)
        tokens, keys = verify_terms(self.k, len(seqs), context)
        return tokens, keys, context, draft_seconds(self.draft, self.k, len(seqs), context)

    def emit(self, state: ServingState, seqs: list[int], t_end: float) -> int:
        """Draw each sequence's accepted drafts, emit them and the target's token at ``t_end``; returns the tokens
        emitted."""
        k = self.k
        a = leading_successes(self.rng.random((len(seqs), k)), self.acceptance[seqs]).tolist()
        out = 0
        for i, got in zip(seqs, a, strict=True):
            judged = got + (got < k)
            self.proposed[i] += k
            self.accepted[i] += got
            self.judged[i] += judged
            self.steps[i] += 1
            n = min(got + 1, state.out_len[i] - state.generated[i])
            state.advance(i, n, t_end)
            out += n
            if self.steps[i] >= self.warmup and self.accepted[i] < self.min_acceptance * self.judged[i]:
                state.width[i] = 1  # the guard: this sequence decodes plainly from now on
                self.stopped[i] = True
        return out

    def columns(self) -> dict[str, np.ndarray]:
        """Per request: draft tokens proposed, accepted and judged, and whether the guard stopped it."""
        return {"spec_proposed": np.array(self.proposed, dtype=np.int64),
                "spec_accepted": np.array(self.accepted, dtype=np.int64),
                "spec_judged": np.array(self.judged, dtype=np.int64),
                "spec_stopped": np.array(self.stopped, dtype=bool)}

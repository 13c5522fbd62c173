"""Which compiled plan an iteration runs: its token count against the specialised sizes.

:class:`BucketState` is the run's mutable view of :class:`~workbench.serving.config.TokenBuckets`:
recompiles add sizes as the run goes. :meth:`BucketState.place` says, for an iteration of
``tokens`` tokens, how many rows its dense kernels are priced at, whether it runs the generic
fallback mapping, and any pause.
"""

from __future__ import annotations

import bisect

from workbench.serving.config import TokenBuckets

HIT, PADDED, FALLBACK, RECOMPILED = 0, 1, 2, 3


class BucketState:
    """The specialised sizes so far, and counts of what iterations met."""

    def __init__(self, cfg: TokenBuckets):
        self.cfg = cfg
        self.sizes = list(cfg.sizes)
        self.recompiles = 0
        self.counts = [0, 0, 0, 0]  # exact hit, padded, fallback, recompiled
        self.padded_tokens = 0

    def place(self, tokens: int) -> tuple[int, bool, float]:
        """(rows priced, generic fallback?, pause s) for an iteration of ``tokens`` tokens."""
        if not self.sizes and not self.cfg.sizes:
            self.counts[HIT] += 1
            return tokens, False, 0.0
        k = bisect.bisect_left(self.sizes, tokens)
        if k < len(self.sizes):
            size = self.sizes[k]
            self.counts[HIT if size == tokens else PADDED] += 1
            self.padded_tokens += size - tokens
            return size, False, 0.0
        if self.cfg.out_of_envelope == "recompile" and self.recompiles < self.cfg.recompile_limit:
            size = 1 << (tokens - 1).bit_length()  # the next power of two
            bisect.insort(self.sizes, size)
            self.recompiles += 1
            self.counts[RECOMPILED] += 1
            self.padded_tokens += size - tokens
            return size, False, self.cfg.recompile_pause_s
        self.counts[FALLBACK] += 1
        return tokens, True, 0.0

    def summary(self, iterations: int, tokens: int) -> dict:
        """Shares of iterations by outcome, padding as a share of tokens, recompiles."""
        return bucket_summary(len(self.sizes), self.counts, self.padded_tokens, iterations, tokens)


def bucket_summary(sizes: int, counts, padded_tokens: int, iterations: int, tokens: int) -> dict:
    """A run's plan outcomes: ``sizes`` specialised sizes at the end, ``counts`` of iterations by outcome (exact,
    padded, fallback, recompiled), ``padded_tokens`` of padding over ``tokens`` real ones."""
    n = max(iterations, 1)
    return {"sizes": sizes, "exact": counts[HIT] / n, "padded": counts[PADDED] / n,
            "fallback": counts[FALLBACK] / n, "recompiled": counts[RECOMPILED],
            "padding_share": padded_tokens / max(tokens + padded_tokens, 1)}

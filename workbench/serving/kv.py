"""The paged KV cache: a pool of fixed-size blocks, handed to sequences as their tokens need them.

A sequence of ``n`` cached tokens holds ``ceil(n / block_size)`` blocks (the last one
partly filled): memory is wasted only inside one block per sequence, not up to the
longest possible sequence (the point of paging, as vLLM's PagedAttention makes it).
"""

from __future__ import annotations

from workbench.serving.config import KVConfig


class BlockPool:
    """Free and held blocks; every change keeps ``0 <= used <= total``."""

    def __init__(self, cfg: KVConfig):
        self.cfg = cfg
        self.total = cfg.blocks
        self.used = 0
        self.watermark_blocks = int(cfg.watermark * cfg.blocks)
        self.held: dict[int, int] = {}  # sequence -> blocks it holds

    @property
    def free(self) -> int:
        """Blocks not held by any sequence."""
        return self.total - self.used

    def can_admit(self, tokens: int) -> bool:
        """Room for a new sequence of ``tokens`` tokens, leaving the watermark free."""
        return self.free - self.cfg.blocks_for(tokens) >= self.watermark_blocks

    def grow(self, seq: int, tokens: int) -> bool:
        """Make ``seq`` hold enough blocks for ``tokens`` tokens; False (nothing taken) if the pool is short."""
        have = self.held.get(seq, 0)
        need = self.cfg.blocks_for(tokens) - have
        if need <= 0:
            return True
        if need > self.free:
            return False
        self.held[seq] = have + need
        self.used += need
        return True

    def release(self, seq: int) -> int:
        """Free every block of ``seq``; returns how many it held."""
        n = self.held.pop(seq, 0)
        self.used -= n
        return n

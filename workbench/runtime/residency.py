"""HBM residency of model weights: an LRU cache over models, with reload costs.

A batch of model m can start only with m's weights in HBM. The run starts with the
models loaded in order while they fit. If m is not resident, the least recently used
models that no core is running are evicted until m fits, and the batch pays a reload
of ``weights_bytes / hbm_bandwidth`` seconds (pure HBM traffic, so it also counts as
memory-bound time for bandwidth contention). If the
models in use leave no room, m is loaded anyway and the overcommit is counted; idle
models are evicted as soon as batches finish until HBM fits again. A batch never
stalls for capacity: the model charges reloads, not waits.
"""

from __future__ import annotations

from collections import OrderedDict


class Residency:
    """Which models' weights sit in HBM; LRU eviction of idle models."""

    def __init__(self, weights_bytes: list[int], capacity_bytes: int, bandwidth_bytes_per_s: float):
        self.weights = weights_bytes
        self.capacity = capacity_bytes
        self.bandwidth = bandwidth_bytes_per_s
        self.resident: OrderedDict[int, None] = OrderedDict()  # LRU order, oldest first
        self.in_use = [0] * len(weights_bytes)
        self.used_bytes = 0
        self.loads = 0
        self.evictions = 0
        self.overcommits = 0
        for m, w in enumerate(weights_bytes):  # warm start: load in order while they fit
            if self.used_bytes + w <= capacity_bytes:
                self.resident[m] = None
                self.used_bytes += w

    def acquire(self, model: int) -> float:
        """A batch of ``model`` starts: the reload seconds it pays (0 when resident)."""
        self.in_use[model] += 1
        if model in self.resident:
            self.resident.move_to_end(model)
            return 0.0
        need = self.weights[model]
        self._evict_until(self.capacity - need)
        if self.used_bytes + need > self.capacity:
            self.overcommits += 1
        self.resident[model] = None
        self.used_bytes += need
        self.loads += 1
        return need / self.bandwidth

    def release(self, model: int) -> None:
        """A batch of ``model`` finished; an overcommit is paid back as soon as models go idle."""
        self.in_use[model] -= 1
        if self.used_bytes > self.capacity:
            self._evict_until(self.capacity)

    def _evict_until(self, budget: int) -> None:
        """Evict idle models, least recently used first, until at most ``budget`` bytes are resident."""
        for victim in [m for m in self.resident if self.in_use[m] == 0]:
            if self.used_bytes <= budget:
                break
            del self.resident[victim]
            self.used_bytes -= self.weights[victim]
            self.evictions += 1

"""HBM residency of model weights: an LRU cache over models, refilled over the host link.

A batch of model m can start only with m's weights in HBM. The run starts with the
models loaded in order while they fit. If m is not resident, the least recently used
models that no core is running are evicted until m fits, and m's weights are copied
back from host memory over the host link (PCIe, NVLink-C2C): ``weights_bytes / link``
seconds, the link being the slower side of the copy (:func:`link_terms`). While the copy
runs it writes HBM at the link's rate, so it draws ``link / hbm_bandwidth`` of the HBM
bandwidth (64 GB/s over 1.6 TB/s: 4 %), not all of it.

The host link is one DMA path: loads queue on it, first asked first served, so a load
asked for at ``now`` finishes at ``max(now, link_free_at) + bytes / link``. A model is
usable only once its load has finished: a batch of a model whose load another batch
started waits for what is left of it. What a batch waits for its weights (queueing on
the link, then copying; or the rest of another batch's copy) is its reload.

If the models in use leave no room, m is loaded anyway and the overcommit is counted;
idle models are evicted as soon as batches finish until HBM fits again. A batch never
stalls for capacity: the model charges reloads, not capacity waits.

Where the batch waits is the dispatch policy's (``[residency] dispatch``,
:class:`~workbench.config.ResidencyPolicy`). ``hold``, a naive runtime: the batch takes its
core and waits there (:meth:`Residency.acquire` at its start), so the core serves nothing
else for the whole load. ``load_then_dispatch``, a runtime whose copy runs on a DMA engine:
the dispatcher starts the load (:meth:`Residency.load`, same link queue, same eviction) and
leaves the batch queued. Each class of batches queued for a model holds it like a running
batch (:meth:`Residency.hold`), from the moment it asks until its batch starts (or its
requests time out), so neither a load in flight nor weights loaded for a batch still waiting
for a core are ever evicted. The batch is dispatched once the load is done, its wait for
weights counted in the queue. When no idle model can make room, the load goes ahead
overcommitted, as under ``hold``.
The copy's share of HBM bandwidth is charged only under ``hold``, where it is a phase of a
batch on a core; under ``load_then_dispatch`` it runs on no core and draws nothing.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

from workbench.hardware import Hardware


@dataclass(frozen=True, slots=True)
class Reload:
    """What one batch waits for its weights (s): queued behind other loads, then copying (or the rest of one)."""

    wait_s: float = 0.0  # HBM idle for this batch: the link is busy with another load, or another batch's copy runs
    copy_s: float = 0.0  # this batch's own copy over the link (0 when it waits on another's)

    @property
    def total_s(self) -> float:
        """Seconds the batch waited for weights (the trace's reload column)."""
        return self.wait_s + self.copy_s


NO_RELOAD = Reload()


def link_terms(hardware: Hardware) -> tuple[float, float]:
    """(bytes/s a weights copy moves, share of HBM bandwidth it draws): the slower of link and HBM, over HBM."""
    rate = min(hardware.host_link_bytes_per_s, hardware.hbm_bandwidth_bytes_per_s)
    return rate, rate / hardware.hbm_bandwidth_bytes_per_s


class Residency:
    """Which models' weights sit in HBM; LRU eviction of idle models; loads queued on one host link."""

    def __init__(self, weights_bytes: list[int], capacity_bytes: int, link_bytes_per_s: float):
        self.weights = weights_bytes
        self.capacity = capacity_bytes
        self.link = link_bytes_per_s  # the copy's rate: the slower of host link and HBM
        self.resident: OrderedDict[int, None] = OrderedDict()  # LRU order, oldest first
        self.in_use = [0] * len(weights_bytes)
        self.ready_at = [0.0] * len(weights_bytes)  # s: when each resident model's last load finished
        self.link_free_at = 0.0  # s: when the host link finishes the loads queued on it
        self.link_busy_s = 0.0  # s: total copy time on the link
        self.used_bytes = 0
        self.loads = 0
        self.evictions = 0
        self.overcommits = 0
        for m, w in enumerate(weights_bytes):  # warm start: load in order while they fit
            if self.used_bytes + w <= capacity_bytes:
                self.resident[m] = None
                self.used_bytes += w

    def acquire(self, model: int, now: float) -> Reload:
        """A batch of ``model`` asks for its weights at ``now``: what it waits (nothing when resident and loaded)."""
        self.in_use[model] += 1
        if model in self.resident:
            self.resident.move_to_end(model)
            ready = self.ready_at[model]
            return Reload(wait_s=ready - now) if ready > now else NO_RELOAD  # another batch's load in flight
        begin, copy = self._start_load(model, now)
        return Reload(wait_s=begin - now, copy_s=copy)

    def usable(self, model: int, now: float) -> bool:
        """Whether ``model``'s weights are in HBM at ``now`` (resident, its last load finished)."""
        return model in self.resident and self.ready_at[model] <= now

    def load(self, model: int, now: float) -> float:
        """``load_then_dispatch``: start loading ``model`` (not resident) for a batch that stays queued; when
        its weights will be in (s)."""
        begin, copy = self._start_load(model, now)
        return begin + copy

    def hold(self, model: int) -> None:
        """A queued batch waits for ``model``'s weights: they are never evicted while it waits."""
        self.in_use[model] += 1

    def unhold(self, model: int) -> None:
        """The waiting batch started (and acquired the weights itself): its hold ends, evicting nothing."""
        self.in_use[model] -= 1

    def _start_load(self, model: int, now: float) -> tuple[float, float]:
        """Make room (LRU, idle models only), queue the copy on the link: (when it begins, its seconds)."""
        need = self.weights[model]
        self._evict_until(self.capacity - need)
        if self.used_bytes + need > self.capacity:
            self.overcommits += 1
        self.resident[model] = None
        self.used_bytes += need
        self.loads += 1
        copy = need / self.link
        begin = self.link_free_at if self.link_free_at > now else now  # one DMA path: loads queue on it
        self.link_free_at = self.ready_at[model] = begin + copy
        self.link_busy_s += copy
        return begin, copy

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

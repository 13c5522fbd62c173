"""Compiled plans: one specialised mapping per shape bucket, and the plan as a service model.

A :class:`Plan` holds, per bucket, the fused kernels, their tilings (chosen at the
bucket's ``opt`` and the compile batch size), the cores it is statically placed on and
its predicted latency per batch size. As a service model for the runtime it buckets
every live request (hits, and misses through the out-of-envelope policy, see
:mod:`workbench.compiler.envelope`) and times each batch with the roofline cost model
at the batch's real shape: the largest request in the batch, rounded up to
``granule``. The prediction is the cost at ``opt`` in isolation; the observation adds
the real shape, HBM contention from the other cores, and optional kernel-time noise,
so prediction error emerges where the compiler's assumptions stop holding.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from workbench import aot
from workbench.compiler import envelope as env
from workbench.compiler.cost import ATTENTION, KernelCost, Tiling, best_cost, cost_kernel
from workbench.compiler.fusion import Kernel
from workbench.errors import ConfigError, check, check_non_negative, check_one_of
from workbench.graph import Graph
from workbench.hardware import Hardware
from workbench.runtime.assembly import distinct
from workbench.runtime.service import Classification
from workbench.runtime.workload import Requests

if TYPE_CHECKING:
    from workbench.compiler.cost_book import CostBook
    from workbench.compiler.cost_flat import Flat

GENERIC_TILING = Tiling(64, "streamed")


@dataclass(frozen=True, slots=True)
class CompileOptions:
    """Everything ``compile_plan`` takes besides the graph, the hardware and the envelope."""

    fusion: str = "elementwise"  # none | elementwise | aggressive
    max_depth: int = 32  # ops per fused kernel
    attention: str = "flash"  # flash (tiled, online softmax) | naive (whole score matrices on chip)
    out_of_envelope: str = "fallback"  # reject | pad | recompile | fallback
    recompile_limit: int = 8  # torch.compile's default recompile limit
    recompile_pause_s: float = 0.25  # s, a compile on first sight of a shape
    generic_slowdown: float = 1.5  # fallback mapping vs its roofline: no shape-specific tactics
    max_batch: int = 8  # the predicted-latency table covers batch sizes 1..max_batch
    compile_batch: int = 8  # batch size the layout is tuned for
    noise_cv: float = 0.0  # lognormal jitter of observed batch times (cv)
    granule: int = 8  # live shapes are rounded up to a multiple of this before costing

    def __post_init__(self) -> None:
        check_one_of("fusion", self.fusion, ("none", "elementwise", "aggressive"))
        check_one_of("out_of_envelope", self.out_of_envelope, env.POLICIES)
        check_one_of("attention", self.attention, ATTENTION)
        for k in ("max_depth", "max_batch", "compile_batch", "granule"):
            v = getattr(self, k)
            check(isinstance(v, int) and v >= 1, k, v, "must be an integer >= 1")
        check(isinstance(self.recompile_limit, int) and self.recompile_limit >= 0, "recompile_limit",
              self.recompile_limit, "must be an integer >= 0")
        check_non_negative("recompile_pause_s", self.recompile_pause_s)
        check(self.generic_slowdown >= 1.0, "generic_slowdown", self.generic_slowdown, "must be >= 1")
        check_non_negative("noise_cv", self.noise_cv)


@dataclass(frozen=True, slots=True)
class Mapping:
    """Kernels and their tilings: what a bucket (or the generic fallback) runs."""

    kernels: tuple[Kernel, ...]
    tilings: tuple[Tiling, ...]  # at the compile shape; a specialised mapping re-tiles per (batch, shape)
    specialised: bool = True  # False: the generic fallback keeps its one tiling at every shape


@dataclass(frozen=True, slots=True)
class CompiledBucket:
    """One bucket's specialised mapping, static placement and predicted latencies."""

    bucket: env.Bucket
    mapping: Mapping
    cores: tuple[int, ...]
    predicted_s: tuple[float, ...]  # isolated latency at opt, batch sizes 1..max_batch
    origin: str = "envelope"  # envelope | recompile


@dataclass(frozen=True)
class Plan:
    """A compiled plan: buckets, the generic fallback, options. Also a runtime service model."""

    graph: Graph
    hardware: Hardware
    options: CompileOptions
    dim: str  # the per-request symbolic dim the buckets range over
    buckets: tuple[CompiledBucket, ...]
    generic: Mapping
    calibration: object = None
    passes: tuple[tuple[str, object], ...] = ()  # (pass, artefact) when compiled with trace=True
    _memo: dict = field(default_factory=dict, compare=False, repr=False)  # cost memo, not state

    # --- costing -----------------------------------------------------------------------
    # memo keys hold id(mapping); the memo also holds the mapping itself, so that id is never reused

    def kernel_costs(self, mapping: Mapping, batch: int, value: int) -> tuple[KernelCost, ...]:
        """Every kernel of ``mapping`` costed at (batch, value), tiled for that shape if specialised."""
        key = (id(mapping), batch, value)
        if key not in self._memo:
            dims = {"batch": batch, self.dim: value}
            g, hw, cal, att = self.graph, self.hardware, self.calibration, self.options.attention
            if mapping.specialised:
                costs = tuple(best_cost(g, k, dims, hw, cal, att) for k in mapping.kernels)
            else:
                costs = tuple(cost_kernel(g, k, dims, hw, t, cal, att)
                              for k, t in zip(mapping.kernels, mapping.tilings, strict=True))
            self._memo[key] = costs
            self._memo[("mapping", id(mapping))] = mapping
        return self._memo[key]

    def phases(self, mapping: Mapping, batch: int, value: int) -> tuple[tuple[float, float], ...]:
        """The batch as its kernels in order: (isolated seconds, HBM bandwidth demand 0..1) each.

        Computed by the compiled cost model (:mod:`workbench.compiler.cost_table`, equal bit
        for bit to :meth:`kernel_costs`) when it can run (built ahead of time, or numba
        installed: :mod:`workbench.aot`), else by :meth:`kernel_costs`.
        """
        key = ("phases", id(mapping), batch, value)  # memoised: the runtime asks once per batch shape and run
        if key not in self._memo:
            flat = self._flat(mapping)
            if flat is None:
                costs = self.kernel_costs(mapping, batch, value)
                self._memo[key] = tuple((c.seconds, c.demand) for c in costs)
                self._memo[("spill",) + key[1:]] = sum(c.spill_bytes for c in costs)
            else:
                self._memo[key], self._memo[("spill",) + key[1:]] = _compiled_phases(self, flat, batch, value)
        return self._memo[key]

    def spill_bytes(self, mapping: Mapping, batch: int, value: int) -> float:
        """Raw bytes a batch's kernels spill (written out and read back), as ``kernel_costs`` sums them."""
        key = ("spill", id(mapping), batch, value)  # also written by the compiled loop (a cost book's commit)
        if key not in self._memo:
            self.phases(mapping, batch, value)
        return self._memo[key]

    def mapping_time(self, mapping: Mapping, batch: int, value: int) -> tuple[float, float]:
        """(seconds, mean bandwidth demand) of a batch through ``mapping``, alone on the chip."""
        key = ("time", id(mapping), batch, value)
        if key not in self._memo:
            phases = self.phases(mapping, batch, value)
            total = sum(s for s, _ in phases)
            moved = sum(u * s for s, u in phases)
            self._memo[key] = total, (moved / total if total > 0 else 0.0)
        return self._memo[key]

    def _flat(self, mapping: Mapping):
        """The mapping's kernels flattened for the compiled cost model (None where it cannot run)."""
        key = ("flat", id(mapping))
        if key not in self._memo:
            flat = None
            if aot.available():
                from workbench.compiler.cost_flat import flatten

                flat = flatten(self.graph, mapping.kernels, mapping.tilings, self.dim, self.options.attention,
                               self.calibration, mapping.specialised)
            self._memo[key] = flat
            self._memo[("mapping", id(mapping))] = mapping
        return self._memo[key]

    def predict(self, bucket: int, batch: int) -> float:
        """The compiler's predicted latency of a batch in a bucket (isolated, at opt)."""
        b = self.buckets[bucket]
        if batch <= len(b.predicted_s):
            return b.predicted_s[batch - 1]
        return self.mapping_time(b.mapping, batch, b.bucket.opt)[0]

    # --- the service-model protocol ----------------------------------------------------

    def classify(self, requests: Requests) -> Classification:
        """Bucket every request; misses go through the out-of-envelope policy."""
        return _classify(self, requests)

    def draw_factors(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """Unit-mean lognormal kernel-time noise (ones when ``noise_cv`` is 0)."""
        cv = self.options.noise_cv
        if cv == 0:
            return np.ones(n)
        s2 = math.log1p(cv**2)
        return rng.lognormal(-s2 / 2, math.sqrt(s2), n)


@dataclass
class PlanRun:
    """The buckets one run ends up with: the plan's, plus those its recompiles add."""

    plan: Plan
    extra: list[CompiledBucket]

    @property
    def all(self) -> list[CompiledBucket]:
        return list(self.plan.buckets) + self.extra

    def ids(self) -> tuple[int, int, int]:
        """First ids of the pad buckets, the recompiled buckets, and the generic bucket."""
        k = len(self.plan.buckets)
        return k, 2 * k, 2 * k + len(self.extra)

    def names(self) -> tuple[str, ...]:
        own = [b.bucket.name for b in self.plan.buckets]
        return tuple(own + [f"pad->{n}" for n in own] + [f"{b.bucket.name}*" for b in self.extra] + ["generic"])

    def kind(self, bucket: int) -> str:
        """envelope | pad | recompile | generic."""
        pad0, rec0, gen = self.ids()
        return "envelope" if bucket < pad0 else "pad" if bucket < rec0 else "recompile" if bucket < gen else "generic"

    def mapping(self, bucket: int) -> tuple[Mapping, int]:
        """The mapping a bucket id runs, and the smallest value it runs at."""
        plan, (pad0, rec0, gen) = self.plan, self.ids()
        if bucket < pad0:
            return plan.buckets[bucket].mapping, 1
        if bucket < rec0:
            b = plan.buckets[bucket - pad0]
            return b.mapping, b.bucket.min
        if bucket < gen:
            return self.extra[bucket - rec0].mapping, 1
        return plan.generic, 1

    def batch_profile(self, bucket: int, size: int, value: int) -> dict[str, float]:
        """Launches, spilled bytes, the compiler's prediction and the isolated time at the real shape (no noise)."""
        mapping, floor = self.mapping(bucket)
        shape = max(value, floor)
        kind = self.kind(bucket)
        if kind == "envelope":
            predicted = self.plan.predict(bucket, size)
        elif kind == "recompile":
            b = self.extra[bucket - self.ids()[1]]
            predicted = b.predicted_s[size - 1] if size <= len(b.predicted_s) else float("nan")
        else:
            predicted = float("nan")  # no compile-time prediction for padded or generic runs
        return {"launches": float(len(mapping.kernels)), "spill_bytes": self.plan.spill_bytes(mapping, size, shape),
                "predicted_s": predicted, "isolated_s": self.cost(bucket, size, value)[0]}

    def cost_book(self, class_bucket: list[int], class_scale: list[float], keyval: np.ndarray) -> CostBook | None:
        """The tables the compiled event loop costs this run's batches from, per batch class (its bucket and
        service scale) and shape key (:class:`~workbench.compiler.cost_book.CostBook`); None without the
        compiled cost model."""
        from workbench.compiler.cost_book import CostBook

        try:
            return CostBook(self, class_bucket, class_scale, keyval)
        except LookupError:  # the plan costs in Python (numba switched off for it)
            return None

    def _timed(self, bucket: int, value: int) -> tuple[Mapping, int, float]:
        """What a batch of a bucket id runs: the mapping, the shape it is timed at, a slowdown."""
        plan, (pad0, rec0, gen) = self.plan, self.ids()
        if bucket < pad0:
            return plan.buckets[bucket].mapping, value, 1.0
        if bucket < rec0:  # padded up to the target bucket's min
            b = plan.buckets[bucket - pad0]
            return b.mapping, max(value, b.bucket.min), 1.0
        if bucket < gen:
            return self.extra[bucket - rec0].mapping, value, 1.0
        return plan.generic, value, plan.options.generic_slowdown

    def phases(self, bucket: int, size: int, value: int) -> tuple[tuple[float, float], ...]:
        """A batch's kernel phases, (isolated seconds, bandwidth demand) each: the runtime's phase callable.

        The generic fallback runs the same bytes ``generic_slowdown`` times slower, so its
        demand is divided by the slowdown.
        """
        mapping, v, slow = self._timed(bucket, value)
        key = ("run phases", id(mapping), size, v, slow)
        memo = self.plan._memo
        if key not in memo:
            memo[key] = tuple((s * slow, u / slow) for s, u in self.plan.phases(mapping, size, v))
        return memo[key]

    def cost(self, bucket: int, size: int, value: int) -> tuple[float, float, float]:
        """(seconds, mean bandwidth demand, fallback seconds) of a batch: the runtime's cost callable."""
        plan, (pad0, rec0, gen) = self.plan, self.ids()
        mapping, v, slow = self._timed(bucket, value)
        t, u = plan.mapping_time(mapping, size, v)
        t, u = t * slow, u / slow
        if pad0 <= bucket < rec0:  # the padding is waste
            return t, u, t - plan.mapping_time(mapping, size, value)[0]
        if bucket >= gen:
            specialised = plan.mapping_time(plan.buckets[-1].mapping, size, value)[0]
            return t, u, max(t - specialised, 0.0)
        return t, u, 0.0


def _compiled_phases(plan: Plan, flat: Flat, batch: int, value: int,
                     path: str = "auto") -> tuple[tuple[tuple[float, float], ...], float]:
    """(seconds, demand) per kernel from the compiled cost model (demand as ``KernelCost.demand``), and the spill;
    ``path`` picks its build (:func:`workbench.aot.kernel`)."""
    from workbench.compiler.cost_flat import TILES, scratch

    hw = plan.hardware
    n = len(flat.ki)
    out = np.empty((n, 3))
    aot.kernel("kernel_costs", path)(*flat, 0, n, batch, value, plan.options.attention == "naive",
                                     hw.sram_bytes_per_core, hw.hbm_bandwidth_bytes_per_s, hw.peak_flops_per_core,
                                     hw.launch_s, hw.mma_rows, TILES, *scratch(flat), out)
    rows = out.tolist()
    return tuple((s, min(m / s, 1.0) if s > 0 else 0.0) for s, m, _ in rows), sum(x for _, _, x in rows)


def _classify(plan: Plan, requests: Requests) -> Classification:
    from workbench.compiler.pipeline import compile_bucket  # the pipeline imports this module

    if plan.dim not in requests.shapes or (requests.shapes[plan.dim] <= 0).any():
        raise ConfigError(f"streams.shapes.{plan.dim}", None,
                          f"every stream must give the {plan.graph.name} dim {plan.dim!r}")
    g = plan.options.granule
    values = requests.shapes[plan.dim]
    keys = (-(-values // g) * g).astype(np.int32)  # shapes <= MAX_SHAPE (2**24): half the memory of int64
    bounds = [b.bucket for b in plan.buckets]
    mins = np.array([b.min for b in bounds])
    maxs = np.array([b.max for b in bounds])
    idx = np.searchsorted(maxs, values, side="left")
    hit = (idx < len(bounds)) & (values >= mins[np.minimum(idx, len(bounds) - 1)])
    bucket = np.where(hit, idx, -1).astype(np.int32)
    kind = np.where(hit, env.HIT, env.REJECTED).astype(np.int8)
    reason = np.full(len(values), -1, dtype=np.int16)
    extra_s = None
    run = PlanRun(plan, [])
    policy = plan.options.out_of_envelope
    misses = np.flatnonzero(~hit)
    missed, which = distinct(values[misses])  # through a dense table when the shapes are few (no sort)
    reasons, codes = env.miss_reasons(tuple(bounds), missed)  # named by bound, like guard failures; first met first
    reason[misses] = codes[which] if len(codes) else -1
    if policy == "pad":
        above = idx[misses] < len(bounds)  # a bucket with a larger max exists: pad up to it
        bucket[misses[above]] = len(bounds) + idx[misses[above]]
        kind[misses[above]] = env.PADDED
    elif policy == "fallback":
        bucket[misses] = -2  # the generic bucket, numbered once recompiles are known (none here)
        kind[misses] = env.FALLBACK
    elif policy == "recompile":
        extra_s = np.zeros(len(values))
        for i in misses.tolist():
            v = int(values[i])
            j = env.lookup(tuple(b.bucket for b in run.extra), v)
            if j >= 0:
                bucket[i], kind[i] = 2 * len(bounds) + j, env.HIT
            elif len(run.extra) < plan.options.recompile_limit:
                new = env.recompiled_bucket(tuple(b.bucket for b in run.all), v)
                run.extra.append(compile_bucket(plan, new, len(run.extra)))
                bucket[i], kind[i] = 2 * len(bounds) + len(run.extra) - 1, env.RECOMPILED
                extra_s[i] = plan.options.recompile_pause_s
            else:
                bucket[i], kind[i] = -2, env.FALLBACK
                limit = f"{plan.dim}: recompile limit ({plan.options.recompile_limit}) reached"
                if limit not in reasons:
                    reasons.append(limit)
                reason[i] = reasons.index(limit)
    generic = run.ids()[2]
    bucket[bucket == -2] = generic
    cores = tuple(b.cores for b in plan.buckets) + tuple(b.cores for b in plan.buckets) \
        + tuple(b.cores for b in run.extra) + (tuple(range(plan.hardware.cores)),)
    return Classification(bucket=bucket, bucket_names=run.names(), cost=run.cost, phases=run.phases, shape_key=keys,
                          extra_s=extra_s, bucket_cores=cores,
                          labels={"mapping": kind, "miss_reason": reason}, info={"reasons": tuple(reasons), "run": run})

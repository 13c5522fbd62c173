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

A run's side of the plan lives here too, since the plan's ``classify`` makes it: the
buckets one run ends up with (:class:`PlanRun`, recompiles included: :func:`compile_bucket`,
the compile's own passes for one new bucket) and their costs as the compiled loop's tables
(:class:`CostBook`, laid out as :mod:`workbench.compiler.cost_book` says).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from workbench import aot
from workbench.compiler import envelope as env
from workbench.compiler.cost import KernelCost, best_cost, choose_layout, cost_kernel
from workbench.compiler.cost_book import BK_FLOOR, BK_KIND, BK_MAP, BK_REF, KIND_GENERIC, KIND_PAD, concatenate
from workbench.compiler.cost_flat import TILES, Flat
from workbench.compiler.mapping import CompiledBucket, CompileOptions, Mapping
from workbench.errors import ConfigError
from workbench.graph import Graph
from workbench.hardware import Hardware
from workbench.service_model import Classification, Requests
from workbench.unique import distinct


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
        service scale) and shape key (:class:`~workbench.compiler.plan.CostBook`); None without the
        compiled cost model."""
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


class CostBook:
    """The tables (``tables``, a tuple the compiled loop unpacks) and the mappings they flatten, in order."""

    def __init__(self, run: PlanRun, class_bucket: list[int], class_scale: list[float], keyval: np.ndarray):
        plan = run.plan
        pad0, rec0, gen = run.ids()
        self.plan, self.mappings = plan, []
        index: dict[int, int] = {}
        flats: list[Flat] = []

        def add(mapping: Mapping) -> int:
            if id(mapping) not in index:
                flat = plan._flat(mapping)
                if flat is None:
                    raise LookupError("no compiled cost model")
                index[id(mapping)] = len(flats)
                flats.append(flat)
                self.mappings.append(mapping)
            return index[id(mapping)]

        bk = np.zeros((gen + 1, 4), np.int64)
        slow = np.ones(gen + 1)
        for b in sorted(set(class_bucket)):
            mapping, v, s = run._timed(b, 0)  # the mapping a bucket id runs and its slowdown
            bk[b, BK_MAP] = add(mapping)
            slow[b] = s
            if pad0 <= b < rec0:
                bk[b, BK_FLOOR], bk[b, BK_KIND] = v, KIND_PAD  # max(0, min) is the bucket's min
            elif b >= gen:
                bk[b, BK_KIND], bk[b, BK_REF] = KIND_GENERIC, add(plan.buckets[-1].mapping)
        kernels = [len(f.ki) for f in flats]
        mk = np.zeros((len(flats), 2), np.int64)
        mk[:, 1] = np.cumsum(kernels)
        mk[1:, 0] = mk[:-1, 1]
        hw = plan.hardware
        hwf = np.array([hw.hbm_bandwidth_bytes_per_s, hw.peak_flops_per_core, hw.launch_s], np.float64)
        hwi = np.array([hw.mma_rows, plan.options.attention == "naive", hw.sram_bytes_per_core], np.int64)
        width = max([1] + [int((f.ki[:, 5] - f.ki[:, 4]).max(initial=1)) for f in flats]
                    + [int((f.ki[:, 1] - f.ki[:, 0]).max(initial=1)) for f in flats])
        self.max_kernels = max(kernels, default=1)
        self.tables = (*concatenate(flats), mk, bk, slow, np.array(class_bucket, np.int64),
                       np.array(class_scale, np.float64), keyval.astype(np.int64), hwf, hwi, TILES,
                       np.zeros((2, 4), np.int64), np.zeros((6, width)), np.zeros((2, self.max_kernels, 4)))

    def commit(self, reci: np.ndarray, recf: np.ndarray, n: int) -> None:
        """Write the loop's first ``n`` evaluations into the plan's memo, as ``Plan.mapping_time`` and
        ``Plan.spill_bytes`` keep them: ``reci`` rows (mapping, batch, value), ``recf`` rows (s, demand, bytes)."""
        memo, ids = self.plan._memo, [id(m) for m in self.mappings]
        for (j, batch, value), (total, demand, spill) in zip(reci[:, :n].T.tolist(), recf[:, :n].T.tolist(),
                                                              strict=True):
            memo[("time", ids[j], batch, value)] = total, demand
            memo[("spill", ids[j], batch, value)] = spill


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


def _mapping(graph: Graph, kernels, hw: Hardware, opts: CompileOptions, dim: str, value: int,
             calibration) -> Mapping:
    dims = {"batch": opts.compile_batch, dim: value}
    return Mapping(kernels, choose_layout(graph, kernels, dims, hw, calibration, opts.attention))


def compile_bucket(plan: Plan, bucket: env.Bucket, index: int) -> CompiledBucket:
    """A recompile: the same passes for one new bucket, placed round-robin over the cores."""
    kernels = plan.buckets[0].mapping.kernels
    m = _mapping(plan.graph, kernels, plan.hardware, plan.options, plan.dim, bucket.opt, plan.calibration)
    predicted = tuple(plan.mapping_time(m, s, bucket.opt)[0] for s in range(1, plan.options.max_batch + 1))
    return CompiledBucket(bucket, m, (index % plan.hardware.cores,), predicted, origin="recompile")

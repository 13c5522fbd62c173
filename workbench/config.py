"""Configuration dataclasses for a simulated workload slice, with their invariants.

Everything the runtime needs is here as frozen dataclasses, with units in the field
names. Each checks its own ranges in ``__post_init__`` and raises :class:`ConfigError`
naming the field and the value, so a notebook that builds a config in Python gets the
same message as a scenario file (see :mod:`workbench.scenario`, which adds the file
name and the section to the key).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from workbench.errors import check as _check
from workbench.errors import check_one_of as _one_of
from workbench.hardware import Hardware
from workbench.limits import (
    MAX_BATCH,
    MAX_BUCKETS,
    MAX_CORES,
    MAX_DIMS,
    MAX_LIST,
    MAX_MODELS,
    MAX_RECOMPILES,
    MAX_SHAPE,
    MAX_STREAMS,
    MAX_TIME_S,
    PRIORITY,
    RATE,
    SEED,
    check_count,
    check_int_range,
    check_range,
    check_requests,
)

# --- workload -------------------------------------------------------------------------

ARRIVAL_PROCESSES = ("poisson", "onoff", "trace")
SHAPE_DISTS = ("fixed", "categorical", "lognormal")


@dataclass(frozen=True, slots=True)
class Arrivals:
    """An arrival process.

    ``poisson``: rate ``rate`` (1/s). ``onoff``: a two-state Markov-modulated Poisson
    process (MMPP-2) that alternates exponentially long on and off periods with rates
    ``rate_on`` and ``rate_off``. ``trace``: replay of timestamps (s) read from ``file``,
    scaled by ``time_scale`` and looped end to end if the run needs more arrivals.
    """

    process: str = "poisson"
    rate: float = 1.0  # 1/s, poisson
    rate_on: float = 0.0  # 1/s, onoff
    rate_off: float = 0.0  # 1/s, onoff
    mean_on_s: float = 1.0  # s, onoff
    mean_off_s: float = 1.0  # s, onoff
    file: str = ""  # trace: path, resolved against the scenario's folder
    time_scale: float = 1.0  # trace: multiply timestamps by this
    timestamps: tuple[float, ...] = ()  # trace: filled by the loader from ``file``

    def __post_init__(self) -> None:
        _one_of("process", self.process, ARRIVAL_PROCESSES)
        if self.process == "poisson":
            check_range("rate", self.rate, *RATE, "1/s")
        elif self.process == "onoff":
            check_range("rate_on", self.rate_on, *RATE, "1/s")
            check_range("rate_off", self.rate_off, 0.0, RATE[1], "1/s")
            check_range("mean_on_s", self.mean_on_s, 1e-6, MAX_TIME_S, "s")
            check_range("mean_off_s", self.mean_off_s, 1e-6, MAX_TIME_S, "s")
            on, off = self.rate_on * self.mean_on_s, self.rate_off * self.mean_off_s  # arrivals per period
            _check(max(on, off) <= 1e6, "rate_on", self.rate_on, "a mean on or off period may carry at most 1e6 "
                   "arrivals (rate x mean period)")
            _check(on + off >= 0.01, "rate_on", self.rate_on, "an on/off cycle must carry at least 0.01 arrivals "
                   "on average (rate_on x mean_on_s + rate_off x mean_off_s)")
        else:
            check_range("time_scale", self.time_scale, 1e-9, 1e9)
            _check(len(self.timestamps) >= 2, "file", self.file, "a trace needs at least 2 timestamps")
            span = (self.timestamps[-1] - self.timestamps[0]) * self.time_scale
            _check(0 < span <= MAX_TIME_S, "file", self.file,
                   f"the scaled timestamps must span more than 0 and at most {MAX_TIME_S:g} s")
            rate = (len(self.timestamps) - 1) / span
            _check(RATE[0] <= rate <= RATE[1], "file", self.file,
                   f"the trace's mean rate ({rate:.3g}/s) must be in [{RATE[0]:g}, {RATE[1]:g}] 1/s")

    @property
    def mean_rate(self) -> float:
        """Long-run arrival rate (1/s)."""
        if self.process == "poisson":
            return self.rate
        if self.process == "onoff":
            on, off = self.mean_on_s, self.mean_off_s
            return (self.rate_on * on + self.rate_off * off) / (on + off)
        span = (self.timestamps[-1] - self.timestamps[0]) * self.time_scale
        return (len(self.timestamps) - 1) / span if span > 0 else math.inf


@dataclass(frozen=True, slots=True)
class Drift:
    """Parameters of a shape distribution moving over time.

    Between ``start_s`` and ``end_s`` each parameter in ``to`` moves linearly from its
    base value to the given one; ``start_s == end_s`` is a step at that time.
    """

    to: dict[str, float]
    start_s: float = 0.0  # s
    end_s: float = 0.0  # s

    def __post_init__(self) -> None:
        _check(bool(self.to), "drift", self.to, "needs at least one parameter to move")
        check_range("start_s", self.start_s, 0.0, MAX_TIME_S, "s")
        check_range("end_s", self.end_s, 0.0, MAX_TIME_S, "s")
        _check(self.end_s >= self.start_s, "end_s", self.end_s, "must be >= start_s")


SIGMA_MAX = 5.0  # of log(x): wider draws only hit the MAX_SHAPE clip


def _check_probs(key: str, probs: tuple[float, ...], n: int) -> None:
    _check(len(probs) == n, key, probs, "needs one per value")
    for p in probs:
        check_range(key, p, 0.0, 1e12)
    _check(sum(probs) > 0, key, probs, "must have a positive sum")


@dataclass(frozen=True, slots=True)
class ShapeDist:
    """Distribution of one symbolic dim (an integer >= 1): fixed, categorical, lognormal."""

    dist: str = "fixed"
    value: float = 1.0  # fixed
    values: tuple[float, ...] = ()  # categorical
    probs: tuple[float, ...] = ()  # categorical; empty = uniform
    median: float = 1.0  # lognormal
    sigma: float = 0.0  # lognormal, of log(x)
    drift: Drift | None = None

    def __post_init__(self) -> None:
        _one_of("dist", self.dist, SHAPE_DISTS)
        if self.dist == "fixed":
            check_range("value", self.value, 1, MAX_SHAPE)
        elif self.dist == "categorical":
            _check(len(self.values) > 0, "values", self.values, "must not be empty")
            check_count("values", self.values, MAX_LIST)
            for v in self.values:
                check_range("values", v, 1, MAX_SHAPE)
            if self.probs:
                _check_probs("probs", self.probs, len(self.values))
        else:
            check_range("median", self.median, 1, MAX_SHAPE)
            check_range("sigma", self.sigma, 0.0, SIGMA_MAX)
        if self.drift is not None:
            movable = {"fixed": ("value",), "categorical": ("probs",), "lognormal": ("median", "sigma")}
            for k, v in self.drift.to.items():
                _check(k in movable[self.dist], f"drift.{k}", v,
                       f"a {self.dist} distribution can move {', '.join(movable[self.dist])}")
                if k == "probs":
                    _check_probs("drift.probs", v, len(self.values))
                elif k == "sigma":
                    check_range("drift.sigma", v, 0.0, SIGMA_MAX)
                else:
                    check_range(f"drift.{k}", v, 1, MAX_SHAPE)


@dataclass(frozen=True, slots=True)
class Stream:
    """A tenant: an arrival process, a priority (lower first), a weight, shapes, a model."""

    name: str
    arrivals: Arrivals = field(default_factory=Arrivals)
    priority: int = 0
    weight: float = 1.0
    shapes: dict[str, ShapeDist] = field(default_factory=dict)
    model: str = ""  # name of a resident model; "" = the scenario's only model
    pin: tuple[int, ...] = ()  # cores for `pinned` placement; () = core (index % cores)

    def __post_init__(self) -> None:
        _check(bool(self.name), "name", self.name, "must not be empty")
        check_range("weight", self.weight, 1e-6, 1e6)
        check_int_range("priority", self.priority, *PRIORITY)
        check_count("shapes", self.shapes, MAX_DIMS)
        check_count("pin", self.pin, MAX_LIST)
        for c in self.pin:
            check_int_range("pin", c, 0, MAX_CORES - 1)


# --- service and residency ------------------------------------------------------------

SERVICE_LAWS = ("exponential", "deterministic", "lognormal")


@dataclass(frozen=True, slots=True)
class Service:
    """An abstract service law: batch time = (base_s + per_item_s * size) * X, E[X] = 1."""

    law: str = "exponential"
    base_s: float = 1.0  # s per batch
    per_item_s: float = 0.0  # s per request in the batch
    cv: float = 1.0  # coefficient of variation of X, lognormal only
    memory_share: float = 0.0  # share of the service time that is HBM-bandwidth-bound

    def __post_init__(self) -> None:
        _one_of("law", self.law, SERVICE_LAWS)
        check_range("base_s", self.base_s, 0.0, MAX_TIME_S, "s")
        check_range("per_item_s", self.per_item_s, 0.0, MAX_TIME_S, "s")
        _check(self.base_s + self.per_item_s >= 1e-12, "base_s", self.base_s,
               "base_s + per_item_s must be at least 1e-12 s")
        check_range("cv", self.cv, 0.0, 100.0)
        check_range("memory_share", self.memory_share, 0.0, 1.0)


@dataclass(frozen=True, slots=True)
class ResidentModel:
    """A model whose weights must sit in HBM while its batches run."""

    name: str
    weights_bytes: int = 0
    service_scale: float = 1.0  # this model's service time relative to the service law

    def __post_init__(self) -> None:
        _check(bool(self.name), "name", self.name, "must not be empty")
        check_int_range("weights_bytes", self.weights_bytes, 0, 2**50)
        check_range("service_scale", self.service_scale, 1e-6, 1e6)


RESIDENCY_DISPATCH = ("hold", "load_then_dispatch")


@dataclass(frozen=True, slots=True)
class ResidencyPolicy:
    """What the dispatcher does with a batch whose model's weights are not in HBM (see
    :mod:`workbench.runtime.residency`).

    ``hold``: the batch takes its core and waits there for the load (a naive runtime).
    ``load_then_dispatch``: the load is started on the host link's DMA queue and the batch
    stays queued, taking no core, until the weights are in; the cores serve other models.
    """

    dispatch: str = "hold"

    def __post_init__(self) -> None:
        _one_of("dispatch", self.dispatch, RESIDENCY_DISPATCH)


@dataclass(frozen=True, slots=True)
class ModelSpec:
    """A ``[model]`` section: a graph to compile into a plan, which then times the batches."""

    graph: str = "transformer_block"  # mlp | transformer_block | conv_block
    params: dict[str, int] = field(default_factory=dict)  # builder parameters, e.g. d_model, heads
    fusion: str = "elementwise"  # none | elementwise | aggressive
    max_depth: int = 32  # ops per fused kernel
    attention: str = "flash"  # flash (tiled, online softmax) | naive (whole score matrices on chip)
    envelope: dict[str, list] = field(default_factory=dict)  # dim -> upper bounds or [{min, opt, max}]
    out_of_envelope: str = "fallback"  # reject | pad | recompile | fallback
    recompile_limit: int = 8
    recompile_pause_s: float = 0.25  # s
    generic_slowdown: float = 1.5
    noise_cv: float = 0.0  # lognormal jitter of observed batch times
    granule: int = 8  # live shapes rounded up to a multiple of this before costing
    profile: str = ""  # optional calibration table (CSV: op, dims, seconds), resolved against the file
    expected_shares: tuple[float, ...] = ()  # traffic share per bucket the static placement assumes

    def __post_init__(self) -> None:
        _check(bool(self.envelope), "envelope", self.envelope, "needs buckets, e.g. { seq = [128, 256, 512] }")
        check_count("expected_shares", self.expected_shares, MAX_BUCKETS)
        for s in self.expected_shares:
            check_range("expected_shares", s, 0.0, 1e12)
        check_int_range("max_depth", self.max_depth, 1, 1024)
        check_int_range("recompile_limit", self.recompile_limit, 0, MAX_RECOMPILES)
        check_range("recompile_pause_s", self.recompile_pause_s, 0.0, 1e4, "s")
        check_range("generic_slowdown", self.generic_slowdown, 1.0, 1000.0)
        check_range("noise_cv", self.noise_cv, 0.0, 10.0)
        check_int_range("granule", self.granule, 1, 4096)


# --- batching and scheduling ----------------------------------------------------------

BATCHING_POLICIES = ("none", "static", "dynamic")
DISCIPLINES = ("fifo", "priority", "weighted")
PLACEMENTS = ("least-loaded", "round-robin", "pinned")


@dataclass(frozen=True, slots=True)
class Batching:
    """How waiting requests become batches (see :mod:`workbench.runtime.policies`)."""

    policy: str = "none"
    max_batch: int = 8
    max_delay_s: float = 0.002  # Triton's max_queue_delay; static: the fill timeout
    preferred: tuple[int, ...] = ()  # Triton's preferred_batch_size

    def __post_init__(self) -> None:
        _one_of("policy", self.policy, BATCHING_POLICIES)
        check_int_range("max_batch", self.max_batch, 1, MAX_BATCH, "compile time and memory grow with it")
        check_range("max_delay_s", self.max_delay_s, 0.0, MAX_TIME_S, "s")
        check_count("preferred", self.preferred, MAX_LIST)
        for p in self.preferred:
            _check(1 <= p <= self.max_batch, "preferred", self.preferred, "sizes must be in [1, max_batch]")


@dataclass(frozen=True, slots=True)
class Scheduler:
    """Queue discipline, core placement and the queue's bounds."""

    discipline: str = "fifo"
    placement: str = "least-loaded"
    max_queue: int = 0  # requests waiting, all streams; 0 = unbounded
    timeout_s: float = 0.0  # a request waiting longer is rejected; 0 = never

    def __post_init__(self) -> None:
        _one_of("discipline", self.discipline, DISCIPLINES)
        _one_of("placement", self.placement, PLACEMENTS)
        check_int_range("max_queue", self.max_queue, 0, 2**62)
        check_range("timeout_s", self.timeout_s, 0.0, MAX_TIME_S, "s")


@dataclass(frozen=True, slots=True)
class Scenario:
    """A reproducible workload slice: everything one simulation run depends on."""

    streams: tuple[Stream, ...]
    seed: int = 0
    requests: int = 10_000  # total arrivals over all streams
    warmup_fraction: float = 0.05  # first share of requests left out of the statistics
    hardware: Hardware = field(default_factory=Hardware)
    service: Service = field(default_factory=Service)
    batching: Batching = field(default_factory=Batching)
    scheduler: Scheduler = field(default_factory=Scheduler)
    models: tuple[ResidentModel, ...] = ()
    residency: ResidencyPolicy = field(default_factory=ResidencyPolicy)
    model: ModelSpec | None = None  # a compiled plan replaces the abstract service law
    name: str = "scenario"
    description: str = ""

    def __post_init__(self) -> None:
        _check(len(self.streams) > 0, "streams", self.streams, "at least one stream is needed")
        check_count("streams", self.streams, MAX_STREAMS)
        check_count("models", self.models, MAX_MODELS)
        names = [s.name for s in self.streams]
        _check(len(set(names)) == len(names), "streams", names, "stream names must be unique")
        dims = sorted({d for s in self.streams for d in s.shapes})
        _check(len(dims) <= MAX_DIMS, "streams.shapes", dims, f"at most {MAX_DIMS} distinct dims over all streams")
        check_int_range("seed", self.seed, *SEED)
        check_requests("requests", self.requests)
        check_range("warmup_fraction", self.warmup_fraction, 0.0, 0.99)
        _check(self.hardware.cores >= 1, "hardware.cores", self.hardware.cores, "must be >= 1")
        model_names = [m.name for m in self.models]
        _check(len(set(model_names)) == len(model_names), "models", model_names, "model names must be unique")
        for s in self.streams:
            if self.models or s.model:
                _check(s.model in model_names, f"streams.{s.name}.model", s.model,
                       f"must name one of the [[models]]: {', '.join(model_names) or '(none defined)'}")
            for c in s.pin:
                _check(c < self.hardware.cores, f"streams.{s.name}.pin", list(s.pin),
                       f"core indices must be < cores ({self.hardware.cores})")

    @property
    def offered_rate(self) -> float:
        """Sum of the streams' long-run arrival rates (1/s)."""
        return sum(s.arrivals.mean_rate for s in self.streams)

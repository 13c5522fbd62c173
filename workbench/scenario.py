"""Scenario files: TOML in, a validated :class:`~workbench.config.Scenario` out.

A scenario file is a reproducible workload slice (seed, request count, hardware,
service, batching, scheduler, streams). Reading is strict: an unknown key, a wrong
type or an out-of-range value raises one :class:`~workbench.errors.ConfigError` that
names the file, the dotted key and the value. Built-in scenarios ship as package data
in ``workbench/scenarios/`` and are found by name.
"""

from __future__ import annotations

import dataclasses
import math
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.compiler.envelope import parse_envelope
from workbench.config import (
    ARRIVAL_PROCESSES,
    SHAPE_DISTS,
    Arrivals,
    Batching,
    Drift,
    ModelSpec,
    ResidencyPolicy,
    ResidentModel,
    Scenario,
    Scheduler,
    Service,
    ShapeDist,
    Stream,
)
from workbench.errors import ConfigError, check_one_of
from workbench.hardware import PRESETS, Hardware
from workbench.limits import (
    MAX_BUCKETS,
    MAX_MODELS,
    MAX_STREAMS,
    SCENARIO_MAX_BYTES,
    TRACE_MAX_BYTES,
    TRACE_MAX_TIMESTAMPS,
    check_count,
)
from workbench.safe_io import read_capped
from workbench.serving.mode import serving_mode

if TYPE_CHECKING:  # token mode and the compiler's options are imported when a scenario asks for them
    from workbench.serving.scenario import ServingScenario

BUILTIN = Path(__file__).parent / "scenarios"  # package data; a plain folder (no importlib.resources: start-up)
_REQUIRED = object()
_TYPES: dict[str, tuple[type, ...]] = {"int": (int,), "float": (int, float), "str": (str,), "bool": (bool,),
                                       "table": (dict,), "list": (list,)}


class _Table:
    """A TOML table read key by key; whatever is left unread at ``done()`` is unknown."""

    def __init__(self, data: Any, prefix: str):
        if not isinstance(data, dict):
            raise ConfigError(prefix or "(top level)", data, "must be a table")
        self.data, self.prefix, self.seen = data, prefix, set()

    def key(self, name: str) -> str:
        return f"{self.prefix}.{name}" if self.prefix else name

    def get(self, name: str, kind: str, default: Any = _REQUIRED) -> Any:
        self.seen.add(name)
        if name not in self.data:
            if default is _REQUIRED:
                raise ConfigError(self.key(name), None, "is required")
            return default
        value = self.data[name]
        if isinstance(value, bool) and kind != "bool" or not isinstance(value, _TYPES[kind]):
            raise ConfigError(self.key(name), value, f"must be of type {kind}")
        return float(value) if kind == "float" else value

    def numbers(self, name: str, kind: str = "float") -> tuple:
        values = self.get(name, "list", [])
        for v in values:
            if isinstance(v, bool) or not isinstance(v, _TYPES[kind]):
                raise ConfigError(self.key(name), values, f"must be a list of {kind}")
        return tuple(float(v) if kind == "float" else v for v in values)

    def table(self, name: str) -> _Table:
        return _Table(self.get(name, "table", {}), self.key(name))

    def done(self) -> None:
        unknown = sorted(set(self.data) - self.seen)
        if unknown:
            raise ConfigError(self.key(unknown[0]), self.data[unknown[0]], "unknown key")


def _one_of(t: _Table, name: str, value: str, choices: tuple[str, ...]) -> None:
    """Checked before the other keys, so a wrong choice is named, not the keys it would have read."""
    try:
        check_one_of(name, value, choices)
    except ConfigError as e:
        raise e.under(t.prefix) from None


def _build(cls: type, prefix: str, **kwargs: Any) -> Any:
    try:
        return cls(**kwargs)
    except ConfigError as e:
        raise e.under(prefix) from None


def _hardware(t: _Table) -> Hardware:
    preset = t.get("preset", "str", "generic-4core")
    if preset not in PRESETS:
        raise ConfigError(t.key("preset"), preset, f"must be one of {', '.join(PRESETS)}")
    base = PRESETS[preset]
    fields = {"cores": "int", "peak_flops_per_core": "float", "sram_bytes_per_core": "int",
              "hbm_bandwidth_bytes_per_s": "float", "hbm_capacity_bytes": "int", "launch_s": "float",
              "mma_rows": "int", "host_link_bytes_per_s": "float"}
    kwargs = {k: t.get(k, kind, getattr(base, k)) for k, kind in fields.items()}
    t.done()
    return _build(Hardware, t.prefix, **kwargs)


def _arrivals(stream: _Table, base_dir: Path) -> Arrivals:
    rate = stream.get("rate", "float", None)
    if "arrivals" not in stream.data:
        if rate is None:
            raise ConfigError(stream.key("rate"), None, "is required (or an arrivals table)")
        return _build(Arrivals, stream.prefix, process="poisson", rate=rate)
    t = stream.table("arrivals")
    if rate is not None:
        raise ConfigError(stream.key("rate"), rate, "give either rate or an arrivals table, not both")
    process = t.get("process", "str")
    _one_of(t, "process", process, ARRIVAL_PROCESSES)
    kw: dict[str, Any] = {"process": process}
    if process == "poisson":
        kw["rate"] = t.get("rate", "float")
    elif process == "onoff":
        for k in ("rate_on", "rate_off", "mean_on_s", "mean_off_s"):
            kw[k] = t.get(k, "float")
    elif process == "trace":
        kw["file"] = t.get("file", "str")
        kw["time_scale"] = t.get("time_scale", "float", 1.0)
        kw["timestamps"] = _read_timestamps(base_dir / kw["file"], t.key("file"))
    t.done()
    return _build(Arrivals, t.prefix, **kw)


def _read_timestamps(path: Path, key: str) -> tuple[float, ...]:
    """Timestamps (s), one per line (first CSV cell; '#' comments and a header skipped): finite, sorted."""
    try:
        text = read_capped(path, TRACE_MAX_BYTES, key, "the trace file").decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(key, str(path), "the trace file is not UTF-8 text") from None
    values: list[float] = []
    for n, line in enumerate(text.splitlines(), 1):
        cell = line.split(",")[0].strip()
        if not cell or cell.startswith("#"):
            continue
        try:
            t = float(cell)
        except ValueError:
            if not values:  # a header line
                continue
            raise ConfigError(key, f"{path}:{n}", f"not a timestamp: {cell[:40]!r}") from None
        if not (math.isfinite(t) and abs(t) <= 1e15):
            raise ConfigError(key, f"{path}:{n}", f"timestamps must be finite numbers within 1e15 s: {cell[:40]!r}")
        if values and t < values[-1]:
            raise ConfigError(key, f"{path}:{n}", "timestamps must be sorted")
        if len(values) == TRACE_MAX_TIMESTAMPS:
            raise ConfigError(key, str(path), f"more than {TRACE_MAX_TIMESTAMPS:,} timestamps")
        values.append(t)
    return tuple(values)


def _shape(t: _Table) -> ShapeDist:
    dist = t.get("dist", "str")
    _one_of(t, "dist", dist, SHAPE_DISTS)
    kw: dict[str, Any] = {"dist": dist}
    if dist == "fixed":
        kw["value"] = t.get("value", "float")
    elif dist == "categorical":
        kw["values"] = t.numbers("values")
        kw["probs"] = t.numbers("probs")
    elif dist == "lognormal":
        kw["median"] = t.get("median", "float")
        kw["sigma"] = t.get("sigma", "float", 0.0)
    if "drift" in t.data:
        d = t.table("drift")
        start = d.get("start_s", "float", None)
        at = d.get("at_s", "float", None)
        end = d.get("end_s", "float", None)
        if at is not None and (start is not None or end is not None):
            raise ConfigError(d.key("at_s"), at, "a step (at_s) or a ramp (start_s, end_s), not both")
        start = at if at is not None else (start or 0.0)
        end = at if at is not None else (end if end is not None else start)
        to = {k: (d.numbers(k) if k == "probs" else d.get(k, "float"))
              for k in list(d.data) if k not in ("start_s", "end_s", "at_s")}
        d.done()
        kw["drift"] = _build(Drift, d.prefix, to=to, start_s=start, end_s=end)
    t.done()
    return _build(ShapeDist, t.prefix, **kw)


def _stream(t: _Table, base_dir: Path) -> Stream:
    name = t.get("name", "str")
    arrivals = _arrivals(t, base_dir)
    shapes_t = t.table("shapes")
    shapes = {dim: _shape(shapes_t.table(dim)) for dim in list(shapes_t.data)}
    shapes_t.done()
    kw = {"name": name, "arrivals": arrivals, "shapes": shapes,
          "priority": t.get("priority", "int", 0), "weight": t.get("weight", "float", 1.0),
          "model": t.get("model", "str", ""), "pin": t.numbers("pin", "int")}
    t.done()
    return _build(Stream, t.prefix, **kw)


def parse_scenario(data: dict[str, Any], source: str = "<scenario>",
                   base_dir: Path | None = None) -> Scenario | ServingScenario:
    """Validate a parsed TOML document and build its :class:`Scenario` (a :class:`ServingScenario` in token mode)."""
    base_dir = base_dir or Path.cwd()
    try:
        top = _Table(data, "")
        if serving_mode(data) == "token":
            from workbench.serving.scenario import parse_serving

            return parse_serving(data, source, _hardware, _Table)
        _request_mode(top.table("serving"))
        streams_raw = top.get("streams", "list", None)
        if not streams_raw:
            raise ConfigError("streams", streams_raw, "at least one [[streams]] table is required")
        check_count("streams", streams_raw, MAX_STREAMS)
        check_count("models", top.get("models", "list", []), MAX_MODELS)
        streams = tuple(_stream(_Table(s, f"streams[{i}]"), base_dir) for i, s in enumerate(streams_raw))
        models = tuple(_build_model(_Table(m, f"models[{i}]"))
                       for i, m in enumerate(top.get("models", "list", [])))
        hardware = _hardware(top.table("hardware"))
        if "service" in top.data and "model" in top.data:
            raise ConfigError("model", "[model] and [service]", "a [model] section replaces [service]: give one")
        service = _section(top.table("service"), Service,
                           {"law": "str", "base_s": "float", "per_item_s": "float", "cv": "float",
                            "memory_share": "float"})
        model = _model(top.table("model"), base_dir, streams) if "model" in top.data else None
        bt = top.table("batching")
        batching = _section(bt, Batching, {"policy": "str", "max_batch": "int", "max_delay_s": "float"},
                            preferred=bt.numbers("preferred", "int"))
        scheduler = _section(top.table("scheduler"), Scheduler,
                             {"discipline": "str", "placement": "str", "max_queue": "int", "timeout_s": "float"})
        residency = _section(top.table("residency"), ResidencyPolicy, {"dispatch": "str"})
        kw = {"seed": top.get("seed", "int", 0), "requests": top.get("requests", "int", 10_000),
              "warmup_fraction": top.get("warmup_fraction", "float", 0.05),
              "name": top.get("name", "str", Path(source).stem),
              "description": top.get("description", "str", "")}
        top.done()
        return Scenario(streams=streams, models=models, hardware=hardware, service=service, model=model,
                        batching=batching, scheduler=scheduler, residency=residency, **kw)
    except ConfigError as e:
        raise e.in_file(source) from None


def _request_mode(t: _Table) -> None:
    """A ``[serving]`` table in request mode holds only ``mode``: the other keys belong to token mode."""
    t.get("mode", "str", "request")
    t.done()


def _model(t: _Table, base_dir: Path, streams: tuple[Stream, ...]) -> ModelSpec:
    """The [model] section, checked as far as it can be without compiling."""
    from workbench.compiler.mapping import CompileOptions
    from workbench.models import REQUEST_DIM, build

    kind = {"graph": "str", "fusion": "str", "max_depth": "int", "attention": "str", "out_of_envelope": "str",
            "recompile_limit": "int", "recompile_pause_s": "float", "generic_slowdown": "float",
            "noise_cv": "float", "granule": "int", "profile": "str"}
    defaults = {f.name: f.default for f in dataclasses.fields(ModelSpec)}
    kw: dict[str, Any] = {k: t.get(k, v, defaults[k]) for k, v in kind.items()}
    kw["params"] = t.get("params", "table", {})
    kw["envelope"] = t.get("envelope", "table")
    kw["expected_shares"] = t.numbers("expected_shares")
    t.done()
    try:
        build(kw["graph"], kw["params"])
    except ConfigError as e:
        raise e.under(t.prefix) from None
    dim = REQUEST_DIM[kw["graph"]]
    if set(kw["envelope"]) != {dim}:
        raise ConfigError(t.key("envelope"), kw["envelope"], f"a {kw['graph']} is bucketed on {dim!r} only")
    try:
        check_count(f"envelope.{dim}", kw["envelope"][dim], MAX_BUCKETS)
        buckets = parse_envelope(dim, kw["envelope"][dim])
    except ConfigError as e:
        raise e.under(t.prefix) from None
    if kw["expected_shares"] and len(kw["expected_shares"]) != len(buckets):
        raise ConfigError(t.key("expected_shares"), list(kw["expected_shares"]),
                          f"needs one share per bucket ({len(buckets)})")
    for i, s in enumerate(streams):
        if dim not in s.shapes:
            raise ConfigError(f"streams[{i}].shapes", s.shapes, f"a {kw['graph']} needs a {dim!r} shape per stream")
    if kw["profile"]:
        from workbench.compiler.calibrate import read_profile

        kw["profile"] = str(base_dir / kw["profile"])
        read_profile(kw["profile"])  # a bad file is named here, with the scenario
    spec = _build(ModelSpec, t.prefix, **kw)
    _build(CompileOptions, t.prefix, fusion=spec.fusion, max_depth=spec.max_depth, attention=spec.attention,
           out_of_envelope=spec.out_of_envelope, recompile_limit=spec.recompile_limit,
           recompile_pause_s=spec.recompile_pause_s, generic_slowdown=spec.generic_slowdown,
           noise_cv=spec.noise_cv, granule=spec.granule)
    return spec


def _section(t: _Table, cls: type, fields: dict[str, str], **extra: Any) -> Any:
    defaults = cls()
    kw = {k: t.get(k, kind, getattr(defaults, k)) for k, kind in fields.items()}
    t.done()
    return _build(cls, t.prefix, **kw, **extra)


def _build_model(t: _Table) -> ResidentModel:
    kw = {"name": t.get("name", "str"), "weights_bytes": t.get("weights_bytes", "int", 0),
          "service_scale": t.get("service_scale", "float", 1.0)}
    t.done()
    return _build(ResidentModel, t.prefix, **kw)


def builtin_scenarios(mode: str = "request") -> list[str]:
    """Names of the scenarios shipped in ``workbench/scenarios/`` in ``mode`` (request, token or all)."""
    folder = BUILTIN
    names = sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".toml"))
    if mode == "all":
        return names
    return [n for n in names if serving_mode(tomllib.loads((folder / f"{n}.toml").read_text("utf-8"))) == mode]


def resolve(name_or_path: str | Path) -> Path:
    """A scenario file path for a path or a built-in scenario's name."""
    path = Path(name_or_path)
    if path.suffix == ".toml" or path.exists():
        return path
    builtin = BUILTIN / f"{name_or_path}.toml"
    if builtin.is_file():
        return builtin
    raise ConfigError("scenario", str(name_or_path),
                      f"no such file or built-in scenario (built-ins: {', '.join(builtin_scenarios())})")


def read_toml(path: Path, limit: int = SCENARIO_MAX_BYTES, what: str = "scenario") -> dict[str, Any]:
    """A TOML file parsed: a regular file of at most ``limit`` bytes, UTF-8, well formed."""
    raw = read_capped(path, limit, what, f"the {what} file")
    try:
        return tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise ConfigError("(file)", str(path), "is not UTF-8 text", source=str(path)) from None
    except (tomllib.TOMLDecodeError, RecursionError) as e:
        raise ConfigError("(toml)", str(e), "malformed TOML", source=str(path)) from None


def load_scenario(name_or_path: str | Path) -> Scenario | ServingScenario:
    """Read, validate and return a scenario file or a built-in scenario by name."""
    path = resolve(name_or_path)
    return parse_scenario(read_toml(path), str(path), path.parent)

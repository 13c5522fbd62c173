"""``compile_plan``: the compiler as one straight line of passes.

    graph --verify--> fuse_ops --> choose_layout (per bucket and shape) --> place_buckets --> Plan

Each pass is a pure function; ``trace=True`` keeps every pass's artefact on the plan
(``plan.passes``) so a notebook can show the graph after each step. A recompile at run
time (:func:`workbench.compiler.plan.compile_bucket`) runs the same layout pass for one bucket.
"""

from __future__ import annotations

import dataclasses

from workbench.compiler import envelope as env
from workbench.compiler.fusion import fuse_ops
from workbench.compiler.mapping import GENERIC_TILING, CompiledBucket, CompileOptions, Mapping
from workbench.compiler.plan import Plan, _mapping
from workbench.errors import ConfigError
from workbench.graph import Graph, verify
from workbench.hardware import Hardware


def place_buckets(loads: list[float], cores: int) -> tuple[tuple[int, ...], ...]:
    """Static placement: buckets onto cores by predicted load, longest first (LPT).

    With at least as many buckets as cores each bucket gets the least-loaded core; with
    fewer, the cores are shared out in proportion to load (at least one each).
    """
    n = len(loads)
    if n >= cores:
        assigned: list[tuple[int, ...]] = [()] * n
        core_load = [0.0] * cores
        for b in sorted(range(n), key=lambda i: (-loads[i], i)):
            k = min(range(cores), key=lambda c: (core_load[c], c))
            assigned[b] = (k,)
            core_load[k] += loads[b]
        return tuple(assigned)
    total = sum(loads) or 1.0
    counts = [1] * n
    for _ in range(cores - n):  # give each spare core to the bucket with most load per core
        counts[max(range(n), key=lambda i: (loads[i] / total / counts[i], -i))] += 1
    out, nxt = [], 0
    for c in counts:
        out.append(tuple(range(nxt, nxt + c)))
        nxt += c
    return tuple(out)


def compile_plan(graph: Graph, hardware: Hardware, envelope: dict[str, list], options: CompileOptions | None = None,
                 calibration=None, expected_shares: list[float] | None = None, trace: bool = False) -> Plan:
    """Compile ``graph`` for ``envelope`` on ``hardware``: one specialised mapping per bucket."""
    opts = options or CompileOptions()
    # verify where the IR enters the pipeline
    verify(graph)
    per_request = [s for s in graph.symbols if s != "batch"]
    if len(envelope) != 1 or next(iter(envelope)) not in per_request:
        raise ConfigError("envelope", envelope, f"must give buckets for exactly the dim {per_request}")
    dim, spec = next(iter(envelope.items()))
    buckets = env.parse_envelope(dim, spec)
    passes: list[tuple[str, object]] = [("input", graph)]
    # fusion is shape-independent: one partition serves every bucket
    kernels = fuse_ops(graph, opts.fusion, opts.max_depth, opts.attention)
    passes.append(("fuse_ops", kernels))
    # layout and tiling are specialised per bucket (shown at its opt and the compile batch; the plan
    # re-tiles every (batch size, shape) it meets, as a shape-specialising compiler caches per shape)
    mappings = [_mapping(graph, kernels, hardware, opts, dim, b.opt, calibration) for b in buckets]
    passes.append(("choose_layout", {b.name: m.tilings for b, m in zip(buckets, mappings, strict=True)}))
    draft = Plan(graph, hardware, opts, dim, (), Mapping((), ()), calibration)
    predicted = [tuple(draft.mapping_time(m, s, b.opt)[0] for s in range(1, opts.max_batch + 1))
                 for b, m in zip(buckets, mappings, strict=True)]
    # static placement: predicted load = expected traffic share x latency at the compile batch
    shares = expected_shares or [1.0 / len(buckets)] * len(buckets)
    if len(shares) != len(buckets):
        raise ConfigError("expected_shares", shares, f"needs one share per bucket ({len(buckets)})")
    loads = [s * p[min(opts.compile_batch, opts.max_batch) - 1] for s, p in zip(shares, predicted, strict=True)]
    cores = place_buckets(loads, hardware.cores)
    passes.append(("place_buckets", {b.name: c for b, c in zip(buckets, cores, strict=True)}))
    # the generic fallback: unfused, one fixed tiling, no specialisation
    singles = fuse_ops(graph, "none")
    generic = Mapping(singles, (GENERIC_TILING,) * len(singles), specialised=False)
    compiled = tuple(CompiledBucket(b, m, c, p)
                     for b, m, c, p in zip(buckets, mappings, cores, predicted, strict=True))
    # the predictions' costs are kept (the draft's memo: mappings flattened, times at opt); the generic
    # mapping is flattened too, so a run's first batches find every mapping ready to cost
    plan = Plan(graph, hardware, opts, dim, compiled, generic, calibration, _memo=draft._memo)
    plan._flat(generic)
    # verify where the IR leaves the pipeline
    verify(plan.graph)
    if trace:
        passes.append(("plan", plan))
        plan = dataclasses.replace(plan, passes=tuple(passes))
    return plan

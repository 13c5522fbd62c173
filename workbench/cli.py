"""The ``workbench`` command: run scenarios, list the built-in ones.

Bad input (an unreadable or malformed scenario, an unknown key, a value out of range)
prints one line naming the file, the key and the value, and exits with status 2,
without a traceback and without writing any output file.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

from workbench.analysis.metrics import DRIVERS, summarize
from workbench.errors import ConfigError
from workbench.pipeline import run_scenario
from workbench.scenario import builtin_scenarios, load_scenario, resolve

EXIT_BAD_INPUT = 2


class UsageError(Exception):
    """A command-line problem to report on one line with exit status 2."""


def _write_atomic(path: Path, write) -> None:
    """Write through a temporary file in the same folder, so a failure leaves nothing half-written."""
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise UsageError(f"{path}: the folder {folder} does not exist")
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        write(tmp)
        os.replace(tmp, path)
    except OSError as e:
        Path(tmp).unlink(missing_ok=True)
        raise UsageError(f"{path}: cannot write ({e.strerror or e})") from None


def _fmt_stats(d: dict) -> str:
    return "  ".join(f"{k} {d[k] * 1e3:10.3f}" for k in ("mean", "p50", "p95", "p99", "p999"))


def format_summary(s: dict, description: str = "") -> str:
    """The human-readable run summary (latencies in ms)."""
    lines = [f"scenario {s['scenario']} (seed {s['seed']})"]
    if description:
        lines.append(f"  {description.strip()}")
    lines += [
        (f"requests {s['requests']}: completed {s['completed']}, rejected {s['rejected']} "
        + ", ".join(f"{k} {v}" for k, v in s["rejected_by"].items() if v)).rstrip(),
        f"throughput {s['throughput_rps']:.4g} req/s over {s['measured']} measured requests",
        "latency ms   " + _fmt_stats(s["latency_s"]),
        "wait ms      " + _fmt_stats(s["wait_s"]),
    ]
    for name, st in s["streams"].items():
        lines.append(f"  {name:<10} " + _fmt_stats(st["latency_s"]) + f"  ({st['completed']} done, "
                     f"{st['rejected']} rejected)")
    util = ", ".join(f"{u:.0%}" for u in s["cores"]["utilization"])
    lines += [
        f"cores: utilisation {util} (max/mean {s['cores']['imbalance']:.2f})",
        f"batches: mean size {s['batch_size']['mean']:.2f}; queue depth mean {s['queue_depth']['mean']:.2f}, "
        f"max {s['queue_depth']['max']}",
        f"fairness (Jain, throughput / weight): {s['fairness_jain']:.3f}",
        "tail drivers (requests above p95): "
        + ", ".join(f"{k} {s['tail_drivers'][k]:.0%}" for k in DRIVERS),
    ]
    if s["residency"]:
        lines.append("residency: " + ", ".join(f"{k} {v}" for k, v in s["residency"].items()))
    if s["load"]["overloaded"]:
        lines.append("WARNING " + s["load"]["note"])
    return "\n".join(lines)


def cmd_run(args: argparse.Namespace) -> int:
    """``workbench run``: simulate a scenario and print its summary."""
    sc = load_scenario(args.scenario)
    changes = {k: v for k, v in (("seed", args.seed), ("requests", args.requests)) if v is not None}
    if changes:
        try:
            sc = replace(sc, **changes)
        except ConfigError as e:
            raise e.in_file("command line") from None
    trace = run_scenario(sc)
    summary = summarize(trace)
    if args.trace:
        out = Path(args.trace)
        _write_atomic(out, trace.to_chrome)
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print(format_summary(summary, sc.description))
        if args.trace:
            print(f"trace written to {args.trace} (open it in https://ui.perfetto.dev)")
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    """``workbench list``: the built-in scenarios and their descriptions."""
    for name in builtin_scenarios():
        sc = load_scenario(resolve(name))
        print(f"{name:<28} {sc.description.strip().splitlines()[0] if sc.description else ''}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``workbench`` command."""
    p = argparse.ArgumentParser(prog="workbench", description="Compiler-runtime mapping workbench.")
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="simulate a scenario file or a built-in scenario by name")
    r.add_argument("scenario", help="a .toml file or the name of a built-in scenario (see `workbench list`)")
    r.add_argument("--json", action="store_true", help="print the JSON summary on stdout")
    r.add_argument("--trace", metavar="OUT.json", help="write the Chrome trace (Perfetto) to this file")
    r.add_argument("--seed", type=int, help="override the scenario's seed")
    r.add_argument("--requests", type=int, help="override the scenario's request count")
    r.set_defaults(func=cmd_run)
    ls = sub.add_parser("list", help="list the built-in scenarios")
    ls.set_defaults(func=cmd_list)
    return p


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit status."""
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (ConfigError, UsageError) as e:
        print(f"workbench: error: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT


if __name__ == "__main__":
    sys.exit(main())

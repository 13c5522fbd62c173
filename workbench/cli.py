"""The ``workbench`` command: run scenarios, list the built-in ones.

Bad input (an unreadable or malformed scenario, an unknown key, a value out of range)
prints one line naming the file, the key and the value, and exits with status 2,
without a traceback and without writing any output file.

Start-up is part of every run's wall time, so this module imports only the standard library
and a few light workbench modules; each command imports what it runs when it runs.
"""

from __future__ import annotations

import argparse
import gc
import math
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.cli_drills import add_drills_parser, cmd_grade, cmd_interview, cmd_practice, cmd_progress
from workbench.cli_feedback import cmd_report, cmd_sweep
from workbench.cli_io import (
    EXIT_BAD_INPUT,
    UsageError,
    dumps,
    refuse_empty_paths,
    say,
    scenario_with_overrides,
    stdout_lost,
    token_mode,
    watched_stdout,
    write_atomic,
)
from workbench.errors import ConfigError
from workbench.terminal import printable

if TYPE_CHECKING:  # each command imports what it runs (start-up); token mode only when a scenario asks for it
    from workbench.serving.scenario import ServingScenario

def _fmt_stats(d: dict) -> str:
    return "  ".join(f"{k} {d[k] * 1e3:10.3f}" for k in ("mean", "p50", "p95", "p99", "p999"))


def format_summary(s: dict, description: str = "") -> str:
    """The human-readable run summary (latencies in ms)."""
    from workbench.analysis.metrics import DRIVERS

    lines = [f"scenario {s['scenario']} (seed {s['seed']})"]
    if description:
        lines.append(f"  {description.strip()}")
    lines += [
        (f"requests {s['requests']}: completed {s['completed']}, rejected {s['rejected']} "
        + ", ".join(f"{k} {v}" for k, v in s["rejected_by"].items() if v)).rstrip(),
        f"throughput {s['throughput_rps']:.4g} req/s over {s['measured']} measured requests",
        "latency ms   " + _fmt_stats(s["latency_s"])
        + (f"   (over completed requests only: {s['refused_share']:.1%} refused)" if s["refused_share"] else ""),
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
        lines.append("residency: " + ", ".join(f"{k} {v:.2f}" if isinstance(v, float) else f"{k} {v}"
                                               for k, v in s["residency"].items()))
    if s["load"]["overloaded"]:
        lines.append("WARNING " + s["load"]["note"])
    return "\n".join(lines)


def cmd_run(args: argparse.Namespace) -> int:
    """``workbench run``: simulate a scenario and print its summary."""
    from workbench.analysis.metrics import summarize
    from workbench.pipeline import run_scenario

    sc = scenario_with_overrides(args)
    if token_mode(sc):
        return _run_tokens(args, sc)
    trace = run_scenario(sc)
    summary = summarize(trace)
    if args.trace:
        out = Path(args.trace)
        write_atomic(out, trace.to_chrome)
    if args.json:
        print(dumps(summary))
    else:
        say(format_summary(summary, sc.description))
        if args.trace:
            say(f"trace written to {args.trace} (open it in https://ui.perfetto.dev)")
    return 0


def _run_tokens(args: argparse.Namespace, sc: ServingScenario) -> int:
    """``workbench run`` on a token-mode scenario: TTFT, TPOT, ITL, KV use, preemptions, goodput."""
    from workbench.serving.engine import simulate_tokens
    from workbench.serving.metrics import summarize_tokens
    from workbench.serving.report import format_token_summary, iteration_shares, to_chrome

    trace = simulate_tokens(sc.run)
    summary = summarize_tokens(trace, sc.ttft_slo_s, sc.tpot_slo_s)
    summary = {"scenario": sc.name, "seed": sc.run.seed, "mode": "token", **summary,
               "iteration_time_shares": iteration_shares(trace)}
    if args.trace:
        write_atomic(Path(args.trace), lambda path: to_chrome(trace, path))
    if args.json:
        print(dumps(summary))
    else:
        say(format_token_summary(summary, sc.name, sc.description))
        if args.trace:
            say(f"trace written to {args.trace} (open it in https://ui.perfetto.dev)")
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    """``workbench list``: the built-in scenarios and their descriptions; ``--drills``: the interview drills."""
    if args.drills:
        from workbench.grading.drills import load_drills

        for d in load_drills(args.drills_dir).values():
            say(f"{d.id:<32} {d.title}")
        return 0
    from workbench.scenario import builtin_scenarios, load_scenario, resolve

    for name in builtin_scenarios("all"):
        sc = load_scenario(resolve(name))
        mode = f"[token, {sc.run.model.parameters / 1e9:.2f} B parameters] " if token_mode(sc) else ""
        say(f"{name:<28} {mode}{sc.description.strip().splitlines()[0] if sc.description else ''}")
    return 0


def _bounded(kind: type, low: float, high: float):
    """An argparse type: a finite ``kind`` in [low, high]."""
    def parse(text: str):
        try:
            v = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {kind.__name__}, got {text[:40]!r}") from None
        if not (math.isfinite(v) and low <= v <= high):
            raise argparse.ArgumentTypeError(f"must be in [{low:g}, {high:g}], got {text[:40]!r}")
        return v

    parse.__name__ = kind.__name__
    return parse


def build_parser(only_run: bool = False, parser_class: type = argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The argument parser of the ``workbench`` command (``only_run``: with the ``run`` command alone)."""
    p = parser_class(prog="workbench", description="Compiler-runtime mapping workbench.")
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="simulate a scenario file or a built-in scenario by name")
    r.add_argument("scenario", help="a .toml file or the name of a built-in scenario (see `workbench list`)")
    r.add_argument("--json", action="store_true", help="print the JSON summary on stdout")
    r.add_argument("--trace", metavar="OUT.json", help="write the Chrome trace (Perfetto) to this file")
    r.add_argument("--seed", type=int, help="override the scenario's seed")
    r.add_argument("--requests", type=int, help="override the scenario's request count")
    r.set_defaults(func=cmd_run)
    if only_run:
        return p
    rp = sub.add_parser("report", help="the closed-loop mapping report: telemetry, retuning actions, rollback guard")
    rp.add_argument("scenario", help="a .toml file or a built-in scenario")
    rp.add_argument("--out", help="folder for report.html, report.md and figures (default report-NAME)")
    rp.add_argument("--json", action="store_true", help="print the report's numbers as JSON")
    rp.add_argument("--threshold", type=_bounded(float, 0.0, 10.0),
                    help="rollback guard: refuse regressions beyond this share (0.05)")
    rp.add_argument("--seed", type=int, help="override the scenario's seed")
    rp.add_argument("--requests", type=int, help="override the scenario's request count")
    rp.set_defaults(func=cmd_report)
    sw = sub.add_parser("sweep", help="the closed loop over a grid of parameter values and seeds")
    sw.add_argument("scenario", help="a .toml file or a built-in scenario")
    sw.add_argument("--set", action="append", metavar="PATH=V1,V2",
                    help="a TOML path and its values, e.g. streams.0.shapes.seq.drift.median=400,800,1600")
    sw.add_argument("--seeds", default="1", help="comma-separated seeds (default 1)")
    sw.add_argument("--requests", type=int, help="override the request count of every point")
    sw.add_argument("--workers", type=int, default=0,
                    help="with --executor local, 1: run in this process; default: local processes")
    sw.add_argument("--executor", default="local", metavar="local|ADDRESS",
                    help="local (default): processes on this machine; or a Dask distributed scheduler, "
                         "e.g. tcp://host:8786 (needs pip install 'accel-mapping-workbench[cluster]')")
    sw.add_argument("--out", help="folder for sweep.csv and sweep.png (default sweep-out)")
    sw.set_defaults(func=cmd_sweep)
    gr = sub.add_parser("grade", help="grade an answer to an interview drill")
    gr.add_argument("--drill", required=True, help="drill id (workbench list --drills)")
    gr.add_argument("--answer-file", help="the answer (default: read stdin)")
    gr.add_argument("--json", action="store_true", help="print the grade as JSON")
    gr.add_argument("--drills-dir", help="folder of drill files (default: $WORKBENCH_DRILLS or drills/)")
    gr.set_defaults(func=cmd_grade)
    pr = sub.add_parser("practice", help="an interview practice session in the terminal")
    pr.add_argument("--drills", type=_bounded(int, 1, 1000), default=1, help="how many drills (default 1)")
    pr.add_argument("--topic", help="only drills of this topic")
    pr.add_argument("--minutes", type=_bounded(float, 0.01, 10_000),
                    help="stop offering drills after this many minutes")
    pr.add_argument("--figures", metavar="DIR", help="save each drill's latency-CDF figure in this folder")
    pr.add_argument("--db", help="progress database (default: $WORKBENCH_DB or the user data folder)")
    pr.add_argument("--drills-dir", help="folder of drill files")
    pr.set_defaults(func=cmd_practice)
    iv = sub.add_parser("interview", help="a mock interview: an answer, follow-up questions, one grade")
    iv.add_argument("--drill", help="drill id (workbench list --drills; default: the one your progress says to "
                    "practise next)")
    iv.add_argument("--minutes", type=float, help="no follow-up question after this many minutes")
    iv.add_argument("--db", help="progress database (default: $WORKBENCH_DB or the user data folder)")
    iv.add_argument("--drills-dir", help="folder of drill files")
    iv.set_defaults(func=cmd_interview)
    pg = sub.add_parser("progress", help="practice history and per-element rates")
    pg.add_argument("--db", help="progress database (default: $WORKBENCH_DB or the user data folder)")
    pg.set_defaults(func=cmd_progress)
    ls = sub.add_parser("list", help="list the built-in scenarios (--drills: the interview drills)")
    ls.add_argument("--drills", action="store_true", help="list the interview drills instead, with their titles")
    ls.add_argument("--drills-dir", help="folder of drill files (default: $WORKBENCH_DRILLS or drills/)")
    ls.set_defaults(func=cmd_list)
    add_drills_parser(sub)  # drills check DIR (workbench/cli_drills.py)
    return p


_ONE_THREAD = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")  # read by numpy's BLAS at import


class _Unprinted(argparse.HelpFormatter):
    """A formatter for text never printed: a fixed width (the default asks the terminal, importing ``shutil``)."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: int = 80):
        super().__init__(prog, indent_increment, max_help_position, width)


class _Tentative(argparse.ArgumentParser):
    """A parser that prints nothing and never exits: where it would, :func:`parse_args` asks the full parser."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", _Unprinted)
        super().__init__(*args, **kwargs)

    def _print_message(self, message, file=None):
        raise _Retry

    def exit(self, status=0, message=None):
        raise _Retry

    def error(self, message):
        raise _Retry


class _Retry(Exception):
    pass


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """``build_parser().parse_args(argv)``; a ``run`` command line is parsed by the ``run`` command's parser alone.

    The full parser takes ~10 ms to build (nine subparsers; argparse asks gettext for each one's
    labels, a file search each time): a ``run`` is parsed without the others, the same namespace;
    anything that would print or exit (help, a usage error) is parsed again by the full parser, so
    every message is the full parser's own.
    """
    tokens = sys.argv[1:] if argv is None else argv
    if tokens[:1] == ["run"]:
        try:
            return build_parser(only_run=True, parser_class=_Tentative).parse_args(tokens)
        except _Retry:
            pass
    return build_parser().parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit status."""
    args = parse_args(argv)
    if argv is None:  # the command line's own process: numpy's BLAS threads, started at import, only spin here
        for var in _ONE_THREAD:  # (the simulation runs no large matrix products); a value the user set is kept
            os.environ.setdefault(var, "1")
    if argv is None and args.func is cmd_run:  # the command line's own run, which ends next: no cyclic collection
        gc.disable()  # while it imports and runs (~10 ms of a start-up; its large data are arrays, freed by count)
        from workbench.runtime.allocator import keep_freed_blocks

        keep_freed_blocks()  # freed columns of a few MiB reused, not unmapped and faulted in again
    with watched_stdout() as out:
        try:
            refuse_empty_paths(args)
            status = args.func(args)
            out.flush()  # here, not at exit: a closed pipe or a full disk is answered like any other error
            return status
        except (ConfigError, UsageError) as e:
            print(f"workbench: error: {printable(str(e), one_line=True)}", file=sys.stderr)
            return EXIT_BAD_INPUT
        except OSError as e:
            if e is not out.error:
                raise
            return stdout_lost(e, own_process=argv is None)
        finally:
            if argv is None:  # the command line's own process, which ends next: its last garbage collection would
                gc.freeze()  # walk every object numba made (~0.2 s); the OS takes the memory back instead


if __name__ == "__main__":
    sys.exit(main())

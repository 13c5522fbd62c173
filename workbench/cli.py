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
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.cli_drills import cmd_grade, cmd_interview, cmd_practice, cmd_progress
from workbench.cli_io import (
    EXIT_BAD_INPUT,
    UsageError,
    dumps,
    output_error,
    say,
    writable_folder,
    write_atomic,
)
from workbench.errors import ConfigError
from workbench.safe_io import OutputError
from workbench.terminal import printable

if TYPE_CHECKING:  # each command imports what it runs (start-up); token mode only when a scenario asks for it
    from workbench.config import Scenario
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

    sc = _scenario_with_overrides(args)
    if _token_mode(sc):
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


def _token_mode(sc: Scenario | ServingScenario) -> bool:
    """Whether ``load_scenario`` gave a token-mode scenario (a :class:`ServingScenario`)."""
    from workbench.config import Scenario

    return not isinstance(sc, Scenario)


def _scenario_with_overrides(args: argparse.Namespace):
    from dataclasses import replace

    from workbench.scenario import load_scenario

    sc = load_scenario(args.scenario)
    changes = {k: v for k, v in (("seed", args.seed), ("requests", args.requests)) if v is not None}
    try:
        if _token_mode(sc):
            return replace(sc, run=replace(sc.run, **changes)) if changes else sc
        return replace(sc, **changes) if changes else sc
    except ConfigError as e:
        raise e.in_file("command line") from None


def cmd_report(args: argparse.Namespace) -> int:
    """``workbench report``: the closed-loop mapping report (HTML + Markdown, or --json)."""
    from workbench.feedback.guard import closed_loop
    from workbench.feedback.report import build_report, write_report

    sc = _scenario_with_overrides(args)
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", sc.name).strip("._") or "scenario"  # never a path from the file
    out = Path(args.out or f"report-{safe}")
    if not args.json or args.out:
        writable_folder(out)
    command = "workbench report " + " ".join(
        [args.scenario, f"--out {out}"] + [f"--{k} {v}" for k in ("seed", "requests", "threshold")
                                           if (v := getattr(args, k)) is not None])
    loop = closed_loop(sc, threshold=args.threshold if args.threshold is not None else 0.05)
    rep = build_report(loop, command)
    if not args.json or args.out:
        try:
            paths = write_report(loop, rep, out)
        except OSError as e:
            raise UsageError(str(e) if isinstance(e, OutputError) else f"--out {out}: cannot write ({e})") from None
    if args.json:
        print(dumps(rep))
    else:
        say("\n".join([f"closed-loop mapping report for {sc.name}: " + ", ".join(str(p) for p in paths[:2]),
                         f"adaptation gain {rep['adaptation_gain']:+.1%} "
                         f"(p99 {rep['p99_before_s'] * 1e3:.3f} -> {rep['p99_after_s'] * 1e3:.3f} ms)"]
                        + [f"  {a['kind']}: {a['verdict']}" for a in rep["actions"]]))
    return 0


def _sweep_executor(where: str, workers: int):
    """``--executor``: None (the sweep's own local process pool), one thread, or a Dask cluster."""
    import re
    from concurrent.futures import ThreadPoolExecutor

    from workbench.feedback.sweep import dask_executor

    if where == "local":
        return ThreadPoolExecutor(max_workers=1) if workers == 1 else None
    if not re.fullmatch(r"(tcp|tls|inproc|ucx|ws|wss)://\S+", where):
        raise UsageError(f"--executor {where[:80]!r}: expected local or a Dask scheduler address "
                         "such as tcp://host:8786")
    return dask_executor(where)


def cmd_sweep(args: argparse.Namespace) -> int:
    """``workbench sweep``: the closed loop over a grid; writes sweep.csv and sweep.png."""
    from workbench.feedback.sweep import parse_values, plot, sweep, write_csv

    params = {}
    for item in args.set or []:
        if "=" not in item:
            raise UsageError(f"--set {item!r}: expected PATH=V1,V2,...")
        path, values = item.split("=", 1)
        params[path.strip()] = [v for v in parse_values(values) if v != ""]
    if not params:
        raise UsageError("sweep: the grid is empty: give at least one --set PATH=V1,V2,...")
    try:
        seeds = [int(s) for s in args.seeds.split(",") if s.strip()] if args.seeds else []
        ok = all(s >= 0 for s in seeds)
    except ValueError:
        ok = False
    if not ok:
        raise UsageError(f"--seeds {args.seeds[:80]!r}: expected comma-separated integers >= 0, e.g. 1,2,3")
    out = writable_folder(Path(args.out or "sweep-out"))
    executor = _sweep_executor(args.executor, args.workers)
    try:
        rows = sweep(args.scenario, params, seeds, args.requests, executor=executor)
    finally:
        if executor is not None:
            executor.shutdown(cancel_futures=True)
    try:  # both written safely (workbench.safe_io)
        write_csv(rows, out / "sweep.csv")
        plot(rows, next(iter(params)), out / "sweep.png")
    except OSError as e:
        raise output_error(out, e) from None
    say(f"{len(rows)} points: {out / 'sweep.csv'}, {out / 'sweep.png'}")
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
        mode = f"[token, {sc.run.model.parameters / 1e9:.2f} B parameters] " if _token_mode(sc) else ""
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
                         "e.g. tcp://host:8786 (needs pip install 'workbench[cluster]')")
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
    try:
        return args.func(args)
    except (ConfigError, UsageError) as e:
        print(f"workbench: error: {printable(str(e), one_line=True)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    finally:
        if argv is None:  # the command line's own process, which ends next: its last garbage collection would
            gc.freeze()  # walk every object numba made (~0.2 s); the OS takes the memory back instead


if __name__ == "__main__":
    sys.exit(main())

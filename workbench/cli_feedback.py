"""The ``workbench`` commands of the closed loop: ``report`` and ``sweep``.

Both cover request-level scenarios (a token-mode one is refused before anything is made),
and both check the output folder and every file they will write before the work starts,
so a refused target costs no simulation and leaves nothing half-written.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from workbench.cli_io import UsageError, dumps, output_error, say, scenario_with_overrides, writable_folder


def cmd_report(args: argparse.Namespace) -> int:
    """``workbench report``: the closed-loop mapping report (HTML + Markdown, or --json)."""
    from workbench.feedback.guard import closed_loop, require_request_level
    from workbench.feedback.report import build_report, report_targets, write_report

    sc = scenario_with_overrides(args)
    require_request_level(sc, "report", args.scenario)  # before any folder is made
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", sc.name).strip("._") or "scenario"  # never a path from the file
    out = Path(args.out or f"report-{safe}")
    if not args.json or args.out:
        _check_outputs(out, report_targets(out))
    command = "workbench report " + " ".join(
        [args.scenario, f"--out {out}"] + [f"--{k} {v}" for k in ("seed", "requests", "threshold")
                                           if (v := getattr(args, k)) is not None])
    loop = closed_loop(sc, threshold=args.threshold if args.threshold is not None else 0.05)
    rep = build_report(loop, command)
    if not args.json or args.out:
        try:
            paths = write_report(loop, rep, out)
        except OSError as e:
            raise output_error(out, e) from None
    if args.json:
        print(dumps(rep))
    else:
        say("\n".join([f"closed-loop mapping report for {sc.name}: " + ", ".join(str(p) for p in paths[:2]),
                         f"adaptation gain {rep['adaptation_gain']:+.1%} "
                         f"(p99 {rep['p99_before_s'] * 1e3:.3f} -> {rep['p99_after_s'] * 1e3:.3f} ms)"]
                        + [f"  {a['kind']}: {a['verdict']}" for a in rep["actions"]]))
    return 0


def _check_outputs(out: Path, paths: list[Path]) -> None:
    """The output folder can be written and none of ``paths`` is refused: checked before the work, not after."""
    from workbench.safe_io import check_targets

    writable_folder(out)
    try:
        check_targets(paths)
    except OSError as e:
        raise output_error(out, e) from None


def _sweep_executor(where: str, workers: int):
    """``--executor``: None (the sweep's own local process pool), one thread, or a Dask cluster (tcp:// only)."""
    from concurrent.futures import ThreadPoolExecutor

    from workbench.feedback.executors import dask_executor

    if where == "local":
        return ThreadPoolExecutor(max_workers=1) if workers == 1 else None
    return dask_executor(where)


def cmd_sweep(args: argparse.Namespace) -> int:
    """``workbench sweep``: the closed loop over a grid; writes sweep.csv and sweep.png."""
    from workbench.feedback.executors import scheduler_address
    from workbench.feedback.guard import require_request_level
    from workbench.feedback.sweep import output_paths, parse_values, sweep, write_outputs
    from workbench.scenario import load_scenario

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
    if args.executor != "local":
        scheduler_address(args.executor)  # its form now; whether a scheduler answers once the outputs are checked
    require_request_level(load_scenario(args.scenario), "sweep", args.scenario)  # before any folder is made
    out = Path(args.out or "sweep-out")
    _check_outputs(out, output_paths(out))
    executor = _sweep_executor(args.executor, args.workers)
    try:
        rows = sweep(args.scenario, params, seeds, args.requests, executor=executor)
    finally:
        if executor is not None:
            executor.shutdown(cancel_futures=True)
    try:  # both checked, then written safely (workbench.safe_io)
        csv_path, png_path = write_outputs(rows, next(iter(params)), out)
    except OSError as e:
        raise output_error(out, e) from None
    say(f"{len(rows)} points: {csv_path}, {png_path}")
    return 0

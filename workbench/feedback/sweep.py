"""Sweeps: the closed loop over a grid of scenario parameter values and seeds.

A parameter is a dotted path into the scenario's TOML (list items by index), e.g.
``streams.0.shapes.seq.drift.median``. Every grid point runs the closed loop and
records the compile-time mapping accuracy (bucket hit rate) and the runtime adaptation
gain, so the seed's figure can be drawn: as shapes drift past the envelope, accuracy
falls and the gain from retuning rises. Points run on local processes by default
(``concurrent.futures``); pass another executor to run them elsewhere, e.g. a Dask
cluster through :func:`~workbench.feedback.executors.dask_executor`
(``workbench sweep --executor tcp://host:8786``). Rows stream back as points finish, in
whatever order, and are returned in grid order; a point's result depends only on its
parameters and seed, never on where it ran. The closed loop covers request-level
scenarios: a token-mode one is refused before any point runs. The progress bar is drawn
on a terminal only, and erased when the sweep ends, so an error is always one line.
"""

from __future__ import annotations

import copy
import csv
import itertools
import os
import sys
import tomllib
from collections.abc import Callable
from concurrent.futures import Executor, ProcessPoolExecutor, as_completed
from pathlib import Path

from workbench.errors import ConfigError
from workbench.feedback.executors import dask_executor  # noqa: F401 - where callers found it
from workbench.safe_io import check_targets, write_file
from workbench.scenario import parse_scenario, read_toml, resolve


def parse_values(text: str) -> list:
    """``"200,400.5,x"`` -> [200, 400.5, "x"], each read as a TOML value where it can be."""
    out = []
    for cell in text.split(","):
        cell = cell.strip()
        try:
            out.append(tomllib.loads(f"v = {cell}")["v"])
        except tomllib.TOMLDecodeError:
            out.append(cell)
    return out


def set_path(data: dict, path: str, value, what: str = "--set") -> None:
    """Set a dotted path (list items by index) in a parsed TOML document; ``what`` names it in errors."""
    keys = path.split(".")
    node = data
    for i, k in enumerate(keys[:-1]):
        try:
            node = node[int(k)] if isinstance(node, list) else node[k] if isinstance(node, dict) else None
        except (KeyError, IndexError, ValueError):
            node = None
        if not isinstance(node, dict | list):
            raise ConfigError(f"{what} {path}", ".".join(keys[: i + 1]), "no such table in the scenario")
    if not isinstance(node, dict):
        raise ConfigError(f"{what} {path}", keys[-1], "cannot replace a list item")
    node[keys[-1]] = value


def grid(params: dict[str, list], seeds: list[int]) -> list[tuple[dict, int]]:
    """Every combination of parameter values, times every seed; refuses an empty grid."""
    if not seeds or any(not v for v in params.values()):
        raise ConfigError("sweep", {"params": params, "seeds": seeds}, "the grid is empty: give values and seeds")
    names = list(params)
    return [(dict(zip(names, combo, strict=True)), s)
            for combo in itertools.product(*(params[n] for n in names)) for s in seeds]


def run_point(args: tuple) -> dict:
    """One grid point: build the scenario, run the closed loop, return its CSV row."""
    from workbench.feedback.guard import closed_loop  # in the worker process

    raw, source, base_dir, point, seed, requests = args
    data = copy.deepcopy(raw)
    for path, value in point.items():
        set_path(data, path, value)
    data["seed"] = seed
    if requests:
        data["requests"] = requests
    loop = closed_loop(parse_scenario(data, source, Path(base_dir)))
    acc = loop.mapping_accuracy
    return {**point, "seed": seed,
            "bucket_hit_rate": acc["bucket_hit_rate"],
            "prediction_error": acc["prediction_error"]["all"]["mean"] if acc["prediction_error"] else None,
            "adaptation_gain": loop.adaptation_gain, "p99_before_s": loop.before.p99_s,
            "p99_after_s": (loop.final_summary or loop.baseline_summary)["latency_s"]["p99"],
            "final_actions": "+".join(loop.final_actions)}


BAR_WIDTH = 30  # characters


def _progress(done: int, total: int) -> None:
    """A progress bar on stderr, on a terminal only; erased when the last point is in."""
    filled = BAR_WIDTH * done // total
    _bar(f"[{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {done}/{total} points" if done < total else "")


def _bar(text: str) -> None:
    """Draw ``text`` over the bar's line on a terminal (an empty text erases it)."""
    if sys.stderr.isatty():
        sys.stderr.write("\r" + text.ljust(BAR_WIDTH + 24) + ("" if text else "\r"))
        sys.stderr.flush()


def sweep(scenario: str, params: dict[str, list], seeds: list[int], requests: int | None = None,
          executor: Executor | None = None, progress: Callable[[int, int], None] | None = _progress) -> list[dict]:
    """Run the closed loop on every grid point; rows come back in grid order."""
    from workbench.feedback.guard import require_request_level  # the simulator, only when a sweep runs

    path = resolve(scenario)
    raw = read_toml(path)
    points = grid(params, seeds)
    data = copy.deepcopy(raw)  # fail fast, in this process, on a bad path or value
    for point, _ in points[:1]:
        for p, v in point.items():
            set_path(data, p, v)
    require_request_level(parse_scenario(data, str(path), path.parent), "sweep", scenario)
    jobs = [(raw, str(path), str(path.parent), point, seed, requests) for point, seed in points]
    own = executor is None
    executor = executor or ProcessPoolExecutor(max_workers=min(len(jobs), os.cpu_count() or 1))
    futures = {executor.submit(run_point, j): i for i, j in enumerate(jobs)}
    rows: list[dict | None] = [None] * len(jobs)
    done = 0
    try:
        for f in as_completed(futures):  # as points finish, wherever they ran
            rows[futures[f]] = f.result()  # a ConfigError from a worker arrives here whole (it pickles)
            done += 1
            if progress:
                progress(done, len(futures))
    except BaseException:
        for f in futures:  # a bad point ends the sweep: run nothing more
            f.cancel()
        if progress is _progress:
            _bar("")  # the error's line alone
        raise
    finally:
        if own:
            executor.shutdown(cancel_futures=True)
    return [r for r in rows if r is not None]


def write_csv(rows: list[dict], path: Path) -> None:
    """One row per grid point (written safely: never through a link, see :mod:`workbench.safe_io`)."""
    def write(tmp: str) -> None:
        with open(tmp, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)

    write_file(path, write)


def output_paths(out: Path) -> list[Path]:
    """The files a sweep writes into ``out``."""
    return [out / "sweep.csv", out / "sweep.png"]


def write_outputs(rows: list[dict], param: str, out: Path) -> list[Path]:
    """sweep.csv and sweep.png, both targets checked before either is written; return their paths."""
    paths = output_paths(out)
    check_targets(paths)
    write_csv(rows, paths[0])
    plot(rows, param, paths[1])
    return paths


def plot(rows: list[dict], param: str, path: Path) -> None:
    """Accuracy and adaptation gain against the first swept parameter, mean over seeds."""
    import numpy as np
    from matplotlib.figure import Figure

    xs = sorted({r[param] for r in rows})
    acc = [np.mean([r["bucket_hit_rate"] or 0.0 for r in rows if r[param] == x]) for x in xs]
    gain = [np.mean([r["adaptation_gain"] for r in rows if r[param] == x]) for x in xs]
    fig = Figure(figsize=(7, 3.8))  # no pyplot: no global figure state, no backend switch
    ax = fig.subplots()
    ax.plot(xs, acc, "o-", color="tab:blue", label="compile-time mapping accuracy (bucket hit rate)")
    ax.plot(xs, gain, "s-", color="tab:red", label="runtime adaptation gain (relative p99 improvement)")
    ax.set_xlabel(param)
    ax.set_ylim(-0.05, 1.05)
    ax.grid(alpha=0.3)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.18), fontsize=8)
    write_file(path, lambda tmp: fig.savefig(tmp, format="png", dpi=110, bbox_inches="tight"))

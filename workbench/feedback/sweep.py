"""Sweeps: the closed loop over a grid of scenario parameter values and seeds.

A parameter is a dotted path into the scenario's TOML (list items by index), e.g.
``streams.0.shapes.seq.drift.median``. Every grid point runs the closed loop and
records the compile-time mapping accuracy (bucket hit rate) and the runtime adaptation
gain, so the seed's figure can be drawn: as shapes drift past the envelope, accuracy
falls and the gain from retuning rises. Points run on local processes by default
(``concurrent.futures``); pass another executor to run them elsewhere, e.g. a Dask
cluster through :func:`dask_executor` (``workbench sweep --executor tcp://host:8786``).
Rows stream back as points finish, in whatever order, and are returned in grid order;
a point's result depends only on its parameters and seed, never on where it ran.
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
from workbench.safe_io import write_file
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


def _progress(done: int, total: int, stream=sys.stderr) -> None:
    width = 30
    filled = width * done // total
    stream.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} points")
    stream.write("\n" if done == total else "")
    stream.flush()


def sweep(scenario: str, params: dict[str, list], seeds: list[int], requests: int | None = None,
          executor: Executor | None = None, progress: Callable[[int, int], None] | None = _progress) -> list[dict]:
    """Run the closed loop on every grid point; rows come back in grid order."""
    path = resolve(scenario)
    raw = read_toml(path)
    points = grid(params, seeds)
    data = copy.deepcopy(raw)  # fail fast, in this process, on a bad path or value
    for point, _ in points[:1]:
        for p, v in point.items():
            set_path(data, p, v)
    parse_scenario(data, str(path), path.parent)
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
        if progress is _progress and done:
            sys.stderr.write("\n")  # end the progress bar's line before the error's
        raise
    finally:
        if own:
            executor.shutdown(cancel_futures=True)
    return [r for r in rows if r is not None]


def dask_executor(address: str, timeout_s: float | None = None) -> Executor:
    """A ``concurrent.futures`` executor on the Dask distributed scheduler at ``address``.

    Needs the optional ``cluster`` extra (``pip install 'workbench[cluster]'``) here and
    ``workbench`` importable on the workers. Close it with ``shutdown()``, which also
    closes the client. Refuses, as a :class:`ConfigError`, a missing Dask or a scheduler
    that does not answer within ``timeout_s`` (default: Dask's ``distributed.comm.timeouts.connect``,
    30 s unless configured, e.g. ``DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT=5s``).
    """
    try:
        from distributed import Client
    except ImportError:
        raise ConfigError("--executor", address, "needs Dask: pip install 'workbench[cluster]'") from None
    try:
        client = Client(address, **({} if timeout_s is None else {"timeout": timeout_s}))
    except (OSError, TimeoutError, ValueError) as e:
        raise ConfigError("--executor", address, f"no Dask scheduler answered ({e.__class__.__name__})") from None
    return _ClientPool(client)


class _ClientPool(Executor):
    """A Dask client as an executor whose shutdown closes the client too."""

    def __init__(self, client) -> None:
        self.client = client
        self._pool = client.get_executor(pure=False)  # every point runs, even two alike

    def submit(self, fn, /, *args, **kwargs):
        return self._pool.submit(fn, *args, **kwargs)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        try:
            self._pool.shutdown(wait=wait and not cancel_futures)
        finally:
            self.client.close()


def write_csv(rows: list[dict], path: Path) -> None:
    """One row per grid point (written safely: never through a link, see :mod:`workbench.safe_io`)."""
    def write(tmp: str) -> None:
        with open(tmp, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)

    write_file(path, write)


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

"""What every ``workbench`` command shares: its one-line errors, safe output, JSON, folders, stdout.

Standard output is watched while a command runs (:func:`watched_stdout`): a reader that
closed the pipe (``workbench list | head -1``) ends the command quietly with status 0, as
``head`` expects; any other failure to write it (``> /dev/full``) is one line and status 2.
"""

from __future__ import annotations

import argparse
import errno
import json
import math
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.errors import ConfigError
from workbench.safe_io import OutputError, write_file
from workbench.terminal import printable

if TYPE_CHECKING:  # token mode only when a scenario asks for it
    from workbench.config import Scenario
    from workbench.serving.scenario import ServingScenario

EXIT_BAD_INPUT = 2
MAX_ANSWER_BYTES = 80_000  # 20,000 characters of UTF-8 at most 4 bytes each; more is refused as too long


class UsageError(Exception):
    """A command-line problem to report on one line with exit status 2."""


def output_error(path: Path, e: OSError) -> UsageError:
    """An output that could not be written, as one clear line."""
    return UsageError(str(e) if isinstance(e, OutputError) else f"{path}: cannot write ({e.strerror or e})")


def write_atomic(path: Path, write) -> None:
    """Write an output file safely (:func:`workbench.safe_io.write_file`); problems become one clear line."""
    try:
        write_file(path, write)
    except OSError as e:
        raise output_error(path, e) from None


def strict_json(obj):
    """``obj`` with every NaN or infinity replaced by None, so strict JSON parsers accept the output."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: strict_json(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [strict_json(v) for v in obj]
    return obj


def say(text: str) -> None:
    """Print text that may carry user input, control characters escaped."""
    print(printable(text))


def dumps(obj) -> str:
    """Strict JSON (no NaN), indented."""
    return json.dumps(strict_json(obj), indent=2, allow_nan=False, default=float)


def writable_folder(out: Path, option: str = "--out") -> Path:
    """``out`` exists (or can be made) and can be written; else one clear error naming ``option``."""
    import tempfile

    try:
        if out.is_symlink():
            raise OutputError(f"{out}: refusing to write into a symbolic link")
        out.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=out):  # an anonymous probe: no name in the folder to follow
            pass
    except OutputError as e:
        raise UsageError(f"{option} {e}") from None
    except OSError as e:
        raise UsageError(f"{option} {out}: cannot write there ({e.strerror or e})") from None
    return out


def token_mode(sc: Scenario | ServingScenario) -> bool:
    """Whether ``load_scenario`` gave a token-mode scenario (a :class:`ServingScenario`)."""
    from workbench.config import Scenario

    return not isinstance(sc, Scenario)


def scenario_with_overrides(args: argparse.Namespace) -> Scenario | ServingScenario:
    """The scenario ``args.scenario`` names, with ``--seed`` and ``--requests`` applied."""
    from dataclasses import replace

    from workbench.scenario import load_scenario

    sc = load_scenario(args.scenario)
    changes = {k: v for k, v in (("seed", args.seed), ("requests", args.requests)) if v is not None}
    try:
        if token_mode(sc):
            return replace(sc, run=replace(sc.run, **changes)) if changes else sc
        return replace(sc, **changes) if changes else sc
    except ConfigError as e:
        raise e.in_file("command line") from None


PATH_OPTIONS = ("trace", "out", "db", "figures", "answer_file", "drills_dir")  # options naming a file or folder


def refuse_empty_paths(args: argparse.Namespace) -> None:
    """An empty file or folder name is refused, never read as "not given" (``--trace ''`` wrote nothing)."""
    for name in PATH_OPTIONS:
        if getattr(args, name, None) == "":
            raise UsageError(f"--{name.replace('_', '-')} '': an empty path; give a file or folder name")


class WatchedStdout:
    """Standard output that remembers the error of a write or flush that failed, re-raised unchanged
    (so a session that saves its work on an I/O error still does)."""

    def __init__(self, stream) -> None:
        self.stream = stream
        self.error: OSError | None = None

    def write(self, text: str) -> int:
        """Write ``text``; a failure is remembered, then raised."""
        try:
            return self.stream.write(text)
        except OSError as e:
            self.error = e
            raise

    def flush(self) -> None:
        """Flush; a failure is remembered, then raised."""
        try:
            self.stream.flush()
        except OSError as e:
            self.error = e
            raise

    def __getattr__(self, name: str):
        return getattr(self.stream, name)


@contextmanager
def watched_stdout() -> Iterator[WatchedStdout]:
    """``sys.stdout`` watched (:class:`WatchedStdout`) for the duration of a command."""
    previous = sys.stdout
    sys.stdout = out = WatchedStdout(previous)
    try:
        yield out
    finally:
        if sys.stdout is out:
            sys.stdout = previous


def stdout_lost(e: OSError, own_process: bool) -> int:
    """The exit status once stdout could not be written: 0 if its reader closed the pipe, else 2 with one line.

    In the command line's own process, what is still buffered goes to /dev/null: the interpreter's
    last flush would fail again and print a traceback-like warning.
    """
    if own_process:
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            os.close(devnull)
        except (OSError, ValueError, AttributeError):
            pass
    if isinstance(e, BrokenPipeError) or e.errno == errno.EPIPE:
        return 0
    try:
        print(f"workbench: error: stdout: cannot write the output ({e.strerror or e})", file=sys.stderr)
    except OSError:
        pass
    return EXIT_BAD_INPUT

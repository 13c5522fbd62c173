"""What every ``workbench`` command shares: its one-line errors, safe output, JSON, folders."""

from __future__ import annotations

import json
import math
from pathlib import Path

from workbench.safe_io import OutputError, write_file
from workbench.terminal import printable

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

"""Writing output files safely: only where asked, only as regular files, never half-written.

Every file the workbench writes (a trace, a report and its figures, a sweep's CSV) goes
through :func:`write_file`: a symlink, FIFO, device or folder at the target is refused
(nothing is written through a link), an existing regular file keeps its permissions,
and the bytes land through a temporary file in the same folder, renamed over the target
only once complete.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path


class OutputError(OSError):
    """An output target that may not be written; its message names the path and why."""


def check_target(path: Path) -> int | None:
    """The permissions to keep (None if nothing is there); refuse anything but a regular file."""
    if path.is_symlink():
        raise OutputError(f"{path}: refusing to write through a symbolic link")
    if not path.exists():
        return None
    if not path.is_file():
        raise OutputError(f"{path}: refusing to write over something that is not a regular file")
    return stat.S_IMODE(path.stat().st_mode)


def write_file(path: Path, write: Callable[[str], object]) -> None:
    """Call ``write(tmp_path)``, then move the result over ``path`` (see the module docstring)."""
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise OutputError(f"{path}: the folder {folder} does not exist")
    mode = check_target(path)
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{path.name}.", suffix=".tmp")
        os.close(fd)
        write(tmp)
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except OSError:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
        raise


def write_bytes(path: Path, data: bytes) -> None:
    """``data`` into ``path`` by :func:`write_file`."""
    write_file(path, lambda tmp: Path(tmp).write_bytes(data))

"""Reading input and writing output files safely.

Every file the workbench reads (a scenario, a trace to replay, a profile, a drill) goes
through :func:`read_capped`: only a regular file (a FIFO or a device is refused before it
is opened, so nothing blocks), and at most a documented number of bytes
(:mod:`workbench.limits`), refused beyond that without reading it whole.

Writing: only where asked, only as regular files, never half-written.

Every file the workbench writes (a trace, a report and its figures, a sweep's CSV) goes
through :func:`write_file`: a symlink, FIFO, device or folder at the target is refused
(nothing is written through a link), an existing regular file keeps its permissions,
and the bytes land through a temporary file in the same folder, renamed over the target
only once complete. A command that writes several files checks them all first
(:func:`check_targets`), so a refused one leaves none of the others written.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable
from pathlib import Path

from workbench.errors import ConfigError


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


def check_targets(paths: Iterable[Path]) -> None:
    """Refuse (:class:`OutputError`) if any of ``paths`` may not be written (:func:`check_target`), before any is."""
    for path in paths:
        check_target(Path(path))


def write_file(path: Path, write: Callable[[str], object]) -> None:
    """Call ``write(tmp_path)``, then move the result over ``path`` (see the module docstring)."""
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise OutputError(f"{path}: the folder {folder} does not exist")
    mode = check_target(path)
    import tempfile  # only a run that writes a file needs it (start-up)

    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{path.name}.", suffix=".tmp")
        os.close(fd)
        write(tmp)
        os.chmod(tmp, mode if mode is not None else 0o666 & ~_umask())  # a new file gets the usual mode
        os.replace(tmp, path)
    except OSError:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
        raise


def _umask() -> int:
    """The process umask (read by setting it and putting it back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_bytes(path: Path, data: bytes) -> None:
    """``data`` into ``path`` by :func:`write_file`."""
    write_file(path, lambda tmp: Path(tmp).write_bytes(data))


def read_capped(path: Path, limit: int, key: str, what: str) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit``; else a :class:`ConfigError` naming ``key``."""
    def refuse(why: str) -> ConfigError:
        return ConfigError(key, str(path), f"{what}: {why}")

    try:
        if not stat.S_ISREG(os.stat(path).st_mode):  # before opening: a FIFO would block
            raise refuse("not a regular file")
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):  # swapped since the check
                raise refuse("not a regular file")
            data = f.read(limit + 1)
    except OSError as e:
        raise refuse(f"cannot read ({e.strerror or e.__class__.__name__})") from None
    if len(data) > limit:
        raise refuse(f"larger than the {limit:,} bytes read at most")
    return data

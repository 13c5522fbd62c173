"""Compile the kernels ahead of time: one pycc extension per entry point, in one process by default.

Each entry point of :data:`~workbench.aot.spec.ENTRIES` is compiled by numba's ``pycc`` into
its own extension (:func:`~workbench.aot.extension_path`), for the CPU the build runs on and
without numba's runtime (no kernel allocates). The entries are independent, so they can
compile in separate processes (``jobs``), but on this project's 2-core machine that was
slower, not faster: 79 and 98 s against 66 and 73 s in one process (two pairs, both orders,
cold caches, other sessions sharing the cores). The event loop is most of the work (about 60
of 67 CPU-seconds, three fifths of it numba's inliner copying IR), each process imports numba
and compiles the non-inlined callees it shares with the others (likely why), and in ``make``
the build already runs beside ``pip install``. So one process is the default; ``--jobs`` is there for bigger machines.

Three callers, one function (:func:`build`): ``python -m workbench.aot``, the setuptools hook
of ``setup.py`` (``pip install``, editable or not: the wheel carries the extensions) and the
Makefile, which starts it beside ``pip install`` (see the README). A lock in the target folder
makes concurrent builds of the same folder safe: the second waits, or returns at once
(``wait=False``, the editable hook), and finds the work done. A new extension replaces an older
one atomically: a process importing it meanwhile sees the old or the new file, never half of one.
"""

from __future__ import annotations

import contextlib
import importlib
import multiprocessing
import os
import shutil
import tempfile
import warnings
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from workbench.aot import BUILD, cpu_key, extension_name
from workbench.aot.spec import ENTRIES, array_type
from workbench.aot.stale import drop_stale_loop_cache


def numba_type(t):
    """The numba type of a :mod:`workbench.aot.spec` type."""
    from numba.core import types
    from numba.np.numpy_support import from_dtype

    if isinstance(t, tuple):
        return types.Tuple(tuple(numba_type(s) for s in t))
    if ":" not in t:
        return {"i8": types.int64, "f8": types.float64, "b1": types.boolean, "none": types.none}[t]
    dtype, rank = array_type(t)
    return types.Array(from_dtype(dtype), rank, "C")


def build_entry(name: str, folder: Path = BUILD) -> Path:
    """Compile the extension of entry point ``name`` into ``folder``; its path."""
    from numba.core.errors import NumbaPendingDeprecationWarning

    drop_stale_loop_cache()  # the kernels the build calls may load from numba's cache: never a stale one
    target = folder / extension_name(name)
    with tempfile.TemporaryDirectory(dir=folder) as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore", NumbaPendingDeprecationWarning)
        from numba.pycc import CC  # needs setuptools (a build-time dependency only)

        cc = CC(target.name.split(".")[0])
        cc.output_dir, cc.use_nrt, cc.verbose = tmp, False, False
        if cpu_key() != "generic":  # for this CPU: the file's name carries the key of its instruction set
            from llvmlite import binding

            cc.target_cpu = binding.get_host_cpu_name()
        entry = ENTRIES[name]
        fn = getattr(importlib.import_module(entry.module), name)
        cc.export(name, numba_type(entry.result)(*(numba_type(a) for a in entry.args)))(fn.py_func)
        cc.compile()
        os.replace(Path(tmp) / cc.output_file, target)
    return target


def build(folder: Path = BUILD, jobs: int = 1, wait: bool = True) -> list[Path] | None:
    """Compile every entry point missing from ``folder`` (``jobs`` processes at once); the current extensions.

    Entries whose extension of the current sources is there already are not rebuilt, and older
    builds are removed. None, with nothing done, when another process is building into ``folder``
    and ``wait`` is false."""
    folder.mkdir(parents=True, exist_ok=True)
    with _lock(folder, wait) as held:
        if not held:
            return None
        todo = [name for name in ENTRIES if not (folder / extension_name(name)).is_file()]
        jobs = max(1, min(len(todo), jobs))
        if jobs == 1:
            for name in todo:
                build_entry(name, folder)
        else:  # spawn: a fresh interpreter each, nothing of this process's state (numba's included) forked
            with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
                list(pool.map(build_entry, todo, [folder] * len(todo)))
        keep = {folder / extension_name(name) for name in ENTRIES}
        for old in folder.glob("_kernels_*"):
            if old not in keep:
                old.unlink(missing_ok=True)
        return sorted(keep)


def copy_current(source: Path, folder: Path) -> bool:
    """Copy the current extensions from ``source`` to ``folder`` if every one is there (a wheel built after make)."""
    found = [source / extension_name(name) for name in ENTRIES]
    if not all(p.is_file() for p in found):
        return False
    folder.mkdir(parents=True, exist_ok=True)
    for p in found:
        shutil.copy2(p, folder / p.name)
    return True


@contextlib.contextmanager
def _lock(folder: Path, wait: bool) -> Iterator[bool]:
    """Hold the folder's build lock (True), or yield False at once when another process holds it and not ``wait``."""
    try:
        import fcntl
    except ImportError:  # no POSIX locks (Windows): builds are not run concurrently there
        yield True
        return
    with open(folder / ".lock", "w") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)

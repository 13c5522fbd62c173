"""The numba kernels compiled ahead of time: CPython extensions built at install, imported without numba.

A ``workbench run`` process spent about half a second importing numba and setting up its
target context and cache before its first compiled call, and a fresh install compiled for a
minute or more on its first run. numba's ``pycc`` compiles the same kernels (the event loop,
the cost model, the token-serving loop; the numba source stays the one implementation, the
readable loops the reference) for the argument types of :mod:`.spec` into ``_build/``, one
extension per entry point, ``_kernels_<entry>_<digest>_<cpu>``: each imports in under a
millisecond and needs neither numba nor its runtime (the kernels allocate nothing:
``_nrt=False``). ``<digest>`` is the hash of every source the kernels are compiled from
(:data:`SOURCES`), so a build from other sources is never imported: the process takes the
JIT, as it does without a build; ``<cpu>`` is :func:`cpu_key`.

When the build happens: at install. ``setup.py`` hooks :mod:`.build` into setuptools'
``build_ext``, so ``pip install .``, ``pip install -e .`` and a wheel built by ``pip wheel .``
all carry the extensions, with no Makefile step and no compile on the first run
(``python -m workbench.aot`` rebuilds them by hand, after an edit to the kernels). Why this
and not a one-time build into a cache on first import: that first run would wait 70-90 s on
2 cores (and every fresh venv, CI job or notebook kernel would pay it on someone's first
call), while the install is where a user expects to wait and where a build failure can be
reported once. The cost of the choice is numba's ``pycc``, deprecated (pending since numba
0.57; still shipped and working in 0.68): when a numba without it, or a machine without a C
compiler, builds the package, the hook prints why and installs without the extensions, and
runs take numba's JIT (same results, bit for bit; the first run compiles and caches). So the
deprecation costs start-up time, never a wrong result or a failed install.

:func:`kernel` gives an entry point by path: ``aot`` (the build; an error when there is none
or a call's types do not fit its signature), ``jit`` (numba), ``auto`` (the build when there
is one and the call fits, else numba). Every path gives the same results bit for bit
(``tests/test_compiled.py``, ``tests/test_cost_table.py``, ``tests/test_serving_compiled.py``
run each one that is available).
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import importlib.machinery
import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

from workbench.aot.spec import ENTRIES, fits

PATHS = ("auto", "aot", "jit")
BUILD = Path(__file__).parent / "_build"  # ignored by git; ``make clean`` removes it
PACKAGE = Path(__file__).parent.parent
SOURCES = (  # every module whose code or constants the kernels are compiled from (relative to the package)
    "aot/spec.py", "runtime/compiled/layout.py", "runtime/compiled/parts.py", "runtime/compiled/queues.py",
    "runtime/compiled/kernel.py", "runtime/compiled/dispatch.py", "runtime/compiled/costs.py",
    "runtime/compiled/run.py", "runtime/trace.py", "compiler/cost_table.py", "compiler/cost_flat.py",
    "compiler/cost_book.py", "compiler/cost.py", "serving/compiled/layout.py", "serving/compiled/loop.py",
    "serving/compiled/run.py",
)


def digest() -> str:
    """The hash the build of the current sources is named by (16 hex digits)."""
    h = hashlib.sha256()
    for rel in SOURCES:
        h.update(rel.encode() + b"\0" + (PACKAGE / rel).read_bytes())
    return h.hexdigest()[:16]


@functools.cache
def cpu_key() -> str:
    """This CPU's instruction-set extensions as 8 hex digits (the ``flags`` of ``/proc/cpuinfo``), or ``generic``.

    The build is compiled for the CPU it is made on (5-20 % faster than a generic build) and named by this
    key, so a venv moved to a CPU without the same extensions finds no build and takes the JIT; where the
    flags cannot be read the build is generic."""
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            flags = next((line for line in f if line.startswith("flags")), "")
    except OSError:
        flags = ""
    words = flags.partition(":")[2].split()
    return hashlib.sha256(" ".join(sorted(words)).encode()).hexdigest()[:8] if words else "generic"


def extension_name(entry: str) -> str:
    """The file name of entry point ``entry``'s extension built from the current sources for this CPU."""
    return f"_kernels_{entry}_{digest()}_{cpu_key()}" + importlib.machinery.EXTENSION_SUFFIXES[0]


def extension_path(entry: str) -> Path:
    """Where the build of entry point ``entry`` of the current sources for this CPU lies."""
    return BUILD / extension_name(entry)


@functools.cache
def extension(entry: str) -> ModuleType | None:
    """The ahead-of-time build of ``entry`` from the current sources, imported once a process; None when none."""
    path = extension_path(entry)
    if not path.is_file():
        return None
    spec = importlib.util.spec_from_file_location(path.name.split(".")[0], path)
    try:
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    except ImportError:  # built for another interpreter or platform: the JIT runs instead
        return None
    return module


def numba_installed() -> bool:
    """Whether numba is installed (the JIT path, and what builds the extension)."""
    return importlib.util.find_spec("numba") is not None


def available(path: str = "auto", entry: str | None = None) -> bool:
    """Whether the kernels (only entry point ``entry``, when given) can run by ``path`` (``auto``: by either)."""
    if path not in PATHS:
        raise ValueError(f"kernel path must be one of {PATHS}, not {path!r}")
    if path == "jit":
        return numba_installed()
    ahead = built() if entry is None else extension(entry) is not None
    return ahead if path == "aot" else ahead or numba_installed()


def built() -> bool:
    """Whether every entry point has an ahead-of-time build of the current sources (all import)."""
    return all(extension(name) is not None for name in ENTRIES)


def paths() -> list[str]:
    """The paths that can run here, ``aot`` and ``jit`` (what the equality tests run each of)."""
    return [p for p in ("aot", "jit") if available(p)]


def kernel(name: str, path: str = "auto") -> Callable:
    """Entry point ``name`` of :data:`~workbench.aot.spec.ENTRIES` by ``path`` (``auto``, ``aot``, ``jit``)."""
    if path not in PATHS:
        raise ValueError(f"kernel path must be one of {PATHS}, not {path!r}")
    entry = ENTRIES[name]
    ext = extension(name) if path != "jit" else None
    if ext is None:
        if path == "aot":
            raise LookupError(f"no ahead-of-time build of the current sources ({extension_path(name)}): "
                              "python -m workbench.aot builds it")
        return _jit(name)
    compiled, spec, strict = getattr(ext, name), entry.args, path == "aot"

    def call(*args):
        if fits(args, spec):
            return compiled(*args)
        if strict:
            raise TypeError(f"{name}: the arguments do not fit the ahead-of-time signature (workbench/aot/spec.py)")
        return _jit(name)(*args)

    call.__name__ = call.__qualname__ = name
    return call


def kernel_for(name: str, path: str, args: tuple) -> Callable:
    """Entry point ``name`` by ``path`` for arguments of the types of ``args``, checked once here instead of at
    every call as :func:`kernel`'s are: the build's function itself when ``args`` fit its signature (a loop that
    re-enters a kernel with the same arrays pays the check once), else as :func:`kernel` picks."""
    if path not in PATHS:
        raise ValueError(f"kernel path must be one of {PATHS}, not {path!r}")
    ext = extension(name) if path != "jit" else None
    if ext is not None and fits(args, ENTRIES[name].args):
        return getattr(ext, name)
    return kernel(name, path)  # the JIT, or the build's refusal of these arguments


def _jit(name: str) -> Callable:
    """The numba dispatcher of ``name`` (its stale machine code dropped first, once a process)."""
    entry = ENTRIES[name]
    if entry.module not in sys.modules:
        where, fresh = entry.fresh.split(":")
        getattr(importlib.import_module(where), fresh)()
    return getattr(importlib.import_module(entry.module), name)

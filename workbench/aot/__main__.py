"""Build the kernels ahead of time: ``python -m workbench.aot`` (``make``, after the JIT warm-up).

Compiles every entry point of :data:`~workbench.aot.spec.ENTRIES` with numba's ``pycc``
(deprecated in numba, still shipped by 0.68) into one extension named by the digest of its
sources and the CPU's instruction set (:func:`~workbench.aot.cpu_key`), for the CPU the venv is made on,
without numba's runtime (no kernel allocates). The new build replaces any older one
atomically: a process importing it meanwhile sees the old or the new file, never half of one.
Prints the time taken.
"""

from __future__ import annotations

import importlib
import os
import tempfile
import time
import warnings
from pathlib import Path

from workbench.aot import BUILD, cpu_key, extension_path
from workbench.aot.spec import ENTRIES, array_type


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


def build() -> Path:
    """Compile the extension of the current sources into ``_build``; its path."""
    from numba.core.errors import NumbaPendingDeprecationWarning

    from workbench.runtime.compiled import drop_stale_cache

    drop_stale_cache()  # the kernels the build calls are loaded from numba's cache: never a stale one
    target = extension_path()
    name = target.name.split(".")[0]
    BUILD.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(dir=BUILD) as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore", NumbaPendingDeprecationWarning)
        from numba.pycc import CC  # needs setuptools (a build-time dependency only)

        cc = CC(name)
        cc.output_dir, cc.use_nrt, cc.verbose = tmp, False, False
        if cpu_key() != "generic":  # for this CPU: the file's name carries the key of its instruction set
            from llvmlite import binding

            cc.target_cpu = binding.get_host_cpu_name()
        for entry_name, entry in ENTRIES.items():
            fn = getattr(importlib.import_module(entry.module), entry_name)
            sig = numba_type(entry.result)(*(numba_type(a) for a in entry.args))
            cc.export(entry_name, sig)(fn.py_func)
        cc.compile()
        os.replace(Path(tmp) / cc.output_file, target)
    for old in BUILD.glob("_kernels_*"):
        if old != target:
            old.unlink(missing_ok=True)
    return target


if __name__ == "__main__":
    from workbench.aot import numba_installed

    if not numba_installed():
        print("numba is not installed: no ahead-of-time build (the workbench runs its Python loop)")
    else:
        t = time.perf_counter()
        try:
            path = build()
        except Exception as err:  # no compiler, no setuptools: set-up goes on, runs take numba's JIT
            print(f"no ahead-of-time build ({type(err).__name__}: {err}): runs take numba's JIT")
        else:
            print(f"ahead-of-time kernels built ({time.perf_counter() - t:.1f} s): {path.name}")

"""numba's on-disk cache of the JIT path, dropped when a source it was compiled from has changed.

numba checks a cached function against its own source file only; the kernels take code and
constants from several modules (:data:`workbench.aot.SOURCES`), so each cache gets a digest of
all of them beside it. The JIT path (:func:`workbench.aot.kernel`) calls an entry point's
function here (:attr:`~workbench.aot.spec.Entry.fresh`) before its first import in a process,
and the build (:mod:`workbench.aot.build`) before it compiles, so neither ever loads stale code.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

PACKAGE = Path(__file__).parent.parent  # the workbench package: the kernels' modules by path


def drop_stale_loop_cache() -> None:
    """Delete the on-disk machine code if any compiled module changed since it was built.

    numba checks a cached function against its own source file only, so an edit to a module
    it calls or takes constants from would leave stale code in use; a digest of all the
    package's sources (and of the cost model's, which the loop calls, and of the modules
    whose constants either freezes in), kept beside each cache, catches that.
    """
    here = PACKAGE / "runtime" / "compiled"
    compiler = PACKAGE / "compiler"  # the loop costs a plan's batches with the compiled cost model
    model = [compiler / "cost_table.py", compiler / "cost_flat.py", compiler / "cost.py"]
    drop_stale(model, compiler / "__pycache__", "cost_table.sha256", ("cost_table*",))
    drop_stale(sorted(here.glob("*.py")) + model + [compiler / "cost_book.py", here.parent / "trace.py"],
               here / "__pycache__", "sources.sha256", ("*",))


def drop_stale_serving_cache() -> None:
    """numba checks a cached kernel against its own file only: drop both kernels' machine code when either
    module, their layout or the cost model they call changed (the kernel in compiled/run inlines the scheduler of
    compiled/loop and calls the compiler's cost_table)."""
    here = PACKAGE / "serving" / "compiled"
    drop_stale([here / "layout.py", here / "loop.py", here / "run.py", PACKAGE / "compiler" / "cost_table.py"],
               here / "__pycache__", "kernels.sha256", ("loop*", "run*"))


def drop_stale(sources: list[Path], cache: Path, stamp_name: str, modules: tuple[str, ...]) -> None:
    """Delete the numba cache files of ``modules`` (name globs) in ``cache`` unless ``sources`` are unchanged
    since the digest in ``cache / stamp_name`` was written."""
    digest = hashlib.sha256(b"".join(p.read_bytes() for p in sources)).hexdigest()
    stamp = cache / stamp_name
    try:
        if stamp.read_text() == digest:
            return
    except OSError:
        pass
    for m in modules:
        for f in list(cache.glob(f"{m}.nbi")) + list(cache.glob(f"{m}.nbc")):
            f.unlink(missing_ok=True)
    try:
        cache.mkdir(exist_ok=True)
        stamp.write_text(digest)
    except OSError:  # a read-only install: numba keeps its cache elsewhere
        pass

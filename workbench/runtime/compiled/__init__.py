"""The general event loop compiled with numba: the same run as :mod:`workbench.runtime.loop`, faster.

:func:`compiled_applies` says whether a run can take the compiled loop (numba installed,
every policy one the compiled loop implements); :func:`run_compiled` runs it. The readable
loop stays the reference: ``tests/test_compiled.py`` proves the two equal field by field,
bit for bit, over random scenarios. numba and the compiled modules are imported on first
use only, so importing the workbench does not pay for them; their machine code is cached
on disk (``cache=True``). Runs normally import the build made at install (:mod:`workbench.aot`)
and never compile; ``python -m workbench.runtime.compiled`` warms the JIT's cache by hand.
"""

from __future__ import annotations

import hashlib
import importlib.util
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.runtime.assembly import distinct

if TYPE_CHECKING:
    from workbench.runtime.columns import RunColumns
    from workbench.runtime.engine import Engine

_SLOT_LIMIT = 1 << 24  # cost-table entries (class x batch size x shape key); beyond, the Python loop runs


def available() -> bool:
    """Whether numba is installed."""
    return importlib.util.find_spec("numba") is not None


def kernel_path(e: Engine) -> str:
    """The build of the compiled loop a run asks for: ``aot``, ``jit``, or ``auto`` (:func:`workbench.aot.kernel`)."""
    return e.loop if e.loop in ("aot", "jit") else "auto"


def compiled_applies(e: Engine) -> bool:
    """Whether the compiled loop implements every policy of this run (otherwise the Python loop runs)."""
    from workbench import aot
    from workbench.runtime import policies as pol

    if not aot.available(kernel_path(e)):
        return False
    if type(e.batching) not in (pol.NoBatching, pol.DynamicBatching, pol.StaticBatching):
        return False
    if type(e.discipline) not in (pol.Fifo, pol.StrictPriority, pol.WeightedFair):
        return False
    if type(e.placement) not in (pol.LeastLoaded, pol.RoundRobin, pol.Pinned):
        return False
    cores, n_cls = e.scenario.hardware.cores, len(e.class_qs)
    if cores >= 1 << 16 or n_cls + len(e.scenario.models) >= 1 << 16:  # an event packs its core or class (or
        # a loaded model, after the classes) in 16 bits
        return False
    keys = e.classification.shape_key
    n_keys = 1 if keys is None else len(distinct(keys)[0])  # no sort of every request's key when few
    return n_cls * (getattr(e.batching, "max_batch", 1) + 1) * n_keys <= _SLOT_LIMIT


def run_compiled(e: Engine) -> RunColumns:
    """The run's columns by the compiled loop (its build, or numba and its cache, loaded on first call)."""
    from workbench.runtime.compiled.driver import run_compiled as run

    return run(e)


def drop_stale_cache() -> None:
    """Delete the on-disk machine code if any compiled module changed since it was built.

    numba checks a cached function against its own source file only, so an edit to a module
    it calls or takes constants from would leave stale code in use; a digest of all the
    package's sources (and of the cost model's, which the loop calls, and of the modules
    whose constants either freezes in), kept beside each cache, catches that.
    """
    here = Path(__file__).parent
    compiler = here.parent.parent / "compiler"  # the loop costs a plan's batches with the compiled cost model
    model = [compiler / "cost_table.py", compiler / "cost_flat.py", compiler / "cost.py"]
    drop_stale(model, compiler / "__pycache__", "cost_table.sha256", ("cost_table*",))
    drop_stale(sorted(here.glob("*.py")) + model + [compiler / "cost_book.py", here.parent / "trace.py"],
               here / "__pycache__", "sources.sha256", ("*",))


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

"""The general event loop compiled with numba: the same run as :mod:`workbench.runtime.loop`, faster.

:func:`compiled_applies` says whether a run can take the compiled loop (numba installed,
every policy one the compiled loop implements); :func:`run_compiled` runs it. The readable
loop stays the reference: ``tests/test_compiled.py`` proves the two equal field by field,
bit for bit, over random scenarios. numba and the compiled modules are imported on first
use only, so importing the workbench does not pay for them; their machine code is cached
on disk (``cache=True``). Runs normally import the build made at install (:mod:`workbench.aot`)
and never compile; ``python -m workbench.warm`` warms the JIT's cache by hand.
"""

from __future__ import annotations

import importlib.util
from typing import TYPE_CHECKING

from workbench.unique import distinct

if TYPE_CHECKING:
    from workbench.runtime.columns import RunColumns
    from workbench.runtime.run_setup import RunSetup

_SLOT_LIMIT = 1 << 24  # cost-table entries (class x batch size x shape key); beyond, the Python loop runs


def available() -> bool:
    """Whether numba is installed."""
    return importlib.util.find_spec("numba") is not None


def kernel_path(e: RunSetup) -> str:
    """The build of the compiled loop a run asks for: ``aot``, ``jit``, or ``auto`` (:func:`workbench.aot.kernel`)."""
    return e.loop if e.loop in ("aot", "jit") else "auto"


def compiled_applies(e: RunSetup) -> bool:
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


def run_compiled(e: RunSetup) -> RunColumns:
    """The run's columns by the compiled loop (its build, or numba and its cache, loaded on first call)."""
    from workbench.runtime.compiled.driver import run_compiled as run

    return run(e)

"""The ahead-of-time build's entry points: which numba kernels, and the exact argument types each takes.

pycc compiles a kernel for one signature; its wrapper checks little when it unboxes an
array (the item size, not the dtype, the rank or the layout), so the types the callers pass
are written down here once, numba-free, and serve twice: :mod:`workbench.aot.__main__`
turns them into numba types for the build, and :func:`fits` checks every call against them
at run time (a call that does not fit goes to the JIT, which compiles what it is given).

A type is ``"i8"``, ``"f8"`` or ``"b1"`` (int64, float64, bool scalars), ``"i4:2"`` (a
writable, aligned, C-contiguous int32 array of rank 2), or a tuple of types (a tuple argument).
The arguments are those ``runtime/compiled/driver.py``, ``compiler/plan.py`` and
``serving/compiled/driver.py`` pass.
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

import numpy as np


class Entry(NamedTuple):
    """A kernel the build exports: where its numba source lives, its arguments and its result."""

    module: str  # the module that defines the @njit function (the JIT path imports it)
    args: tuple  # argument types, as above
    result: str  # "i8", or "none"
    fresh: str  # "module:function" the JIT path calls before importing ``module``: drops numba's stale cache


_LOOP_W = ("i8:2", "i8:1", "i8:2", "i8:2", "i8:1", "i8:1", "i8:1", "f8:2",  # a cost book's Flat tables
           "i8:2", "i8:2", "f8:1", "i8:1", "f8:1", "i8:1", "f8:1", "i8:1", "i8:1",  # mk bk slow cb cscale keyval
           "i8:2", "f8:2", "f8:3")  # hwf hwi tiles, then scratch
ENTRIES = {
    "run_loop": Entry("workbench.runtime.compiled.run", (
        ("i8:1", "f8:1", "i8:1"),  # P: pi, pf, pref
        ("f8:2", "i4:2", "f8:1"),  # R: rf, ri4, extra
        ("i4:1", "i8:2", "i4:1"),  # Q: qbuf, qt, csr
        ("i8:2", "f8:2", "f8:2", "i8:2", "f8:1"),  # K: cli, clf, sw, sb, sbt
        ("i4:2", "f8:2"),  # B: bi, bf
        ("i8:2", "f8:2", "f8:3"),  # C: ci, cf, todo
        ("f8:1", "i8:2"),  # H: ht, hq
        ("i4:3", "f8:1", "i8:2", "f8:2", "f8:2", "i8:2", "f8:2"),  # T: slot, cmean, cph, ph, cinfo, reci, recf
        _LOOP_W,  # W: the cost book (or no_book)
        ("i8:2", "f8:1", "i8:1", "i4:1", "f8:2"),  # X: rres, fac, scr, bc, bcur
        "i8:1", "f8:1"), "i8", "workbench.aot.stale:drop_stale_loop_cache"),  # si, sf
    "kernel_costs": Entry("workbench.compiler.cost_table", (
        "i8:2", "i8:1", "i8:2", "i8:2", "i8:1", "i8:1", "i8:1", "f8:2",  # the mapping's Flat tables
        "i8", "i8", "i8", "i8", "b1", "i8", "f8", "f8", "f8", "i8",  # k0 k1 batch value naive sram bw peak launch mma
        "i8:1", "i8:2", "f8:2", "f8:2"), "none", "workbench.aot.stale:drop_stale_loop_cache"),  # tiles, scratch, out
    "run_tokens": Entry("workbench.serving.compiled.run", (
        "i8:1", "f8:1", "i8:1", "f8:1", "i8:2", "f8:2", "f8:1",  # pi, pf, si, sf, q, g, token_s
        "i8:1", "i8:1", "i8:1", "i8:1", "i8:1", "i8:2", "i8:1",  # running, waiting, swapped, snapshot, decodes, pre,
        "f8:2",  # sizes; dense
        _LOOP_W[:8] + ("i8:1", "i8:2", "f8:2", "f8:2", "f8:2"),  # cm: Flat tables, tiles, scratch, (kind, depth), out
        "f8:2"), "i8", "workbench.aot.stale:drop_stale_serving_cache"),  # rows
}

_DTYPES = {"i8": np.dtype(np.int64), "i4": np.dtype(np.int32), "f8": np.dtype(np.float64)}
_SCALARS = {"i8": (int, np.int64), "f8": (float, np.float64), "b1": (bool, np.bool_)}


@functools.cache  # a few type strings, looked up on every call of a build's kernel
def array_type(t: str) -> tuple[np.dtype, int]:
    """(dtype, rank) of an array type such as ``"f8:2"``."""
    code, rank = t.split(":")
    return _DTYPES[code], int(rank)


def fits(value: Any, t: Any) -> bool:
    """Whether ``value`` has type ``t`` exactly as numba would type it (``typeof``)."""
    if isinstance(t, tuple):
        return type(value) is tuple and len(value) == len(t) and all(fits(v, s) for v, s in zip(value, t))
    if ":" not in t:
        return type(value) in _SCALARS[t]
    if type(value) is not np.ndarray:
        return False
    dtype, rank = array_type(t)
    flags = value.flags
    return value.ndim == rank and value.dtype == dtype and flags.c_contiguous and flags.writeable and flags.aligned

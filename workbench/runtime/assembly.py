"""Lean assembly of a loop's raw columns into trace columns: narrow, owned, and zero until written.

Helpers of :meth:`workbench.runtime.engine.Engine._trace`. Three habits keep the peak low:

* a column is taken out of the loop's buffers (and the loop's reference to them dropped)
  before the next one is built, so the loop's 2-D state is let go as early as possible;
* a column that is zero everywhere (no reloads, no fallback, one bucket) is a fresh
  ``np.zeros``: calloc'd pages that are never written cost no memory;
* indices are stored in the narrowest integer type their limits allow
  (:mod:`workbench.limits`), widened only when a value does not fit.

Every value is the one the plain assembly computes, bit for bit (``tests/test_lean_trace.py``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

f8 = np.float64


def owned(a: np.ndarray) -> np.ndarray:
    """``a``, copied when it is a view into a larger buffer (a row of the compiled loop's state).

    The trace outlives the loop: a view would keep the whole buffer alive with it.
    """
    return a.copy() if a.base is not None and np.asarray(a.base).size > a.size else a


def narrow(values: Any, dtype: type) -> np.ndarray:
    """``values`` as ``dtype`` (int8, int16, int32), or int32 / int64 where a value does not fit."""
    a = np.asarray(values)
    if a.dtype == dtype:
        return owned(a)
    if len(a) and a.dtype.kind in "iu":
        lo, hi = int(a.min()), int(a.max())
        for t in (dtype, np.int32, np.int64):
            if np.iinfo(t).min <= lo and hi <= np.iinfo(t).max:
                return a.astype(t)
    return a.astype(dtype)


def dense_floats(d: dict[int, float] | np.ndarray | None, nb: int) -> np.ndarray:
    """A per-batch float column from a loop's sparse dict or dense buffer; untouched zeros where none is set."""
    out = np.zeros(nb)  # calloc'd: pages never written cost nothing
    if isinstance(d, np.ndarray):
        d = d[:nb]
        if d.any():  # reading an unwritten buffer maps no memory
            out[:] = d
    elif d:
        out[np.fromiter(d.keys(), np.int64)] = np.fromiter(d.values(), f8)
    return out


def rejections(r: dict[int, float] | np.ndarray | None, n: int) -> np.ndarray | None:
    """Time of rejection per request (nan where none), or None when no request was rejected."""
    if isinstance(r, np.ndarray):
        return owned(r) if np.isfinite(r).any() else None
    if not r:
        return None
    out = np.full(n, np.nan)
    out[np.fromiter(r.keys(), np.int64)] = np.fromiter(r.values(), f8)
    return out


def table_column(table: list[int], index: np.ndarray, dtype: type) -> np.ndarray:
    """``table[index]`` as ``dtype``; untouched zeros when every entry of the table is 0."""
    if not any(table):
        return np.zeros(len(index), dtype=dtype)
    return narrow(table, dtype).take(index)


def factors(chunks: list[np.ndarray], nb: int) -> np.ndarray:
    """The first ``nb`` unit-mean factors, one per batch (a view where one chunk holds them)."""
    if not chunks:
        return np.zeros(0)
    return (chunks[0] if len(chunks) == 1 else np.concatenate(chunks))[:nb]


def memory_share(numerator: np.ndarray | None, copy_s: np.ndarray, link_share: float,
                 work: np.ndarray) -> np.ndarray:
    """Memory-bound share of each batch's work: (iso x share + copy x link share) / work, 0 where no work.

    ``numerator`` is iso x share per batch (a fresh array, overwritten), or None where every share
    is 0 and no batch copied weights: then the column is untouched zeros (0 x iso + 0 / work
    is +0, bit for bit, as iso is finite and non-negative). ``copy_s`` may be scaled in place.
    """
    if numerator is None:
        return np.zeros(len(work))
    b_mem = numerator
    if copy_s.any():  # a copy writes HBM at the link's rate; a wait draws nothing (adding +0.0 changes no bit)
        copy_s *= link_share
        b_mem += copy_s
    positive = work > 0
    np.divide(b_mem, work, out=b_mem, where=positive)
    b_mem[~positive] = 0.0
    return b_mem


def imbalance(curves: list[tuple], batch: np.ndarray, b_class: np.ndarray, b_disp: np.ndarray,
              arrival_s: np.ndarray) -> np.ndarray:
    """Per request: the class's placement-blocked time between its arrival and its dispatch (s), 0 if rejected.

    A request's class is its batch's; each class's requests are gathered by index, so no
    full-length dispatch column is built.
    """
    out = np.zeros(len(batch))
    done = np.flatnonzero(batch >= 0)
    cls = b_class.take(batch[done]) if len(done) else np.zeros(0, dtype=np.int64)
    for c, (t_c, cum_c) in enumerate(curves):
        mine = done[cls == c]
        out[mine] = np.interp(b_disp.take(batch[mine]), t_c, cum_c) - np.interp(arrival_s[mine], t_c, cum_c)
    np.maximum(out, 0.0, out=out)
    return out

"""Percentiles of a 1-D float array, as ``np.percentile`` (method ``linear``) gives them, bit for bit.

Why not call ``np.percentile``: it partitions at the indices it needs through ``np.unique``,
which asks ``np.ma.is_masked`` and so imports ``numpy.ma`` (~10 ms, in every ``workbench run``
process, for four numbers). This is the same computation (numpy's ``_quantile``: virtual
index ``(n - 1) q``, its floor and the next index, a partition at both, then ``_lerp``),
operation for operation; ``np.percentile`` stays the reference (``tests/test_quantiles.py``
compares them bit for bit, NaNs, ties, signed zeros and one-element arrays included). The order
statistics are placed by one partition at all of them (:func:`_select`), after a long run of the
least value has been put first in one pass.
"""

from __future__ import annotations

import numpy as np


def percentiles(x: np.ndarray, q: list[float], overwrite: bool = False) -> np.ndarray:
    """``np.percentile(x, q, overwrite_input=overwrite)`` of a non-empty 1-D float64 ``x``; ``q`` in [0, 100]."""
    a = x if overwrite else x.copy()
    n = len(a)
    virtual = (n - 1) * (np.asarray(q, dtype=np.float64) / 100)
    below = np.floor(virtual)
    above = below + 1
    last = virtual >= n - 1  # past the last index: the maximum
    below[last] = -1
    above[last] = -1
    below[virtual < 0] = 0
    above[virtual < 0] = 0
    lo, hi = below.astype(np.intp), above.astype(np.intp)
    if _signed_zeros(a):  # -0.0 beside 0.0: which lands at an index depends on the algorithm, so numpy's own
        kth = np.concatenate(([0, -1], lo, hi)) % n  # as np.percentile places them (-1: the last, where NaNs sort)
        kth.sort()
        a.partition(kth)
    else:
        _select(a, np.concatenate(([-1], lo, hi)) % n)
    if np.isnan(a[-1]):
        return np.full(len(virtual), np.nan)
    prev, nxt = a[lo], a[hi]
    gamma = virtual - lo  # as numpy: the weight from the (possibly reset) lower index
    diff = nxt - prev
    out = prev + diff * gamma
    np.subtract(nxt, diff * (1 - gamma), out=out, where=gamma >= 0.5)
    return out


def _select(a: np.ndarray, kth: np.ndarray) -> None:
    """The order statistics ``kth`` of ``a`` put in place, as ``a.partition(kth)`` puts them.

    A long run of the least value is put first in one pass (:func:`_least_first`); one partition at
    the indices past it does the rest. Why not one index at a time (this module did that until
    2026-12-05, for numpy's SIMD selection at a single index): under numpy 2.4 on this project's
    machine that path is no faster than a partition at all of them (400k elements, four
    percentiles: 6.6 against 5.0 ms), and it slows ten-fold or more when the index falls inside a
    long run of equal values (60 % of them equal: 68 against 3.9 ms); a partition at several
    indices does not. The values at the ``kth`` indices are the same order statistics, so the same
    values; equal values are interchangeable, except ``-0.0`` and ``0.0``, which the caller keeps
    on numpy's own path.
    """
    start = _least_first(a)
    past = [k - start for k in sorted(set(kth.tolist())) if k >= start]  # (not np.unique: it imports numpy.ma)
    if past:
        a[start:].partition(past)


def _least_first(a: np.ndarray) -> int:
    """Move a long run of ``a``'s least value to its front, the rest after it; return the run's length (0: not done).

    Such runs are common here: the waits of requests served at once (zeros), the latencies of a
    deterministic service at low load (the service time). Placed in one pass, they leave the
    partition a shorter array (400k waits, 60 % zeros: 4.7 -> 3.3 ms); only when the run holds
    more than an eighth of ``a``.
    """
    least = a.min()
    low = a == least  # (with a NaN in ``a`` its least is NaN, equal to nothing: not done)
    run = int(np.count_nonzero(low))
    if run <= len(a) // 8:
        return 0
    a[run:] = a[~low]  # (the right side is a copy: the rest, in order)
    a[:run] = least
    return run


def _signed_zeros(a: np.ndarray) -> bool:
    """Whether ``a`` holds a ``-0.0`` (then ``0.0`` and ``-0.0`` compare equal but print apart)."""
    neg = np.signbit(a)
    return bool(neg.any()) and bool((a[neg] == 0).any())

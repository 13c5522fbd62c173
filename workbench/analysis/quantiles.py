"""Percentiles of a 1-D float array, as ``np.percentile`` (method ``linear``) gives them, bit for bit.

Why not call ``np.percentile``: it partitions at the indices it needs through ``np.unique``,
which asks ``np.ma.is_masked`` and so imports ``numpy.ma`` (~10 ms, in every ``workbench run``
process, for four numbers). This is the same computation (numpy's ``_quantile``: virtual
index ``(n - 1) q``, its floor and the next index, a partition at both, then ``_lerp``),
operation for operation; ``np.percentile`` stays the reference (``tests/test_quantiles.py``
compares them bit for bit, NaNs, ties, signed zeros and one-element arrays included). The order
statistics are placed one at a time (:func:`_partition_in_turn`), numpy's fast path for a single
index, rather than by one call with all of them.
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
        _partition_in_turn(a, np.concatenate(([-1], lo, hi)) % n)
    if np.isnan(a[-1]):
        return np.full(len(virtual), np.nan)
    prev, nxt = a[lo], a[hi]
    gamma = virtual - lo  # as numpy: the weight from the (possibly reset) lower index
    diff = nxt - prev
    out = prev + diff * gamma
    np.subtract(nxt, diff * (1 - gamma), out=out, where=gamma >= 0.5)
    return out


def _partition_in_turn(a: np.ndarray, kth: np.ndarray) -> None:
    """The order statistics ``kth`` of ``a`` put in place, as ``a.partition(kth)``, one at a time, each on
    the part of the array past the one before.

    numpy partitions at one index with its SIMD selection (x86-simd-sort) but at several with its
    scalar introselect, 4-5 times slower at 400k elements: placing each in turn takes the fast
    path every time. A long run of the least value is put first at once (:func:`_least_first`).
    An order statistic that is the least of what is left (the index after the one just placed:
    a percentile's upper neighbour) or the greatest (the last index) is found by
    ``argmin``/``argmax`` and swapped into place, a scan instead of a selection (while no NaN is
    left: NaNs sort last). The values at the ``kth`` indices are the same order statistics, so the
    same values; equal values are interchangeable, except ``-0.0`` and ``0.0``, which the caller
    keeps on numpy's path.
    """
    start, last = _least_first(a), len(a) - 1
    for k in sorted(set(kth.tolist())):  # (not np.unique: it imports numpy.ma)
        if k < start:  # inside the run of the least value, already in place
            continue
        rest = a[start:]
        if k == start or k == last:  # the least or the greatest of the rest: one scan and a swap, not a selection
            j = int(rest.argmin()) if k == start else int(rest.argmax())
            if not np.isnan(rest[j]):
                rest[k - start], rest[j] = rest[j], rest[k - start]
                start = k + 1
                continue
        rest.partition(k - start)
        start = k + 1


def _least_first(a: np.ndarray) -> int:
    """Move a long run of ``a``'s least value to its front, the rest after it; return the run's length (0: not done).

    numpy's selection slows ten-fold or more when the index it selects falls inside a long run of
    equal values (400k elements, 60 % of them equal: 42 ms against 5), and such runs are common
    here: the waits of requests served at once (zeros), the latencies of a deterministic service
    at low load (the service time). The least value's run is placed in one pass instead, and the
    selections go on past it; only when the run holds more than an eighth of ``a``.
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

"""Percentiles of a 1-D float array, as ``np.percentile`` (method ``linear``) gives them, bit for bit.

Why not call ``np.percentile``: it partitions at the indices it needs through ``np.unique``,
which asks ``np.ma.is_masked`` and so imports ``numpy.ma`` (~10 ms, in every ``workbench run``
process, for four numbers). This is the same computation (numpy's ``_quantile``: virtual
index ``(n - 1) q``, its floor and the next index, a partition at both, then ``_lerp``),
operation for operation; ``np.percentile`` stays the reference (``tests/test_quantiles.py``
compares them bit for bit, NaNs, ties and one-element arrays included).
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
    kth = np.concatenate(([0, -1], lo, hi)) % n  # the order statistics to place (-1: the last, where NaNs sort)
    kth.sort()
    a.partition(kth)
    if np.isnan(a[-1]):
        return np.full(len(virtual), np.nan)
    prev, nxt = a[lo], a[hi]
    gamma = virtual - lo  # as numpy: the weight from the (possibly reset) lower index
    diff = nxt - prev
    out = prev + diff * gamma
    np.subtract(nxt, diff * (1 - gamma), out=out, where=gamma >= 0.5)
    return out

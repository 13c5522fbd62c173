"""Distinct integer codes, as ``np.unique`` finds them, through a dense table when the codes are few.

Shared by the compiler (a plan's missed shapes), the runtime (queues, batch costs) and the
analysis: no sort where a count will do, and no ``numpy.ma`` import (``np.unique`` asks
``np.ma.is_masked``).
"""

from __future__ import annotations

import numpy as np


def distinct(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(codes, return_inverse=True)`` of non-negative integer codes, the inverse as int32 where it can be.

    When the codes are few (the largest under 4 per code, or 65,536) they are found through a
    dense table (no sort, no copy of the codes); the values and rows are the same as
    ``np.unique``'s either way.
    """
    top = int(codes.max(initial=-1)) + 1
    if len(codes) and int(codes.min()) >= 0 and top <= max(4 * len(codes), 1 << 16):
        present = np.zeros(top, dtype=bool)
        present[codes] = True
        slot = np.cumsum(present, dtype=np.int32 if top < 2**31 else np.int64)
        slot -= 1
        return np.flatnonzero(present), slot.take(codes)
    values, inverse = np.unique(codes, return_inverse=True)
    return values, inverse.ravel()


def distinct_values(codes: np.ndarray) -> np.ndarray:
    """``np.unique(codes)`` of integer codes (sorted distinct values, the codes' dtype) without ``np.unique``.

    A plain ``np.unique`` asks ``np.ma.is_masked``, which imports ``numpy.ma`` (~10 ms of a
    ``workbench run``'s start-up); non-negative codes are found by a count instead, others by a sort.
    """
    if len(codes) and int(codes.min()) >= 0 and int(codes.max()) < max(4 * len(codes), 1 << 16):
        return np.flatnonzero(np.bincount(codes)).astype(codes.dtype, copy=False)
    ordered = np.sort(codes)
    keep = np.ones(len(ordered), dtype=bool)
    np.not_equal(ordered[1:], ordered[:-1], out=keep[1:])
    return ordered[keep]

"""Two runs of times merged by one sort of packed 64-bit keys: a time's bits and one tag bit.

A float64 >= 0 (not ``-0.0``, not NaN) orders as its bit pattern does as an unsigned integer, and
its top bit (the sign) is 0: shifted left by one, the bits leave room for a tag in the lowest
bit, and the keys order by time, then by tag. One sort of the keys (no index array, no gathers)
merges two arrays of times as a stable sort of their concatenation does when the tag is 0 for
the first and 1 for the second: equal times keep the first's before the second's, and equal
keys are equal values. Used for the queue-depth curve (enqueues before leaves at a tie,
:meth:`workbench.runtime.trace.Trace.queue_depth`) and to merge two arrival streams (:mod:`.workload`); each is
tested equal, bit for bit, to its reference.
"""

from __future__ import annotations

import sys

import numpy as np

_LOW_BYTE = 0 if sys.byteorder == "little" else 7  # where a uint64's lowest byte lies in memory


def orders_as_bits(x: np.ndarray) -> bool:
    """Whether every value is >= 0, not ``-0.0`` and not NaN: then floats and their bit patterns order alike."""
    if not len(x):
        return True
    lo = x.min()
    if not lo >= 0:  # a negative value or NaN
        return False
    return bool(lo > 0) or not bool(np.signbit(x).any())


def tagged_sort(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """The keys of ``first`` (tag 0) and ``second`` (tag 1), sorted (float64 arrays for which
    :func:`orders_as_bits` holds)."""
    m = len(first)
    key = np.empty(m + len(second), np.uint64)
    key[:m] = first.view(np.uint64)
    key[m:] = second.view(np.uint64)
    key <<= np.uint64(1)
    key[m:] |= np.uint64(1)
    key.sort(kind="stable")  # equal keys are equal values: any sort gives the same array (stable is faster here)
    return key


def tags(key: np.ndarray) -> np.ndarray:
    """Each key's tag, 0 or 1 (uint8, a new array)."""
    return np.bitwise_and(key.view(np.uint8)[_LOW_BYTE::8], 1)


def untag(key: np.ndarray) -> np.ndarray:
    """The keys' times: the tags shifted out in place, the array viewed as float64 (``key`` is consumed)."""
    key >>= np.uint64(1)
    return key.view(np.float64)

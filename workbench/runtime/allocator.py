"""Give the C allocator's free pages back to the OS after a phase that freed large temporaries.

glibc raises its mmap threshold (up to 32 MiB) each time it frees a large mapped block, so
later arrays of a few MiB come from its heap; once freed they stay resident until
``malloc_trim`` returns their pages. Generating and classifying a few million requests, or
assembling their trace, frees tens of bytes per request of such temporaries (measured in
``tests/benchmarks/SPEED.md``). Where there is no ``malloc_trim`` (macOS, musl) this does
nothing. It changes no value: only how much memory the process holds.
"""

from __future__ import annotations

import ctypes
import functools
import sys
from collections.abc import Callable

LARGE_RUN = 1 << 18  # requests: below this the temporaries are a few MiB and trimming is not worth a call


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim``, or None where the C library has none."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return trim


def release_free_memory(n_requests: int) -> bool:
    """Return the allocator's free pages to the OS after a phase of a large run; True if it did."""
    trim = _malloc_trim() if n_requests >= LARGE_RUN else None
    if trim is None:
        return False
    trim(0)
    return True

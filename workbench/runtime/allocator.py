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

LARGE_RUN = 1 << 20  # requests: below this the temporaries are a few MiB and trimming is not worth a call (nor
# the page faults of taking the pages back: ~4 us each on a VM, ~10 ms a trim at 400k requests)
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # glibc's mallopt parameters
MMAP_CEILING = 32 << 20  # bytes: where glibc's own dynamic mmap threshold stops rising (64-bit)


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


@functools.cache
def _mallopt() -> Callable[[int, int], int] | None:
    """glibc's ``mallopt``, or None where the C library has none."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        opt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return None
    opt.argtypes, opt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return opt


def keep_freed_blocks() -> bool:
    """Let glibc reuse freed blocks under 32 MiB from the start of the process, as it does once warmed up.

    glibc maps every block over 128 KiB afresh (and unmaps it when freed) until a free raises its
    mmap threshold, and gives the top of its heap back whenever more than twice that threshold
    is free there; a run that allocates and frees columns of a few MiB (3.2 MB at 400k requests)
    thus touches fresh pages again and again, a page fault each (about 4 us on a VM: a third
    of the 26k faults of a 400k-request ``workbench run``). Setting both thresholds where
    glibc's own adjustment ends (32 MiB mapped, 64 MiB trimmed) keeps those blocks for reuse;
    blocks of 32 MiB and more are mapped and given back as before, and ``release_free_memory``
    still trims a large run. Only the command line's own process calls this (a setting of the
    whole process); it changes no value. True if it was set.
    """
    opt = _mallopt()
    if opt is None:
        return False
    return bool(opt(M_MMAP_THRESHOLD, MMAP_CEILING)) and bool(opt(M_TRIM_THRESHOLD, 2 * MMAP_CEILING))


def release_free_memory(n_requests: int) -> bool:
    """Return the allocator's free pages to the OS after a phase of a large run; True if it did."""
    trim = _malloc_trim() if n_requests >= LARGE_RUN else None
    if trim is None:
        return False
    trim(0)
    return True

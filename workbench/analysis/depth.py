"""The queue-depth curve for the summary, by one sort of packed keys: :meth:`Trace.queue_depth`, faster.

The curve (the times of every enqueue and leave, in order, and the number waiting after each)
is the summary's most expensive figure: at 400k requests the merge of
:meth:`~workbench.runtime.trace.Trace.queue_depth` (a ``searchsorted`` of every leave among the
arrivals, then two masked fills) takes ~25 ms. Here each change is one unsigned 64-bit key:
the bits of its time (a float64 >= 0 orders as its bit pattern does) shifted left by one, and
the low bit 0 for an enqueue, 1 for a leave, so that at equal times an enqueue sorts before a
leave, as the reference wants (:mod:`workbench.runtime.float_keys`). One sort of the keys gives
the order; the low bits give the steps and the high bits the times back, unchanged: the same arrays, bit for bit, as
:meth:`Trace.queue_depth` and :func:`~workbench.runtime.trace.queue_depth_reference`
(``tests/test_depth.py``). Where a time is negative, ``-0.0`` or NaN the key would not order
as the float does, and the reference merge runs.

(``Trace.queue_depth`` lives in ``runtime/trace.py``, a source of the ahead-of-time build:
it stays as it is, the reference beside this one.)
"""

from __future__ import annotations

import numpy as np

from workbench.runtime.float_keys import orders_as_bits, tagged_sort, tags, untag
from workbench.runtime.trace import COMPLETED, REJECTED_BY_PLAN, REJECTED_QUEUE_FULL, Trace


def merged_depth(trace: Trace) -> tuple[np.ndarray, np.ndarray]:
    """``trace.queue_depth()``, bit for bit: (times, requests waiting after each change; int32 or int64)."""
    out = trace.outcome
    enq = (out != REJECTED_QUEUE_FULL) & (out != REJECTED_BY_PLAN)
    every = bool(enq.all())
    arrive = trace.arrival_s if every else trace.arrival_s[enq]
    leave = trace.start_s  # waiting until service starts (nan where not served) ...
    served = out == COMPLETED
    if not served.all():  # ... or until it was rejected
        np.copyto(leave, trace.rejected_s, where=~served)
    del served
    if not every:
        leave = leave[enq]
    del enq
    if not len(arrive) or not orders_as_bits(arrive) or not orders_as_bits(leave):
        return Trace.queue_depth(trace)
    key = tagged_sort(arrive, leave)  # a leave (tag 1) after the enqueues (tag 0) of its time
    del arrive, leave
    step = tags(key).view(np.int8)  # 0 enqueue, 1 leave
    step *= -2
    step += 1  # +1 enqueue, -1 leave
    depth = np.cumsum(step, dtype=np.int32 if len(key) < 2**31 else np.int64)
    del step
    return untag(key), depth


def held_max(depth: np.ndarray, held: np.ndarray) -> int:
    """``int(depth.max(where=held, initial=0))`` for depths >= 0 and ``held.any()``, without the masked reduction.

    The masked maximum is a slow path (~4 ms at 800k changes); the plain maximum is held at
    one of its places almost always, and then it is the answer; else the masked one runs.
    """
    top = depth.max()
    if held[np.flatnonzero(depth == top)].any():
        return int(top)
    return int(depth.max(where=held, initial=0))

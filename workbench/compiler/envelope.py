"""Shape envelopes: buckets with min / opt / max, lookups, and the out-of-envelope policies.

A bucket is the range of one symbolic dim that a specialised mapping accepts, with the
shape its kernels were tuned and costed for (``opt``), like a TensorRT optimization
profile. A live shape inside some bucket is a hit. Outside, the plan's policy decides,
like a failed guard in torch.compile; every miss records a reason naming the dim and
the bound it broke:

* ``reject``: the request is refused.
* ``pad``: padded up to the smallest bucket that holds it (a shape below that bucket's
  min runs at the min; the padding's wasted work is charged as mapping fallback). A
  shape above every bucket has no bucket to pad into and is refused.
* ``recompile``: on first sight a new bucket is compiled (a pause of
  ``recompile_pause_s`` charged to that request's batch), then later shapes hit it;
  past ``recompile_limit`` recompiles (torch.compile's default limit is 8) the shape
  falls back.
* ``fallback``: a generic unspecialised mapping (no fusion, a fixed 64-row streamed
  tiling, and ``generic_slowdown`` for the missing shape-specific tactics).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from workbench.errors import ConfigError, check
from workbench.limits import MAX_SHAPE

POLICIES = ("reject", "pad", "recompile", "fallback")
HIT, PADDED, RECOMPILED, FALLBACK, REJECTED = 0, 1, 2, 3, 4
MISS_KINDS = ("hit", "padded", "recompiled", "fallback", "rejected")


@dataclass(frozen=True, slots=True)
class Bucket:
    """A specialised range of one dim: [min, max], kernels tuned at opt."""

    dim: str
    min: int
    opt: int
    max: int

    def __post_init__(self) -> None:
        check(1 <= self.min <= self.opt <= self.max <= MAX_SHAPE, f"envelope.{self.dim}",
              (self.min, self.opt, self.max), f"each bucket needs 1 <= min <= opt <= max <= {MAX_SHAPE}")

    def holds(self, v: int) -> bool:
        """Whether a live value hits this bucket."""
        return self.min <= v <= self.max

    @property
    def name(self) -> str:
        """Short label, e.g. ``seq<=256`` or ``seq[129..256]``."""
        return f"{self.dim}[{self.min}..{self.max}]"


def parse_envelope(dim: str, spec: list) -> tuple[Bucket, ...]:
    """Buckets from upper bounds ``[128, 256, 512]`` or tables ``[{min, opt, max}, ...]``.

    Upper bounds give contiguous buckets from 1, each tuned at its upper bound. The
    list must be non-empty, sorted and non-overlapping.
    """
    key = f"envelope.{dim}"
    check(isinstance(spec, list | tuple) and len(spec) > 0, key, spec, "must be a non-empty list")
    buckets = []
    if all(isinstance(b, int) and not isinstance(b, bool) for b in spec):
        check(all(b > 0 for b in spec), key, spec, "bounds must be > 0")
        check(all(a < b for a, b in zip(spec, spec[1:], strict=False)), key, spec,
              "upper bounds must be strictly increasing")
        lo = 1
        for hi in spec:
            buckets.append(Bucket(dim, lo, hi, hi))
            lo = hi + 1
        return tuple(buckets)
    for b in spec:
        if not (isinstance(b, dict) and set(b) == {"min", "opt", "max"}
                and all(isinstance(b[k], int) and not isinstance(b[k], bool) for k in b)):
            raise ConfigError(key, spec, "give upper bounds [128, 256] or buckets [{min, opt, max}, ...] of integers")
        buckets.append(Bucket(dim, b["min"], b["opt"], b["max"]))
    check(all(a.max < b.min for a, b in zip(buckets, buckets[1:], strict=False)), key, spec,
          "buckets must be sorted and must not overlap")
    return tuple(buckets)


def miss_reason(buckets: tuple[Bucket, ...], v: int) -> str:
    """Which bound a value broke, guard-failure style (no value, so reasons group)."""
    d = buckets[0].dim
    if v > buckets[-1].max:
        return f"{d} > {buckets[-1].max} (max of the largest bucket)"
    if v < buckets[0].min:
        return f"{d} < {buckets[0].min} (min of the smallest bucket)"
    below = max(b.max for b in buckets if b.max < v)
    above = min(b.min for b in buckets if b.min > v)
    return f"{d} in the gap ({below}, {above}) between buckets"


def miss_reasons(buckets: tuple[Bucket, ...], values: np.ndarray) -> tuple[list[str], np.ndarray]:
    """:func:`miss_reason` of every missed value in ``values`` (sorted, distinct): the reasons numbered as first
    met, and each value's number (int16).

    A reason depends only on the gap a value falls in (the buckets are sorted and do not
    overlap), so it is found once per gap, not once per value.
    """
    gap = np.searchsorted(np.array([b.max for b in buckets]), values, side="left")  # buckets below each value
    first = np.flatnonzero(np.diff(gap, prepend=-1))  # the values ascend, so each gap is one run
    reasons: list[str] = []
    numbers = []
    for i in first.tolist():
        r = miss_reason(buckets, int(values[i]))
        if r not in reasons:
            reasons.append(r)
        numbers.append(reasons.index(r))
    runs = np.diff(np.append(first, len(values)))
    return reasons, np.repeat(np.array(numbers, dtype=np.int16), runs)


def lookup(buckets: tuple[Bucket, ...], v: int) -> int:
    """Index of the bucket holding ``v``, or -1."""
    for i, b in enumerate(buckets):
        if b.holds(v):
            return i
    return -1


def pow2_ceil(v: int) -> int:
    """The smallest power of two >= v."""
    return 1 << max(0, (v - 1).bit_length())


def recompiled_bucket(buckets: tuple[Bucket, ...], v: int) -> Bucket:
    """The bucket a recompile adds for ``v``: up to the next power of two, clear of its neighbours."""
    d = buckets[0].dim
    lo = max([b.max + 1 for b in buckets if b.max < v], default=1)
    hi = min([pow2_ceil(v)] + [b.min - 1 for b in buckets if b.min > v])
    return Bucket(d, lo, hi, hi)

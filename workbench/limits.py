"""Limits on input: file sizes, counts, and the finite range of every numeric scenario field.

Hostile or mistaken input must end in one clear error line, never in a traceback, a
hang or memory exhaustion. Every file the workbench reads is a regular file read up to
a cap; every count that sizes memory or time is capped; every number has a finite
range, wide enough for any real accelerator and workload, checked where the config is
built (:mod:`workbench.config`, :mod:`workbench.hardware`), so nothing past it can
overflow to infinity or divide by zero. The README's scenario section lists them.
"""

from __future__ import annotations

import math

from workbench.errors import ConfigError

KIB, MIB, GIB = 1024, 1024**2, 1024**3

# --- files: bytes read at most (a larger file is refused, never read whole) ---------------
SCENARIO_MAX_BYTES = 1 * MIB
TRACE_MAX_BYTES = 64 * MIB  # trace-replay timestamps
PROFILE_MAX_BYTES = 16 * MIB  # calibration profile CSV
DRILL_MAX_BYTES = 1 * MIB
TRACE_MAX_TIMESTAMPS = 4_000_000
PROFILE_MAX_ROWS = 10_000  # each row is costed by the compiler

# --- counts ---------------------------------------------------------------------------
MAX_REQUESTS = 2_000_000
BYTES_PER_REQUEST = 600  # peak memory of a run per request (measured: 1M requests, 527 MB)
MAX_STREAMS = 256
MAX_MODELS = 256
MAX_CORES = 1024
MAX_BATCH = 1024  # compile time grows with buckets x max_batch (a predicted latency per batch size)
MAX_BUCKETS = 32
MAX_DIMS = 8  # distinct shape dims over all streams: one int64 column per dim per request
MAX_LIST = 1024  # categorical values and probs, preferred sizes, pins, expected shares
MAX_RECOMPILES = 64

# --- ranges (inclusive; every value finite) ---------------------------------------------
MAX_TIME_S = 1e9  # s (~31 years): service times, delays, timeouts, drift times
MAX_SHAPE = 2**24  # a symbolic dim's value (16M tokens or pixels)
RATE = (1e-6, 1e9)  # 1/s, arrival rates
SEED = (0, 2**63 - 1)
PRIORITY = (-(2**31), 2**31 - 1)  # a stream's or tenant's priority: a 32-bit integer (int32 columns)

# --- token-level serving (workbench.serving): what a run's trace holds --------------------------------------
# A token run keeps every output token's emission time (the ITL percentiles are exact, over every gap) and one
# row per iteration; an iteration emits at least one token or prefills a full chunk of max_num_batched_tokens
# prompt tokens (preemptions aside), so "steps" = output tokens + prompt tokens // max_num_batched_tokens bounds
# both. A run's peak memory is at most requests x TOKEN_BYTES_PER_REQUEST + steps x TOKEN_BYTES_PER_STEP
# (measured, the worse of the compiled and the Python loop, with the summary); past TOKEN_RUN_BYTES it is refused
# before anything is allocated (workbench.serving.workload.check_memory).
MAX_TOKEN_REQUESTS = 5_000_000
TOKEN_RUN_BYTES = 2 * GIB
TOKEN_BYTES_PER_REQUEST = 600  # measured (one token each, tracemalloc): compiled 437, Python 338, ~440 speculating
TOKEN_BYTES_PER_STEP = 240  # measured (an iteration per token, tracemalloc): compiled 201, Python 222


def _num(x: float) -> str:
    return f"{x:,}" if isinstance(x, int) else f"{x:g}"


def check_range(key: str, value: object, low: float, high: float, unit: str = "") -> None:
    """``value`` must be a finite real number in [low, high]; else one :class:`ConfigError`."""
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) \
        and low <= value <= high
    if not ok:
        unit = f" {unit}" if unit else ""
        raise ConfigError(key, value, f"must be a finite number in [{_num(low)}, {_num(high)}]{unit}")


def check_int_range(key: str, value: object, low: int, high: int, what: str = "") -> None:
    """``value`` must be an integer in [low, high]; ``what`` says what the cap protects."""
    if not (isinstance(value, int) and not isinstance(value, bool) and low <= value <= high):
        raise ConfigError(key, value, f"must be an integer in [{low:,}, {high:,}]" + (f" ({what})" if what else ""))


def check_count(key: str, items: object, high: int) -> None:
    """At most ``high`` items (anything without a length passes: its type is checked elsewhere)."""
    n = len(items) if isinstance(items, list | tuple | dict) else 0
    if n > high:
        raise ConfigError(key, f"<{n:,} items>", f"at most {high:,} are accepted")


def check_requests(key: str, value: object) -> None:
    """A request count in [1, MAX_REQUESTS]; a refusal states the memory the run would need."""
    if isinstance(value, int) and not isinstance(value, bool) and value > MAX_REQUESTS:
        need = value * BYTES_PER_REQUEST / GIB
        raise ConfigError(key, value, f"at most {MAX_REQUESTS:,} requests per run: this one would need about "
                          f"{need:,.1f} GiB of memory ({BYTES_PER_REQUEST} bytes per request)")
    check_int_range(key, value, 1, MAX_REQUESTS)


def token_run_bytes(requests: int, steps: int) -> int:
    """Peak memory (bytes) a token-level run of ``requests`` requests and ``steps`` steps may take, at most."""
    return requests * TOKEN_BYTES_PER_REQUEST + steps * TOKEN_BYTES_PER_STEP

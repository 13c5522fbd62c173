"""Shared by the fuzz files: how many cases to run, the rule every case must end by, and the per-surface tally.

Every fuzz case runs the ``workbench`` command in this process (:func:`tests.helpers.run_cli`) and must end
within ``CASE_SECONDS`` either with exit 0 and the output asked for (strict JSON, a summary, a normal transcript)
or with exit 2 and exactly one ``workbench: error: ...`` line on stderr; never a traceback, and the process
never past ``MAX_RSS_BYTES``. :class:`Tally` counts how each surface's cases ended and prints one line: the
counts, the peak resident memory and the slowest case.

``make test`` runs a small sample of each surface, the same cases every time (derandomized); ``make fuzz`` sets
``WORKBENCH_FUZZ_EXAMPLES`` for each surface and draws fresh ones. Loaded as a pytest plugin
(``-p tests.fuzz_support``, as ``make fuzz`` does for ``tests/test_fuzz.py``), it times the request-mode fuzz's
cases with the same tally, without changing that file.
"""

from __future__ import annotations

import json
import os
import re
import resource
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

CASE_SECONDS = 60.0  # a case past this is a hang
MAX_RSS_BYTES = 4 * 2**30  # the process's peak resident memory, over every case so far
KNOB = "WORKBENCH_FUZZ_EXAMPLES"
ERROR = "workbench: error: "
# what a terminal would act on: C0 controls but tab and newline, DEL, C1 controls, line separators, bidi overrides
RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def examples(ci: int) -> tuple[int, bool]:
    """(cases to run, derandomize): ``ci`` fixed cases under ``make test``, the knob's count of fresh ones when set."""
    if KNOB in os.environ:
        return int(os.environ[KNOB]), False
    return ci, True


def peak_rss_bytes() -> int:
    """The peak resident memory of this process (Linux reports kB, macOS bytes)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024


def strict_json(text: str) -> object:
    """The parsed JSON; NaN, Infinity or any other non-strict constant fails."""
    def refuse(constant: str):
        raise ValueError(f"non-strict JSON constant {constant}")

    return json.loads(text, parse_constant=refuse)


def ended(status: int | str, out: str, err: str, case: str, want: str = "json") -> str:
    """How one CLI case ended, "ok" or "refused", or fail the test naming the case.

    ``want`` is what exit 0 must print: "json" (strict JSON), "text" (anything, its control characters escaped)
    or "transcript" (the same; practice and the interview also say at the end what was saved)."""
    where = f"\n--- case: {case[:3000]}"
    assert "Traceback" not in err and status in (0, 2), f"status {status!r}\n{err[-3000:]}{where}"
    if status == 2:
        lines = err.splitlines()
        assert len(lines) == 1 and lines[0].startswith(ERROR), f"{err[-3000:]!r}{where}"
        assert not RAW_CONTROL.search(err), f"unescaped control character in {err!r}{where}"
        return "refused"
    assert err == "", f"exit 0 with stderr {err[-3000:]!r}{where}"
    if want == "json":
        strict_json(out)
    else:
        bad = RAW_CONTROL.search(out)
        near = out[max(bad.start() - 200, 0):][:400] if bad else ""
        assert bad is None, f"unescaped control character {bad.group()!r} in {near!r}{where}"
    if want == "transcript":
        assert re.search(r"saved|no drill with topic", out.rsplit("\n===", 1)[-1]), f"{out[-1500:]}{where}"
    return "ok"


@dataclass
class Tally:
    """How one surface's cases ended, the slowest case and the peak memory; each case checked against the bounds."""

    surface: str
    ends: Counter = field(default_factory=Counter)
    slowest_s: float = 0.0
    slowest: str = ""

    def run(self, label: str, case: Callable[[], str]) -> str:
        """Run one case (which returns how it ended), time it and check the time and memory bounds."""
        start = time.perf_counter()
        outcome = case()
        seconds = time.perf_counter() - start
        if not self.ends:
            label = f"first case, imports included: {label}"
        self.ends[outcome] += 1
        if seconds > self.slowest_s:
            self.slowest_s, self.slowest = seconds, label[:160]
        assert seconds <= CASE_SECONDS, f"{seconds:.1f} s: {label[:3000]}"
        assert peak_rss_bytes() <= MAX_RSS_BYTES, f"peak RSS {peak_rss_bytes() / 2**30:.2f} GiB after {label[:3000]}"
        return outcome

    def line(self) -> str:
        """One line: the counts by outcome, the peak memory, the slowest case."""
        counts = "; ".join(f"{k}: {v}" for k, v in sorted(self.ends.items()))
        return (f"fuzz {self.surface}: {sum(self.ends.values())} cases ({counts}); 0 tracebacks or hangs; "
                f"peak RSS {peak_rss_bytes() / 2**20:.0f} MiB; slowest {self.slowest_s:.2f} s ({self.slowest!r})")

    def report(self) -> None:
        """Print :meth:`line` (``make fuzz`` runs pytest with ``-s`` and shows it)."""
        print("\n" + self.line())


# --- as a pytest plugin: the request-mode fuzz (tests/test_fuzz.py) timed with the same tally -------------------
_REQUEST_MODE = Tally("request mode")


def pytest_collection_finish(session) -> None:
    """Wrap ``check_case`` of the collected request-mode fuzz module, if any, so each case is timed."""
    for module in list(sys.modules.values()):
        check = getattr(module, "check_case", None)
        if getattr(module, "__file__", "") and module.__file__.endswith("test_fuzz.py") and callable(check):
            def timed(text, folder, _check=check):
                name = re.search(r'^"name" = (.*)$', text, re.M)
                label = f"{name.group(1)[:60] if name else 'no name: ' + text[:60]}, {len(text):,} characters"
                return _REQUEST_MODE.run(label, lambda: _check(text, folder))

            module.check_case = timed


def pytest_sessionfinish(session, exitstatus) -> None:
    """Print the request-mode tally when it counted anything."""
    if _REQUEST_MODE.ends:
        _REQUEST_MODE.report()

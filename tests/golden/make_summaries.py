"""Write the golden run summaries that tests/test_lean_trace.py compares against.

    python tests/golden/make_summaries.py

Generated once BEFORE the lean-trace work (issue 11, item 3) so that the trace
assembly and metrics can be rewritten with the proof that nothing in a summary moved:
every built-in scenario at a few request counts, summarised to JSON (floats written
by ``repr``, so the comparison is bit for bit).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from workbench.analysis.metrics import summarize
from workbench.pipeline import run_scenario
from workbench.scenario import builtin_scenarios, load_scenario

GOLDEN = Path(__file__).with_name("summaries.json")
REQUESTS = (3_000, 20_000)


def summaries() -> dict[str, dict]:
    """Summary of every built-in scenario at each of ``REQUESTS`` (key ``name@requests``)."""
    out = {}
    for name in builtin_scenarios():
        for n in REQUESTS:
            sc = dataclasses.replace(load_scenario(name), requests=n)
            out[f"{name}@{n}"] = summarize(run_scenario(sc))
    return out


def main() -> None:
    """Write the golden file."""
    GOLDEN.write_text(json.dumps(summaries(), indent=1, sort_keys=True) + "\n")
    print(f"wrote {GOLDEN}")


if __name__ == "__main__":
    main()

"""The lean trace and metrics (issue 11, item 3) change no number of any summary.

``tests/golden/summaries.json`` was written by ``tests/golden/make_summaries.py``
before the trace assembly and metrics were rewritten; every built-in scenario must
still summarise to the same JSON, float for float, through the loop ``auto`` picks and
through the readable Python reference loop.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from workbench.analysis.metrics import summarize
from workbench.pipeline import run_scenario, service_model
from workbench.runtime.engine import simulate
from workbench.scenario import builtin_scenarios, load_scenario

GOLDEN = json.loads((Path(__file__).parent / "golden" / "summaries.json").read_text())


def _json(summary: dict) -> str:
    """The summary as the golden file writes it (floats by repr: a bit-for-bit comparison)."""
    return json.dumps(summary, indent=1, sort_keys=True)


@pytest.mark.parametrize("key", sorted(GOLDEN))
def test_summary_matches_golden(key: str) -> None:
    """Each built-in scenario summarises exactly as before the lean trace."""
    name, n = key.split("@")
    sc = dataclasses.replace(load_scenario(name), requests=int(n))
    assert _json(summarize(run_scenario(sc))) == _json(GOLDEN[key])


@pytest.mark.parametrize("name", builtin_scenarios())
def test_python_loop_summary_matches_golden(name: str) -> None:
    """The reference loop's trace (lists and dicts, not buffers) assembles to the same summary."""
    sc = dataclasses.replace(load_scenario(name), requests=3_000)
    trace = simulate(sc, service_model(sc), loop="python")
    assert _json(summarize(trace)) == _json(GOLDEN[f"{name}@3000"])

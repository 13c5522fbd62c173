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


@pytest.mark.parametrize("seed", range(20))
def test_queue_depth_merge_equals_lexsort_reference(seed: int) -> None:
    """The merged queue-depth curve equals the lexsort reference, with ties, every outcome, and empties."""
    from types import SimpleNamespace

    import numpy as np

    from workbench.runtime.trace import Trace, queue_depth_reference

    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 400))
    arrival = np.sort(np.round(rng.uniform(0, 5, n), 1))  # coarse: many equal times
    outcome = rng.choice(4, n, p=[0.7, 0.1, 0.1, 0.1]).astype(np.int8)
    start = np.where(outcome == 0, arrival + np.round(rng.uniform(0, 2, n), 1), np.nan)
    rejected = np.where(outcome == 0, np.nan, arrival + np.round(rng.uniform(0, 1, n), 1))
    tr = SimpleNamespace(arrival_s=arrival, outcome=outcome, start_s=start, rejected_s=rejected)
    t, d = Trace.queue_depth(tr)
    t_ref, d_ref = queue_depth_reference(tr)
    assert np.array_equal(t, t_ref) and np.array_equal(d, d_ref) and d.dtype == d_ref.dtype


@pytest.mark.parametrize("name", ["placement_skew", "shape_drift"])
def test_row_gathers_equal_the_full_columns(name: str) -> None:
    """start_of / end_of / imbalance_of (what the metrics read) equal the full per-request columns, row for row."""
    import numpy as np

    trace = run_scenario(dataclasses.replace(load_scenario(name), requests=3_000))
    idx = np.flatnonzero(trace.completed)
    assert np.array_equal(trace.start_of(idx), trace.start_s[idx])
    assert np.array_equal(trace.end_of(idx), trace.end_s[idx])
    assert np.array_equal(trace.imbalance_of(idx), trace.imbalance_s[idx])

"""A plan's batches are costed inside the compiled loop (its cost book), bit for bit as Python costs them.

The compiled loop used to leave for Python at every (class, size, shape key) it met first
(``driver._Run.add_cost``: about 2,000 times in a 200k-request ``shape_drift`` run). Through
a compiled plan it now costs the batch itself from
:class:`~workbench.compiler.plan.CostBook`. Each loop here runs on its own freshly
compiled plan, so neither finds a cost the other left in the plan's memo: the compiled
loop's costs (and the trace's means, demands and fallback seconds built from them) meet the
reference loop's bit for bit, over every out-of-envelope policy; the memo the loop fills
holds what the plan itself computes.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from helpers import plan_scenarios
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workbench.pipeline import service_model
from workbench.runtime.engine import Engine
from workbench.scenario import load_scenario

pytest.importorskip("numba")


@pytest.fixture
def python_costs(monkeypatch) -> list:
    """The batches the compiled loop asked Python to cost (``add_cost`` calls), recorded."""
    from workbench.runtime.compiled import driver

    asked: list = []
    original = driver._Run.add_cost

    def add_cost(self) -> None:
        asked.append(1)
        original(self)

    monkeypatch.setattr(driver._Run, "add_cost", add_cost)
    return asked


def assert_same_cold_runs(sc) -> None:
    """The compiled and reference loops, each on a fresh plan, give the same trace bit for bit."""
    ce = Engine(sc, service_model(sc), loop="compiled")
    assert ce.chosen_loop() == "compiled"
    fast = ce.run()
    ref = Engine(sc, service_model(sc), loop="python").run()
    for name, value in vars(ref).items():
        if isinstance(value, np.ndarray):
            assert np.array_equal(value, getattr(fast, name), equal_nan=True), name


@pytest.mark.parametrize("name", ["shape_drift", "prediction_contention", "fusion_memory_bursts"])
def test_builtin_plan_runs_never_leave_the_loop_for_a_cost(name, python_costs):
    assert_same_cold_runs(dataclasses.replace(load_scenario(name), requests=3000))
    assert python_costs == []


def test_full_cost_tables_grow_and_the_run_goes_on(monkeypatch, python_costs):
    from workbench.runtime.compiled import driver

    monkeypatch.setattr(driver, "COST_ROOM", 1)  # full at once: costs, phases and evaluations grow many times
    steps = []
    original = driver._Run.grow_costs
    monkeypatch.setattr(driver._Run, "grow_costs", lambda self: steps.append(1) or original(self))
    assert_same_cold_runs(dataclasses.replace(load_scenario("shape_drift"), requests=3000))
    assert len(steps) >= 5 and python_costs == []


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(plan_scenarios(rates=(500.0, 8000.0), batching=("none", "dynamic", "static"),
                      placements=("least-loaded", "pinned", "round-robin")))
def test_cold_compiled_plan_runs_equal_cold_reference_runs(python_costs, sc):
    assert_same_cold_runs(sc)
    assert python_costs == []


def test_the_memo_the_loop_fills_holds_what_the_plan_computes():
    sc = dataclasses.replace(load_scenario("shape_drift"), requests=3000)
    plan = service_model(sc)
    Engine(sc, plan, loop="compiled").run()
    memo = plan._memo
    kept = {k: v for k, v in memo.items() if k[0] in ("time", "spill")}
    assert len(kept) > 100
    assert not any(k[0] == "run phases" for k in memo)  # no batch was costed in Python (PlanRun.phases)
    for k in [k for k in memo if k[0] in ("time", "spill", "phases")]:  # cost everything again, in Python
        del memo[k]
    for (kind, mid, batch, value), v in kept.items():
        mapping = memo[("mapping", mid)]
        got = plan.mapping_time(mapping, batch, value) if kind == "time" else plan.spill_bytes(mapping, batch, value)
        assert got == v, (kind, batch, value)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(-1e6, 1e6, allow_nan=False) | st.sampled_from([0.1, 0.2, 0.3, 1e-17, -0.0]),
                min_size=0, max_size=12))
def test_cost_sums_add_floats_as_this_python_does(xs):
    import sys

    from workbench.runtime.compiled.costs import colsum

    out = np.zeros((max(len(xs), 1), 4))
    out[:len(xs), 2] = xs
    got = colsum(out, 2, len(xs), sys.version_info >= (3, 12))
    want = sum(x for x in xs)  # a generator, as Plan.mapping_time sums its phases
    assert got == want and str(got) == str(float(want))

"""The columnar batch profiles (compiler/plan_profile.py) equal PlanRun.batch_profile, the reference, bit for bit."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from workbench.analysis.mapping import _distinct_batches
from workbench.compiler.plan_profile import FIELDS, batch_profiles
from workbench.pipeline import run_scenario
from workbench.scenario import load_scenario


def _reference(run, bucket, size, value) -> dict[str, np.ndarray]:
    prof = [run.batch_profile(b, s, v) for b, s, v in zip(bucket, size, value, strict=True)]
    return {k: np.array([p[k] for p in prof], dtype=np.float64).reshape(-1) for k in FIELDS}


def _same_bits(a: dict, b: dict) -> None:
    for k in FIELDS:
        assert a[k].dtype == b[k].dtype == np.float64, k
        assert a[k].tobytes() == b[k].tobytes(), k  # nan in the same places, every other value to the bit


def _with_policy(name: str, policy: str, envelope=None):
    sc = load_scenario(name)
    model = dataclasses.replace(sc.model, out_of_envelope=policy, envelope=envelope or sc.model.envelope)
    return dataclasses.replace(sc, model=model, requests=6_000)


CASES = [
    ("shape_drift", None),
    ("placement_skew", None),
    ("prediction_contention", None),
    ("shape_drift", ("pad", {"seq": [{"min": 64, "opt": 128, "max": 128}, {"min": 256, "opt": 512, "max": 512}]})),
    ("shape_drift", ("recompile", None)),
    ("fusion_memory_bursts", ("pad", {"seq": [{"min": 64, "opt": 128, "max": 128},  # spills: padding shows in them
                                              {"min": 1024, "opt": 2048, "max": 2048}]})),
]


@pytest.mark.parametrize(("name", "policy"), CASES)
@pytest.mark.parametrize("loop", ["auto", "python"])  # memo written by the compiled loop's cost book, or by Python
def test_batch_profiles_equal_the_reference(name, policy, loop):
    sc = dataclasses.replace(load_scenario(name), requests=6_000) if policy is None else _with_policy(name, *policy)
    from workbench.pipeline import service_model
    from workbench.runtime.engine import simulate

    trace = simulate(sc, service_model(sc), loop=loop) if loop != "auto" else run_scenario(sc)
    run = trace.service.info["run"]
    (bucket, size, value), _ = _distinct_batches(trace, np.ones(len(trace.batch_size), dtype=bool))
    assert len(bucket) > 0
    fast = batch_profiles(run, bucket, size, value)
    _same_bits(fast, _reference(run, bucket, size, value))


def test_batch_profiles_cost_what_the_memo_lacks():
    """Rows no batch of the run had (every bucket id, sizes past max_batch, odd shapes): costed as the reference
    costs them, in either order of the two calls."""
    sc = _with_policy("shape_drift", "recompile")
    trace = run_scenario(sc)
    run = trace.service.info["run"]
    rng = np.random.default_rng(3)
    ids = run.ids()[2] + 1
    bucket = [int(b) for b in rng.integers(0, ids, 60)] + list(range(ids))
    size = [int(s) for s in rng.integers(1, 13, len(bucket))]
    value = [int(v) for v in rng.integers(1, 3000, len(bucket))]
    fast = batch_profiles(run, bucket, size, value)
    _same_bits(fast, _reference(run, bucket, size, value))
    fresh = run_scenario(sc).service.info["run"]  # the reference first this time
    ref = _reference(fresh, bucket, size, value)
    _same_bits(batch_profiles(fresh, bucket, size, value), ref)


def test_batch_profiles_of_nothing():
    trace = run_scenario(dataclasses.replace(load_scenario("shape_drift"), requests=50))
    out = batch_profiles(trace.service.info["run"], [], [], [])
    assert all(len(out[k]) == 0 and out[k].dtype == np.float64 for k in FIELDS)

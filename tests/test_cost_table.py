"""The compiled cost model equals the readable one (cost.py) bit for bit.

``Plan.kernel_costs`` is the reference (footprint, every candidate tiling, ``min``);
``Plan.phases`` and ``Plan.mapping_time`` use :mod:`workbench.compiler.cost_table` when it
can run; each build of it this install has (``aot``, ``jit``: :mod:`workbench.aot`) is
checked on its own too. Every model, fusion level, attention strategy and SRAM size (spills
included), specialised and generic mappings, a calibration, and random shapes.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench import aot
from workbench.compiler import CompileOptions, compile_plan
from workbench.compiler.calibrate import Calibration
from workbench.compiler.plan import _compiled_phases
from workbench.graph import Op
from workbench.hardware import MIB, Hardware
from workbench.models import build

PATHS = aot.paths()
if not PATHS:
    pytest.skip("no compiled cost model: neither an ahead-of-time build nor numba", allow_module_level=True)

MODELS = {"transformer": ("transformer_block", {}, {"seq": [32, 128, 512]}),
          "small transformer": ("transformer_block", {"d_model": 256, "heads": 4}, {"seq": [64, 256]}),
          "mlp": ("mlp", {}, {"seq": [64, 256]}),
          "conv": ("conv_block", {}, {"hw": [8, 16, 32]})}


def plan_for(model: str, fusion: str, attention: str, sram_mib: float, calibration=None):
    name, params, envelope = MODELS[model]
    hw = Hardware(sram_bytes_per_core=int(sram_mib * MIB))
    return compile_plan(build(name, params), hw, envelope, CompileOptions(fusion=fusion, attention=attention),
                        calibration=calibration)


def reference(plan, mapping, batch: int, value: int):
    costs = plan.kernel_costs(mapping, batch, value)
    phases = tuple((c.seconds, c.demand) for c in costs)
    total = sum(c.seconds for c in costs)
    moved = sum(c.demand * c.seconds for c in costs)
    return phases, (total, moved / total if total > 0 else 0.0)


def assert_same(plan, batch: int, value: int) -> None:
    for mapping in [b.mapping for b in plan.buckets] + [plan.generic]:
        phases, time = reference(plan, mapping, batch, value)
        spill = sum(c.spill_bytes for c in plan.kernel_costs(mapping, batch, value))
        for path in PATHS:
            assert _compiled_phases(plan, plan._flat(mapping), batch, value, path) == (phases, spill), path
        assert plan.phases(mapping, batch, value) == phases, (batch, value)
        assert plan.mapping_time(mapping, batch, value) == time, (batch, value)
        assert plan.spill_bytes(mapping, batch, value) == sum(c.spill_bytes for c in plan.kernel_costs(mapping, batch,
                                                                                                          value))


@pytest.mark.parametrize("model,fusion,attention,sram", [
    (m, f, a, s) for m, f, a, s in itertools.product(MODELS, ("none", "elementwise", "aggressive"),
                                                     ("flash", "naive"), (1, 24))])
def test_grid_equals_reference(model, fusion, attention, sram):
    plan = plan_for(model, fusion, attention, sram)
    values = (4, 8, 24, 40) if model == "conv" else (8, 64, 136, 600)
    for batch, value in itertools.product((1, 3, 8, 17), values):
        assert_same(plan, batch, value)


def test_calibrated_plan_equals_reference():
    cal = Calibration({Op.MATMUL: (2e-6, 1.3), Op.SOFTMAX: (0.0, 2.0), Op.LAYERNORM: (1e-6, 0.9)}, {})
    plan = plan_for("transformer", "elementwise", "flash", 4, cal)
    for batch, value in itertools.product((1, 8), (16, 200, 1024)):
        assert_same(plan, batch, value)


@settings(max_examples=25, deadline=None)
@given(batch=st.integers(1, 64), value=st.integers(1, 2048), sram=st.sampled_from([0.25, 2, 8, 48]),
       fusion=st.sampled_from(["none", "elementwise", "aggressive"]), attention=st.sampled_from(["flash", "naive"]))
def test_random_shapes_equal_reference(batch, value, sram, fusion, attention):
    assert_same(plan_for("transformer", fusion, attention, sram), batch, value)

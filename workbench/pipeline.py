"""The whole pipeline for one scenario: compile a plan (if it has a ``[model]``), then run it.

    compile plan -> runtime queue -> core placement -> completion and tail behaviour

A plan reaches the runtime as a service model (:mod:`workbench.service_model`); of the compiler, the runtime
imports only the compiled cost model its compiled loop prices a plan's batches with.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.config import Scenario
from workbench.runtime.engine import simulate
from workbench.runtime.service import AbstractLaw
from workbench.runtime.trace import Trace
from workbench.service_model import ServiceModel

if TYPE_CHECKING:  # the compiler is imported when a scenario has a [model] (start-up of the others)
    from workbench.compiler.plan import Plan


def compile_scenario(scenario: Scenario, trace: bool = False) -> Plan:
    """The plan a scenario's ``[model]`` section asks for, on its hardware."""
    from workbench.compiler.mapping import CompileOptions
    from workbench.compiler.pipeline import compile_plan
    from workbench.models import REQUEST_DIM, build

    spec = scenario.model
    if spec is None:
        raise ValueError(f"scenario {scenario.name} has no [model] section")
    calibration = None
    if spec.profile:
        from workbench.compiler.calibrate import load_profile

        calibration = load_profile(spec.profile, scenario.hardware)
    opts = CompileOptions(fusion=spec.fusion, max_depth=spec.max_depth, attention=spec.attention,
                          out_of_envelope=spec.out_of_envelope,
                          recompile_limit=spec.recompile_limit, recompile_pause_s=spec.recompile_pause_s,
                          generic_slowdown=spec.generic_slowdown, noise_cv=spec.noise_cv, granule=spec.granule,
                          max_batch=scenario.batching.max_batch, compile_batch=scenario.batching.max_batch)
    graph = build(spec.graph, spec.params)
    envelope = {REQUEST_DIM[spec.graph]: spec.envelope[REQUEST_DIM[spec.graph]]}
    return compile_plan(graph, scenario.hardware, envelope, opts, calibration,
                        list(spec.expected_shares) or None, trace=trace)


def service_model(scenario: Scenario) -> ServiceModel:
    """The scenario's service model: its compiled plan, or its abstract law."""
    return compile_scenario(scenario) if scenario.model is not None else AbstractLaw(scenario.service)


def run_scenario(scenario: Scenario, model: ServiceModel | None = None) -> Trace:
    """Compile (if needed) and simulate a scenario."""
    return simulate(scenario, model if model is not None else service_model(scenario))

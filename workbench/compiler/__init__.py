"""The compiler stage: fusion, layout, placement, cost model and shape-bucketed plans."""

from workbench.compiler.pipeline import compile_plan
from workbench.compiler.plan import CompileOptions, Plan

__all__ = ["CompileOptions", "Plan", "compile_plan"]

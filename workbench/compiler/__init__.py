"""The compiler stage: fusion, layout, placement, cost model and shape-bucketed plans.

``compile_plan``, ``CompileOptions`` and ``Plan`` are loaded on first use (PEP 562), so a
module that needs only a light part (``compiler.envelope``) does not import the whole stage:
a ``workbench run`` of a scenario without a ``[model]`` never does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from workbench.compiler.mapping import CompileOptions
    from workbench.compiler.pipeline import compile_plan
    from workbench.compiler.plan import Plan

__all__ = ["CompileOptions", "Plan", "compile_plan"]
_WHERE = {"compile_plan": "workbench.compiler.pipeline", "CompileOptions": "workbench.compiler.mapping",
          "Plan": "workbench.compiler.plan"}


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(_WHERE[name]), name)
    globals()[name] = value
    return value

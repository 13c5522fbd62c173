"""Matplotlib figures and ipywidgets panels over the library (no logic of their own), grouped by role:
``figures/`` (drawing only), ``panels/`` (controls -> a run -> a figure), ``exercises/`` (checkers of the
chapters' exercises, by topic) and ``widgets/`` (the prediction widget). Each package's docstring maps its
modules to the chapters that use them.

``workbench.ui.predict`` is the prediction widget every "Predict" prompt uses
(:mod:`workbench.ui.widgets.prediction`); it is imported on first use, so importing another
module of this package does not load ipywidgets.
"""

from __future__ import annotations

from typing import Any

__all__ = ["predict"]


def __getattr__(name: str) -> Any:
    if name == "predict":
        from workbench.ui.widgets.prediction import predict

        return predict
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

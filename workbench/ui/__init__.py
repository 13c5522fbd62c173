"""Matplotlib figures and ipywidgets panels over the library (no logic of their own).

``workbench.ui.predict`` is the prediction widget every "Predict" prompt uses
(:mod:`workbench.ui.prediction_widget`); it is imported on first use, so importing another
module of this package does not load ipywidgets.
"""

from __future__ import annotations

from typing import Any

__all__ = ["predict"]


def __getattr__(name: str) -> Any:
    if name == "predict":
        from workbench.ui.prediction_widget import predict

        return predict
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

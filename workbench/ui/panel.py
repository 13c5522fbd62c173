"""The panel pattern: controls -> a library run -> one figure redrawn in place + a text summary.

A panel owns one matplotlib figure for its life and shows it as PNG in an
``ipywidgets.Image`` whose value is replaced on each change, so the view updates in
place. Sliders use ``continuous_update=False`` (one run per release, not per pixel) and
runs are bounded in request count. Every change is timed from the value change to
the finished PNG (``timings_s``). A configuration the library refuses shows its
message in the panel instead of a traceback. Where no widget front end exists
(nbconvert, GitHub), ``show_static()`` displays the same figure and text.
"""

from __future__ import annotations

import dataclasses
import html
import time
from functools import cache
from typing import Any

import ipywidgets as w

from workbench.errors import ConfigError
from workbench.ui import figures as f
from workbench.ui.figures import png


@cache
def builtin(name: str):
    """A built-in scenario, read once (scenarios are immutable)."""
    from workbench.scenario import load_scenario

    return load_scenario(name)


def with_rate(stream, rate: float):
    """A stream with another Poisson rate (1/s)."""
    return dataclasses.replace(stream, arrivals=dataclasses.replace(stream.arrivals, rate=float(rate)))


def slider(value: float, lo: float, hi: float, step: float, label: str, integer: bool = False):
    """A bounded slider that only reports on release."""
    cls = w.IntSlider if integer else w.FloatSlider
    return cls(value=value, min=lo, max=hi, step=step, description=label, continuous_update=False,
               style={"description_width": "initial"}, layout=w.Layout(width="330px"))


def dropdown(options, value, label: str) -> w.Dropdown:
    """A choice among valid options only."""
    return w.Dropdown(options=options, value=value, description=label, style={"description_width": "initial"})


class Panel:
    """Base class: subclasses define ``controls()``, ``run(**values)``, ``draw(result)`` and ``text(result)``."""

    figure_size = (10.0, 3.4)
    ncols = 2

    def __init__(self, **overrides: Any):
        from workbench.ui.figures import new_figure

        self.fig, self.axes = new_figure(self.ncols, *self.figure_size)
        self._plans: dict[str, Any] = {}  # compiled plans by their inputs: a change of load reuses the plan
        self.ctrl: dict[str, w.Widget] = self.controls()
        for name, value in overrides.items():
            self.ctrl[name].value = value
        self.image = w.Image(format="png", layout=w.Layout(max_width="100%"))
        self.summary = w.HTML()
        self.timings_s: list[float] = []
        self.result: Any = None
        self.error: str = ""
        for c in self.ctrl.values():
            c.observe(self._changed, names="value")
        boxes = list(self.ctrl.values())
        rows = [w.HBox(boxes[i:i + 3]) for i in range(0, len(boxes), 3)]
        self.widget = w.VBox([*rows, self.image, self.summary])
        self.update()

    # --- to override -------------------------------------------------------------------
    def controls(self) -> dict[str, w.Widget]:
        raise NotImplementedError

    def run(self, **values: Any) -> Any:
        raise NotImplementedError

    def draw(self, result: Any) -> None:
        raise NotImplementedError

    def text(self, result: Any) -> str:
        raise NotImplementedError

    # --- the loop ----------------------------------------------------------------------
    def simulate(self, scenario):
        """Run a scenario, compiling its plan only when the plan's inputs changed."""
        from workbench.pipeline import compile_scenario, run_scenario

        if scenario.model is None:
            return run_scenario(scenario)
        key = repr((scenario.model, scenario.hardware, scenario.batching.max_batch))
        if key not in self._plans:
            if len(self._plans) > 16:
                self._plans.clear()
            self._plans[key] = compile_scenario(scenario)
        return run_scenario(scenario, self._plans[key])

    def values(self) -> dict[str, Any]:
        """Current control values by name."""
        return {k: c.value for k, c in self.ctrl.items()}

    def _changed(self, change) -> None:
        self.update()

    def update(self) -> None:
        """Re-run the library and redraw (timed)."""
        start = time.perf_counter()
        try:
            result = self.run(**self.values())
        except ConfigError as e:
            self.error = str(e)
            self.summary.value = f"<p style='color:#b00'>refused: {html.escape(self.error)}</p>"
            return
        self.error = ""
        self.result = result
        self.draw(result)
        self.image.value = png(self.fig)
        self.summary.value = f"<pre>{html.escape(self.full_text(result))}</pre>"
        self.timings_s.append(time.perf_counter() - start)

    def full_text(self, result: Any) -> str:
        """The panel's text, then what a learner must never miss: refused requests and overload."""
        summary = result.get("summary") if isinstance(result, dict) else None
        status = f.status_text(summary) if isinstance(summary, dict) else ""
        return self.text(result) + (f"\n{status}" if status else "")

    def show_static(self) -> None:
        """The figure and text without widgets (for renderers with no widget front end)."""
        from IPython.display import Image, display

        display(Image(png(self.fig)))
        print(self.full_text(self.result))

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)

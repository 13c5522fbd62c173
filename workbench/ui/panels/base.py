"""The panel pattern: controls -> a library run -> one figure redrawn in place + a text summary.

A panel owns one matplotlib figure for its life: ``layout()`` creates its axes' artists
once and ``draw(result, baseline)`` only moves them (``set_data``, bar heights, titles,
limits), with the baseline drawn faintly in grey under the current run. The baseline is
the first run, kept while the learner changes controls, until they press "reset baseline"
(then the current run becomes it) or change a control in ``baseline_keys`` (a change that
makes the two runs incomparable, such as another scenario: the panel says so). The PNG
goes to an ``ipywidgets.Image`` whose value is replaced on each change, so the view
updates in place. Sliders use ``continuous_update=False`` (one run per release, not per
pixel); a run is ``requests`` long (53,000: 50,000 measured, a p99 over 500 samples). The text says
"running..." while a run is in progress, then the panel's numbers, one line on what
the latest change did against the run before it (:func:`workbench.ui.panels.compare.what_changed`,
naming the control by its label, never by its key) and, always, refused requests
and overload. A configuration the library refuses shows its message and keeps the
last image. Every change is timed from the value change to the finished PNG
(``timings_s``, wall; ``cpu_s``, process CPU). Where no widget front end exists
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
from workbench.ui.figures import base as f
from workbench.ui.figures.base import png
from workbench.ui.figures.layers import LayeredCanvas
from workbench.ui.panels.compare import what_changed


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
    """Base class: subclasses define ``controls()``, ``run(**values)``, ``layout()``, ``draw(result, baseline)``
    and ``text(result)``; ``summary_of(result)`` when the run's summary is not ``result["summary"]``."""

    figure_size = (10.0, 3.4)
    ncols = 2
    baseline_keys: tuple[str, ...] = ()  # controls whose change starts a new baseline (runs not comparable)
    requests = 53_000  # per run: 50,350 measured after the 5 % warm-up, so p99 rests on 500 requests

    def __init__(self, **overrides: Any):
        from workbench.ui.figures.base import new_figure

        self.fig, self.axes = new_figure(self.ncols, *self.figure_size)
        self.fig.subplots_adjust(left=0.08)  # a y label beside 5-digit tick labels fits (tests/test_panel_labels.py)
        self.canvas = LayeredCanvas(self.fig)  # the frame is kept between changes; what moves is drawn over it
        self._plans: dict[str, Any] = {}  # compiled plans by their inputs: a change of load reuses the plan
        self.ctrl: dict[str, w.Widget] = self.controls()
        for name, value in overrides.items():
            self.ctrl[name].value = value
        self.image = w.Image(format="png", layout=w.Layout(max_width="100%"))
        self.summary = w.HTML()
        self.timings_s: list[float] = []
        self.cpu_s: list[float] = []
        self.result: Any = None
        self.previous: Any = None  # the run before ``result`` (compared in the text)
        self.baseline: Any = None  # the kept run drawn in grey (the first run, until reset)
        self._settings: dict[str, Any] = {}
        self._previous_settings: dict[str, Any] = {}
        self._baseline_settings: dict[str, Any] = {}
        self.baseline_note: str = ""  # why the baseline last moved, said once under the change line
        self.changed: str = ""  # the control whose change started the latest run
        self.change_line: str = ""
        self.error: str = ""
        self.layout()
        for c in self.ctrl.values():
            c.observe(self._changed, names="value")
        self.reset = w.Button(description="reset baseline", tooltip="make this run the grey baseline",
                              layout=w.Layout(width="auto"))
        self.reset.on_click(lambda _: self.reset_baseline())
        boxes = [*self.ctrl.values(), self.reset]
        rows = [w.HBox(boxes[i:i + 3]) for i in range(0, len(boxes), 3)]
        self.widget = w.VBox([*rows, self.image, self.summary])
        self.update()

    # --- to override -------------------------------------------------------------------
    def controls(self) -> dict[str, w.Widget]:
        raise NotImplementedError

    def run(self, **values: Any) -> Any:
        raise NotImplementedError

    def layout(self) -> None:
        """Create every artist once (lines, bars, titles, legends) on ``self.axes``."""
        raise NotImplementedError

    def draw(self, result: Any, baseline: Any) -> None:
        """Move the artists to ``result`` over ``baseline``, the kept run (None while the baseline is ``result``)."""
        raise NotImplementedError

    def text(self, result: Any) -> str:
        raise NotImplementedError

    def summary_of(self, result: Any) -> dict | None:
        """The run summary the comparison and the refused/overload line read."""
        return result.get("summary") if isinstance(result, dict) else None

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
        self.changed = next((k for k, c in self.ctrl.items() if c is change["owner"]), "")
        self.update()

    def update(self) -> None:
        """Re-run the library and redraw in place (timed); a refused setting keeps the last image."""
        start, cpu = time.perf_counter(), time.process_time()
        values = self.values()
        if self.result is not None:
            self.summary.value = ("<p><i>running&hellip;</i></p><pre style='opacity:0.5'>"
                                  f"{html.escape(self.full_text(self.result))}</pre>")
        try:
            result = self.run(**values)
        except ConfigError as e:
            self.error = str(e)
            kept = f"<pre style='opacity:0.5'>{html.escape(self.full_text(self.result))}</pre>" if self.result else ""
            self.summary.value = (f"<p style='color:#b00'>refused: {html.escape(self.error)}; the figure still "
                                  f"shows the last setting that ran</p>{kept}")
            return
        self.error = ""
        if self.result is not None:
            self.previous, self._previous_settings = self.result, self._settings
        self.result, self._settings = result, values
        moved = [k for k in self.baseline_keys if self._baseline_settings.get(k, values.get(k)) != values.get(k)]
        self.baseline_note = ""
        if self.baseline is None or moved:
            self.baseline, self._baseline_settings = result, values
            if moved:
                k = moved[0]
                self.baseline_note = (f"{self.label(k)} changed ({self._previous_settings.get(k)} -> {values[k]}): "
                                      f"nothing is compared across it, and the kept baseline is now this run")
        self._redraw()
        self.change_line = self._compare()
        self.summary.value = f"<pre>{html.escape(self.full_text(result))}</pre>"
        self.timings_s.append(time.perf_counter() - start)
        self.cpu_s.append(time.process_time() - cpu)

    def _redraw(self) -> None:
        """Draw the current run over the baseline (none when the baseline is this run) and render the PNG."""
        self.draw(self.result, None if self.baseline is self.result else self.baseline)
        self.image.value = self.canvas.png()

    def reset_baseline(self) -> None:
        """Make the current run the grey baseline (the "reset baseline" button); nothing is re-run."""
        if self.result is None:
            return
        self.baseline, self._baseline_settings = self.result, self._settings
        self.baseline_note = "baseline reset: the grey curves are now this run"
        self._redraw()
        self.summary.value = f"<pre>{html.escape(self.full_text(self.result))}</pre>"

    def label(self, key: str) -> str:
        """A control's label, as the learner reads it ("SRAM per core (MiB)", not ``sram_mib``)."""
        c = self.ctrl.get(key)
        return c.description if c is not None and c.description else key.replace("_", " ")

    def _compare(self) -> str:
        cur = self.summary_of(self.result)
        if cur is None:
            return ""
        if any(self._previous_settings.get(k) != self._settings.get(k) for k in self.baseline_keys
               if self.previous is not None):
            return ""  # another scenario: the baseline note says so, and nothing is compared across it
        prev = self.summary_of(self.previous) if self.previous is not None else None
        return what_changed(None if prev is None else {**prev, "settings": self._previous_settings},
                            {**cur, "settings": self._settings}, self.changed, self.label(self.changed))

    def full_text(self, result: Any) -> str:
        """The panel's text, what the last change did, then what a learner must never miss: refusals and overload."""
        summary = self.summary_of(result)
        status = f.status_text(summary) if isinstance(summary, dict) else ""
        change = "\n".join(x for x in (self.change_line, self.baseline_note) if x) if result is self.result else ""
        return self.text(result) + "".join(f"\n{line}" for line in (change, status) if line)

    def show_static(self) -> None:
        """The figure and text without widgets (for renderers with no widget front end)."""
        from IPython.display import Image, display

        display(Image(png(self.fig)))
        print(self.full_text(self.result))

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)


def lat_ms(result: dict | None, trace_key: str = "trace") -> Any:
    """Sorted latencies (ms) of a run's measured completed requests, computed once per result."""
    import numpy as np

    if result is None:
        return None
    key = f"_lat_ms_{trace_key}"
    if key not in result:
        result[key] = f.latencies_ms(result[trace_key]) if result.get(trace_key) is not None else np.zeros(0)
    return result[key]

"""An experiment cell's outputs held back until the prediction above it is committed.

The cell below a ``predict(...)`` widget runs the experiment that answers it. Run top to bottom (Run All,
nbval, the book build) that cell would print the answer right under a question nobody has answered yet.
``with guess.held():`` around the cell's body runs everything as before (asserts included) but catches what
it prints and displays, in order, and shows it in one place:

* in JupyterLab, a hidden output area under a one-line note; the area opens when the learner commits the
  prediction (at once, if it was committed before the cell ran);
* in a static page (the book, any HTML export), the same outputs inside a collapsed ``<details>`` block:
  a reader opens it when they have made up their mind;
* as text, only the note: the answer is not in the plain-text form either.

Inside the block, show a figure with ``display(fig)`` or ``plt.show()``; a figure left open at the end of the
block is shown (and closed) there, so nothing escapes to the cell's end. If the block raises, what it caught
is shown at once and the exception goes on.
"""

from __future__ import annotations

import base64
import html
import sys
from collections.abc import Callable
from typing import Any

import ipywidgets as w

CSS_CLASS = "workbench-held"  # the browser test finds the held area by it
HELD_KEY = "workbench_held"  # output metadata that tells the book a held view from a panel


class _Tee:
    """stdout while held: every write appended to the shared list, in order with the displays."""

    def __init__(self, items: list[dict]):
        self.items = items

    def write(self, text: str) -> int:
        if self.items and self.items[-1].get("output_type") == "stream":
            self.items[-1]["text"] += text
        elif text:
            self.items.append({"output_type": "stream", "name": "stdout", "text": text})
        return len(text)

    def flush(self) -> None:
        pass


class _Publisher:
    """The shell's display publisher while held: each display appended to the shared list."""

    def __init__(self, items: list[dict]):
        self.items = items
        self.is_publishing = False  # read by IPython while a display is published

    def publish(self, data: dict, metadata: dict | None = None, source: Any = None, *, transient: Any = None,
                update: bool = False, **kwargs: Any) -> None:
        self.items.append({"output_type": "display_data", "data": dict(data), "metadata": dict(metadata or {})})

    def clear_output(self, wait: bool = False) -> None:
        self.items.clear()


def static_html(items: list[dict], summary: str) -> str:
    """The caught outputs as a collapsed HTML block: text as ``<pre>``, figures as inline PNGs."""
    parts = []
    for item in items:
        if item["output_type"] == "stream":
            parts.append(f"<pre>{html.escape(item['text'])}</pre>")
            continue
        data = item["data"]
        if "image/png" in data:
            png = data["image/png"]
            png = png if isinstance(png, str) else base64.b64encode(png).decode()
            parts.append(f"<div class='output_png'><img src=\"data:image/png;base64,{png.strip()}\"></div>")
        elif "text/html" in data:
            parts.append(f"<div>{data['text/html']}</div>")
        elif "text/plain" in data:
            parts.append(f"<pre>{html.escape(data['text/plain'])}</pre>")
    return (f"<details class='{CSS_CLASS}'><summary>{html.escape(summary)}</summary>{''.join(parts)}</details>")


class Held:
    """The context manager ``Prediction.held()`` returns; see the module docstring."""

    def __init__(self, prediction_id: str, is_committed: Callable[[], bool],
                 on_commit: Callable[[Callable[[], None]], None]):
        self.prediction_id = prediction_id
        self._is_committed, self._on_commit = is_committed, on_commit
        self.items: list[dict] = []
        self.holding = False
        self.view: HeldView | None = None

    def __enter__(self) -> Held:
        if self._is_committed():  # the learner already committed: nothing to hold back
            return self
        self.holding = True
        self._stdout = sys.stdout
        sys.stdout = _Tee(self.items)
        self._shell = _shell()
        if self._shell is not None:
            self._publisher = self._shell.display_pub
            self._shell.display_pub = _Publisher(self.items)
        self._figures = _open_figures()
        return self

    def __exit__(self, kind: Any, error: Any, tb: Any) -> bool:
        if not self.holding:
            return False
        try:
            _show_new_figures(self._figures)  # still caught: figures left open join the held outputs
        finally:
            sys.stdout = self._stdout
            if self._shell is not None:
                self._shell.display_pub = self._publisher
        if kind is not None:  # an error: show what ran, then let it through
            _replay(self.items)
            return False
        self.view = HeldView(self.prediction_id, self.items)
        self._on_commit(self.view.open)
        _display(self.view)
        return False


class HeldView:
    """What a held cell displays: a note and a hidden output area that opens on the commit."""

    def __init__(self, prediction_id: str, items: list[dict]):
        self.prediction_id, self.items = prediction_id, items
        self.note = w.HTML(f"<i>{html.escape(self.note_text())}</i>")
        self.out = w.Output(layout=w.Layout(display="none"))
        self.out.outputs = tuple(items)
        self.widget = w.Box([self.note, self.out], layout=w.Layout(display="flex", flex_flow="column"))
        self.widget.add_class(CSS_CLASS)
        self.opened = False

    def note_text(self) -> str:
        n = len(self.items)
        return (f"This cell's result ({n} output{'s' if n != 1 else ''}) is held until you commit prediction "
                f"{self.prediction_id} above.")

    def open(self) -> None:
        """Show the held outputs (called when the prediction is committed)."""
        self.opened = True
        self.out.layout.display = None
        self.note.value = f"<i>Prediction {html.escape(self.prediction_id)} committed: the result.</i>"

    def _repr_mimebundle_(self, **kwargs: Any) -> tuple[dict, dict]:
        bundle = self.widget._repr_mimebundle_(**kwargs)
        bundle["text/plain"] = self.note_text()
        bundle["text/html"] = static_html(self.items, f"The result (make prediction {self.prediction_id} first)")
        return bundle, {HELD_KEY: True}


def _shell() -> Any:
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython comes with ipywidgets
        return None
    return get_ipython()


def _display(obj: Any) -> None:
    from IPython.display import display

    display(obj)


def _replay(items: list[dict]) -> None:
    from IPython.display import display

    for item in items:
        if item["output_type"] == "stream":
            sys.stdout.write(item["text"])
        else:
            display(item["data"], raw=True, metadata=item["metadata"])


def _open_figures() -> set[int]:
    if "matplotlib.pyplot" not in sys.modules:
        return set()
    return set(sys.modules["matplotlib.pyplot"].get_fignums())


def _show_new_figures(before: set[int]) -> None:
    """Display and close the figures the block opened and left open (the inline backend would show them at the
    cell's end, outside the block)."""
    plt = sys.modules.get("matplotlib.pyplot")
    if plt is None:
        return
    for num in sorted(set(plt.get_fignums()) - before):
        fig = plt.figure(num)
        _display(fig)
        plt.close(fig)

"""Widgets in the static book: each widget view becomes the picture and text it showed when executed.

A static page has no kernel, so an ipywidgets view would be a blank cell (or one that fetches
the widget manager from a CDN). nbclient keeps every widget model's last state in the
notebook's metadata (``application/vnd.jupyter.widget-state+json``, binary values such as an
``Image``'s PNG as base64 buffers). :func:`freeze_widgets` walks each displayed view's model
tree in display order and replaces the output with what a reader saw: every ``Image`` as an
ordinary ``image/png`` output (so the book counts it as a figure), then the ``HTML`` widgets'
text, the controls' values and one line saying the control is interactive in JupyterLab.
Hidden subtrees (``layout.display == "none"``) are left out, as the front end leaves them out. An experiment
cell held for a prediction (:mod:`workbench.ui.widgets.held`) keeps its collapsed ``<details>`` block instead.
"""

from __future__ import annotations

import html
from typing import Any

import nbformat

VIEW = "application/vnd.jupyter.widget-view+json"
STATE = "application/vnd.jupyter.widget-state+json"
IMAGE_TYPES = {"png": "image/png", "jpeg": "image/jpeg", "jpg": "image/jpeg"}
CONTROLS = ("SliderModel", "DropdownModel", "CheckboxModel", "ToggleButtonsModel", "RadioButtonsModel")
HELD = "workbench_held"  # workbench.ui.widgets.held.HELD_KEY: a cell's outputs held until a prediction
NOTE = "Interactive in JupyterLab: run the notebook there to use the controls; shown here as executed"


def _model(ref: Any) -> str:
    return ref[len("IPY_MODEL_"):] if isinstance(ref, str) and ref.startswith("IPY_MODEL_") else ""


def _walk(models: dict[str, Any], model_id: str, seen: set[str]) -> list[dict[str, Any]]:
    """The visible models under ``model_id``, depth first, in display order."""
    m = models.get(model_id)
    if m is None or model_id in seen:
        return []
    seen.add(model_id)
    layout = models.get(_model(m["state"].get("layout")), {}).get("state", {})
    if layout.get("display") == "none":
        return []
    found = [m]
    for child in m["state"].get("children", []):
        found += _walk(models, _model(child), seen)
    return found


def _control(state: dict[str, Any]) -> str:
    """``description = value`` for a control that is set, ``description: a / b`` for a choice not made yet
    (a prediction), empty for anything else (text boxes, buttons)."""
    label = state.get("description", "")
    if "_options_labels" in state:
        index, options = state.get("index"), state["_options_labels"]
        if not isinstance(index, int):  # nothing chosen yet (a prediction): the choices are what a reader needs
            return f"{label + ': ' if label else ''}{' / '.join(map(str, options))}"
        value = options[index]
    elif isinstance(state.get("value"), bool | int | float):
        value = state["value"]
    else:
        return ""
    return f"{label} = {value}" if label else str(value)


def static_outputs(model_id: str, models: dict[str, Any]) -> list[Any]:
    """The outputs that stand for one widget view: its images, its text, its settings and the note."""
    images, texts, controls = [], [], []
    for m in _walk(models, model_id, set()):
        name, state = m.get("model_name", ""), m["state"]
        buffers = {tuple(b["path"]): b["data"] for b in m.get("buffers", []) if b.get("encoding") == "base64"}
        if name == "ImageModel" and ("value",) in buffers:
            mime = IMAGE_TYPES.get(state.get("format", "png"), "image/png")
            images.append(nbformat.v4.new_output("display_data", data={mime: buffers[("value",)]}))
        elif name == "HTMLModel" and state.get("value", "").strip():
            texts.append(state["value"])
        elif name.endswith(CONTROLS):
            line = _control(state)
            if line:
                controls.append(html.escape(line))
    settings = f" ({' · '.join(controls)})" if controls else ""
    note = f"<p class='book-widget-note'><em>{NOTE}{settings}.</em></p>"
    blocks = "".join(f"<div>{t}</div>" for t in texts)  # one block per widget, as the front end lays them out
    text = nbformat.v4.new_output("display_data", data={"text/html": blocks + note})
    return [*images, text]


def freeze_widgets(nb) -> int:
    """Replace, in place, every widget view in ``nb`` by its static outputs; drop the widget state.

    Returns how many views were replaced. A view whose model was not kept becomes the note alone.
    """
    models = nb.metadata.get("widgets", {}).get(STATE, {}).get("state", {})
    replaced = 0
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        outputs = []
        for out in cell.get("outputs", []):
            view = out.get("data", {}).get(VIEW)
            if view is None:
                outputs.append(out)
                continue
            if out.get("metadata", {}).get(HELD):  # an experiment held for a prediction: its collapsed HTML block
                outputs.append(nbformat.v4.new_output("display_data", data={"text/html": out["data"]["text/html"]}))
                replaced += 1
                continue
            outputs += static_outputs(view.get("model_id", ""), models)
            replaced += 1
        cell.outputs = outputs
    nb.metadata.pop("widgets", None)  # nothing left to render it: the page loads no widget manager
    return replaced

"""``with guess.held():`` holds an experiment cell's outputs until the prediction above is committed: hidden in
JupyterLab, collapsed in the book, absent from the text form; shown at once when the commit came first."""

from __future__ import annotations

import nbformat
import pytest
from book_widgets import freeze_widgets

from workbench.ui import predict
from workbench.ui.widgets.held import HELD_KEY, HeldView, static_html

VIEW = "application/vnd.jupyter.widget-view+json"


def test_a_held_block_catches_its_prints_in_order_and_opens_at_the_commit(capsys):
    guess = predict("99.1", "How long?", unit="ms", store=False)
    with guess.held() as h:
        print("observed 4.2 ms")
        guess.observe(4.2, "a reason")
    assert "4.2" not in capsys.readouterr().out.replace("(1 output) is held", "")  # only the held view's repr
    assert h.view is not None and h.items == [{"output_type": "stream", "name": "stdout", "text": "observed 4.2 ms\n"}]
    assert h.view.out.layout.display == "none" and not h.view.opened
    assert guess.commit("4")
    assert h.view.opened and h.view.out.layout.display is None and "committed" in h.view.note.value


def test_after_a_commit_nothing_is_held(capsys):
    guess = predict("99.2", "How long?", unit="ms", store=False)
    guess.commit("3")
    with guess.held() as h:
        print("observed 4.2 ms")
    assert h.view is None and capsys.readouterr().out == "observed 4.2 ms\n"


def test_an_error_inside_shows_what_ran_and_goes_on(capsys):
    guess = predict("99.3", "Which?", choices=["a", "b"], store=False)
    with pytest.raises(ZeroDivisionError), guess.held():
        print("before the error")
        1 / 0  # noqa: B018
    assert "before the error" in capsys.readouterr().out


def test_the_text_form_says_held_and_the_html_form_is_collapsed():
    items = [{"output_type": "stream", "name": "stdout", "text": "p99 = 1.94 ms\n"},
             {"output_type": "display_data", "data": {"image/png": "iVBORw0KGgo=", "text/plain": "<Figure>"},
              "metadata": {}}]
    view = HeldView("02.3", items)
    bundle, metadata = view._repr_mimebundle_()
    assert metadata == {HELD_KEY: True} and VIEW in bundle
    assert "1.94" not in bundle["text/plain"] and "held until you commit prediction 02.3" in bundle["text/plain"]
    assert bundle["text/html"] == static_html(items, "The result (make prediction 02.3 first)")
    assert bundle["text/html"].startswith("<details") and "p99 = 1.94 ms" in bundle["text/html"]
    assert "<div class='output_png'><img src=\"data:image/png;base64,iVBORw0KGgo=\"></div>" in bundle["text/html"]


def test_run_all_holds_prints_and_figures_under_an_uncommitted_prediction_and_the_book_collapses_them(tmp_path):
    """Executed as nbval and the book do: the experiment cell's only output is the held view; its widget area is
    hidden and holds the print and the figure; the text form has no answer; the book keeps a <details> block."""
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell('from workbench.ui import predict\n'
                                  'g = predict("99.4", "How long?", unit="ms", store=False)\ng'),
        nbformat.v4.new_code_cell('import matplotlib.pyplot as plt\nwith g.held():\n    print("answer: 42 ms")\n'
                                  '    fig, ax = plt.subplots()\n    ax.plot([1, 2], [3, 4])\n'
                                  '    g.observe(42, "because")'),
    ])
    NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    (out,) = nb.cells[1].outputs
    assert out["metadata"].get(HELD_KEY) and "answer" not in out["data"]["text/plain"]
    assert "answer: 42 ms" in out["data"]["text/html"] and "data:image/png;base64," in out["data"]["text/html"]
    models = nb.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    (area,) = [m for m in models.values() if m["model_name"] == "OutputModel"]
    layout = models[area["state"]["layout"].removeprefix("IPY_MODEL_")]["state"]
    assert layout["display"] == "none"
    kinds = [o["output_type"] for o in area["state"]["outputs"]]
    assert kinds == ["stream", "display_data"] and "image/png" in area["state"]["outputs"][1]["data"]
    assert freeze_widgets(nb) >= 2
    (frozen,) = nb.cells[1].outputs
    assert list(frozen["data"]) == ["text/html"] and frozen["data"]["text/html"].startswith("<details")

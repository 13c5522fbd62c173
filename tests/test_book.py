"""``make book`` on small notebooks: figures inline, links rewritten, glossary anchors, the checks that fail
a book whose figure printed as text or whose glossary link points nowhere; nothing loaded from a CDN
(MathJax from the book's folder), widgets frozen to their picture, chapter navigation and worked answers.
The built book in a browser with the network blocked: tests/browser/test_book_offline.py."""

from __future__ import annotations

import re

import nbformat
from book_widgets import NOTE, freeze_widgets
from build_book import anchor, build, glossary_html, rewrite_links


def tiny(tmp_path, code: str, md: str = "# A chapter\n\nSee [CDF](GLOSSARY.md#cdf) and 02_fusion_and_memory.ipynb.",
         name: str = "09_tiny.ipynb"):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell(md), nbformat.v4.new_code_cell(code)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return path


FIG = "from workbench.ui.figures.base import new_figure\nfig, (a, b) = new_figure(2)\na.plot([1, 2], [3, 4])\nfig"


def test_a_chapter_with_a_figure_builds_with_its_links_rewritten(tmp_path):
    out = tmp_path / "book"
    assert build(out, [tiny(tmp_path, FIG)]) == []
    page = (out / "09_tiny.html").read_text()
    assert re.search(r'<img [^>]*src="data:image/png;base64', page) and "glossary.html#cdf" in page
    assert "02_fusion_and_memory.html" in page
    assert "09_tiny.html" in (out / "index.html").read_text() and "A chapter" in (out / "index.html").read_text()
    assert 'id="littles-law"' in (out / "glossary.html").read_text()
    assert "cdnjs" not in page and "unpkg" not in page and "require.js" not in page
    assert 'src="mathjax/MathJax.js' in page and (out / "mathjax" / "MathJax.js").is_file()
    assert (out / "mathjax" / "config" / "TeX-AMS-MML_HTMLorMML-full.js").is_file()


def test_a_figure_printed_as_text_and_a_dangling_glossary_link_fail_the_book(tmp_path):
    code = "print('<Figure size 640x480 with 1 Axes>')"
    found = build(tmp_path / "book", [tiny(tmp_path, code, md="# X\n\n[no such](GLOSSARY.md#no-such-term)")])
    assert any("no figure" in p for p in found) and any("as text" in p for p in found)
    assert any("#no-such-term" in p for p in found)


def test_link_and_anchor_rules():
    assert rewrite_links("[a](GLOSSARY.md#p99) 03_batching_and_queues.ipynb") == \
        "[a](glossary.html#p99) 03_batching_and_queues.html"
    assert anchor("Cobham's formula") == "cobhams-formula"
    assert '<h2 id="m-and-n">' in glossary_html("## M and N\n\ntext")


PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
WIDGET = f"""import base64, ipywidgets as w
w.VBox([w.IntSlider(value=16, description="max batch"), w.Image(value=base64.b64decode("{PIXEL}"), format="png"),
        w.HTML("<pre>p99 3 ms</pre>"), w.HTML("NOT-SHOWN", layout=w.Layout(display="none"))])"""


def test_chapters_link_to_each_other_and_a_widget_becomes_its_picture(tmp_path):
    first = tiny(tmp_path, FIG, md="# First\n\nAnswers in `solutions/08_first.ipynb`.", name="08_first.ipynb")
    tiny(tmp_path, FIG, md="# First, solved", name="solutions/08_first.ipynb")
    second = tiny(tmp_path, WIDGET, md="# Second", name="09_second.ipynb")
    out = tmp_path / "book"
    assert build(out, [first, second]) == []
    one, two = (out / "08_first.html").read_text(), (out / "09_second.html").read_text()
    assert '<a href="09_second.html" rel="next">' in one and '<a href="index.html" rel="index">' in one
    assert '<a href="08_first.html" rel="prev">' in two and 'rel="next"' not in two
    assert '<a href="solutions/08_first.html"><code>solutions/08_first.html</code></a>' in one
    solved = (out / "solutions" / "08_first.html").read_text()
    assert '<a href="../08_first.html" rel="prev">' in solved and 'src="../mathjax/MathJax.js' in solved
    assert "widget-view" not in two and NOTE in two and "max batch = 16" in two and "p99 3 ms" in two
    assert "NOT-SHOWN" not in two.split("</pre>")[-1] and f'src="data:image/png;base64,{PIXEL}"' in two


def test_freeze_widgets_keeps_pictures_text_and_settings_in_display_order():
    ref = "IPY_MODEL_"
    state = {
        "box": {"model_name": "VBoxModel", "state": {"children": [ref + c for c in ("s", "r", "i", "h", "x")]}},
        "r": {"model_name": "RadioButtonsModel", "state": {"description": "guess", "_options_labels": ["p50", "p99"],
                                                          "index": None}},
        "s": {"model_name": "FloatSliderModel", "state": {"description": "load", "value": 1500.0}},
        "i": {"model_name": "ImageModel", "state": {"format": "png"},
              "buffers": [{"path": ["value"], "data": "iVBOR", "encoding": "base64"}]},
        "h": {"model_name": "HTMLModel", "state": {"value": "<pre>p99</pre>"}},
        "x": {"model_name": "HTMLModel", "state": {"value": "gone", "layout": ref + "l"}},
        "l": {"model_name": "LayoutModel", "state": {"display": "none"}},
    }
    nb = nbformat.v4.new_notebook()
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": state}}
    view = {"application/vnd.jupyter.widget-view+json": {"model_id": "box"}, "text/plain": "VBox(...)"}
    nb.cells = [nbformat.v4.new_code_cell("panel", outputs=[nbformat.v4.new_output("display_data", data=view)])]
    assert freeze_widgets(nb) == 1 and "widgets" not in nb.metadata
    picture, text = nb.cells[0].outputs
    assert picture.data == {"image/png": "iVBOR"}
    shown = text.data["text/html"]
    assert shown.startswith("<div><pre>p99</pre></div>") and "gone" not in shown
    assert "(load = 1500.0 · guess: p50 / p99)" in shown

"""``make book`` on one small notebook: figures inline, links rewritten, glossary anchors, and the checks
that fail a book whose figure printed as text or whose glossary link points nowhere."""

from __future__ import annotations

import re

import nbformat
from build_book import anchor, build, glossary_html, rewrite_links


def tiny(tmp_path, code: str, md: str = "# A chapter\n\nSee [CDF](GLOSSARY.md#cdf) and 02_fusion_and_memory.ipynb."):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell(md), nbformat.v4.new_code_cell(code)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = tmp_path / "09_tiny.ipynb"
    nbformat.write(nb, path)
    return path


FIG = "from workbench.ui.figures import new_figure\nfig, (a, b) = new_figure(2)\na.plot([1, 2], [3, 4])\nfig"


def test_a_chapter_with_a_figure_builds_with_its_links_rewritten(tmp_path):
    out = tmp_path / "book"
    assert build(out, [tiny(tmp_path, FIG)]) == []
    page = (out / "09_tiny.html").read_text()
    assert re.search(r'<img [^>]*src="data:image/png;base64', page) and "glossary.html#cdf" in page
    assert "02_fusion_and_memory.html" in page
    assert "09_tiny.html" in (out / "index.html").read_text() and "A chapter" in (out / "index.html").read_text()
    assert 'id="littles-law"' in (out / "glossary.html").read_text()


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

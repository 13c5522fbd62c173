"""``make book``: the notebook series as a static HTML book that reads without Jupyter.

    python tests/build_book.py [--out build/book] [NOTEBOOK ...]

Each chapter is executed in a fresh kernel (nbclient, from ``notebooks/``), exported with
nbconvert's HTML exporter (figures inline as PNG data URIs), and its links rewritten:
``GLOSSARY.md#x`` -> ``glossary.html#x``, ``NN_name.ipynb`` -> ``NN_name.html``. The glossary
is rendered from Markdown (mistune, which nbconvert already uses) with GitHub's heading
anchors, and ``index.html`` lists the chapters by their first heading. Then the book is
checked: every chapter shows at least one figure, no output is a ``<Figure size`` repr, no
cell raised, every glossary link resolves. A failed check prints one line per problem and
exits 1.
"""

from __future__ import annotations

import argparse
import html
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
IMG = re.compile(r'<img [^>]*src="data:image/png;base64')  # a figure output (the CSS holds other data URIs)
NOTEBOOKS = ROOT / "notebooks"


def anchor(heading: str) -> str:
    """GitHub's heading anchor: lowercase, punctuation dropped (hyphens kept), spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def rewrite_links(text: str) -> str:
    """Notebook and glossary links as links between the book's pages."""
    text = re.sub(r"GLOSSARY\.md(#[\w\-]+)?", lambda m: "glossary.html" + (m.group(1) or ""), text)
    return re.sub(r"(\d\d_[\w]+)\.ipynb", r"\1.html", text)


def glossary_html(markdown_text: str) -> str:
    """The glossary as a page, each ``## Term`` with its GitHub anchor as id."""
    import mistune

    body = mistune.html(markdown_text)
    body = re.sub(r"<h2>(.+?)</h2>", lambda m: f'<h2 id="{anchor(html.unescape(re.sub("<[^>]+>", "", m[1])))}">'
                  f"{m[1]}</h2>", body)
    return page("Glossary", rewrite_links(body))


def page(title: str, body: str) -> str:
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
            "<style>body{max-width:52rem;margin:2rem auto;font-family:sans-serif;line-height:1.5}"
            "code{background:#f4f4f4}</style></head><body>"
            f"<p><a href='index.html'>contents</a> · <a href='glossary.html'>glossary</a></p>{body}</body></html>")


def chapter_html(nb) -> str:
    """A notebook (already executed) as one self-contained HTML page."""
    from nbconvert import HTMLExporter

    exporter = HTMLExporter(template_name="classic")
    out, _ = exporter.from_notebook_node(nb)
    return rewrite_links(out)


def title_of(nb) -> str:
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            m = re.search(r"^#\s+(.+)$", cell.source, flags=re.M)
            if m:
                return m.group(1).strip()
    return "untitled"


def problems(name: str, nb, page_html: str, anchors: set[str]) -> list[str]:
    """What is wrong with one built chapter (empty when nothing is)."""
    out = []
    if not IMG.search(page_html):
        out.append(f"{name}: no figure in the page")
    for i, cell in enumerate(nb.cells):
        for o in cell.get("outputs", []):
            if o.output_type == "error":
                out.append(f"{name}: cell {i} raised {o.ename}")
            if "<Figure size" in str(o.get("data", {}).get("text/plain", "")) + str(o.get("text", "")):
                out.append(f"{name}: cell {i} shows a figure as text")
    for a in set(re.findall(r"glossary\.html#([\w\-]+)", page_html)) - anchors:
        out.append(f"{name}: glossary link #{a} has no entry")
    return out


def build(out_dir: Path, paths: list[Path], execute: bool = True) -> list[str]:
    """Write the book to ``out_dir``; returns the problems found (empty: the book is good)."""
    import nbformat
    from nbclient import NotebookClient

    out_dir.mkdir(parents=True, exist_ok=True)
    glossary = (NOTEBOOKS / "GLOSSARY.md").read_text(encoding="utf-8")
    anchors = {anchor(h) for h in re.findall(r"^## (.+)$", glossary, flags=re.M)}
    (out_dir / "glossary.html").write_text(glossary_html(glossary), encoding="utf-8")
    found, rows = [], []
    for path in paths:
        nb = nbformat.read(path, as_version=4)
        start = time.perf_counter()
        if execute:
            NotebookClient(nb, timeout=600, kernel_name="python3", allow_errors=True,
                           resources={"metadata": {"path": str(path.parent)}}).execute()
        text = chapter_html(nb)
        (out_dir / f"{path.stem}.html").write_text(text, encoding="utf-8")
        images = len(IMG.findall(text))
        print(f"{path.stem}: {images} figures, {time.perf_counter() - start:.1f} s")
        found += problems(path.stem, nb, text, anchors)
        rows.append(f"<li><a href='{path.stem}.html'>{html.escape(title_of(nb))}</a> ({images} figures)</li>")
    index = ("<h1>The compiler-runtime mapping workbench</h1><p>The chapters, executed; every figure is drawn "
             f"by the library.</p><ol>{''.join(rows)}</ol><p><a href='glossary.html'>Glossary</a></p>")
    (out_dir / "index.html").write_text(page("Contents", index), encoding="utf-8")
    return found


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "build" / "book"))
    ap.add_argument("notebooks", nargs="*", type=Path)
    a = ap.parse_args(argv)
    paths = a.notebooks or sorted(NOTEBOOKS.glob("0*.ipynb"))
    found = build(Path(a.out), paths)
    for line in found:
        print(f"book: {line}", file=sys.stderr)
    print(f"book written to {a.out}/index.html" if not found else f"book: {len(found)} problems")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())

"""``make book``: the notebook series as a static HTML book that reads without Jupyter or a network.

    python tests/build_book.py [--out build/book] [NOTEBOOK ...]

Each chapter, and its worked answers in ``notebooks/solutions/`` where they exist, is executed
in a fresh kernel (nbclient, from the notebook's folder; the two side by side); every widget
view is replaced by the picture and text it showed (:mod:`book_widgets`); the page is exported
with nbconvert's classic HTML template through ``tests/book_template/book.html.j2`` (figures inline as PNG data URIs,
MathJax 2 from the book's own ``mathjax/`` folder, copied from the ``jupyter-server-mathjax``
package, and no other script), with previous / contents / glossary / next links above and
below, and links rewritten: ``GLOSSARY.md#x`` -> ``glossary.html#x``, ``NN_name.ipynb`` ->
``NN_name.html``, and a chapter's ``solutions/NN_name.html`` made a link to its answers page.
The glossary is rendered from Markdown (mistune, which nbconvert already uses) with GitHub's
heading anchors, and ``index.html`` lists the chapters by their first heading. Then the book is
checked: every chapter shows at least one figure, no output is a ``<Figure size`` repr, no
cell raised, every glossary link resolves. A failed check prints one line per problem and
exits 1. ``tests/browser/test_book_offline.py`` opens the result in Chromium with the network
blocked.
"""

from __future__ import annotations

import argparse
import html
import re
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from book_widgets import freeze_widgets

ROOT = Path(__file__).resolve().parents[1]
IMG = re.compile(r'<img [^>]*src="data:image/png;base64')  # a figure output (the CSS holds other data URIs)
NOTEBOOKS = ROOT / "notebooks"
TEMPLATE = Path(__file__).resolve().parent / "book_template"
# what MathJax 2's TeX-AMS-MML_HTMLorMML-full config loads: TeX in, HTML-CSS out with the STIX web fonts
MATHJAX_PARTS = ("MathJax.js", "LICENSE", "config", "extensions", "jax/input", "jax/element", "jax/output/HTML-CSS",
                 "fonts/HTML-CSS/STIX-Web")
FEW_FIGURES = 3  # the aim per chapter page: reported, not enforced


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


@dataclass(frozen=True, slots=True)
class Chapter:
    """One chapter as the navigation needs it."""

    stem: str  # file name without suffix: NN_name
    title: str  # the notebook's first heading
    solution: Path | None  # its worked answers (notebooks/solutions/NN_name.ipynb), where they exist


def page(title: str, body: str) -> str:
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
            "<style>body{max-width:52rem;margin:2rem auto;font-family:sans-serif;line-height:1.5}"
            "code{background:#f4f4f4}</style></head><body>"
            f"<p><a href='index.html'>contents</a> · <a href='glossary.html'>glossary</a></p>{body}</body></html>")


def link(href: str, text: str, rel: str = "", escape: bool = True) -> str:
    """An ``<a>``; ``rel`` (prev, next, index) is what the navigation test looks for."""
    rel_attr = f' rel="{rel}"' if rel else ""
    return f'<a href="{href}"{rel_attr}>{html.escape(text) if escape else text}</a>'


def chapter_nav(chapters: list[Chapter], i: int) -> str:
    """Previous chapter, contents, glossary, worked answers, next chapter (the ends leave a gap)."""
    prev = link(f"{chapters[i - 1].stem}.html", f"← {chapters[i - 1].title}", "prev") if i else "<span></span>"
    after = chapters[i + 1] if i + 1 < len(chapters) else None
    nxt = link(f"{after.stem}.html", f"{after.title} →", "next") if after else "<span></span>"
    middle = [link("index.html", "contents", "index"), link("glossary.html", "glossary")]
    if chapters[i].solution:
        middle.append(link(f"solutions/{chapters[i].stem}.html", "worked answers"))
    return f"{prev}<span>{' · '.join(middle)}</span>{nxt}"


def solution_nav(chapter: Chapter) -> str:
    """From a worked-answers page back to its chapter, the contents and the glossary."""
    back = link(f"../{chapter.stem}.html", f"← {chapter.title}", "prev")
    return f"{back}<span>{link('../index.html', 'contents', 'index')} · {link('../glossary.html', 'glossary')}</span>"


def link_solution(page_html: str, stem: str) -> str:
    """A chapter's mention of ``solutions/NN_name.html`` as a link to the answers page that was built."""
    target = f"solutions/{stem}.html"
    return page_html.replace(f"<code>{target}</code>", link(target, f"<code>{target}</code>", escape=False))


def copy_mathjax(out_dir: Path) -> None:
    """MathJax 2 (TeX in, HTML-CSS out) into ``out_dir/mathjax``, from the jupyter-server-mathjax package."""
    import jupyter_server_mathjax

    source = Path(jupyter_server_mathjax.__file__).parent / "static"
    for part in MATHJAX_PARTS:
        src, dst = source / part, out_dir / "mathjax" / part
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, dst, dirs_exist_ok=True, ignore=shutil.ignore_patterns("a11y"))
        else:
            shutil.copy2(src, dst)


def chapter_html(nb, title: str = "", root: str = "", nav: str = "") -> str:
    """A notebook (already executed, widgets frozen) as one page; ``root`` is the path up to the book's folder."""
    from nbconvert import HTMLExporter
    from nbconvert.preprocessors import CoalesceStreamsPreprocessor

    exporter = HTMLExporter(template_name="classic", extra_template_paths=[str(TEMPLATE)],
                            template_file="book.html.j2")
    exporter.register_preprocessor(CoalesceStreamsPreprocessor, enabled=True)  # a flush can split a line's end off
    resources = {"metadata": {"name": title}, "book": {"root": root, "nav": nav}}
    out, _ = exporter.from_notebook_node(nb, resources=resources)
    return rewrite_links(out)


def executed(paths: list[Path], execute: bool = True) -> list:
    """The notebooks, read and (with ``execute``) run side by side, each in a fresh kernel from its own folder.

    The build passes a chapter with its worked answers: two kernels for the machine's two cores, each
    driven from its own thread (so the caller may have an event loop running, as Playwright's tests do).
    Widget views are then frozen to what they showed (:func:`book_widgets.freeze_widgets`).
    """
    from concurrent.futures import ThreadPoolExecutor

    import nbformat
    from nbclient import NotebookClient

    nbs = [nbformat.read(path, as_version=4) for path in paths]

    def run(nb, path: Path) -> None:
        NotebookClient(nb, timeout=600, kernel_name="python3", allow_errors=True,
                       resources={"metadata": {"path": str(path.parent)}}).execute()

    if execute:
        with ThreadPoolExecutor(max_workers=len(paths)) as pool:
            list(pool.map(run, nbs, paths))
    for nb in nbs:
        freeze_widgets(nb)
    return nbs


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

    out_dir.mkdir(parents=True, exist_ok=True)
    copy_mathjax(out_dir)
    glossary = (NOTEBOOKS / "GLOSSARY.md").read_text(encoding="utf-8")
    anchors = {anchor(h) for h in re.findall(r"^## (.+)$", glossary, flags=re.M)}
    (out_dir / "glossary.html").write_text(glossary_html(glossary), encoding="utf-8")
    answers = [path.parent / "solutions" / path.name for path in paths]
    chapters = [Chapter(p.stem, title_of(nbformat.read(p, as_version=4)), s if s.exists() else None)
                for p, s in zip(paths, answers, strict=True)]
    found, rows, few = [], [], []
    for i, (path, chapter) in enumerate(zip(paths, chapters, strict=True)):
        start = time.perf_counter()
        nb, *solved = executed([path, *([chapter.solution] if chapter.solution else [])], execute)
        text = chapter_html(nb, chapter.title, "", chapter_nav(chapters, i))
        if chapter.solution:
            text = link_solution(text, chapter.stem)
        (out_dir / f"{chapter.stem}.html").write_text(text, encoding="utf-8")
        found += problems(chapter.stem, nb, text, anchors)
        images = len(IMG.findall(text))
        few += [f"{chapter.stem} ({images})"] if images < FEW_FIGURES else []
        answers_link = ""
        if chapter.solution:
            answer_page = chapter_html(solved[0], title_of(solved[0]), "../", solution_nav(chapter))
            (out_dir / "solutions").mkdir(exist_ok=True)
            (out_dir / "solutions" / f"{chapter.stem}.html").write_text(answer_page, encoding="utf-8")
            found += problems(f"solutions/{chapter.stem}", solved[0], answer_page, anchors)
            answers_link = f", {link(f'solutions/{chapter.stem}.html', 'worked answers')}"
        print(f"{chapter.stem}: {images} figures, {time.perf_counter() - start:.1f} s"
              + (" (with its worked answers)" if chapter.solution else ""))
        counted = f"{images} figure{'s' if images != 1 else ''}"
        rows.append(f"<li>{link(f'{chapter.stem}.html', chapter.title)} ({counted}{answers_link})</li>")
    index = ("<h1>The compiler-runtime mapping workbench</h1><p>The chapters, executed; every figure is drawn "
             "by the library. Panels are shown as executed: move their controls in JupyterLab.</p>"
             f"<ol>{''.join(rows)}</ol><p><a href='glossary.html'>Glossary</a></p>")
    (out_dir / "index.html").write_text(page("Contents", index), encoding="utf-8")
    if few:
        print(f"book: fewer than {FEW_FIGURES} figures (the aim, not checked): {', '.join(few)}")
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

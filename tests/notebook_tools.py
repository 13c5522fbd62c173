"""Keep the notebooks reviewable: execute them, then keep only the outputs nbval checks.

``python tests/notebook_tools.py refresh [NOTEBOOK ...]`` (``make notebooks``) executes the named
notebooks, or every notebook in ``notebooks/`` and ``notebooks/solutions/``, in a fresh kernel and
stores, for cells marked ``# NBVAL_CHECK_OUTPUT`` only, their text outputs and execution counts (the
golden numbers nbval compares); every other output, execution count and widget state is dropped.
``check`` fails if a committed notebook is not in that form.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import nbformat

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
MARK = "# NBVAL_CHECK_OUTPUT"
TEXT_OUTPUTS = ("text/plain",)


def clean(nb) -> bool:
    """Strip a notebook in place to its reviewable form; True if anything changed."""
    before = nbformat.writes(nb)
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        cell.metadata = {k: v for k, v in cell.metadata.items() if k in ("tags", "jupyter")}  # jupyter: source_hidden
        if cell.cell_type != "code":
            continue
        kept = []
        if not cell.source.startswith(MARK):
            cell.execution_count = None  # nbval treats a checked cell without a count as never run
        else:
            for out in cell.get("outputs", []):
                if out.output_type == "stream" and out.name == "stdout":
                    if kept and kept[-1].output_type == "stream":  # one block, however stdout was flushed
                        kept[-1].text += out.text
                    else:
                        kept.append(out)
                elif out.output_type in ("execute_result", "display_data"):
                    data = {k: v for k, v in out.data.items() if k in TEXT_OUTPUTS}
                    if data:
                        out.data, out.metadata = data, {}
                        kept.append(out)
        cell.outputs = kept
    return nbformat.writes(nb) != before


def problems(nb) -> list[str]:
    """Why a notebook is not in its reviewable form (empty when it is)."""
    out = []
    if "widgets" in nb.metadata:
        out.append("carries widget state")
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        if cell.execution_count is not None and not cell.source.startswith(MARK):
            out.append(f"cell {i} has an execution count")
        if cell.outputs and not cell.source.startswith(MARK):
            out.append(f"cell {i} keeps outputs but is not checked by nbval")
        for o in cell.outputs:
            if o.output_type in ("execute_result", "display_data") and set(o.data) - set(TEXT_OUTPUTS):
                out.append(f"cell {i} keeps non-text output {sorted(set(o.data) - set(TEXT_OUTPUTS))}")
    return out


def refresh(paths: list[Path]) -> None:
    """Execute and clean each notebook; prints how long each took."""
    from nbclient import NotebookClient

    for path in paths:
        nb = nbformat.read(path, as_version=4)
        start = time.perf_counter()
        client = NotebookClient(nb, timeout=600, kernel_name="python3",
                                resources={"metadata": {"path": str(path.parent)}})
        client.execute()
        print(f"{path.name}: executed in {time.perf_counter() - start:.1f} s")
        clean(nb)
        nbformat.write(nb, path)


def notebook_paths(args: list[str]) -> list[Path]:
    """The notebooks named in ``args``, or every chapter and every solution when none is named."""
    if args:
        return [Path(a).resolve() for a in args]
    return sorted(NOTEBOOKS.glob("*.ipynb")) + sorted((NOTEBOOKS / "solutions").glob("*.ipynb"))


if __name__ == "__main__":
    command, paths = sys.argv[1:2], notebook_paths(sys.argv[2:])
    if command == ["refresh"]:
        refresh(paths)
    elif command == ["check"]:
        bad = {p.name: problems(nbformat.read(p, as_version=4)) for p in paths}
        bad = {k: v for k, v in bad.items() if v}
        print(bad or "all notebooks clean")
        sys.exit(1 if bad else 0)
    else:
        sys.exit("usage: notebook_tools.py refresh|check [NOTEBOOK ...]")

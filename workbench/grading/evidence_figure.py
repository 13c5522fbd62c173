"""The figure a drill's evidence is shown with in the terminal: a survival curve per run, saved as a PNG.

Drawn for request-level drills (:func:`workbench.grading.practice.prepare`: latency) and
token-level ones (:mod:`workbench.grading.token_evidence`: time to first token), on log-log axes so the tail the
drill is about is as tall as its median (:func:`workbench.tail_axes.draw_survival`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from workbench.safe_io import write_file
from workbench.tail_axes import draw_survival


def evidence_figure(samples_ms: dict[str, np.ndarray], path: Path, xlabel: str) -> Path:
    """The drill's figure: a survival curve per run (baseline grey, regressed blue, each p99 marked), a PNG."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.5, 3.2))  # no pyplot: no global figure state, no backend switch
    draw_survival(fig.subplots(), samples_ms, xlabel)
    write_file(path, lambda tmp: fig.savefig(tmp, format="png", dpi=100, bbox_inches="tight"))
    return path

"""The figure a drill's evidence is shown with in the terminal: a CDF per run, saved as a PNG.

Drawn for request-level drills (:func:`workbench.grading.practice.prepare`: latency) and
token-level ones (:mod:`workbench.grading.token_evidence`: time to first token).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from workbench.safe_io import write_file


def cdf_figure(samples_ms: dict[str, np.ndarray], path: Path, xlabel: str) -> Path:
    """The drill's figure: a CDF per run (baseline grey, regressed blue, each p99 dashed), saved as a PNG."""
    from matplotlib.figure import Figure

    from workbench.ui.figures.base import plain_log
    from workbench.ui.figures.palette import BASELINE, CURRENT

    fig = Figure(figsize=(6.5, 3.2))  # no pyplot: no global figure state, no backend switch
    ax = fig.subplots()
    for (name, ms), color in zip(samples_ms.items(), (BASELINE, CURRENT), strict=True):
        x = np.sort(ms)
        ax.plot(x, np.arange(1, len(x) + 1) / len(x), color=color, label=name)
        ax.axvline(np.percentile(x, 99), color=color, lw=0.8, ls="--")
    ax.set_xscale("log")
    plain_log(ax.xaxis)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("CDF")
    ax.legend()
    write_file(path, lambda tmp: fig.savefig(tmp, format="png", dpi=100, bbox_inches="tight"))
    return path

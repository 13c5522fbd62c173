"""Figures of the drills chapter (07): a drill's evidence, the grade of answers element by element, and a
learner's progress over attempts.

Each draws what the library already computed (the runs' summaries from
:func:`workbench.grading.practice.prepare`, :class:`workbench.grading.grader.Grade` objects, the rows of
:meth:`workbench.grading.store.Store.attempts`) and returns a figure that shows itself in a notebook. The
baseline run is grey, the regressed run blue, the fix vermillion; tail drivers keep their cause colours.
"""

from __future__ import annotations

import numpy as np

from workbench.analysis.metrics import DRIVERS
from workbench.grading.grader import WEIGHTS
from workbench.palette import BASELINE, CAUSES, CURRENT, SECOND
from workbench.ui.figures.base import new_figure

RUNS = {"base": ("baseline", BASELINE), "reg": ("regressed", CURRENT), "fix": ("fixed", SECOND)}
STATS = ("mean", "p50", "p95", "p99")
VERDICT_COLORS = {"weak": SECOND, "partial": CAUSES["memory_contention"], "strong": CAUSES["service"]}


def evidence_figure(summaries: dict[str, dict]):
    """A drill's evidence: mean, p50, p95 and p99 of each run (left) and the tail drivers of each (right).

    ``summaries`` maps ``base``, ``reg`` and optionally ``fix`` to run summaries (``Evidence.summaries``)."""
    fig, (lat_ax, drv_ax) = new_figure(2, 10.0, 3.4)
    runs = [k for k in RUNS if k in summaries]
    x, h = np.arange(len(STATS)), 0.8 / len(runs)
    for i, k in enumerate(runs):
        label, color = RUNS[k]
        ms = [summaries[k]["latency_s"][q] * 1e3 for q in STATS]
        lat_ax.bar(x - 0.4 + (i + 0.5) * h, ms, h, color=color, label=label)
    lat_ax.set_xticks(x, STATS)
    lat_ax.set_ylabel("latency (ms)")
    lat_ax.set_title("the regression grows toward the tail", fontsize=9)
    lat_ax.legend(fontsize=8, frameon=False)
    lat_ax.grid(alpha=0.3, axis="y")
    left = np.zeros(len(runs))
    y = np.arange(len(runs))
    for d in DRIVERS:
        share = np.array([summaries[k]["tail_drivers"][d] for k in runs])
        drv_ax.barh(y, share, 0.6, left=left, color=CAUSES[d], label=d.replace("_", " "))
        left += share
    drv_ax.set_yticks(y, [RUNS[k][0] for k in runs], fontsize=8)
    drv_ax.invert_yaxis()
    drv_ax.set_xlim(0, 1)
    drv_ax.set_xlabel("share of the latency above p95")
    drv_ax.set_title("tail drivers", fontsize=9)
    drv_ax.legend(fontsize=7, ncol=3, loc="upper center", bbox_to_anchor=(0.5, -0.22), frameon=False)
    fig.subplots_adjust(bottom=0.3, wspace=0.35)
    return fig


def grade_figure(grades: dict[str, object]):
    """Each answer's grade, element by element: a filled cell where the grader found the element (its weight
    written in it), an empty one where it did not; the verdict and score beside each answer."""
    elements = list(WEIGHTS)
    fig, (ax,) = new_figure(1, 8.0, 0.9 + 0.55 * len(grades))
    for row, g in enumerate(grades.values()):
        for col, e in enumerate(elements):
            present = g.elements[e].present
            ax.add_patch(_cell(col, row, CURRENT if present else "white"))
            ax.text(col, row, f"+{WEIGHTS[e]}" if present else "missing", ha="center", va="center",
                    fontsize=8, color="white" if present else BASELINE)
        ax.text(len(elements) - 0.4, row, f"{g.verdict}, {g.score}/100", va="center", fontsize=8,
                color=VERDICT_COLORS.get(g.verdict, "black"))
    ax.set_xlim(-0.6, len(elements) + 1.2)
    ax.set_ylim(len(grades) - 0.5, -0.5)
    ax.set_xticks(range(len(elements)), [f"{e}\n{WEIGHTS[e]} points" for e in elements], fontsize=8)
    ax.xaxis.tick_top()
    ax.set_yticks(range(len(grades)), list(grades), fontsize=8)
    ax.tick_params(length=0)
    for side in ax.spines.values():
        side.set_visible(False)
    fig.subplots_adjust(left=0.2, right=0.98, top=0.75 if len(grades) < 3 else 0.82, bottom=0.05)
    return fig


def progress_figure(attempts: list[dict]):
    """A learner's attempts, oldest first (``Store.attempts()``): the score of each, coloured by verdict (left),
    and which elements each one had (right)."""
    elements = list(WEIGHTS)
    fig, (score_ax, el_ax) = new_figure(2, 10.0, 3.0)
    n = np.arange(1, len(attempts) + 1)
    score_ax.bar(n, [a["score"] for a in attempts], 0.6,
                 color=[VERDICT_COLORS.get(a["verdict"], BASELINE) for a in attempts])
    for i, a in zip(n, attempts, strict=True):
        score_ax.text(i, a["score"] + 2, a["verdict"], ha="center", fontsize=8)
    score_ax.set_ylim(0, 115)
    score_ax.set_xticks(n)
    score_ax.set_xlabel("attempt")
    score_ax.set_ylabel("score (of 100)")
    score_ax.set_title("score per attempt", fontsize=9)
    for i, a in zip(n, attempts, strict=True):
        for row, e in enumerate(elements):
            el_ax.add_patch(_cell(i, row, CURRENT if a["elements"].get(e) else "white"))
    el_ax.set_xlim(0.4, len(attempts) + 0.6)
    el_ax.set_ylim(len(elements) - 0.5, -0.5)
    el_ax.set_xticks(n)
    el_ax.set_xlabel("attempt")
    el_ax.set_yticks(range(len(elements)), elements, fontsize=8)
    el_ax.set_title("elements present (filled)", fontsize=9)
    el_ax.tick_params(length=0)
    fig.subplots_adjust(left=0.07, wspace=0.45, bottom=0.2)
    return fig


def _cell(x: float, y: float, color: str):
    from matplotlib.patches import Rectangle

    return Rectangle((x - 0.45, y - 0.4), 0.9, 0.8, facecolor=color, edgecolor=BASELINE, lw=0.8)

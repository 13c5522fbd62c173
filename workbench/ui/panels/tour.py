"""The tour's panel (chapter 00): switch the shape drift on and off, move where its median ends, and watch
the tail and its drivers.

It runs the tour's own scenario, ``shape_drift`` (700 req/s of chat requests on four cores, buckets up to
512 tokens, out-of-envelope shapes on the generic fallback), at its 60,000 requests (the tour's own run). Left: the
survival plot of the latencies (:class:`workbench.ui.figures.survival.SurvivalView`, the kept baseline in grey).
Right: the tail drivers of this run over the baseline's, one colour per cause (``palette.CAUSES``).
"""

from __future__ import annotations

import dataclasses

import ipywidgets as w
import numpy as np

from workbench.analysis.metrics import DRIVERS, summarize
from workbench.palette import BASELINE, BASELINE_ALPHA, CAUSES
from workbench.ui.figures import base as f
from workbench.ui.figures.survival import SurvivalView
from workbench.ui.panels.base import Panel, builtin, lat_ms, slider


class TourDriftPanel(Panel):
    """Drift on or off, and the median it ends at; the survival plot and the tail drivers of each run."""

    figure_size = (10.0, 3.6)
    requests = 60_000  # the tour's run: 700 req/s for about 86 s, the drift from 10 s to 80 s complete

    def controls(self):
        drift = w.Checkbox(value=False, description="drift over the run", indent=False,
                           layout=w.Layout(width="150px"))
        end = slider(900, 250, 1200, 50, "median at the end (tokens)", integer=True)
        end.disabled = True
        drift.observe(lambda change: setattr(end, "disabled", not change["new"]), names="value")
        return {"drift": drift, "drift_to": end}

    def run(self, drift, drift_to):
        """One run of ``shape_drift``; with ``drift`` off its median stays at the start (200 tokens)."""
        sc = builtin("shape_drift")
        stream = sc.streams[0]
        seq = stream.shapes["seq"]
        ramp = dataclasses.replace(seq.drift, to={"median": float(drift_to)}) if drift else None
        stream = dataclasses.replace(stream, shapes={"seq": dataclasses.replace(seq, drift=ramp)})
        sc = dataclasses.replace(sc, streams=(stream,), requests=self.requests)
        trace = self.simulate(sc)
        return {"trace": trace, "summary": summarize(trace), "shape": (int(seq.median), int(drift_to) if drift
                                                                       else int(seq.median))}

    def layout(self):
        self.cdf = SurvivalView(self.axes[0])
        ax = self.axes[1]
        y = np.arange(len(DRIVERS))
        self.prev_bars = ax.barh(y + 0.2, np.zeros(len(DRIVERS)), 0.4, color=BASELINE, alpha=BASELINE_ALPHA,
                                 label="baseline")
        self.bars = ax.barh(y - 0.2, np.zeros(len(DRIVERS)), 0.4, color=[CAUSES[d] for d in DRIVERS],
                            label="this run")
        ax.set_yticks(y, [d.replace("_", " ") for d in DRIVERS], fontsize=8)
        ax.invert_yaxis()
        ax.set_xlim(0, 1)
        ax.set_xlabel("share of the latency above p95")
        ax.set_title(" ", fontsize=8)
        ax.grid(alpha=0.3, axis="x")
        self.fig.subplots_adjust(wspace=0.55)

    def draw(self, r, prev):
        self.cdf.update(lat_ms(r), lat_ms(prev))
        for bar, d in zip(self.bars, DRIVERS, strict=True):
            bar.set_width(r["summary"]["tail_drivers"][d])
        for bar, d in zip(self.prev_bars, DRIVERS, strict=True):
            bar.set_width(prev["summary"]["tail_drivers"][d] if prev else 0.0)
        self.axes[1].set_title(f"bucket hit rate {r['summary']['bucket_hit_rate']:.0%} (grey: baseline)", fontsize=8)

    def text(self, r):
        start, end = r["shape"]
        shape = f"median drifts {start} -> {end} tokens" if end != start else f"median {start} tokens, no drift"
        return (f"{shape}; bucket hit rate {r['summary']['bucket_hit_rate']:.1%}\n"
                + f.latency_text({"latency": r["trace"]}) + "\n" + f.drivers_text(r["summary"], words=True))

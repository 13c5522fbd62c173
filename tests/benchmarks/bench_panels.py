"""Interaction latency of the notebook panels: from a value change to a finished figure, in Python.

For each panel, a scripted sequence of control changes; each change re-runs the library
and renders the PNG the Image widget shows. Prints median and p95 per panel (goal:
median under 150 ms, p95 under 300 ms; the closed-loop panel runs several simulations per
change by design and is reported apart).
"""

from __future__ import annotations

import statistics

import numpy as np

from workbench.ui.compiler_panels import FusionPanel, ShapeEnvelopePanel
from workbench.ui.loop_panel import ClosedLoopPanel
from workbench.ui.runtime_panels import BatchingPanel, FairnessPanel, ResidencyPanel

SCRIPTS = {
    ShapeEnvelopePanel: [("median", v) for v in (250, 300, 350, 400, 450, 500, 600, 700)]
    + [("sigma", 0.6), ("policy", "pad"), ("policy", "fallback")],
    FusionPanel: [("rate", v) for v in (600, 1200, 1800, 2400)] + [("cores", 2), ("cores", 4), ("attention", "flash")],
    BatchingPanel: [("max_delay_ms", v) for v in (1.0, 2.0, 4.0, 8.0)] + [("max_batch", 8), ("rate", 1200)],
    FairnessPanel: [("batch_weight", v) for v in (0.5, 1.0, 2.0, 4.0)] + [("discipline", "weighted")],
    ResidencyPanel: [("hbm_gib", v) for v in (20, 24, 28, 32, 36)] + [("embed_rate", 300)],
    ClosedLoopPanel: [("threshold", 0.1), ("scenario", "placement_skew")],
}


def main() -> None:
    every = []
    for cls, script in SCRIPTS.items():
        panel = cls()
        panel.timings_s.clear()
        for name, value in script:
            panel.ctrl[name].value = value
        t = np.array(panel.timings_s) * 1e3
        if cls is not ClosedLoopPanel:
            every.extend(t)
        print(f"{cls.__name__:<20} {len(t):>2} changes: median {statistics.median(t):6.0f} ms, "
              f"p95 {np.percentile(t, 95):6.0f} ms")
    print(f"{'all but closed loop':<20} {len(every):>2} changes: median {statistics.median(every):6.0f} ms, "
          f"p95 {np.percentile(every, 95):6.0f} ms (goal: median < 150 ms, p95 < 300 ms)")


if __name__ == "__main__":
    main()

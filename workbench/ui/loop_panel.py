"""The closed loop in a panel: telemetry -> retuning actions -> rollback guard, before and after."""

from __future__ import annotations

import dataclasses

from workbench.feedback.guard import closed_loop
from workbench.ui import figures as f
from workbench.ui.panel import Panel, builtin, dropdown, slider

SCENARIOS = ["shape_drift", "fusion_memory_bursts", "placement_skew", "priority_two_streams"]


class ClosedLoopPanel(Panel):
    """Pick a scenario and a guard threshold; see the actions, the verdicts and the before/after tail.

    Each change runs the baseline plus one simulation per action (a second or two), so
    this panel is slower than the others by design.
    """

    requests = 15000

    def controls(self):
        return {"scenario": dropdown(SCENARIOS, "shape_drift", "scenario"),
                "threshold": slider(0.05, 0.0, 0.5, 0.01, "guard threshold")}

    def run(self, scenario, threshold):
        sc = dataclasses.replace(builtin(scenario), requests=self.requests)
        return closed_loop(sc, threshold=threshold)

    def draw(self, loop):
        f.latency_cdf(self.axes[0], {"baseline": loop.baseline, "after retuning": loop.final})
        f.tail_drivers(self.axes[1], {"baseline": loop.baseline_summary, "after": loop.final_summary})

    def text(self, loop):
        lines = [f"adaptation gain {loop.adaptation_gain:+.1%} with {', '.join(loop.final_actions) or 'no action'}"]
        acc = loop.mapping_accuracy
        if acc["bucket_hit_rate"] is not None:
            lines.append(f"mapping accuracy: bucket hit rate {acc['bucket_hit_rate']:.1%}, prediction error "
                         f"{acc['prediction_error']['all']['mean']:+.1%}")
        for r in loop.results:
            lines.append(f"- {r.action.kind}: {r.action.change}\n    why: {r.action.reason}\n    {r.verdict.why}")
        return "\n".join(lines)

"""The closed loop in a panel: telemetry -> retuning actions -> rollback guard, before and after.

One scenario is made for this panel, ``pinned_tradeoff``: ``pinned_skew`` with a
deterministic 1 ms service, its hot and warm streams each pinned to one core run at
about 98 %, while the cold stream has two cores to itself (about 50 %). Least-loaded
placement cuts p99 from about 80 ms to 3 ms, but the cold stream, which shared nothing
before, now queues behind the others: its p99 rises by about 19 % (2.5 -> 3.0 ms, at
53,000 requests). The guard threshold is the price the loop may make one stream pay:
up to 0.19 it refuses the move and keeps the 80 ms tail; from 0.20 it takes it
(``tests/test_ui_panels.py`` asserts both sides). In the built-in scenarios every action is
a clear win or a clear loss, so there the slider changes nothing (and the panel says why).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from workbench.analysis.metrics import summarize
from workbench.feedback.guard import Effect, LoopResult, closed_loop
from workbench.tail_axes import percentile_values, survival_xy
from workbench.ui.figures import base as f
from workbench.ui.figures.survival import SurvivalView
from workbench.ui.panels.base import Panel, builtin, dropdown, slider, with_rate

SCENARIOS = ["shape_drift", "fusion_memory_bursts", "placement_skew", "priority_two_streams", "pinned_tradeoff"]
TRADEOFF_RATES = {"hot": 990.0, "warm": 990.0, "cold": 1000.0}  # req/s


def pinned_tradeoff():
    """``pinned_skew`` made so that fixing the hot core costs the cold stream about 20 % of its p99."""
    base = builtin("pinned_skew")
    streams = tuple(with_rate(s, TRADEOFF_RATES[s.name]) for s in base.streams)
    return dataclasses.replace(base, name="pinned_tradeoff", streams=streams,
                               service=dataclasses.replace(base.service, law="deterministic"))


def scenario_named(name: str):
    """A built-in scenario, or the panel's own ``pinned_tradeoff``."""
    return pinned_tradeoff() if name == "pinned_tradeoff" else builtin(name)


def worst_regression(before: Effect, after: Effect) -> float:
    """The largest relative worsening the guard looks at: p99, any stream's p99, throughput (0 if none)."""
    worse = [after.p99_s / before.p99_s - 1]
    if len(after.stream_p99_s) > 1:
        worse += [p / before.stream_p99_s[n] - 1 for n, p in after.stream_p99_s.items() if before.stream_p99_s.get(n)]
    worse.append(1 - after.throughput_rps / before.throughput_rps if before.throughput_rps > 0 else 0.0)
    return max(0.0, *worse)


def loop_summary(loop: LoopResult, threshold: float) -> dict:
    """The final run's summary plus what the loop did (for :func:`workbench.ui.panels.compare.what_changed`)."""
    verdicts = [{"kind": r.action.kind, "accepted": r.verdict.accepted,
                 "worst": worst_regression(loop.before, r.effect)} for r in loop.results]
    return {**loop.final_summary, "loop": {"threshold": threshold, "actions": list(loop.final_actions),
                                           "verdicts": verdicts}}


class ClosedLoopPanel(Panel):
    """Pick a scenario and a guard threshold; see the actions, the verdicts and the before/after tail.

    A new scenario runs the baseline plus one simulation per action (and one for their
    combination), each ``requests`` long, so that change is slower than the other panels';
    a new threshold re-guards the runs already made (they are deterministic per seed).

    Left, as survival curves: the loop's own run before retuning (grey) and after it (blue), and,
    dashed, the after-run of the kept setting (the first threshold, until "reset baseline"). A new
    scenario is another workload: the panel says so, compares nothing across it, and keeps the new run.
    """

    baseline_keys = ("scenario",)  # another scenario is another workload: nothing is compared across it

    def __init__(self, **overrides):
        self._runs: dict[str, tuple] = {}  # repr(scenario) -> (trace, summary)
        super().__init__(**overrides)

    def controls(self):
        return {"scenario": dropdown(SCENARIOS, "shape_drift", "scenario"),
                "threshold": slider(0.05, 0.0, 0.5, 0.01, "guard threshold")}

    def run(self, scenario, threshold):
        sc = dataclasses.replace(scenario_named(scenario), requests=self.requests)
        loop = closed_loop(sc, threshold=threshold, run=self.measured)
        loop.summary = loop_summary(loop, threshold)  # read by summary_of: the comparison and the status line
        return loop

    def measured(self, sc):
        """A configuration's (trace, summary), simulated once per panel: runs are deterministic per scenario and
        seed, so moving the threshold re-guards the same runs; the plan is compiled once per plan inputs."""
        key = repr(sc)
        if key not in self._runs:
            if len(self._runs) > 24:
                self._runs.clear()
            trace = self.simulate(sc)
            self._runs[key] = trace, summarize(trace)
        return self._runs[key]

    def summary_of(self, loop):
        return getattr(loop, "summary", None)

    def layout(self):
        self.cdf = SurvivalView(self.axes[0], current="after retuning", baseline="before")
        (self.kept_after,) = self.axes[0].plot([], [], ls=(0, (3, 1.5)), color="#555555", lw=1.3,
                                               label="after, kept setting")
        self.cdf.add_line(self.kept_after)
        self.drivers = f.DriverBars(self.axes[1], label="after", previous="before retuning")

    def draw(self, loop, kept):
        """The loop's own before (grey) and after (blue), and the after of the kept setting (dashed, until reset)."""
        after, before = f.latencies_ms(loop.final), f.latencies_ms(loop.baseline)
        old = f.latencies_ms(kept.final) if kept is not None else np.zeros(0)
        self.cdf.update(after, before, others=[old])
        self.kept_after.set_data(*survival_xy(old))
        if kept is None:
            self.cdf.set_label(self.kept_after, "after, kept setting: as this run")
        else:
            p = percentile_values(old)
            self.cdf.set_label(self.kept_after, f"after, at threshold {kept.summary['loop']['threshold']:.2f}: "
                                                f"p99 {p[2]:.3g} ms")
        self.drivers.show(loop.final_summary, loop.baseline_summary)

    def text(self, loop):
        lines = [f"adaptation gain {loop.adaptation_gain:+.1%} with {', '.join(loop.final_actions) or 'no action'}"]
        acc = loop.mapping_accuracy
        if acc["bucket_hit_rate"] is not None:
            lines.append(f"mapping accuracy: bucket hit rate {acc['bucket_hit_rate']:.1%}, prediction error "
                         f"{acc['prediction_error']['all']['mean']:+.1%}")
        for r, v in zip(loop.results, loop.summary["loop"]["verdicts"], strict=True):
            lines.append(f"- {r.action.kind}: {r.action.change} (worst regression {v['worst']:+.0%})\n"
                         f"    why: {r.action.reason}\n    {r.verdict.why}")
        return "\n".join(lines)

"""The closed loop: measure each action on the same workload and seed, guard, combine.

Every action is applied to a copy of the scenario and simulated on the same seed, so
the arrivals and shapes are the same as the baseline's (each stream draws from its
own child seed). The rollback guard refuses an action when its p99, any stream's p99,
or its throughput is worse than the baseline's by more than ``threshold`` (5% by
default), and says which. Accepted actions are then simulated together; if the
combination fails the guard, the best single accepted action is kept instead.

Runtime adaptation gain (../shared/DESIGN.md) is the relative p99 improvement of the
final configuration over the baseline: ``(p99_before - p99_after) / p99_before``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from workbench.analysis.metrics import summarize
from workbench.config import Scenario
from workbench.errors import ConfigError
from workbench.feedback.actions import Action, propose
from workbench.pipeline import run_scenario
from workbench.runtime.trace import Trace


@dataclass(frozen=True)
class Effect:
    """What one configuration did on the workload: the numbers the guard compares."""

    p50_s: float
    p95_s: float
    p99_s: float
    mean_s: float
    throughput_rps: float
    fairness: float
    stream_p99_s: dict[str, float]
    refused_share: float = 0.0  # percentiles are over completed requests: refusals must not buy a better tail

    @staticmethod
    def of(summary: dict) -> Effect:
        """The effect columns of a run summary."""
        lat = summary["latency_s"]
        return Effect(lat["p50"], lat["p95"], lat["p99"], lat["mean"], summary["throughput_rps"],
                      summary["fairness_jain"], {n: s["latency_s"]["p99"] for n, s in summary["streams"].items()},
                      summary["refused_share"])


@dataclass(frozen=True)
class Verdict:
    """The guard's decision on one configuration against the baseline."""

    accepted: bool
    why: str


def guard(before: Effect, after: Effect, threshold: float = 0.05) -> Verdict:
    """Refuse if p99, any stream's p99 or throughput gets worse by more than ``threshold``, or more is refused."""
    problems = []
    if after.p99_s > before.p99_s * (1 + threshold):
        problems.append(f"p99 {before.p99_s * 1e3:.3f} -> {after.p99_s * 1e3:.3f} ms "
                        f"(+{after.p99_s / before.p99_s - 1:.0%})")
    for name, p in after.stream_p99_s.items():
        b = before.stream_p99_s.get(name, math.nan)
        if len(after.stream_p99_s) > 1 and p > b * (1 + threshold):
            problems.append(f"stream {name} p99 {b * 1e3:.3f} -> {p * 1e3:.3f} ms (+{p / b - 1:.0%})")
    if after.refused_share > before.refused_share + 0.001:  # more than 0.1 % more requests refused
        problems.append(f"refused {before.refused_share:.1%} -> {after.refused_share:.1%} of requests")
    if after.throughput_rps < before.throughput_rps * (1 - threshold):
        problems.append(f"throughput {before.throughput_rps:.4g} -> {after.throughput_rps:.4g} req/s")
    if problems:
        return Verdict(False, f"refused: worse than baseline by more than {threshold:.0%}: " + "; ".join(problems))
    return Verdict(True, f"accepted: p99 {before.p99_s * 1e3:.3f} -> {after.p99_s * 1e3:.3f} ms, "
                         f"throughput {after.throughput_rps / before.throughput_rps - 1:+.1%}")


@dataclass(frozen=True)
class ActionResult:
    """An action, its measured effect and the guard's verdict."""

    action: Action
    effect: Effect
    verdict: Verdict

    def to_json(self, before: Effect) -> dict:
        """The --json row for this action."""
        return {"kind": self.action.kind, "reason": self.action.reason, "change": self.action.change,
                "accepted": self.verdict.accepted, "verdict": self.verdict.why,
                "p99_before_s": before.p99_s, "p99_after_s": self.effect.p99_s,
                "p95_after_s": self.effect.p95_s, "p50_after_s": self.effect.p50_s,
                "throughput_after_rps": self.effect.throughput_rps, "fairness_after": self.effect.fairness}


@dataclass
class LoopResult:
    """The closed loop on one scenario: baseline, actions, and the configuration it ends with."""

    scenario: Scenario
    baseline: Trace
    baseline_summary: dict
    results: list[ActionResult] = field(default_factory=list)
    final_scenario: Scenario | None = None
    final: Trace | None = None
    final_summary: dict | None = None
    final_actions: tuple[str, ...] = ()
    combined_verdict: Verdict | None = None

    @property
    def before(self) -> Effect:
        """The baseline's effect columns."""
        return Effect.of(self.baseline_summary)

    @property
    def adaptation_gain(self) -> float:
        """Relative p99 improvement of the final configuration over the baseline."""
        if self.final_summary is None:
            return 0.0
        before, after = self.before.p99_s, self.final_summary["latency_s"]["p99"]
        return (before - after) / before if before > 0 else 0.0

    @property
    def mapping_accuracy(self) -> dict:
        """Compile-time mapping accuracy of the baseline: hit rate and prediction error."""
        s = self.baseline_summary
        if "bucket_hit_rate" not in s:
            return {"bucket_hit_rate": None, "prediction_error": None}
        return {"bucket_hit_rate": s["bucket_hit_rate"], "prediction_error": s["prediction_error"]}


def measure(scenario: Scenario) -> tuple[Trace, dict]:
    """Simulate a scenario and summarise it: the closed loop's default way to measure a configuration."""
    trace = run_scenario(scenario)
    return trace, summarize(trace)


def require_request_level(scenario: object, command: str, shown: str | None = None) -> None:
    """The closed loop (``workbench report``, ``sweep``) covers request-level scenarios: refuse a token-mode one,
    saying what it covers and where a token-mode run is measured (``shown``: the scenario as the user named it)."""
    if isinstance(scenario, Scenario):
        return
    name = shown or getattr(scenario, "name", "the scenario")
    raise ConfigError("serving.mode", "token", f"`workbench {command}` covers request-level scenarios only (the "
                      "closed-loop mapping: compile profile, per-bucket telemetry, retuning actions and the rollback "
                      f"guard); this is a token-mode scenario: `workbench run {name}` reports its TTFT, TPOT, ITL, "
                      "KV use and goodput")


def closed_loop(scenario: Scenario, threshold: float = 0.05, actions: list[Action] | None = None,
                run: Callable[[Scenario], tuple[Trace, dict]] = measure) -> LoopResult:
    """Run the baseline, propose actions (or take ``actions``), measure, guard and combine them.

    ``run`` measures one configuration (default :func:`measure`); runs are deterministic per
    scenario and seed, so a caller may memoise it (a panel whose threshold moves re-guards
    the same runs instead of simulating them again).
    """
    require_request_level(scenario, "report")
    baseline, summary = run(scenario)
    loop = LoopResult(scenario, baseline, summary)
    before = loop.before
    runs = {}  # id(action) -> (scenario, trace, summary): kept so the chosen run is not simulated twice
    for action in propose(scenario, baseline, summary) if actions is None else actions:
        sc = action.apply(scenario)
        trace, s = run(sc)
        effect = Effect.of(s)
        loop.results.append(ActionResult(action, effect, guard(before, effect, threshold)))
        runs[id(action)] = (sc, trace, s)
    accepted = [r for r in loop.results if r.verdict.accepted]
    loop.final_scenario, loop.final, loop.final_summary = scenario, baseline, summary
    if not accepted:
        return loop
    best = min(accepted, key=lambda r: r.effect.p99_s)
    if len(accepted) > 1:
        combined = scenario
        for r in accepted:
            combined = r.action.apply(combined)
        trace, s = run(combined)
        loop.combined_verdict = guard(before, Effect.of(s), threshold)
        if loop.combined_verdict.accepted and s["latency_s"]["p99"] <= best.effect.p99_s:
            loop.final_scenario, loop.final, loop.final_summary = combined, trace, s
            loop.final_actions = tuple(r.action.kind for r in accepted)
            return loop
    loop.final_scenario, loop.final, loop.final_summary = runs[id(best.action)]
    loop.final_actions = (best.action.kind,)
    return loop

"""Chapter 06's numbers and pictures: what the rollback guard compares, the noise under it, the tail over time.

The numbers are thin views of the library's own runs: :func:`guard_margins` repeats, check
by check, the relative worsenings :func:`workbench.feedback.guard.guard` compares with its
threshold; :func:`seed_noise` measures how far a *no-op* moves those same numbers when only
the seed changes (the noise a threshold must see past); :func:`windowed_p99` cuts a trace
into equal time windows, the way a serving system's telemetry arrives. The figures draw
them with :mod:`workbench.palette`: baseline grey, after retuning ``CURRENT`` blue.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from workbench import palette as pal
from workbench.analysis.metrics import summarize
from workbench.config import Scenario
from workbench.feedback.actions import Action
from workbench.feedback.guard import Effect
from workbench.pipeline import run_scenario
from workbench.runtime.trace import Trace
from workbench.tail_axes import plain_log
from workbench.ui.figures.base import new_figure
from workbench.ui.figures.timeline import draw_cdf


def guard_margins(before: Effect, after: Effect) -> dict[str, float]:
    """Relative worsening per guard check (> 0 is worse): p99, each stream's p99, throughput, refused share."""
    out = {"p99": after.p99_s / before.p99_s - 1}
    if len(after.stream_p99_s) > 1:
        out.update({f"{n} p99": p / before.stream_p99_s[n] - 1 for n, p in after.stream_p99_s.items()})
    out["throughput"] = 1 - after.throughput_rps / before.throughput_rps
    return out


def smallest_accepting_threshold(before: Effect, after: Effect, step: float = 0.01) -> float:
    """The smallest threshold on a grid of ``step`` at which every guard check passes (refusals aside)."""
    worst = max(0.0, *guard_margins(before, after).values())
    return round(int(np.ceil(worst / step - 1e-9)) * step, 10)  # refused only when worse by *more than* it


def effect_on_seed(scenario: Scenario, seed: int) -> Effect:
    """The guard's numbers for ``scenario`` run unchanged on another seed."""
    return Effect.of(summarize(run_scenario(dataclasses.replace(scenario, seed=seed))))


def seed_noise(scenario: Scenario, seeds: tuple[int, ...]) -> dict:
    """A no-op measured on each of ``seeds`` against the scenario's own seed: p99s and worst guard margin each."""
    ref = effect_on_seed(scenario, scenario.seed)
    rows = []
    for s in seeds:
        e = effect_on_seed(scenario, s)
        m = guard_margins(ref, e)
        rows.append({"seed": s, "p99_s": e.p99_s, "stream_p99_s": e.stream_p99_s, "margins": m,
                     "worst": max(m.values())})
    p99 = np.array([ref.p99_s] + [r["p99_s"] for r in rows])
    return {"ref_seed": scenario.seed, "ref_p99_s": ref.p99_s, "rows": rows,
            "p99_spread": float((p99.max() - p99.min()) / np.median(p99))}


def paired_margins(scenario: Scenario, action: Action, seeds: tuple[int, ...]) -> list[float]:
    """The action's worst guard margin on each seed, baseline and action on that same seed (as the loop does)."""
    out = []
    for s in seeds:
        sc = dataclasses.replace(scenario, seed=s)
        after = Effect.of(summarize(run_scenario(action.apply(sc))))
        out.append(max(guard_margins(effect_on_seed(scenario, s), after).values()))
    return out


def windowed_p99(trace: Trace, windows: int = 20) -> tuple[np.ndarray, np.ndarray]:
    """(window mid-times in s, p99 latency in s) of measured, completed requests, by arrival time."""
    ok = trace.measured & trace.completed
    t, lat = trace.arrival_s[ok], trace.latency_s[ok]
    edges = np.linspace(t.min(), t.max(), windows + 1)
    idx = np.clip(np.searchsorted(edges, t, side="right") - 1, 0, windows - 1)
    p99 = np.array([np.percentile(lat[idx == i], 99) if (idx == i).any() else np.nan for i in range(windows)])
    return (edges[:-1] + edges[1:]) / 2, p99


def before_after_cdf(baseline: Trace, after: Trace, title: str = ""):
    """Latency tails before (grey) and after retuning (blue): survival curves (the share of requests slower than
    x) on log-log axes with p50 ... p99.9 marked, drawn by :func:`workbench.ui.figures.timeline.draw_cdf` (the
    name is kept from the linear CDF it replaced)."""
    fig, (ax,) = new_figure(1, 6.4, 3.6)
    fig.subplots_adjust(top=0.8, right=0.93)
    draw_cdf(ax, {"after retuning": after, "baseline": baseline})
    ax.set_title(title or "before and after retuning, same workload and seed", fontsize=9, pad=22)
    return fig


def guard_figure(margins: dict[str, float], noise: dict, thresholds: tuple[float, ...]):
    """Left: the action's worsening per guard check against the thresholds. Right: a no-op's worst margin per seed."""
    fig, (ax, an) = new_figure(2, 10.0, 3.6)
    names = list(margins)
    vals = [margins[n] * 100 for n in names]
    ax.barh(np.arange(len(names)), vals, color=[pal.SECOND if v > 0 else pal.CURRENT for v in vals])
    ax.set_yticks(np.arange(len(names)), names)
    ax.invert_yaxis()
    ax.set_xscale("symlog", linthresh=30)
    ax.set_xticks([-100, -50, -20, 0, 10, 20, 30], ["-100", "-50", "-20", "0", "10", "20", "30"])
    ax.set_xlabel("worse than baseline (%, symlog; < 0 is better)")
    ax.set_title("the action, check by check", fontsize=9)
    seeds = [r["seed"] for r in noise["rows"]]
    an.bar(np.arange(len(seeds)), [r["worst"] * 100 for r in noise["rows"]], color=pal.BASELINE)
    an.set_xticks(np.arange(len(seeds)), [str(s) for s in seeds])
    an.set_xlabel(f"seed of a no-op run (baseline seed {noise['ref_seed']})")
    an.set_ylabel("worst guard margin (%)")
    an.set_title("no change at all, another seed", fontsize=9)
    for a in (ax, an):
        for th, ls in zip(thresholds, ("-", "--", ":", "-."), strict=False):
            (a.axvline if a is ax else a.axhline)(th * 100, color="black", ls=ls, lw=0.9, label=f"threshold {th:.2f}")
        a.grid(alpha=0.3)
    an.legend(fontsize=8, loc="upper left")
    return fig


def telemetry_figure(baseline: Trace, after: Trace, windows: int = 20):
    """p99 per time window (ms, log) of the baseline (grey) and after retuning (blue): telemetry as it arrives."""
    fig, (ax,) = new_figure(1, 6.4, 3.4)
    for label, tr, color in (("baseline", baseline, pal.BASELINE), ("after retuning", after, pal.CURRENT)):
        t, p99 = windowed_p99(tr, windows)
        ax.plot(t, p99 * 1e3, "o-", color=color, ms=3, label=label)
    ax.set_yscale("log")
    plain_log(ax.yaxis)
    ax.set_xlabel("arrival time (s)")
    ax.set_ylabel(f"p99 per window (ms), {windows} windows")
    ax.set_title("telemetry windows: the tail over time", fontsize=9)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8)
    return fig

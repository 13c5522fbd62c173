"""Panels over the compiler: shape envelopes and out-of-envelope policies; fusion and memory."""

from __future__ import annotations

import dataclasses

import ipywidgets as w
import numpy as np

from workbench.analysis.metrics import summarize
from workbench.config import Drift, ShapeDist
from workbench.palette import BASELINE, BASELINE_ALPHA, CURRENT
from workbench.ui.figures import base as f
from workbench.ui.figures.layers import nice_ceil, steady_lim
from workbench.ui.figures.survival import SurvivalView
from workbench.ui.panels.base import Panel, builtin, dropdown, lat_ms, slider, with_rate

ENVELOPES = {
    "128 / 256 / 512": [128, 256, 512],
    "128 / 256 / 512 / 1024": [128, 256, 512, 1024],
    "128 ... 2048 (5 buckets)": [128, 256, 512, 1024, 2048],
    "gap: 64-128, 256-512": [{"min": 64, "opt": 128, "max": 128}, {"min": 256, "opt": 512, "max": 512}],
}


class ShapeEnvelopePanel(Panel):
    """Shape distribution (median, spread, drift), the envelope's buckets and the out-of-envelope policy.

    Drift is its own switch: off, the run's median stays where "median seq" puts it and "median at the end"
    is greyed out and ignored; on, the median moves linearly from "median seq" to "median at the end" over
    the run. No control moves or reinterprets another. ``run`` keeps the library's form (``drift_to`` equal
    to ``median`` is no drift), so :meth:`values` passes the switch as ``drift_to = median`` when it is off.
    """

    def controls(self):
        drift = w.Checkbox(value=False, description="drift over the run", indent=False,
                           layout=w.Layout(width="150px"))
        end = slider(200, 32, 2048, 16, "median at the end (tokens)", integer=True)
        end.disabled = True
        drift.observe(lambda change: setattr(end, "disabled", not change["new"]), names="value")
        return {"median": slider(200, 32, 2048, 16, "median seq (tokens)", integer=True),
                "sigma": slider(0.4, 0.05, 1.2, 0.05, "spread (sigma of ln seq)"),
                "envelope": dropdown(list(ENVELOPES), "128 / 256 / 512", "buckets"),
                "policy": dropdown(["reject", "pad", "recompile", "fallback"], "fallback", "out of envelope"),
                "drift": drift,
                "drift_to": end}

    def values(self) -> dict:
        """The run's arguments: with drift off, ``drift_to`` is the median (no drift), whatever its slider says."""
        v = super().values()
        if not v.pop("drift"):
            v["drift_to"] = v["median"]
        return v

    def run(self, median, sigma, drift_to, envelope, policy):
        """One run; the median moves from ``median`` to ``drift_to`` over it (no drift when they are equal)."""
        base = builtin("drift_magnitude")
        span = self.requests / base.offered_rate  # s, the run's length
        drift = Drift({"median": float(drift_to)}, 0.0, span) if drift_to != median else None
        stream = dataclasses.replace(base.streams[0], shapes={"seq": ShapeDist("lognormal", median=float(median),
                                                                               sigma=sigma, drift=drift)})
        model = dataclasses.replace(base.model, envelope={"seq": ENVELOPES[envelope]}, out_of_envelope=policy,
                                    recompile_pause_s=0.05)
        sc = dataclasses.replace(base, streams=(stream,), model=model, requests=self.requests)
        trace = self.simulate(sc)
        return {"trace": trace, "summary": summarize(trace), "policy": policy,
                "shape": (int(median), int(drift_to), float(sigma))}

    def layout(self):
        self.cdf = SurvivalView(self.axes[0])
        ax = self.axes[1]
        (self.hit_prev,) = ax.plot([], [], "o-", ms=3, color=BASELINE, alpha=BASELINE_ALPHA, label="baseline")
        (self.hit,) = ax.plot([], [], "o-", ms=3, color=CURRENT, label="this run")
        ax.set_ylim(-0.02, 1.02)
        ax.set_xlabel("time (s)")
        ax.set_ylabel("bucket hit rate (share of requests)")
        ax.set_title(" ", fontsize=8)
        ax.grid(alpha=0.3)
        ax.legend(loc="lower left", fontsize=8)

    def draw(self, r, prev):
        s = r["summary"]
        self.cdf.update(lat_ms(r), lat_ms(prev))
        self.hit.set_data(*hit_rate_series(r))
        self.hit_prev.set_data(*(hit_rate_series(prev) if prev else ([], [])))
        t = r["hit_series"][0]
        steady_lim(self.axes[1], "x", 0, nice_ceil(max(float(t[-1]) * 1.05, 1e-3)) if len(t) else 1.0)
        self.axes[1].set_title(f"hit rate {s['bucket_hit_rate']:.0%}; misses: "
                               + (", ".join(f"{k} {v}" for k, v in s["misses"]["by_outcome"].items() if v)
                                  or "none"), fontsize=8)

    def text(self, r):
        s = r["summary"]
        reasons = "; ".join(f"{k}: {v}" for k, v in s["misses"]["by_reason"].items()) or "none"
        median, end, sigma = r.get("shape", (0, 0, 0.0))
        shape = (f"median drifts {median} -> {end} tokens over the run" if end != median
                 else f"median {median} tokens, no drift") + f", spread {sigma:g}"
        note = ""
        if r.get("policy") == "pad" and s["rejected_by"].get("out_of_envelope"):
            note = ("\npad can only pad a shape up to a bucket that holds it: shapes past the largest bucket have "
                    "none, so they are refused exactly as under reject")
        return (f"{shape}\nbucket hit rate {s['bucket_hit_rate']:.1%} (specialised {s['specialised_rate']:.1%})\n"
                f"misses by reason: {reasons}\n" + f.latency_text({"latency": r["trace"]}) + "\n"
                + f.drivers_text(s, words=True) + note)


class FusionPanel(Panel):
    """Fusion level, attention strategy, SRAM, load and cores: launches, spills, HBM contention, mean against p95.

    Every control starts at the ``fusion_memory_bursts`` scenario (aggressive fusion, flash attention, 4 MiB of
    SRAM on each of 8 cores, 6,610 req/s); SRAM goes down to 1 MiB, where neither plan carries that load, and up
    past 6 MiB, from where the MLP chain's smallest compute-bound tile all but fits and aggressive fusion wins.
    ``run`` also takes a fusion depth cap (``max_depth``, no control: chapter 02's exercise 2 passes it).
    """

    def controls(self):
        base = builtin("fusion_memory_bursts")
        rate = base.streams[0].arrivals.rate
        return {"fusion": dropdown(["none", "elementwise", "aggressive"], base.model.fusion, "fusion"),
                "attention": dropdown(["flash", "naive"], base.model.attention, "attention"),
                "sram_mib": slider(base.hardware.sram_bytes_per_core / 2**20, 1, 64, 1, "SRAM per core (MiB)"),
                "rate": slider(rate, 50, round(1.5 * rate, -1), 10, "load (req/s)"),
                "cores": slider(base.hardware.cores, 1, 8, 1, "cores", integer=True)}

    def run(self, fusion, attention, sram_mib, rate, cores, max_depth=None):
        base = builtin("fusion_memory_bursts")
        hw = dataclasses.replace(base.hardware, cores=cores, sram_bytes_per_core=int(sram_mib * 2**20))
        model = dataclasses.replace(base.model, fusion=fusion, attention=attention)
        if max_depth is not None:
            model = dataclasses.replace(model, max_depth=int(max_depth))
        sc = dataclasses.replace(base, streams=(with_rate(base.streams[0], rate),), requests=self.requests,
                                 hardware=hw, model=model)
        trace = self.simulate(sc)
        return {"trace": trace, "summary": summarize(trace)}

    def layout(self):
        self.cdf = SurvivalView(self.axes[0])
        self.mean = self.axes[0].axvline(1.0, color="k", lw=1.2, label="mean of this run")
        self.cdf.add_line(self.mean)
        self.drivers = f.DriverBars(self.axes[1])

    def draw(self, r, prev):
        mean_ms = r["summary"]["latency_s"]["mean"] * 1e3
        self.cdf.update(lat_ms(r), lat_ms(prev), values=[mean_ms])
        self.mean.set_xdata([mean_ms, mean_ms])
        self.cdf.set_label(self.mean, f"mean of this run {mean_ms:.3g} ms")
        self.drivers.show(r["summary"], prev["summary"] if prev else None)

    def text(self, r):
        s = r["summary"]
        spill_mib = s["spill_bytes_per_request"] / 2**20
        return (f"launches per request {s['launches_per_request']:.2f}, spill {spill_mib:.1f} MiB per request, "
                f"mean latency {s['latency_s']['mean'] * 1e3:.3f} ms\n"
                + f.latency_text({"latency": r["trace"]}) + "\n" + f.drivers_text(s, words=True))


def hit_rate_series(r: dict, bins: int = 20) -> tuple[np.ndarray, np.ndarray]:
    """(time s, bucket hit rate) in ``bins`` windows of the run, kept on the result (computed once)."""
    if "hit_series" not in r:
        tr = r["trace"]
        k = len(tr.service.info["run"].plan.buckets)
        hit = ((tr.bucket >= 0) & (tr.bucket < k)).astype(float)
        edges = np.linspace(tr.arrival_s[0], tr.arrival_s[-1], bins + 1)
        idx = np.clip(np.searchsorted(edges, tr.arrival_s) - 1, 0, bins - 1)
        rate = np.bincount(idx, weights=hit, minlength=bins) / np.maximum(np.bincount(idx, minlength=bins), 1)
        r["hit_series"] = ((edges[:-1] + edges[1:]) / 2, rate)
    return r["hit_series"]

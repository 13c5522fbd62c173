"""Panels over the runtime: batching and queues, fairness and placement, memory residency."""

from __future__ import annotations

import dataclasses

import numpy as np
from matplotlib.ticker import MaxNLocator

from workbench.analysis.metrics import summarize, wait_profile
from workbench.config import RESIDENCY_DISPATCH, Batching, ResidencyPolicy, Scheduler
from workbench.palette import BASELINE, BASELINE_ALPHA, CURRENT, cause_color
from workbench.ui.figures import base as f
from workbench.ui.figures.layers import nice_ceil, steady_lim
from workbench.ui.figures.survival import SurvivalView
from workbench.ui.panels.base import Panel, builtin, dropdown, lat_ms, slider, with_rate

GIB = 1 << 30
MAX_BATCH = 64  # the max-batch slider's top: the batch-size histogram has one bar per size up to it
RELOAD_BINS = 40  # waits for weights are counted per 1/40 of the run, so they never merge into a band


class BatchingPanel(Panel):
    """Batching policy, max batch, max delay and load: queue wait profile and batch sizes."""

    def controls(self):
        return {"policy": dropdown(["none", "static", "dynamic"], "dynamic", "batching"),
                "max_batch": slider(16, 1, 64, 1, "max batch", integer=True),
                "max_delay_ms": slider(2.0, 0.0, 20.0, 0.25, "max delay (ms)"),
                "rate": slider(1500, 100, 3000, 50, "load (req/s)")}

    def run(self, policy, max_batch, max_delay_ms, rate):
        base = builtin("batching_knee")
        sc = dataclasses.replace(base, requests=self.requests, streams=(with_rate(base.streams[0], rate),),
                                 batching=Batching(policy, max_batch, max_delay_ms / 1e3))
        trace = self.simulate(sc)
        return {"trace": trace, "summary": summarize(trace), "profile": wait_profile(trace, windows=20)}

    def layout(self):
        ax = self.axes[0]
        (self.wait_prev,) = ax.plot([], [], color=BASELINE, alpha=BASELINE_ALPHA, lw=2.2, label="p99, baseline")
        self.wait = {q: ax.plot([], [], ls=ls, color=CURRENT, label=f"wait {q}")[0]
                     for q, ls in (("p50", ":"), ("p95", "--"), ("p99", "-"))}
        ax.set_xlabel("time (s)")
        ax.set_ylabel("queue wait (ms)")
        ax.legend(fontsize=8, loc="upper left")
        ax.set_title("queue wait profile (20 windows)", fontsize=9)
        ax = self.axes[1]
        self.hist = f.Bars(ax, MAX_BATCH + 1, color=cause_color("service"))
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("batch size")
        ax.set_ylabel("batches")
        ax.set_title(" ", fontsize=9)
        ax.legend(fontsize=8, loc="upper left")

    def draw(self, r, prev):
        p = r["profile"]
        for q, line in self.wait.items():
            line.set_data(p["t_s"], p[q] * 1e3)
        pp = prev["profile"] if prev else {"t_s": [], "p99": np.zeros(0)}
        self.wait_prev.set_data(pp["t_s"], pp["p99"] * 1e3)
        top = max(float(np.nanmax(p["p99"], initial=0)), float(np.nanmax(pp["p99"], initial=0))) * 1e3
        t_end = max(float(np.max(p["t_s"], initial=0)), float(np.max(pp["t_s"], initial=0)))
        steady_lim(self.axes[0], "x", 0, nice_ceil(t_end * 1.02))
        steady_lim(self.axes[0], "y", 0, nice_ceil(top * 1.1))
        counts = batch_counts(r["trace"].batch_size)
        prev_counts = batch_counts(prev["trace"].batch_size) if prev else None
        self.hist.update(counts, prev_counts)
        biggest = int(np.flatnonzero(np.maximum(counts, 0 if prev_counts is None else prev_counts)).max(initial=1))
        steady_lim(self.axes[1], "x", 0.4, biggest + 0.6)
        most = max(counts.max(), 0 if prev_counts is None else prev_counts.max())
        steady_lim(self.axes[1], "y", 0, nice_ceil(most * 1.1))
        self.axes[1].set_title(f"mean batch {r['trace'].batch_size.mean():.2f}", fontsize=9)

    def text(self, r):
        s = r["summary"]
        util = np.mean(s["cores"]["utilization"])
        return (f"throughput {s['throughput_rps']:.0f} req/s, core utilisation {util:.0%}, mean batch "
                f"{s['batch_size']['mean']:.2f}\n" + f.latency_text({"latency": r["trace"]})
                + f"\nwait: p50 {s['wait_s']['p50'] * 1e3:.3f} ms, p95 {s['wait_s']['p95'] * 1e3:.3f} ms, "
                  f"p99 {s['wait_s']['p99'] * 1e3:.3f} ms")


class FairnessPanel(Panel):
    """Streams with priorities and weights, discipline, placement and skew: per-stream p99, Jain, cores.

    With ``pinned`` placement each stream has its own core (stream i on core i), so
    skewing the traffic towards one stream saturates its core while the other idles; the
    overload note then reads each core's offered load, as chapter 04 does (:func:`with_pinned_overload`).
    """

    def controls(self):
        return {"discipline": dropdown(["fifo", "priority", "weighted"], "priority", "discipline"),
                "batch_weight": slider(1.0, 0.25, 8.0, 0.25, "weight of 'batch'"),
                "placement": dropdown(["least-loaded", "round-robin", "pinned"], "least-loaded", "placement"),
                "load": slider(0.95, 0.3, 0.99, 0.01, "utilisation target"),
                "skew": slider(0.53, 0.5, 0.9, 0.01, "share of 'interactive'")}

    def run(self, discipline, batch_weight, placement, load, skew):
        base = builtin("priority_two_streams")
        total = sum(s.arrivals.rate for s in base.streams) * load / 0.95  # built for 95% utilisation
        streams = (with_rate(base.streams[0], total * skew),
                   dataclasses.replace(with_rate(base.streams[1], total * (1 - skew)), weight=batch_weight))
        sc = dataclasses.replace(base, streams=streams, requests=self.requests,
                                 scheduler=Scheduler(discipline=discipline, placement=placement))
        trace = self.simulate(sc)
        summary = summarize(trace)
        return {"trace": trace, "summary": summary, "shown": with_pinned_overload(summary, sc)}

    def summary_of(self, r):
        """The summary the text reads: overloaded also when pinning offers a core its capacity or more."""
        return r.get("shown", r["summary"])

    def layout(self):
        base = builtin("priority_two_streams")
        self.names = [st.name for st in base.streams]
        ax = self.axes[0]
        n = 3 * len(self.names)
        self.stream_bars = f.Bars(ax, n)
        for patch, alpha in zip(self.stream_bars.cur.patches, [0.45, 0.7, 1.0] * len(self.names), strict=True):
            patch.set_alpha(alpha)  # p50 light, p99 full: percentile by shade, the run by colour
        ax.set_xticks(range(n), [f"{q}\n{name}" if q == "p95" else q for name in self.names
                                 for q in ("p50", "p95", "p99")], fontsize=8)
        ax.set_ylim(0.1, 10)
        ax.set_yscale("log")
        f.plain_log(ax.yaxis)
        ax.set_ylabel("latency (ms)")
        ax.set_title(" ", fontsize=9)
        ax.legend(fontsize=8, loc="upper left")
        ax = self.axes[1]
        cores = base.hardware.cores
        self.core_bars = f.Bars(ax, cores, color=cause_color("core_imbalance"))
        ax.set_xticks(range(cores), [f"core {k}" for k in range(cores)])
        ax.set_ylim(0, 1.05)
        ax.set_ylabel("utilisation")
        ax.set_title(" ", fontsize=9)

    def _stream_ms(self, r) -> np.ndarray:
        st = r["summary"]["streams"]
        return np.array([st[n]["latency_s"][q] * 1e3 for n in self.names for q in ("p50", "p95", "p99")])

    def draw(self, r, prev):
        cur = self._stream_ms(r)
        old = self._stream_ms(prev) if prev else None
        self.stream_bars.update(cur, old)
        steady_lim(self.axes[0], "y", *f.log_limits(cur, np.zeros(0) if old is None else old, pad=1.5))
        self.axes[0].set_title(f"per-stream latency; Jain's fairness index {r['summary']['fairness_jain']:.3f}",
                               fontsize=9)
        self.core_bars.update(r["summary"]["cores"]["utilization"],
                              prev["summary"]["cores"]["utilization"] if prev else None)
        self.axes[1].set_title(f"max/mean {r['summary']['cores']['imbalance']:.2f}", fontsize=9)

    def text(self, r):
        s = r["summary"]
        return f.streams_text(s) + "\n" + f.drivers_text(s, words=True)


class ResidencyPanel(Panel):
    """Several models over HBM capacity: evictions, reloads over the host link and tail spikes; where a batch
    waits for its weights (on its core, or queued while the load runs: ``[residency] dispatch``)."""

    def controls(self):
        return {"hbm_gib": slider(32, 16, 48, 2, "HBM capacity (GiB)", integer=True),
                "embed_rate": slider(0.5, 0, 20, 0.5, "embed traffic (req/s)"),
                "dispatch": dropdown(list(RESIDENCY_DISPATCH), "hold", "wait for weights")}

    def run(self, hbm_gib, embed_rate, dispatch="hold"):
        base = dataclasses.replace(builtin("memory_residency"), residency=ResidencyPolicy(dispatch))
        streams = tuple(with_rate(s, embed_rate if s.name == "embed" else s.arrivals.rate) for s in base.streams
                        if s.name != "embed" or embed_rate > 0)
        sc = dataclasses.replace(base, streams=streams, requests=self.requests,
                                 hardware=dataclasses.replace(base.hardware, hbm_capacity_bytes=hbm_gib * GIB))
        trace = self.simulate(sc)
        return {"trace": trace, "summary": summarize(trace)}

    def layout(self):
        ax = self.axes[0]
        (self.points,) = ax.plot([], [], ",", color=CURRENT, alpha=0.5, label="a request (this run)")
        ax.set_ylim(0.1, 10)  # until the first run: a log axis needs positive limits
        ax.set_yscale("log")
        f.plain_log(ax.yaxis)
        ax.set_xlabel("arrival (s)")
        ax.set_ylabel("latency (ms)")
        self.reload_ax = ax.twinx()
        self.reloads = self.reload_ax.bar(np.arange(RELOAD_BINS), np.zeros(RELOAD_BINS), 1.0, align="edge",
                                          color=cause_color("memory_residency"), alpha=0.35,
                                          label="batches waiting for weights per bin")
        self.reload_ax.set_ylabel("batches waiting for weights", color=cause_color("memory_residency"))
        ax.set_zorder(self.reload_ax.get_zorder() + 1)  # the requests over the reload bars
        ax.patch.set_visible(False)
        ax.set_title(" ", fontsize=9)
        self.cdf = SurvivalView(self.axes[1])
        self.fig.subplots_adjust(right=0.95)  # room for the percentile labels right of the survival axes

    def draw(self, r, prev):
        tr = r["trace"]
        ok = tr.measured & tr.completed
        ax = self.axes[0]
        t, ms = tr.arrival_s[ok], tr.latency_s[ok] * 1e3
        self.points.set_data(t, ms)
        t_end = float(tr.arrival_s[-1]) if len(tr.arrival_s) else 1.0
        steady_lim(ax, "x", 0, nice_ceil(t_end))
        steady_lim(ax, "y", *f.log_limits(ms, pad=1.3))
        starts = tr.batch_start_s[tr.batch_reload_s > 0]
        counts = np.histogram(starts, bins=RELOAD_BINS, range=(0, t_end))[0]
        width = t_end / RELOAD_BINS
        for k, patch in enumerate(self.reloads.patches):
            patch.set_x(k * width)
            patch.set_width(width)
            patch.set_height(counts[k])
        if counts.any():  # no batch waited: no bars, and the scale of the last run that had some stays
            steady_lim(self.reload_ax, "y", 0, nice_ceil(counts.max() * 1.25))
        ax.set_title(f"latency over time; {len(starts)} batches waited for weights, per {width * 1e3:.0f} ms (bars)",
                     fontsize=9)
        self.cdf.update(lat_ms(r), lat_ms(prev))

    def text(self, r):
        s = r["summary"]
        res = s["residency"] or {"loads": 0, "evictions": 0, "overcommits": 0}
        return (f"loads {res['loads']}, evictions {res['evictions']}, overcommits {res['overcommits']}\n"
                + f.latency_text({"latency": r["trace"]}) + "\n" + f.drivers_text(s, words=True))


def with_pinned_overload(summary: dict, sc) -> dict:
    """``summary`` with its overload note raised when pinned placement offers a core >= its capacity.

    The run's own test (:func:`workbench.analysis.metrics.load_state`) flags overload when the queue grows
    faster than 2 % of the arrivals; just past capacity it grows more slowly (share 0.53 at utilisation
    0.95 offers core 0 1.007 of its capacity: 0.7 % of arrivals), so the note would first appear at 0.55
    while chapter 04 and its exercise 2 read overload from the offered load, share x rate x E[S] >= 1.
    Under pinning that offered load is known exactly, so the panel says overload from it, like the chapter.
    """
    if sc.scheduler.placement != "pinned":
        return summary
    mean_s = sc.service.base_s + sc.service.per_item_s  # s, one request alone (no batching here)
    cores = sc.hardware.cores
    offered = [0.0] * cores
    for i, st in enumerate(sc.streams):  # pinned: stream i runs on core i mod cores
        offered[i % cores] += st.arrivals.rate * mean_s
    k = int(np.argmax(offered))
    if offered[k] < 1.0:
        return summary
    names = ", ".join(st.name for i, st in enumerate(sc.streams) if i % cores == k)
    load = summary["load"]
    note = (f"pinned: core {k} ({names}) is offered {offered[k]:.3f} of its capacity "
            f"({offered[k] / mean_s:.1f} req/s at {mean_s * 1e3:g} ms each): its queue grows without bound")
    if load.get("overloaded"):
        note += "; " + load["note"].removeprefix("overloaded: ")
    elif load.get("queue_growth_rps", 0.0) > 0:
        note += (f", here by {load['queue_growth_rps']:.2g} req/s, too slowly for the run's own test (growth over "
                 "2 % of the arrivals) to flag it")
    return {**summary, "load": {**load, "overloaded": True, "note": note}}


def batch_counts(sizes: np.ndarray) -> np.ndarray:
    """Batches of each size 0..MAX_BATCH (index = size)."""
    return np.bincount(np.clip(sizes, 0, MAX_BATCH), minlength=MAX_BATCH + 1)[:MAX_BATCH + 1]

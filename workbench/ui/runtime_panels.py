"""Panels over the runtime: batching and queues, fairness and placement, memory residency."""

from __future__ import annotations

import dataclasses

import numpy as np

from workbench.analysis.metrics import summarize, wait_profile
from workbench.config import Batching, Scheduler
from workbench.ui import figures as f
from workbench.ui.panel import Panel, builtin, dropdown, slider, with_rate

GIB = 1 << 30


class BatchingPanel(Panel):
    """Batching policy, max batch, max delay and load: queue wait profile and batch sizes."""

    requests = 8000

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

    def draw(self, r):
        ax = self.axes[0]
        ax.clear()
        p = r["profile"]
        for q, ls in (("p50", ":"), ("p95", "--"), ("p99", "-")):
            ax.plot(p["t_s"], p[q] * 1e3, ls=ls, color="tab:blue", label=f"wait {q}")
        ax.set_xlabel("time (s)")
        ax.set_ylabel("queue wait (ms)")
        ax.legend(fontsize=8)
        ax.set_title("queue wait profile", fontsize=9)
        ax = self.axes[1]
        ax.clear()
        sizes = r["trace"].batch_size
        ax.hist(sizes, bins=np.arange(0.5, sizes.max() + 1.5), color="tab:green")
        ax.set_xlabel("batch size")
        ax.set_ylabel("batches")
        ax.set_title(f"mean batch {sizes.mean():.2f}", fontsize=9)

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
    skewing the traffic towards one stream saturates its core while the other idles.
    """

    requests = 8000

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
        return {"trace": trace, "summary": summarize(trace)}

    def draw(self, r):
        f.stream_p99(self.axes[0], r["summary"])
        ax = self.axes[1]
        ax.clear()
        util = r["summary"]["cores"]["utilization"]
        ax.bar([f"core {k}" for k in range(len(util))], util, color="tab:orange")
        ax.set_ylim(0, 1)
        ax.set_ylabel("utilisation")
        ax.set_title(f"max/mean {r['summary']['cores']['imbalance']:.2f}", fontsize=9)

    def text(self, r):
        s = r["summary"]
        return f.streams_text(s) + "\n" + f.drivers_text(s)


class ResidencyPanel(Panel):
    """Several models over HBM capacity: evictions, reloads and tail spikes."""

    requests = 8000

    def controls(self):
        return {"hbm_gib": slider(32, 16, 48, 2, "HBM capacity (GiB)", integer=True),
                "embed_rate": slider(150, 0, 600, 25, "embed traffic (req/s)")}

    def run(self, hbm_gib, embed_rate):
        base = builtin("memory_residency")
        streams = tuple(with_rate(s, embed_rate if s.name == "embed" else s.arrivals.rate) for s in base.streams
                        if s.name != "embed" or embed_rate > 0)
        sc = dataclasses.replace(base, streams=streams, requests=self.requests,
                                 hardware=dataclasses.replace(base.hardware, hbm_capacity_bytes=hbm_gib * GIB))
        trace = self.simulate(sc)
        return {"trace": trace, "summary": summarize(trace)}

    def draw(self, r):
        tr = r["trace"]
        ax = self.axes[0]
        ax.clear()
        ok = tr.measured & tr.completed
        ax.plot(tr.arrival_s[ok], tr.latency_s[ok] * 1e3, ",", alpha=0.5)
        reloads = tr.batch_reload_s > 0
        ax.plot(tr.batch_start_s[reloads], np.full(reloads.sum(), 0.0), "|", color="tab:red", label="reload")
        ax.set_xlabel("arrival (s)")
        ax.set_ylabel("latency (ms)")
        ax.legend(fontsize=8, loc="upper right")
        ax.set_title("latency over time; red ticks: weight reloads", fontsize=9)
        f.latency_cdf(self.axes[1], {"this run": tr})

    def text(self, r):
        s = r["summary"]
        res = s["residency"] or {"loads": 0, "evictions": 0, "overcommits": 0}
        return (f"reloads {res['loads']}, evictions {res['evictions']}, overcommits {res['overcommits']}\n"
                + f.latency_text({"latency": r["trace"]}) + "\n" + f.drivers_text(s))

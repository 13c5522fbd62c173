"""The token-level serving panel: token budget, chunked prefill, KV capacity, preemption mode, policy, load.

Left: the survival curve of inter-token gaps, the share of gaps longer than x on log axes down to
1e-4 (the run has ~266,000 gaps), so a decode stall past p99.9 shows; the kept baseline in grey
(:class:`~workbench.ui.figures.survival.SurvivalView`). Right: the share of KV blocks held over the run,
preemptions as ticks. The text gives
TTFT, TPOT and ITL p99 per tenant, tokens/s, preemptions and goodput, and one line on what
the change did. A setting the library refuses (a budget too small for the longest sequence
without chunked prefill, a cache smaller than one sequence) shows its message and keeps the
last picture.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from workbench.palette import BASELINE, BASELINE_ALPHA, CURRENT, TOKEN_PHASES
from workbench.serving.engine import simulate_tokens
from workbench.serving.metrics import itl_s, summarize_tokens
from workbench.ui.figures import base as f
from workbench.ui.figures import serving as sf
from workbench.ui.figures.layers import nice_ceil, steady_lim
from workbench.ui.figures.survival import SurvivalView
from workbench.ui.panels.base import Panel, builtin, dropdown, slider
from workbench.ui.panels.token_compare import token_what_changed

BASE = "llm_chunked_prefill"


class ServingPanel(Panel):
    """Iteration-level scheduling of a chat tenant and a long-document tenant."""

    requests = 2000  # ~ 266,000 output tokens: ITL p99 rests on ~2,600 gaps, TTFT p99 on 20 requests

    def controls(self):
        sc = builtin(BASE).run
        return {"chunked": dropdown([("whole prompts", False), ("chunked", True)], sc.scheduler.chunked_prefill,
                                    "prefill"),
                "budget": slider(sc.scheduler.max_num_batched_tokens, 256, 8192, 256, "token budget", integer=True),
                "blocks": slider(sc.kv.blocks, 450, 8192, 50, "KV blocks (16 tokens)", integer=True),
                "preemption": dropdown(["recompute", "swap"], sc.kv.preemption, "preemption"),
                "policy": dropdown(["fcfs", "priority"], sc.scheduler.policy, "policy"),
                "load": slider(1.0, 0.25, 8.0, 0.25, "load (x the scenario's rates)")}

    def run(self, chunked, budget, blocks, preemption, policy, load):
        sc = builtin(BASE)
        r = sc.run
        tenants = tuple(dataclasses.replace(t, rate=t.rate * load,
                                            priority=k if policy == "priority" else t.priority)
                        for k, t in enumerate(r.tenants))
        run = dataclasses.replace(
            r, requests=self.requests, tenants=tenants,
            scheduler=dataclasses.replace(r.scheduler, chunked_prefill=chunked, max_num_batched_tokens=int(budget),
                                          policy=policy),
            kv=dataclasses.replace(r.kv, blocks=int(blocks), preemption=preemption))
        trace = simulate_tokens(run)
        return {"trace": trace, "summary": summarize_tokens(trace, sc.ttft_slo_s, sc.tpot_slo_s)}

    def layout(self):
        self.cdf = SurvivalView(self.axes[0], xlabel="gap between two tokens (ms)",
                                ylabel="share of gaps longer than x")
        ax = self.axes[1]
        (self.kv_prev,) = ax.step([], [], where="post", color=BASELINE, alpha=BASELINE_ALPHA, lw=1.6,
                                  label="baseline")
        (self.kv,) = ax.step([], [], where="post", color=CURRENT, lw=0.9, label="this run")
        (self.ticks,) = ax.plot([], [], "|", color=TOKEN_PHASES["preemption"], ms=8, label="preemptions")
        sf.kv_axes(ax)

    def draw(self, r, prev):
        tr = r["trace"]
        self.cdf.update(_itl_ms(r), _itl_ms(prev) if prev else None)
        self.kv.set_data(*f.decimate(tr.it_end_s, tr.it_blocks_used / tr.run.kv.blocks))
        if prev:
            p = prev["trace"]
            self.kv_prev.set_data(*f.decimate(p.it_end_s, p.it_blocks_used / p.run.kv.blocks))
        t = tr.it_start_s[tr.it_preemptions > 0]
        self.ticks.set_data(t, np.full(len(t), 0.02))
        steady_lim(self.axes[1], "x", 0, nice_ceil(max(tr.it_end_s[-1], prev["trace"].it_end_s[-1] if prev else 0.0)))
        self.axes[1].set_title(f"KV cache: {int(tr.preemptions.sum())} preemptions", fontsize=9)

    def text(self, r):
        s = r["summary"]
        lines = [f"{s['tokens_per_s']:,.0f} tokens/s; TTFT p99 {s['ttft_s']['p99'] * 1e3:.2f} ms, "
                 f"TPOT p99 {s['tpot_s']['p99'] * 1e3:.3f} ms, ITL p99 {s['itl_s']['p99'] * 1e3:.3f} ms"]
        for name, t in s["tenants"].items():
            lines.append(f"  {name:<8} TTFT p99 {t['ttft_s']['p99'] * 1e3:7.2f} ms, "
                         f"TPOT p99 {t['tpot_s']['p99'] * 1e3:.3f} ms")
        g = s["goodput"]
        lines.append(f"KV: max {s['kv_utilisation']['max']:.0%} of blocks held, {s['preemptions']} preemptions; "
                     f"goodput {g['share']:.0%} (TTFT <= {g['ttft_slo_s'] * 1e3:g} ms, "
                     f"TPOT <= {g['tpot_slo_s'] * 1e3:g} ms)")
        return "\n".join(lines)  # OVERLOADED, when it applies, is said once, by the panel's status line

    def _compare(self) -> str:
        prev = self.previous["summary"] if self.previous is not None else None
        return token_what_changed(prev, self.result["summary"], self.changed, self.label(self.changed))


def _itl_ms(r: dict) -> np.ndarray:
    """Sorted inter-token gaps (ms) of a run, computed once per result."""
    if "_itl_ms" not in r:
        r["_itl_ms"] = np.sort(itl_s(r["trace"])) * 1e3
    return r["_itl_ms"]

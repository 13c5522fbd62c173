"""The evidence of a token-level serving drill: TTFT, TPOT and inter-token latency per run and tenant.

Like :func:`workbench.grading.practice.prepare` for request-level drills: the drill's runs on one
seed (baseline, regressed, and the fix when the reference reads it), a table the candidate
reads, a survival figure of time to first token, and the summaries the reference answer is
rendered from (keys of ``workbench run --json`` on a token scenario).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from workbench.grading.evidence_figure import evidence_figure
from workbench.grading.reference import render
from workbench.serving.engine import simulate_tokens
from workbench.serving.metrics import itl_s, summarize_tokens, ttft_s
from workbench.serving.trace import ServingTrace


def _row(label: str, ttft: np.ndarray, itl: np.ndarray) -> str:
    t = np.percentile(ttft, [50, 99]) * 1e3 if len(ttft) else (np.nan, np.nan)
    g = np.percentile(itl, [99, 99.9]) * 1e3 if len(itl) else (np.nan, np.nan)
    return f"{label:<22}{t[0]:>10.2f}{t[1]:>10.2f}{g[0]:>10.3f}{g[1]:>11.3f}"


def _features(s: dict) -> list[str]:
    """What speculative decoding and tensor parallelism did in a run, as an engineer's dashboards show it: the
    draft's acceptance per tenant, tokens per decode step and draft time; the all-reduces' share of device time
    (not the link's speed, which the candidate is to infer)."""
    out = []
    sp = s.get("speculative")
    if sp:
        per = ", ".join(f"{name} {t['acceptance_per_token']:.2f}" for name, t in sp["tenants"].items())
        out.append(f"speculation, {sp['tokens']} draft tokens: acceptance per draft token {per}; "
                   f"{sp['tokens_per_step']:.2f} tokens per decode step; draft {sp['draft_share']:.0%} of device time"
                   + (f"; {sp['stopped']} sequences stopped speculating" if sp["stopped"] else ""))
    par = s.get("parallel")
    if par:
        out.append(f"tensor parallel over {par['tensor']} GPUs: all-reduces {par['comm_share']:.0%} of device time")
    return out


def _table(runs: dict[str, ServingTrace], summaries: dict[str, dict]) -> str:
    lines = [f"{'run / tenant':<22}{'TTFT p50':>10}{'TTFT p99':>10}{'ITL p99':>10}{'ITL p99.9':>11}   (ms)"]
    for (name, tr), s in zip(runs.items(), summaries.values(), strict=True):
        lines.append(_row(name, ttft_s(tr), itl_s(tr)))
        if len(tr.run.tenants) > 1:
            for k, t in enumerate(tr.run.tenants):
                mine = tr.requests.tenant == k
                lines.append(_row(f"  tenant {t.name}", ttft_s(tr)[mine], itl_s(tr, mine)))
        kv = s["kv_utilisation"]
        lines.append(f"  {s['tokens_per_s']:,.0f} tokens/s; TPOT p99 {s['tpot_s']['p99'] * 1e3:.3f} ms; "
                     f"end-to-end p99 {s['e2e_s']['p99'] * 1e3:.0f} ms; KV max {kv['max']:.0%}, "
                     f"preemptions {s['preemptions']}; goodput {s['goodput']['share']:.0%}")
        for line in _features(s):
            lines.append("  " + line)
        if s["load"]["overloaded"]:
            lines.append("  " + s["load"]["note"])
        if tr.run.surge.active:  # the requests that arrived inside the surge window: what the drill is graded on
            sg = tr.run.surge
            window = (tr.requests.arrival_s >= sg.start_s) & (tr.requests.arrival_s < sg.end_s)
            lines.append(_row(f"  surge {sg.start_s:g}-{sg.end_s:g} s x{sg.factor:g}", ttft_s(tr)[window],
                              itl_s(tr, window)))
            for k, t in enumerate(tr.run.tenants):
                mine = window & (tr.requests.tenant == k)
                lines.append(_row(f"    {t.name}", ttft_s(tr)[mine], itl_s(tr, mine)))
            lines.append(f"    {s['surge']['requests']} requests in the window; the last finished "
                         f"{s['surge']['drained_s']:.1f} s after it")
    return "\n".join(lines)


def prepare_tokens(drill, scenarios, figure_dir: Path | None) -> tuple[str, Path | None, str, dict]:
    """(table, figure path, rendered reference, summaries) of a token-level drill."""
    traces = [simulate_tokens(sc.run) for sc in scenarios]
    summaries = {root: summarize_tokens(tr, sc.ttft_slo_s, sc.tpot_slo_s)
                 for root, tr, sc in zip(("base", "reg", "fix"), traces, scenarios, strict=False)}
    runs = {"baseline": traces[0], "regressed": traces[1]}
    table = _table(runs, {k: summaries[k] for k in ("base", "reg")})
    path = (evidence_figure({name: ttft_s(tr) * 1e3 for name, tr in runs.items()}, Path(figure_dir) / f"{drill.id}.png",
                       "time to first token (ms), dashed: p99") if figure_dir is not None else None)
    reference = render(drill.strong_answer, summaries, f"{drill.path} [reference] strong")
    return table, path, reference, summaries

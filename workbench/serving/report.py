"""A token-level run for people: the text summary and the Chrome trace (iterations, preemptions, KV use)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from workbench.serving.metrics import iteration_s
from workbench.serving.trace import ServingTrace

STATS = ("mean", "p50", "p95", "p99")


def _row(label: str, d: dict) -> str:
    return f"{label:<14}" + "  ".join(f"{k} {d[k] * 1e3:9.3f}" for k in STATS)


def format_token_summary(s: dict, name: str = "", description: str = "") -> str:
    """The human-readable summary of :func:`~workbench.serving.metrics.summarize_tokens` (times in ms)."""
    lines = [f"scenario {name} (token-level serving)" if name else "token-level serving"]
    if description:
        lines.append(f"  {description.strip()}")
    g = s["goodput"]
    lines += [
        f"requests {s['requests']}, output tokens {s['output_tokens']:,}: {s['tokens_per_s']:,.0f} tokens/s over "
        f"{s['iterations']:,} iterations (chip busy {s['busy_share']:.0%})",
        _row("TTFT ms", s["ttft_s"]), _row("TPOT ms", s["tpot_s"]), _row("ITL ms", s["itl_s"]),
        _row("end-to-end ms", s["e2e_s"]),
    ]
    for name_, t in s["tenants"].items():
        lines.append(f"  {name_:<10} TTFT p99 {t['ttft_s']['p99'] * 1e3:.3f} ms, "
                     f"TPOT p99 {t['tpot_s']['p99'] * 1e3:.3f} ms, "
                     f"end-to-end p99 {t['e2e_s']['p99'] * 1e3:.1f} ms ({t['requests']} requests)")
    lines += [
        f"KV cache: mean {s['kv_utilisation']['mean']:.0%} of blocks held, max {s['kv_utilisation']['max']:.0%}; "
        f"preemptions {s['preemptions']}" + (f", swap time {s['swap_s'] * 1e3:.1f} ms" if s["swap_s"] else ""),
        f"iterations by plan: {s['buckets']['exact']:.0%} exact, {s['buckets']['padded']:.0%} padded "
        f"({s['buckets']['padding_share']:.1%} of rows are padding), {s['buckets']['fallback']:.1%} generic fallback, "
        f"{s['buckets']['recompiled']} recompiles",
        f"goodput: {g['share']:.1%} of requests meet TTFT <= {g['ttft_slo_s'] * 1e3:g} ms and "
        f"TPOT <= {g['tpot_slo_s'] * 1e3:g} ms",
    ]
    if "parallel" in s:
        lines.append(_parallel_line(s["parallel"]))
    if "speculative" in s:
        lines += _speculative_lines(s["speculative"])
    return "\n".join(lines)


def _parallel_line(p: dict) -> str:
    return (f"tensor parallel over {p['tensor']} GPUs, ring all-reduces over a {p['link_bytes_per_s'] / 1e9:g} GB/s "
            f"link ({p['link_latency_s'] * 1e6:g} us a step): {p['link_s'] * 1e3:,.1f} ms, "
            f"{p['comm_share']:.1%} of device time")


def _speculative_lines(sp: dict) -> list[str]:
    lines = [f"speculative decoding, k = {sp['tokens']}: {sp['tokens_per_step']:.2f} tokens per decode step, "
             f"{sp['acceptance_rate']:.0%} of {sp['proposed']:,} drafts accepted, draft model "
             f"{sp['draft_share']:.1%} of device time"
             + (f"; guard (acceptance < {sp['min_acceptance']:g}) stopped {sp['stopped']} sequences"
                if sp["min_acceptance"] > 0 else "")]
    for name, t in sp["tenants"].items():
        lines.append(f"  {name:<10} {t['acceptance_rate']:.0%} of drafts accepted (per token "
                     f"{t['acceptance_per_token']:.2f}), {t['stopped']} sequences stopped speculating")
    return lines


def to_chrome(tr: ServingTrace, path: str | Path, max_iterations: int = 200_000) -> int:
    """Write the Chrome trace: one slice per iteration (prefill tokens, decodes), preemptions as instants,
    a KV-blocks counter; returns the number of iterations written."""
    events: list[dict] = [{"name": "process_name", "ph": "M", "pid": 1, "args": {"name": "accelerator (token mode)"}},
                          {"name": "thread_name", "ph": "M", "pid": 1, "tid": 0, "args": {"name": "iterations"}}]
    n = min(len(tr.it_start_s), max_iterations)
    for k in range(n):
        p, d = int(tr.it_prefill_tokens[k]), int(tr.it_decodes[k])
        kind = "prefill" if p and not d else "decode" if d and not p else "mixed"
        start, end = float(tr.it_start_s[k]), float(tr.it_end_s[k])
        args = {"prefill_tokens": p, "decodes": d, "sequences": int(tr.it_seqs[k]),
                "swap_us": float(tr.it_swap_s[k]) * 1e6}
        if tr.it_link_s[k] or tr.it_draft_s[k]:
            args |= {"allreduce_us": float(tr.it_link_s[k]) * 1e6, "draft_us": float(tr.it_draft_s[k]) * 1e6,
                     "speculating": int(tr.it_spec[k]), "decode_tokens": int(tr.it_decode_tokens[k])}
        events.append({"name": f"{kind} p{p} d{d}", "cat": kind, "ph": "X", "pid": 1, "tid": 0, "ts": start * 1e6,
                       "dur": (end - start) * 1e6, "args": args})
        if tr.it_preemptions[k]:
            events.append({"name": f"preempt x{int(tr.it_preemptions[k])}", "ph": "i", "s": "t", "pid": 1, "tid": 0,
                           "ts": start * 1e6})
        events.append({"name": "KV blocks held", "ph": "C", "pid": 1, "ts": end * 1e6,
                       "args": {"blocks": int(tr.it_blocks_used[k])}})
    Path(path).write_text(json.dumps({"traceEvents": events, "displayTimeUnit": "ms"}))
    return n


def iteration_shares(tr: ServingTrace) -> dict[str, float]:
    """Share of busy time in prefill-only, decode-only and mixed iterations."""
    dur = iteration_s(tr)  # clamped to the clock's step: never all zero
    p, d = tr.it_prefill_tokens > 0, tr.it_decodes > 0
    total = float(dur.sum()) or 1.0
    return {"prefill": float(dur[p & ~d].sum() / total), "decode": float(dur[d & ~p].sum() / total),
            "mixed": float(dur[p & d].sum() / total), "iterations": int(len(dur)),
            "mean_seqs": float(np.average(tr.it_seqs, weights=dur)) if len(dur) else 0.0}

"""What the serving field measures: TTFT, TPOT and inter-token latency, end to end, tokens/s, KV use, goodput.

- **TTFT** (time to first token): arrival to the first output token (queueing + prefill).
- **TPOT** (time per output token): ``(finish - first token) / (output tokens - 1)`` per
  request of at least two tokens.
- **ITL** (inter-token latency): every gap between two consecutive streamed chunks of a request, as vLLM's
  benchmark measures it (tokens emitted together, as a speculative step's accepted tokens are, form one chunk:
  zero gaps are dropped); its tail shows decode stalls (a prefill iteration that every running decode waited for).
- **Goodput**: the share of requests meeting both a TTFT and a TPOT bound (requests of
  one token need only the TTFT bound).
Percentiles are p50, p95 and p99 over requests (over gaps for ITL), pooled and per tenant.
"""

from __future__ import annotations

import numpy as np

from workbench.quantiles import percentiles
from workbench.serving.trace import ServingTrace

QUANTILES = (50, 95, 99)


def _pcts(x: np.ndarray) -> dict[str, float]:
    """Mean, p50, p95, p99 and p999 (the 99.9th percentile), as in the request-level summary."""
    keys = [f"p{q}" for q in QUANTILES] + ["p999"]
    if not len(x):
        return dict.fromkeys(keys, float("nan")) | {"mean": float("nan")}
    vals = percentiles(x.astype(np.float64), [*QUANTILES, 99.9], overwrite=True)  # np.percentile, bit for bit
    return {k: float(v) for k, v in zip(keys, vals, strict=True)} | {"mean": float(x.mean())}


def ttft_s(tr: ServingTrace) -> np.ndarray:
    """Time to first token per request (s)."""
    return tr.first_token_s - tr.requests.arrival_s


def tpot_s(tr: ServingTrace) -> np.ndarray:
    """Time per output token per request (s); nan for one-token outputs."""
    out = tr.requests.output.astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(out > 1, (tr.finish_s - tr.first_token_s) / (out - 1), np.nan)


def itl_s(tr: ServingTrace, mask: np.ndarray | None = None) -> np.ndarray:
    """Every gap between consecutive streamed chunks of the same request (s), for requests in ``mask``: the gaps
    between consecutive tokens, zero gaps (tokens emitted in the same iteration) dropped."""
    gaps, keep = _itl_gaps(tr)
    if mask is not None:  # each token's request's mask (a byte a token: no owner index)
        keep &= np.repeat(mask, tr.requests.output)[1:]
    return gaps[keep]


def _itl_gaps(tr: ServingTrace) -> tuple[np.ndarray, np.ndarray]:
    """(every gap between consecutive tokens s, whether it is an ITL: not zero, not across two requests)."""
    gaps = np.diff(tr.token_s)
    first = tr.token_offset[1:-1] - 1  # the gap across two requests' boundary is not an ITL
    keep = gaps > 0.0
    keep[first[first >= 0]] = False
    return gaps, keep


def _itl_by_tenant(tr: ServingTrace) -> tuple[np.ndarray, np.ndarray | None]:
    """:func:`itl_s` pooled, built once, and the tenant of each of its gaps (None with one tenant: all its own);
    ``itl[tenant == k]`` is ``itl_s(tr, tr.requests.tenant == k)``, the same gaps in the same order."""
    gaps, keep = _itl_gaps(tr)
    if len(tr.run.tenants) == 1:
        return gaps[keep], None
    return gaps[keep], np.repeat(tr.requests.tenant, tr.requests.output)[1:][keep]


def iteration_s(tr: ServingTrace) -> np.ndarray:
    """Each iteration's duration (s), at least one step of the float clock at its end (``np.spacing``).

    An iteration shorter than that step (nanoseconds on the fastest chip, after arrivals a year apart) ends at
    the time it started: clamped to the clock's resolution, it still counts in the time-weighted means
    (a run of only such iterations weighs them equally instead of dividing by zero). A normal iteration is far
    longer than the step and keeps its duration exactly.
    """
    return np.maximum(tr.it_end_s - tr.it_start_s, np.spacing(tr.it_end_s))


def kv_utilisation(tr: ServingTrace) -> tuple[np.ndarray, np.ndarray]:
    """(iteration end times s, share of KV blocks held)."""
    return tr.it_end_s, tr.it_blocks_used / tr.run.kv.blocks


def goodput(tr: ServingTrace, ttft_slo_s: float, tpot_slo_s: float) -> float:
    """Share of requests with TTFT <= ``ttft_slo_s`` and TPOT <= ``tpot_slo_s``."""
    tp = tpot_s(tr)
    ok = (ttft_s(tr) <= ttft_slo_s) & (np.isnan(tp) | (tp <= tpot_slo_s))
    return float(ok.mean())


def busy_share(tr: ServingTrace) -> float:
    """Share of the run (to its last iteration) the chip spent in iterations."""
    return float(min(iteration_s(tr).sum() / tr.it_end_s[-1], 1.0)) if len(tr.it_end_s) else 0.0


def comm_share(tr: ServingTrace) -> float:
    """Share of the iterations' time spent in all-reduces over the link between GPUs (0 on one GPU)."""
    busy = float((tr.it_end_s - tr.it_start_s).sum())
    return float(tr.it_link_s.sum() / busy) if busy > 0 else 0.0


def tokens_per_s(tr: ServingTrace) -> float:
    """Output tokens served per second of the run."""
    return float(tr.requests.output.sum() / tr.it_end_s[-1]) if len(tr.it_end_s) else 0.0


def load_note(tr: ServingTrace) -> dict:
    """Offered against served output tokens/s, and whether the queue grew without bound.

    Overloaded: the chip was busy nearly all the time and either the offered output tokens/s
    exceed what was served by more than 5 %, or the mean TTFT rose from the
    second quarter of arrivals to the third and again to the fourth, ending more than 1.8x
    the second quarter's (a queue growing linearly from empty gives 0.875 / 0.375 = 2.3;
    a steady state gives about 1): the wait is still climbing, so no percentile of this run
    is a steady state.
    """
    arr, out = tr.requests.arrival_s, tr.requests.output
    span = float(arr[-1] - arr[0]) if len(arr) > 1 else 0.0
    offered = float(out.sum() / span) if span > 0 else 0.0
    ft = ttft_s(tr)
    q = len(ft) // 4
    busy = busy_share(tr)
    q2, q3, q4 = (float(ft[k * q:(k + 1) * q].mean()) for k in (1, 2, 3)) if q else (0.0, 0.0, 0.0)
    served = tokens_per_s(tr)
    climbing = q2 < q3 < q4 and q4 > 1.8 * q2
    short = offered > 1.05 * served
    over = busy > 0.97 and (climbing or short)
    note = ""
    if over:
        note = (f"overloaded: {offered:,.0f} output tokens/s offered, {served:,.0f} served; " if short else
                "overloaded: ") + (f"mean TTFT climbed {q2 * 1e3:.3g} -> {q3 * 1e3:.3g} -> {q4 * 1e3:.3g} ms over "
                                   "the second, third and last quarters of arrivals; " if climbing else "") + \
            "the queue grows without bound"
    return {"offered_tokens_per_s": offered, "overloaded": over, "note": note}


def summarize_tokens(tr: ServingTrace, ttft_slo_s: float = 1.0, tpot_slo_s: float = 0.05) -> dict:
    """The run's JSON-ready summary: pooled and per-tenant latencies, throughput, KV, preemptions, goodput."""
    e2e = tr.finish_s - tr.requests.arrival_s
    tp, ft = tpot_s(tr), ttft_s(tr)
    itl, owner = _itl_by_tenant(tr)  # the per-token pass once, for the pool and every tenant
    itl_pcts = _pcts(itl)
    per = {}
    for k, t in enumerate(tr.run.tenants):
        m = tr.requests.tenant == k
        mine = itl_pcts if owner is None and m.all() else _pcts(itl_s(tr, m) if owner is None else itl[owner == k])
        per[t.name] = {"requests": int(m.sum()), "ttft_s": _pcts(ft[m]), "tpot_s": _pcts(tp[m & ~np.isnan(tp)]),
                       "e2e_s": _pcts(e2e[m]), "itl_s": dict(mine)}
    _, kv = kv_utilisation(tr)
    return {
        "requests": len(e2e), "output_tokens": int(tr.requests.output.sum()),
        "tokens_per_s": tokens_per_s(tr),
        "ttft_s": _pcts(ft), "tpot_s": _pcts(tp[~np.isnan(tp)]), "itl_s": itl_pcts, "e2e_s": _pcts(e2e),
        "iterations": len(tr.it_end_s), "busy_share": busy_share(tr),
        "kv_utilisation": {"mean": float(np.average(kv, weights=iteration_s(tr))) if len(kv) else 0.0,
                           "max": float(kv.max(initial=0.0))},
        "preemptions": int(tr.preemptions.sum()), "swap_s": float(tr.it_swap_s.sum()),
        "goodput": {"ttft_slo_s": ttft_slo_s, "tpot_slo_s": tpot_slo_s,
                    "share": goodput(tr, ttft_slo_s, tpot_slo_s)},
        "tenants": per, "load": load_note(tr), "buckets": tr.buckets,
        "recompile_pause_s": float(tr.it_pause_s.sum()), "comm_share": comm_share(tr),
    } | ({"surge": surge_window(tr)} if tr.run.surge.active else {}) \
      | ({"parallel": parallel_summary(tr)} if tr.run.parallel.tensor > 1 else {}) \
      | ({"speculative": speculative_summary(tr)} if tr.run.speculative.on else {})


def parallel_summary(tr: ServingTrace) -> dict:
    """Tensor parallelism: the split, the link, and the all-reduces' seconds and share of the iterations' time."""
    p = tr.run.parallel
    return {"tensor": p.tensor, "link_bytes_per_s": p.link_bytes_per_s, "link_latency_s": p.link_latency_s,
            "link_s": float(tr.it_link_s.sum()), "comm_share": comm_share(tr)}


def _acceptance(proposed: int, accepted: int, judged: int, stopped: int) -> dict:
    nan = float("nan")
    return {"proposed": proposed, "accepted": accepted, "acceptance_rate": accepted / proposed if proposed else nan,
            "acceptance_per_token": accepted / judged if judged else nan, "stopped": stopped}


def speculative_summary(tr: ServingTrace) -> dict:
    """Speculative decoding: draft tokens proposed and accepted (``acceptance_rate``: accepted over proposed, vLLM's
    draft acceptance rate; ``acceptance_per_token``: accepted over judged, the per-token acceptance probability it
    estimates), pooled and per tenant, sequences the guard stopped, the mean tokens a decode step emitted (plain
    steps count one), and the draft model's share of the iterations' time."""
    sp = tr.run.speculative
    busy = float((tr.it_end_s - tr.it_start_s).sum())
    steps = int(tr.it_decodes.sum())
    per = {}
    for k, t in enumerate(tr.run.tenants):
        m = tr.requests.tenant == k
        per[t.name] = _acceptance(int(tr.spec_proposed[m].sum()), int(tr.spec_accepted[m].sum()),
                                  int(tr.spec_judged[m].sum()), int(tr.spec_stopped[m].sum()))
    pooled = _acceptance(int(tr.spec_proposed.sum()), int(tr.spec_accepted.sum()), int(tr.spec_judged.sum()),
                         int(tr.spec_stopped.sum()))
    return {"tokens": sp.tokens, "min_acceptance": sp.min_acceptance, **pooled,
            "spec_steps": int(tr.it_spec.sum()), "decode_steps": steps,
            "tokens_per_step": float(tr.it_decode_tokens.sum() / steps) if steps else float("nan"),
            "draft_s": float(tr.it_draft_s.sum()), "draft_share": float(tr.it_draft_s.sum() / busy) if busy else 0.0,
            "tenants": per}


def surge_window(tr: ServingTrace) -> dict:
    """The requests that arrived inside the surge window, per tenant and pooled: a figure that does not move with
    the run's length (every such request's fate is set by what arrived up to its end, whatever comes later)."""
    sg = tr.run.surge
    arr = tr.requests.arrival_s
    inside = (arr >= sg.start_s) & (arr < sg.end_s)
    ft, tp = ttft_s(tr), tpot_s(tr)
    per = {}
    for k, t in enumerate(tr.run.tenants):
        m = inside & (tr.requests.tenant == k)
        per[t.name] = {"requests": int(m.sum()), "ttft_s": _pcts(ft[m]), "tpot_s": _pcts(tp[m & ~np.isnan(tp)])}
    return {"factor": sg.factor, "start_s": sg.start_s, "end_s": sg.end_s, "requests": int(inside.sum()),
            "ttft_s": _pcts(ft[inside]), "tenants": per,
            "drained_s": float(tr.finish_s[inside].max() - sg.end_s) if inside.any() else 0.0}

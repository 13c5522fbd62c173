"""What a change did to a token-level serving run: one line, like :func:`workbench.ui.panels.compare.what_changed`.

It names what moved beyond noise (TTFT p99, TPOT p99, ITL p99, tokens/s, preemptions,
goodput) or says "no effect" and why, from the two summaries and the setting changed.
"""

from __future__ import annotations

from workbench.ui.panels.compare import NOISE, _moved, _words, ratio_words


def token_what_changed(prev: dict | None, cur: dict, setting: str = "", label: str = "") -> str:
    """One line comparing two :func:`~workbench.serving.metrics.summarize_tokens` summaries (``setting``: the
    changed control's key; ``label``: its label, the name the line shows)."""
    if prev is None:
        return "first run: change a control to see what it does"
    parts = []
    for key, name in (("ttft_s", "TTFT p99"), ("tpot_s", "TPOT p99"), ("itl_s", "ITL p99")):
        a, b = prev[key]["p99"], cur[key]["p99"]
        if _moved(a, b):
            parts.append(ratio_words(name, a, b))
    if _moved(prev["tokens_per_s"], cur["tokens_per_s"]):
        parts.append(f"{prev['tokens_per_s']:,.0f} -> {cur['tokens_per_s']:,.0f} tokens/s")
    if prev["preemptions"] != cur["preemptions"]:
        parts.append(f"preemptions {prev['preemptions']} -> {cur['preemptions']}")
    gp, gc = prev["goodput"]["share"], cur["goodput"]["share"]
    if abs(gc - gp) >= 0.01:
        parts.append(f"goodput {gp:.0%} -> {gc:.0%}".replace("%", " %"))
    if parts:
        return "what changed: " + "; ".join(parts)
    return "no effect: " + _why(prev, cur, setting, label)


def _why(prev: dict, cur: dict, setting: str, label: str = "") -> str:
    s = setting.lower()
    kv_max = max(prev["kv_utilisation"]["max"], cur["kv_utilisation"]["max"])
    if ("block" in s or "kv" in s) and kv_max < 1.0 and not cur["preemptions"]:
        return (f"the cache was never full (at most {kv_max:.0%} of blocks held), so its size changed no "
                "admission and no preemption").replace("%", " %")
    if "preemption" in s and not cur["preemptions"] and not prev["preemptions"]:
        return "nothing was preempted before or after, so the preemption mode never ran"
    if "policy" in s:
        return ("every waiting prompt fitted the iteration it arrived for, so the order in which they were taken "
                "never mattered")
    return (f"TTFT, TPOT and ITL p99, tokens/s and goodput all within {NOISE:.0%} of before; "
            f"{_words(setting, label)} did not bind").replace("%", " %")

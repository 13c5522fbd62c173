"""What a panel change did: one line comparing the previous run's summary with the current one.

A panel calls :func:`what_changed` after every change. It names the direction and size
of what moved beyond noise (p99 first, then p50, refusals, throughput, per-stream p99)
and the tail driver that grew; when nothing moved it says "no effect" and why, from the
summaries themselves (idle cores, every shape inside a bucket, no reloads, a guard
whose verdicts did not change...).

Noise: with a fixed seed two runs differ only by the setting, but a p99 over n
requests rests on n/100 samples and small changes of a setting reshuffle which
requests land in the tail. A relative change under ``NOISE`` (5 %) is read as none.
Summaries may carry two extra keys the panels add: ``settings`` (the control values)
and ``loop`` (the closed loop's threshold, actions and each action's worst regression).
"""

from __future__ import annotations

import math

from workbench.analysis.metrics import DRIVERS

NOISE = 0.05  # relative change read as noise
SHARE_NOISE = 0.05  # a tail-driver share moving less than 5 points is noise
REFUSED_NOISE = 0.001  # 0.1 % of requests


def ratio_words(name: str, before: float, after: float, unit: str = "ms", scale: float = 1e3) -> str:
    """'p99 x3.1 higher (0.9 -> 2.8 ms)' or 'p99 12 % lower (...)': direction and size in words."""
    a, b = before * scale, after * scale
    r = after / before if before > 0 else math.inf
    if r >= 1.5:
        size = f"x{_times(r)} higher"
    elif r <= 1 / 1.5:
        size = f"x{_times(1 / r)} lower" if r > 0 else "down to 0"
    else:
        size = f"{abs(r - 1):.0%} {'higher' if r > 1 else 'lower'}".replace("%", " %")
    return f"{name} {size} ({_num(a)} -> {_num(b)} {unit})"


def _times(r: float) -> str:
    return f"{r:.2g}" if r < 10 else f"{r:.0f}"


def _num(x: float) -> str:
    return f"{x:.3g}" if abs(x) < 1000 else f"{x:.0f}"


def _moved(before: float, after: float, noise: float = NOISE) -> bool:
    if not (math.isfinite(before) and math.isfinite(after)):
        return before != after
    return abs(after - before) > noise * max(abs(before), 1e-300)


def _grown_driver(prev: dict, cur: dict) -> str:
    """The tail driver whose share grew most (or the dominant one when it changed), as words; '' if none moved."""
    p, c = prev.get("tail_drivers") or {}, cur.get("tail_drivers") or {}
    if not p or not c:
        return ""
    delta = {d: c.get(d, 0.0) - p.get(d, 0.0) for d in DRIVERS if d != "service"}
    grown = max(delta, key=delta.get)
    if delta[grown] >= SHARE_NOISE:
        return f"{grown.replace('_', ' ')} is now {c[grown]:.0%} of the tail (was {p[grown]:.0%})".replace("%", " %")
    shrunk = min(delta, key=delta.get)
    if delta[shrunk] <= -SHARE_NOISE:
        return (f"{shrunk.replace('_', ' ')} fell to {c[shrunk]:.0%} of the tail (was {p[shrunk]:.0%})"
                .replace("%", " %"))
    return ""


def _changes(prev: dict, cur: dict) -> list[str]:
    parts = []
    lp, lc = prev["latency_s"], cur["latency_s"]
    if _moved(lp["p99"], lc["p99"]):
        parts.append(ratio_words("p99", lp["p99"], lc["p99"]))
    if _moved(lp["p50"], lc["p50"]):
        parts.append(ratio_words("p50", lp["p50"], lc["p50"]))
    rp, rc = prev.get("refused_share", 0.0), cur.get("refused_share", 0.0)
    if abs(rc - rp) > REFUSED_NOISE:
        parts.append(f"refused {rp:.1%} -> {rc:.1%} of requests".replace("%", " %"))
    if _moved(prev.get("throughput_rps", 0.0), cur.get("throughput_rps", 0.0)):
        parts.append(f"throughput {prev['throughput_rps']:.0f} -> {cur['throughput_rps']:.0f} req/s")
    sp, sc = prev.get("streams") or {}, cur.get("streams") or {}
    overall = lc["p99"] / lp["p99"] if lp["p99"] > 0 else 1.0
    for name in sc if len(sc) > 1 else ():
        a, b = (sp.get(name) or {}).get("latency_s", {}).get("p99", math.nan), sc[name]["latency_s"]["p99"]
        if a > 0 and _moved(a, b) and not 1 / 1.5 < (b / a) / overall < 1.5:  # only streams that moved apart
            parts.append(ratio_words(f"{name} p99", a, b))
    if parts:
        grown = _grown_driver(prev, cur)
        if grown:
            parts.append(grown)
    return parts


def _loop_note(prev: dict, cur: dict) -> tuple[str, str]:
    """(what the loop now does differently, why it did not change) from the panels' ``loop`` entries."""
    lp, lc = prev.get("loop"), cur.get("loop")
    if not lp or not lc:
        return "", ""
    was, now = ", ".join(lp["actions"]) or "no action", ", ".join(lc["actions"]) or "no action"
    if was != now:
        return f"the loop now keeps {now} (was {was})", ""
    verdicts = lc.get("verdicts", [])
    if not verdicts:
        return "", "the telemetry proposed no action, so the guard threshold had nothing to judge"
    lo, hi = sorted((lp["threshold"], lc["threshold"]))
    refused = [v["worst"] for v in verdicts if not v["accepted"]]
    accepted = [v["worst"] for v in verdicts if v["accepted"]]
    if refused and min(refused) > hi:
        return "", (f"every refused action is worse by {min(refused):+.0%} or more, above both thresholds "
                    f"({lo:.0%} and {hi:.0%}), so the guard refused the same actions".replace("%", " %"))
    if accepted and max(accepted) <= lo:
        return "", (f"every action's worst regression ({max(accepted):+.0%}) is within both thresholds "
                    f"({lo:.0%} and {hi:.0%}), so the guard accepted the same actions".replace("%", " %"))
    return "", f"the guard's verdicts are the same at {lo:.0%} and {hi:.0%}".replace("%", " %")


def _why_no_effect(prev: dict, cur: dict, setting: str, label: str = "") -> str:
    """A reason, computed from the summaries, that a change of ``setting`` (a control's key; ``label`` its
    name as the learner reads it) moved nothing."""
    s = setting.lower()
    util = cur.get("cores", {}).get("utilization") or [0.0]
    busy = sum(util) / len(util)
    drivers = cur.get("tail_drivers") or {}
    if "core" in s and busy < 0.5:
        return f"cores were {busy:.0%} busy, more cores cannot shorten a queue that is empty".replace("%", " %")
    if s in ("envelope", "policy", "buckets") and "bucket_hit_rate" in cur and cur["bucket_hit_rate"] >= 0.999 \
            and prev.get("bucket_hit_rate", 0.0) >= 0.999:
        return "every request fitted a bucket before and after, so the out-of-envelope policy never ran"
    if "hbm" in s and not (cur.get("residency") or {}).get("loads") and not (prev.get("residency") or {}).get("loads"):
        return "no weight was reloaded before or after: every model already fitted in HBM"
    if "hbm" in s and (cur.get("residency") or {}).get("loads") and (prev.get("residency") or {}).get("loads"):
        return (f"weights were reloaded before and after ({prev['residency']['loads']} and "
                f"{cur['residency']['loads']} loads): both capacities hold the same models, and HBM matters "
                "only when one more model fits")
    if ("sram" in s or "fusion" in s) and not cur.get("spill_bytes_per_request") \
            and not prev.get("spill_bytes_per_request"):
        return "no fused kernel spilled out of SRAM before or after, so there was no spill traffic to change"
    settings = cur.get("settings") or {}
    if "weight" in s and settings.get("discipline") not in (None, "weighted"):
        return f"weights count only under the weighted discipline; this run uses {settings['discipline']}"
    if ("delay" in s or "batch" in s) and settings.get("policy") == "none":
        return "batching is off, so its batch size and delay are not used"
    if s in ("skew", "placement") and busy < 0.5:
        return f"cores were {busy:.0%} busy: even the busiest core had room".replace("%", " %")
    if drivers:
        top = max(drivers, key=drivers.get)
        return (f"p99 {cur['latency_s']['p99'] * 1e3:.3g} ms, within {NOISE:.0%} of before; the tail is "
                f"{top.replace('_', ' ')} ({drivers[top]:.0%}), which {_words(setting, label)} barely touches"
                ).replace("%", " %")
    return f"p99, p50, refusals and throughput all within {NOISE:.0%} of before".replace("%", " %")


def _words(setting: str, label: str = "") -> str:
    """The changed control as the learner reads it: its label, else its key in words, never ``sram_mib``."""
    return label or setting.replace("_", " ") or "this setting"


def what_changed(previous_summary: dict | None, current_summary: dict, changed_setting: str = "",
                 label: str = "") -> str:
    """One line: what moved beyond noise after ``changed_setting`` changed, or "no effect: <why>".

    ``changed_setting`` is the control's key (it selects the reason given for no effect); ``label`` is the
    control's label, the only name the line shows (the key in words when there is none).

    >>> a = {"latency_s": {"p50": 1e-3, "p99": 0.9e-3}}
    >>> b = {"latency_s": {"p50": 1e-3, "p99": 2.8e-3}}
    >>> what_changed(a, b, "cores")
    'what changed: p99 x3.1 higher (0.9 -> 2.8 ms)'
    """
    if previous_summary is None:
        return "first run: change a control to see what it does"
    loop_change, loop_why = _loop_note(previous_summary, current_summary)
    parts = ([loop_change] if loop_change else []) + _changes(previous_summary, current_summary)
    if parts:
        return "what changed: " + "; ".join(parts)
    return "no effect: " + (loop_why or _why_no_effect(previous_summary, current_summary, changed_setting, label))

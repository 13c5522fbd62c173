"""A drill's runs, and reference answers whose numbers come from those runs.

A drill's reference answer is a template: every figure that the simulator produces is
written as a field such as ``{reg.ms.p99:.2f}`` (the regressed run's p99 in ms) or
``{base.pct.bucket_hit_rate:.0f}`` (the baseline's bucket hit rate in %), so that the
reference the learner reads and the evidence table beside it always come from the same
runs at the same seed and cannot disagree. Inputs of the scenario (rates, core counts,
the 512-token envelope) stay plain text.

Roots: ``base`` (healthy run), ``reg`` (regressed run), ``fix`` (the drill's optional
``fixed`` overrides: the proposed fix at the same seed), ``ratio`` (reg / base) and
``delta`` (reg - base). Below a root, keys follow ``workbench run --json``; three views
rescale a subtree: ``ms`` (``latency_s`` in ms), ``wait_ms`` (``wait_s`` in ms) and
``pct`` (the fractions below it in %), ``mib`` (bytes below it in MiB); for token-level drills
``ttft_ms``, ``tpot_ms``, ``itl_ms`` and ``e2e_ms`` view the serving summary's times in ms; a ratio has no unit, so
under ``ratio`` the views change nothing. Derived keys: ``busy_max``, ``busy_min`` and
``busy_mean`` (core utilisation, a fraction), ``loads``, ``evictions`` (residency).
"""

from __future__ import annotations

import string

from workbench.errors import ConfigError

ROOTS = ("base", "reg", "fix", "ratio", "delta")
VIEWS = {"ms": ("latency_s", 1e3), "wait_ms": ("wait_s", 1e3),  # token-level drills: the serving summary's times
         "ttft_ms": ("ttft_s", 1e3), "tpot_ms": ("tpot_s", 1e3), "itl_ms": ("itl_s", 1e3), "e2e_ms": ("e2e_s", 1e3)}
SCALES = {"pct": 100.0, "mib": 2.0 ** -20}


class Fig:
    """A read-only view of a summary dict for templates: attributes and [keys] walk it, numbers are scaled."""

    def __init__(self, data: dict, scale: float = 1.0, where: str = "", unitless: bool = False):
        self._data, self._scale, self._where, self._unitless = data, scale, where, unitless

    def _get(self, key: str):
        if key in VIEWS and VIEWS[key][0] in self._data:
            src, scale = VIEWS[key]
            return Fig(self._data[src], self._scale * (1.0 if self._unitless else scale), f"{self._where}.{key}",
                       self._unitless)
        if key in SCALES:
            scale = 1.0 if self._unitless else SCALES[key]
            return Fig(self._data, self._scale * scale, f"{self._where}.{key}", self._unitless)
        if key not in self._data:
            raise KeyError(f"{self._where}.{key}")
        value = self._data[key]
        if isinstance(value, dict):
            return Fig(value, self._scale, f"{self._where}.{key}", self._unitless)
        if isinstance(value, bool) or not isinstance(value, int | float) or self._scale == 1.0:
            return value
        return value * self._scale

    def __getattr__(self, key: str):
        if key.startswith("_"):
            raise AttributeError(key)
        return self._get(key)

    def __getitem__(self, key: str):
        return self._get(key)


def _derive(summary: dict) -> dict:
    """The summary plus the derived keys templates use."""
    out = dict(summary)
    util = summary.get("cores", {}).get("utilization") or [0.0]
    out["busy_max"], out["busy_min"], out["busy_mean"] = max(util), min(util), sum(util) / len(util)
    res = summary.get("residency") or {}
    out["loads"] = res.get("loads", 0)
    out["evictions"] = res.get("evictions", 0)
    out["link_busy_s"] = res.get("link_busy_s", 0.0)
    return out


def _combine(a, b, op):
    """Element-wise op over two summaries (numbers only; what is not in both is dropped)."""
    if isinstance(a, dict) and isinstance(b, dict):
        both = {k: _combine(a[k], b[k], op) for k in a.keys() & b.keys()}
        return {k: v for k, v in both.items() if v is not None}
    if isinstance(a, int | float) and isinstance(b, int | float) and not isinstance(a, bool):
        try:
            return op(a, b)
        except ZeroDivisionError:
            return float("nan")
    return None


def fields(template: str) -> list[str]:
    """The field names of a template (``reg.ms.p99`` ...)."""
    return [f for _, f, _, _ in string.Formatter().parse(template) if f]


def check_template(template: str, where: str, key: str) -> None:
    """Refuse a template whose fields are malformed or use an unknown root (no run needed)."""
    try:
        names = fields(template)
    except ValueError as e:
        raise ConfigError(key, template[:80], f"is not a valid template ({e})", source=where) from None
    for name in names:
        root = name.split(".")[0].split("[")[0]
        if root not in ROOTS:
            raise ConfigError(key, "{" + name + "}", f"unknown root {root!r}; use one of {', '.join(ROOTS)}",
                              source=where)


def needs(template: str) -> set[str]:
    """Which runs a template reads (``ratio`` and ``delta`` need base and reg)."""
    roots = {f.split(".")[0].split("[")[0] for f in fields(template)}
    if roots & {"ratio", "delta"}:
        roots |= {"base", "reg"}
    return roots - {"ratio", "delta"}


def render(template: str, summaries: dict[str, dict], where: str = "reference") -> str:
    """Fill a reference template from the run summaries ``{'base': ..., 'reg': ..., 'fix': ...}``."""
    roots = {k: Fig(_derive(v), where=k) for k, v in summaries.items()}
    if "base" in summaries and "reg" in summaries:
        b, r = _derive(summaries["base"]), _derive(summaries["reg"])
        roots["ratio"] = Fig(_combine(r, b, lambda x, y: x / y), where="ratio", unitless=True)
        roots["delta"] = Fig(_combine(r, b, lambda x, y: x - y), where="delta")
    try:
        return template.format_map(roots)
    except (KeyError, AttributeError, IndexError) as e:
        raise ConfigError(where, str(e).strip("'\""), "names a figure the drill's runs do not have") from None

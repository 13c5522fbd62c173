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

A template is data, never code: a field is a root and then keys (``.name``, or ``[name]`` for a stream or
tenant whose name is not a plain word), each starting with a letter, walked through the summaries' dicts alone
(no attribute or item of any Python object is ever read, so ``{reg.__init__.__globals__}`` is refused, not
printed); a format spec is ``[align][sign][width][,][.precision][type]`` with a type among ``f e g % d``, a width
of at most ``MAX_WIDTH`` and a precision of at most ``MAX_PRECISION``; no ``!r`` conversion, no nested field, at
most ``MAX_FIELDS`` fields. :func:`check_template` refuses anything else when the drill loads, and
:func:`render` checks again, so an unchecked template cannot get past it either.
"""

from __future__ import annotations

import re
import string

from workbench.errors import ConfigError

ROOTS = ("base", "reg", "fix", "ratio", "delta")
VIEWS = {"ms": ("latency_s", 1e3), "wait_ms": ("wait_s", 1e3),  # token-level drills: the serving summary's times
         "ttft_ms": ("ttft_s", 1e3), "tpot_ms": ("tpot_s", 1e3), "itl_ms": ("itl_s", 1e3), "e2e_ms": ("e2e_s", 1e3)}
SCALES = {"pct": 100.0, "mib": 2.0 ** -20}
MAX_FIELDS = 300  # fields in one template (the built-in references use at most 36)
MAX_WIDTH = 40  # characters a field may be padded to: a width is layout, never a buffer size
MAX_PRECISION = 12  # digits after the point
MAX_DEPTH = 8  # keys below the root

# a key: a letter, then letters, digits and '_' ('.p999', '.by_outcome'); an index: a stream's or tenant's name
_KEY = r"\.[A-Za-z][A-Za-z0-9_]{0,63}|\[[A-Za-z][^\[\]{}]{0,63}\]"
_FIELD = re.compile(rf"(?P<root>[A-Za-z0-9_]*)(?P<path>(?:{_KEY})*)")
_PARTS = re.compile(r"\.([^.\[]+)|\[([^\]]+)\]")
_SPEC = re.compile(r"(?P<align>[<>^=]?)(?P<sign>[-+ ]?)(?P<width>\d*)(?P<group>,?)(?:\.(?P<precision>\d+))?"
                   r"(?P<type>[efg%d]?)")


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


def _parse(template: str, key: str, source: str) -> list[tuple[str, str | None, str, str | None]]:
    """The template's (literal, field, spec, conversion) pieces; a malformed template is one ConfigError."""
    try:
        return list(string.Formatter().parse(template))
    except ValueError as e:
        raise ConfigError(key, template[:80], f"is not a valid template ({e})", source=source) from None


def fields(template: str) -> list[str]:
    """The field names of a template (``reg.ms.p99`` ...)."""
    return [f for _, f, _, _ in string.Formatter().parse(template) if f]


def _check_field(name: str, spec: str, conversion: str | None, key: str, source: str) -> list[str]:
    """Refuse a field outside the documented forms; return its keys below the root."""
    shown = "{" + name + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "") + "}"

    def refuse(why: str) -> ConfigError:
        return ConfigError(key, shown, why, source=source)

    m = _FIELD.fullmatch(name)
    if m is None:
        raise refuse("is not a field of the documented form: a root, then keys joined by '.' (a letter first, then "
                     "letters, digits or '_') or a [name] of a stream or tenant; nothing else is read")
    if m["root"] not in ROOTS:
        raise refuse(f"unknown root {m['root']!r}; use one of {', '.join(ROOTS)}")
    keys = [a or b for a, b in _PARTS.findall(m["path"])]
    if len(keys) > MAX_DEPTH:
        raise refuse(f"is a field more than {MAX_DEPTH} keys deep")
    if not keys or keys[-1] in VIEWS or keys[-1] in SCALES:  # a run, or a view of it, is a group of figures
        raise refuse("names a group of figures, not one: name a figure under it (e.g. {reg.ms.p99:.1f})")
    if conversion is not None:
        raise refuse(f"a !{conversion} conversion is not allowed in a reference field")
    s = _SPEC.fullmatch(spec)
    if s is None:
        raise refuse(f"format spec {spec!r} is not allowed: use [align][sign][width][,][.precision][type], the type "
                     "one of f e g % d (e.g. .1f, >8.2f, ,.0f, +.0%)")
    if s["width"] and (len(s["width"]) > 3 or int(s["width"]) > MAX_WIDTH):
        raise refuse(f"width {s['width'][:12]} is more than {MAX_WIDTH} characters")
    if s["precision"] and (len(s["precision"]) > 3 or int(s["precision"]) > MAX_PRECISION):
        raise refuse(f"precision {s['precision'][:12]} is more than {MAX_PRECISION} digits")
    return keys


def _checked(template: str, key: str, source: str) -> list[tuple[str, str | None, str, list[str]]]:
    """The template's (literal, field, spec, keys) pieces, every field checked."""
    pieces = _parse(template, key, source)
    count = sum(name is not None for _, name, _, _ in pieces)
    if count > MAX_FIELDS:
        raise ConfigError(key, f"<{count:,} fields>", f"a reference has at most {MAX_FIELDS} fields", source=source)
    return [(literal, name, spec, _check_field(name, spec, conv, key, source) if name is not None else [])
            for literal, name, spec, conv in pieces]


def check_template(template: str, where: str, key: str) -> None:
    """Refuse a template whose fields are malformed, use an unknown root, read anything but the summaries' keys,
    or carry a format spec outside the whitelist (no run needed)."""
    _checked(template, key, where)


def needs(template: str) -> set[str]:
    """Which runs a template reads (``ratio`` and ``delta`` need base and reg)."""
    roots = {f.split(".")[0].split("[")[0] for f in fields(template)}
    if roots & {"ratio", "delta"}:
        roots |= {"base", "reg"}
    return roots - {"ratio", "delta"}


_MISSING = object()


def _lookup(root: tuple[dict, bool], name: str, keys: list[str], where: str):
    """The figure a field names: walk dicts only, rescale by the views on the way (none under ``ratio``)."""
    data, unitless = root
    value, scale = data, 1.0
    for key in keys:
        if not isinstance(value, dict):
            value = _MISSING
            break
        if key in VIEWS and VIEWS[key][0] in value:
            src, factor = VIEWS[key]
            value, scale = value[src], scale * (1.0 if unitless else factor)
        elif key in SCALES:
            scale *= 1.0 if unitless else SCALES[key]
        elif key in value:
            value = value[key]
        else:
            value = _MISSING
            break
    if value is _MISSING:
        raise ConfigError(where, name, "names a figure the drill's runs do not have")
    if isinstance(value, dict):
        raise ConfigError(where, name, f"names a group of figures, not one (name one of its keys: "
                          f"{', '.join(sorted(map(str, value))[:6])})")
    if value is None or isinstance(value, bool | str):  # printed as they are; a number's spec refuses them
        return value
    if not isinstance(value, int | float):
        raise ConfigError(where, name, f"names a {type(value).__name__}, not one figure")
    return value if scale == 1.0 else value * scale


def render(template: str, summaries: dict[str, dict], where: str = "reference") -> str:
    """Fill a reference template from the run summaries ``{'base': ..., 'reg': ..., 'fix': ...}``; every field is
    checked as :func:`check_template` does, whoever wrote the template."""
    pieces = _checked(template, where, "")
    roots = {k: (_derive(v), False) for k, v in summaries.items()}
    if "base" in summaries and "reg" in summaries:
        b, r = _derive(summaries["base"]), _derive(summaries["reg"])
        roots["ratio"] = (_combine(r, b, lambda x, y: x / y), True)
        roots["delta"] = (_combine(r, b, lambda x, y: x - y), False)
    out = []
    for literal, name, spec, keys in pieces:
        out.append(literal)
        if name is None:
            continue
        root = name.split(".")[0].split("[")[0]
        if root not in roots:
            raise ConfigError(where, name, "names a figure the drill's runs do not have")
        value = _lookup(roots[root], name, keys, where)
        try:
            out.append(format(value, spec))
        except (ValueError, TypeError) as e:
            raise ConfigError(where, name, f"cannot be formatted with {spec!r} ({e})") from None
    return "".join(out)

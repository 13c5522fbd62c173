"""Fuzz: mutated built-in scenarios through the CLI, in-process; strict JSON or one clear line, never a traceback.

Hypothesis takes a built-in scenario file, applies a few mutations (a key deleted, a value
replaced by a wrong type, an extreme number, NaN or infinity, a huge or negative value,
unicode and control characters, a number scaled by up to 10^12 either way or nudged by
up to 10^2, an unknown key), writes
it back as TOML and runs ``workbench run FILE --json --requests 300`` in this process.
Every case must end within a time bound either with exit 0 and strict JSON on stdout,
or with exit 2 and exactly one ``workbench: error:`` line on stderr.

In ``make test`` 300 cases run, the same ones every time (derandomized, a few seconds);
``make fuzz`` runs ``FUZZ_EXAMPLES`` (5000) fresh random cases through
``WORKBENCH_FUZZ_EXAMPLES`` and prints how many it tried and how they ended.
"""

from __future__ import annotations

import copy
import json
import math
import os
import tempfile
import tomllib
from collections import Counter
from importlib import resources
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers import run_cli

CASE_SECONDS = 60.0  # a case past this is a hang
EXAMPLES = int(os.environ.get("WORKBENCH_FUZZ_EXAMPLES", "300"))  # make fuzz: 5000
OPS = ["delete", "replace", "replace", "scale", "scale", "nudge", "nudge", "string", "add"]
BUILTINS = {p.name: tomllib.loads(p.read_text(encoding="utf-8"))
            for p in sorted((resources.files("workbench") / "scenarios").iterdir()) if p.name.endswith(".toml")}
EXTREMES = [0, -1, 1, 2**63 - 1, -(2**63), 10**6, 10**18, 1e308, -1e308, 1e-308, 5e-324, 0.0, -0.0,
            math.nan, math.inf, -math.inf, "NaN", "inf", "-1", "1e308", "", "ü𝄞\u202e\x1b[31m\x1b]0;t\x07", "\x7f\x9b",
            "x" * 5000, "/dev/zero", "../../etc/passwd", True, False, [], [1e308], [-1, 0], [math.nan], {}, {"x": 1},
            "fixed", "categorical", "lognormal", "onoff", "trace", "dynamic", "static", "pinned", "weighted"]


def _paths(node, prefix=(), leaves_only=False) -> list[tuple]:
    """Every key path in a parsed TOML document (tables, list items and leaves, or leaves only)."""
    out = []
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for k, v in items:
        if not (leaves_only and isinstance(v, dict | list)):
            out.append(prefix + (k,))
        out += _paths(v, prefix + (k,), leaves_only)
    return out


def _mutate(doc: dict, path: tuple, op: str, value) -> None:
    parent = doc
    for k in path[:-1]:
        parent = parent[k]
    key = path[-1]
    if op == "delete":
        del parent[key]
    elif op in ("scale", "nudge") and isinstance(parent[key], int | float) and not isinstance(parent[key], bool):
        parent[key] = parent[key] * 10.0 ** value
    elif op == "string":
        parent[key] = str(parent[key])
    elif op == "add" and isinstance(parent[key], dict):
        parent[key][f"unknown_{value}"] = 1
    else:
        parent[key] = copy.deepcopy(value)  # EXTREMES' lists and tables stay as they are


@st.composite
def mutated_scenarios(draw) -> str:
    """A built-in scenario with 1 to 4 mutations, as TOML text."""
    doc = json.loads(json.dumps(BUILTINS[draw(st.sampled_from(sorted(BUILTINS)))]))  # a deep copy
    for _ in range(draw(st.sampled_from([1, 1, 1, 2, 2, 3, 4]))):
        paths = _paths(doc, leaves_only=draw(st.sampled_from([True, True, True, False])))  # mostly values
        if not paths:
            break
        op = draw(st.sampled_from(OPS))
        value = draw(st.sampled_from(EXTREMES)) if op == "replace" else \
            draw(st.integers(-2, 2) if op == "nudge" else st.integers(-12, 12))
        _mutate(doc, draw(st.sampled_from(paths)), op, value)
    return "".join(f"{_key(k)} = {_value(v)}\n" for k, v in doc.items())


def _key(k) -> str:
    return json.dumps(str(k), ensure_ascii=False).replace("\x7f", "\\u007f")


def _value(v) -> str:
    """A TOML inline value (tables inline, so any nesting writes on one line)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v) if -(2**63) <= v < 2**63 else repr(float(v))
    if isinstance(v, float):
        return repr(v) if math.isfinite(v) else ("nan" if math.isnan(v) else "inf" if v > 0 else "-inf")
    if isinstance(v, str):
        return _key(v)
    if isinstance(v, list):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    return "{" + ", ".join(f"{_key(k)} = {_value(x)}" for k, x in v.items()) + "}"


def _strict(text: str) -> None:
    def refuse(constant: str):
        raise ValueError(f"non-strict JSON constant {constant}")

    json.loads(text, parse_constant=refuse)


def check_case(text: str, folder: Path) -> str:
    """Run one mutated scenario; return its outcome ("ok" or "refused"), or fail the test."""
    path = folder / "fuzz.toml"
    path.write_text(text, encoding="utf-8")
    status, out, err = run_cli(["run", str(path), "--json", "--requests", "300"], seconds=CASE_SECONDS)
    assert "Traceback" not in err and status in (0, 2), f"status {status!r}\n{err}\n--- scenario:\n{text[:3000]}"
    if status == 0:
        _strict(out)
        return "ok"
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("workbench: error: ") and out == "", f"{err!r}\n{text[:3000]}"
    return "refused"


def test_mutated_builtin_scenarios_end_cleanly():
    seen: Counter = Counter()
    with tempfile.TemporaryDirectory() as tmp:

        @settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=EXAMPLES <= 300,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
        @given(mutated_scenarios())
        def run_case(text: str) -> None:
            seen[check_case(text, Path(tmp))] += 1

        run_case()
    print(f"\nfuzz: {sum(seen.values())} cases tried: {seen['ok']} ran with strict JSON, "
          f"{seen['refused']} refused with one line; 0 tracebacks, hangs or non-strict JSON")
    assert sum(seen.values()) >= min(EXAMPLES, 10)

"""Fuzz: mutated token-level serving scenarios through ``workbench run FILE``, in-process.

Hypothesis takes a built-in token-mode scenario (every ``llm_*`` file whose ``[serving]`` says
``mode = "token"``), applies 1 to 4 mutations, writes it back as TOML and runs it with a small
request count (and now and then a ``--seed``). The mutations are those of the request-mode fuzz
(:mod:`tests.test_fuzz`: a key deleted, a wrong type, an extreme number, NaN or infinity, a value
scaled by up to 10^12 either way, unicode and control characters, an unknown key), over values
that the token parser reads (policies, preemption modes, ``"auto"`` KV blocks, length laws), plus
a graft: a table or value of another token scenario copied in at the same path (tensor parallelism
into a speculative run, a surge into a KV-pressure run ...), or of a donor that sets what no
built-in does (token buckets and recompiles, swap preemption, length drift, ideal efficiency).
Every case ends with exit 0 and strict JSON (now and then the text summary instead, or a Chrome
trace too, which must be strict JSON as well), or exit 2 and one ``workbench: error:`` line and
no file written (:func:`tests.fuzz_support.ended`).
"""

from __future__ import annotations

import json
import tempfile
import tomllib
from importlib import resources
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fuzz_support import Tally, ended, examples, strict_json
from tests.helpers import run_cli
from tests.test_fuzz import EXTREMES, OPS, _key, _mutate, _paths, _value

EXAMPLES, FIXED = examples(ci=40)
TOKEN_SCENARIOS = {p.name: tomllib.loads(p.read_text(encoding="utf-8"))
                   for p in sorted((resources.files("workbench") / "scenarios").iterdir())
                   if p.name.startswith("llm_") and p.name.endswith(".toml")}
# what the token parser reads that no built-in scenario sets: a donor for grafts only (never run as it is)
FEATURES = {"serving": {
    "efficiency": "ideal", "cuda_graphs": False,
    "kv": {"preemption": "swap", "watermark": 0.2, "swap_bandwidth_bytes_per_s": 1e9, "gpu_memory_utilization": 0.5},
    "buckets": {"sizes": [16, 128, 512, 2048], "out_of_envelope": "recompile", "generic_slowdown": 3.0,
                "recompile_pause_s": 0.5, "recompile_limit": 2, "fusion": "aggressive"},
    "surge": {"factor": 4.0, "start_s": 1.0, "end_s": 3.0},
    "parallel": {"tensor": 8, "link_bytes_per_s": 1e9, "link_latency_s": 1e-3},
    "tenants": [{"name": "a", "rate": 9.0, "priority": 3, "acceptance": 0.0,
                 "prompt": {"median": 50, "sigma": 1.5, "max": 8192, "drift_to": 4000, "drift_start_s": 0.5,
                            "drift_end_s": 2.0},
                 "output": {"median": 2, "sigma": 0.0, "max": 1024, "drift_to": 900, "drift_end_s": 1.0}}]}}
DONORS = {**TOKEN_SCENARIOS, "features": FEATURES}
TOKEN_VALUES = ["token", "request", "fcfs", "priority", "continuous", "recompute", "swap", "fallback", "recompile",
                "auto", "fitted", "h100-sxm", "a100", 2048, 16, 0.9, {"median": 300, "sigma": 0.8, "max": 4096},
                {"median": 1e308, "max": 2**62}, {"median": 0}, {"factor": 1e6, "start_s": 0, "end_s": 1e308},
                [{"name": "x", "rate": 1, "prompt": {"median": 1}, "output": {"median": 1}}] * 65]
VALUES = EXTREMES + TOKEN_VALUES
REQUESTS = ["1", "2", "10", "60", "200"]  # small: the run's length is not what is fuzzed here
TRACE = "<trace>"  # where --trace writes: a file in the case's folder
SEEDS = [None, None, None, None, "0", "7", "-1", str(2**63), str(2**64)]


def _graft(doc: dict, donor: dict, path: tuple) -> None:
    """Copy ``donor``'s value at ``path`` into ``doc``, making tables on the way (a list item where the list is)."""
    parent, source = doc, donor
    for k in path[:-1]:
        source = source[k]
        if isinstance(parent, dict):
            parent = parent.setdefault(k, {} if isinstance(source, dict) else [])
        elif isinstance(parent, list) and isinstance(k, int) and k < len(parent):
            parent = parent[k]
        else:
            return  # the path runs through a value this document does not have: nothing to graft onto
    if isinstance(parent, dict):
        parent[path[-1]] = json.loads(json.dumps(source[path[-1]]))
    elif isinstance(parent, list) and isinstance(path[-1], int) and path[-1] < len(parent):
        parent[path[-1]] = json.loads(json.dumps(source[path[-1]]))


def _whole(doc: dict, path: tuple, original: dict) -> None:
    """A whole number scaled stays whole (a count the parser reads as an integer), rounded as a TOML integer."""
    parent, was = doc, original
    try:
        for k in path[:-1]:
            parent, was = parent[k], was[k]
        was = was[path[-1]]
    except (KeyError, IndexError, TypeError):
        return  # not in the built-in file (grafted or added): nothing to keep whole
    value = parent[path[-1]]
    if isinstance(was, int) and not isinstance(was, bool) and isinstance(value, float) and abs(value) < 2**63:
        parent[path[-1]] = round(value)


@st.composite
def token_cases(draw) -> tuple[str, list[str], str]:
    """(TOML text, command-line arguments after the file, a label) of a token scenario with 1 to 4 mutations."""
    name = draw(st.sampled_from(sorted(TOKEN_SCENARIOS)))
    doc = json.loads(json.dumps(TOKEN_SCENARIOS[name]))  # a deep copy
    done = []
    for _ in range(draw(st.sampled_from([1, 1, 1, 2, 2, 3, 4]))):
        op = draw(st.sampled_from([*OPS, "graft", "graft"]))
        if op == "graft":
            donor = DONORS[draw(st.sampled_from(sorted(DONORS)))]
            path = draw(st.sampled_from([p for p in _paths(donor) if p[0] not in ("name", "description")]))
            _graft(doc, donor, path)
            done.append(f"graft {'.'.join(map(str, path))}")
            continue
        paths = [p for p in _paths(doc, leaves_only=draw(st.sampled_from([True, True, True, False])))
                 if p != ("description",)]  # the long prose: mutating it is the request-mode fuzz's
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        value = draw(st.sampled_from(VALUES)) if op == "replace" else \
            draw(st.integers(-2, 2) if op == "nudge" else st.integers(-12, 12))
        _mutate(doc, path, op, value)
        if op in ("scale", "nudge"):
            _whole(doc, path, TOKEN_SCENARIOS[name])
        done.append(f"{op} {'.'.join(map(str, path))}" + (f" {str(value)[:40]}" if op not in ("delete", "string")
                                                          else ""))
    doc.pop("description", None)  # shorter files; the description is not read by the run
    argv = ["--requests", draw(st.sampled_from(REQUESTS))]
    seed = draw(st.sampled_from(SEEDS))
    if seed is not None:
        argv += ["--seed", seed]
    argv += draw(st.sampled_from([["--json"], ["--json"], ["--json"], [], ["--json", "--trace", TRACE],
                                  ["--trace", TRACE]]))
    text = "".join(f"{_key(k)} = {_value(v)}\n" for k, v in doc.items())
    return text, argv, f"{name}: {'; '.join(done)} {' '.join(argv)}"


def check_token_case(text: str, argv: list[str], folder: Path) -> str:
    """Run one mutated token scenario (``--trace`` into ``folder``); return how it ended, or fail the test."""
    path, trace = folder / "fuzz_tokens.toml", folder / "trace.json"
    path.write_text(text, encoding="utf-8")
    trace.unlink(missing_ok=True)
    argv = [str(trace) if a == TRACE else a for a in argv]
    status, out, err = run_cli(["run", str(path), *argv])
    outcome = ended(status, out, err, f"run {' '.join(argv)}\n{text}", want="json" if "--json" in argv else "text")
    if outcome == "refused":
        assert out == "" and not trace.exists(), f"exit 2 after output {out[:300]!r}\n{text[:3000]}"
    elif "--trace" in argv:
        strict_json(trace.read_text(encoding="utf-8"))
    return outcome


def test_mutated_token_scenarios_end_cleanly():
    tally = Tally("token mode")
    assert len(TOKEN_SCENARIOS) >= 3 and all(d["serving"]["mode"] == "token" for d in TOKEN_SCENARIOS.values())
    with tempfile.TemporaryDirectory() as tmp:

        @settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=FIXED,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
        @given(token_cases())
        def run_case(case: tuple[str, list[str], str]) -> None:
            text, argv, label = case
            tally.run(label, lambda: check_token_case(text, argv, Path(tmp)))

        run_case()
    tally.report()
    assert sum(tally.ends.values()) >= min(EXAMPLES, 10)

"""Scenario files and the CLI: the contract other tools rely on, and bad input."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from workbench.cli import main
from workbench.errors import ConfigError
from workbench.scenario import builtin_scenarios, load_scenario

GOOD = """
seed = 7
requests = 3000
warmup_fraction = 0.05

[hardware]
cores = 4

[service]
law = "exponential"
base_s = 1.0
per_item_s = 0.0
cv = 1.0
memory_share = 0.0

[batching]
policy = "none"
max_batch = 8
max_delay_s = 0.002

[scheduler]
discipline = "fifo"
placement = "least-loaded"
max_queue = 0
timeout_s = 0.0

[[streams]]
name = "interactive"
rate = 0.8
priority = 0
weight = 1.0
"""

SUMMARY_KEYS = {"requests", "completed", "rejected", "throughput_rps", "latency_s", "wait_s", "fairness_jain",
                "cores", "streams"}
STAT_KEYS = {"mean", "p50", "p95", "p99", "p999"}


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "workbench.cli", *args], capture_output=True, text=True, timeout=120)


def test_issue_example_runs_and_json_has_the_contract_keys(tmp_toml):
    path = tmp_toml(GOOD)
    r = run_cli("run", str(path), "--json")
    assert r.returncode == 0, r.stderr
    s = json.loads(r.stdout)
    assert SUMMARY_KEYS <= set(s)
    assert s["requests"] == 3000 and s["completed"] + s["rejected"] == 3000
    assert STAT_KEYS <= set(s["latency_s"]) and STAT_KEYS <= set(s["wait_s"])
    assert len(s["cores"]["utilization"]) == 4
    st = s["streams"]["interactive"]
    assert {"completed", "rejected", "latency_s", "wait_s"} <= set(st)


def test_human_summary_and_chrome_trace(tmp_toml, tmp_path):
    path = tmp_toml(GOOD)
    out = tmp_path / "t.json"
    r = run_cli("run", str(path), "--trace", str(out))
    assert r.returncode == 0, r.stderr
    assert "p99" in r.stdout and "p50" in r.stdout
    events = json.loads(out.read_text())["traceEvents"]
    slices = [e for e in events if e["ph"] == "X"]
    assert {e["tid"] for e in slices} == {0, 1, 2, 3}  # one track per core
    names = {e["args"]["name"] for e in events if e.get("name") == "thread_name"}
    assert names == {"core 0", "core 1", "core 2", "core 3"}
    assert all(e["dur"] > 0 for e in slices)


@pytest.mark.parametrize("name", builtin_scenarios())
def test_builtin_scenarios_run_by_name(name):
    assert main(["run", name, "--requests", "2000", "--json"]) == 0


def test_builtins_include_the_documented_examples():
    assert {"mm1", "batching_knee", "priority_two_streams"} <= set(builtin_scenarios())
    for name in builtin_scenarios():
        assert load_scenario(name).description, f"{name} has no description"


BAD = [
    ("unknown key", GOOD.replace("seed = 7", "seed = 7\ncolour = 'red'"), "colour", "'red'"),
    ("wrong type", GOOD.replace("cores = 4", 'cores = "four"'), "hardware.cores", "'four'"),
    ("zero rate", GOOD.replace("rate = 0.8", "rate = 0.0"), "streams[0].rate", "0.0"),
    ("negative rate", GOOD.replace("rate = 0.8", "rate = -2"), "streams[0].rate", "-2.0"),
    ("no cores", GOOD.replace("cores = 4", "cores = 0"), "hardware.cores", "0"),
    ("max_batch", GOOD.replace("max_batch = 8", "max_batch = 0"), "batching.max_batch", "0"),
    ("cv", GOOD.replace("cv = 1.0", "cv = -0.5"), "service.cv", "-0.5"),
    ("no streams", GOOD.split("[[streams]]")[0], "streams", "None"),
    ("bad law", GOOD.replace('law = "exponential"', 'law = "gamma"'), "service.law", "'gamma'"),
    ("bool as int", GOOD.replace("requests = 3000", "requests = true"), "requests", "True"),
    ("unknown stream key", GOOD + "burst = 3\n", "streams[0].burst", "3"),
]


def test_malformed_toml_and_missing_file(tmp_toml, tmp_path):
    path = tmp_toml("seed = = 7\n")
    r = run_cli("run", str(path))
    assert r.returncode == 2 and str(path) in r.stderr and "malformed TOML" in r.stderr
    r = run_cli("run", str(tmp_path / "nope.toml"))
    assert r.returncode == 2 and "nope.toml" in r.stderr and "Traceback" not in r.stderr
    r = run_cli("run", "no_such_builtin")
    assert r.returncode == 2 and "built-ins" in r.stderr


def test_unwritable_trace_fails_clearly_and_writes_nothing(tmp_toml, tmp_path):
    path = tmp_toml(GOOD)
    r = run_cli("run", str(path), "--trace", str(tmp_path / "missing" / "t.json"))
    assert r.returncode == 2 and "does not exist" in r.stderr
    assert not (tmp_path / "missing").exists()


def test_trace_replay_and_onoff_and_drift(tmp_toml, tmp_path):
    (tmp_path / "ts.txt").write_text("t_s\n0.0\n0.5\n0.7\n1.9\n2.0\n")
    text = GOOD.replace('rate = 0.8', 'arrivals = { process = "trace", file = "ts.txt", time_scale = 2.0 }')
    text += """
[[streams]]
name = "bursty"
arrivals = { process = "onoff", rate_on = 3.0, rate_off = 0.1, mean_on_s = 5.0, mean_off_s = 5.0 }
[streams.shapes.seq]
dist = "lognormal"
median = 300
sigma = 0.4
drift = { median = 900, start_s = 10, end_s = 100 }
"""
    sc = load_scenario(tmp_toml(text))
    assert sc.streams[0].arrivals.timestamps == (0.0, 0.5, 0.7, 1.9, 2.0)
    assert sc.streams[1].shapes["seq"].drift.to == {"median": 900.0}
    assert main(["run", str(tmp_path / "s.toml"), "--json"]) == 0


def test_drift_step_and_ramp_are_exclusive(tmp_toml):
    text = GOOD + 'shapes = { seq = { dist = "lognormal", median = 3, drift = { median = 9, at_s = 1, end_s = 2 } } }\n'
    with pytest.raises(ConfigError, match="at_s"):
        load_scenario(tmp_toml(text))


def test_overload_with_unbounded_queue_ends_and_says_so(tmp_toml):
    text = GOOD.replace("rate = 0.8", "rate = 6.0").replace("requests = 3000", "requests = 20000")
    r = run_cli("run", str(tmp_toml(text)), "--json")
    s = json.loads(r.stdout)
    assert r.returncode == 0 and s["completed"] == 20000
    assert s["load"]["overloaded"] and min(s["cores"]["utilization"]) > 0.97
    assert s["load"]["queue_growth_rps"] > 1.0  # 6/s offered against 4/s of capacity: ~2/s of backlog
    r = run_cli("run", str(tmp_toml(text)))
    assert "WARNING overloaded" in r.stdout


MODEL = """
seed = 3
requests = 2000

[hardware]
cores = 2

[batching]
policy = "dynamic"
max_batch = 4
max_delay_s = 0.001

[model]
graph = "transformer_block"
params = { d_model = 256, heads = 4 }
fusion = "elementwise"
envelope = { seq = [128, 256, 512] }
out_of_envelope = "fallback"

[[streams]]
name = "chat"
rate = 400
shapes = { seq = { dist = "lognormal", median = 300, sigma = 0.4 } }
"""

MODEL_KEYS = {"bucket_hit_rate", "misses", "launches_per_request", "spill_bytes_per_request", "prediction_error"}


def test_model_section_runs_and_json_gains_mapping_keys(tmp_toml):
    r = run_cli("run", str(tmp_toml(MODEL)), "--json")
    assert r.returncode == 0, r.stderr
    s = json.loads(r.stdout)
    assert MODEL_KEYS <= set(s)
    assert 0.5 < s["bucket_hit_rate"] < 1.0  # median 300, sigma 0.4: some requests pass 512
    assert s["misses"]["by_reason"] == {"seq > 512 (max of the largest bucket)": s["misses"]["by_outcome"]["fallback"]}
    assert s["launches_per_request"] > 0


BAD_MODEL = [
    ("fusion", MODEL.replace('fusion = "elementwise"', 'fusion = "max"'), "model.fusion", "'max'"),
    ("policy", MODEL.replace('"fallback"', '"ignore"'), "model.out_of_envelope", "'ignore'"),
    ("unsorted", MODEL.replace("[128, 256, 512]", "[256, 128]"), "model.envelope.seq", "[256, 128]"),
    ("empty", MODEL.replace("[128, 256, 512]", "[]"), "model.envelope.seq", "[]"),
    ("wrong dim", MODEL.replace("envelope = { seq", "envelope = { hw"), "model.envelope", "'hw'"),
    ("graph", MODEL.replace('"transformer_block"', '"resnet"'), "model.graph", "'resnet'"),
    ("heads", MODEL.replace("heads = 4", "heads = 3"), "model.params.heads", "3"),
    ("no shapes", MODEL.replace('shapes = { seq = { dist = "lognormal", median = 300, sigma = 0.4 } }', ""),
     "streams[0].shapes", "{}"),
    ("bad median", MODEL.replace("median = 300", "median = -1"), "streams[0].shapes.seq.median", "-1.0"),
    ("both", MODEL + '\n[service]\nlaw = "deterministic"\n', "model", "[service]"),
]


@pytest.mark.parametrize("label,text,key,value", BAD + BAD_MODEL, ids=[b[0] for b in BAD + BAD_MODEL])
def test_bad_input_one_clear_line_exit_2(tmp_toml, label, text, key, value):
    path = tmp_toml(text)
    r = run_cli("run", str(path))
    assert r.returncode == 2
    assert r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr
    assert str(path) in lines[0] and key in lines[0] and value in lines[0], lines[0]

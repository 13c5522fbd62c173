"""Token-mode scenarios through the ``workbench`` command: the built-ins run, the summary and the trace carry
the token metrics, and every bad value is one line naming the file, the key and the value, exit status 2."""

from __future__ import annotations

import json
import re

import pytest
from helpers import run_cli

from workbench.scenario import builtin_scenarios
from workbench.serving.scenario import ServingScenario

TOKEN = builtin_scenarios("token")

BASE = """seed = 2
requests = 200
[serving]
mode = "token"
max_num_batched_tokens = 4096
[serving.kv]
block_size = 16
blocks = 2048
[serving.model]
layers = 4
d_model = 512
heads = 8
d_ff = 2048
[[serving.tenants]]
name = "chat"
rate = 30.0
prompt = { median = 200, sigma = 0.5, max = 1000 }
output = { median = 50, sigma = 0.5, max = 300 }
"""


def test_the_token_built_ins_are_listed_apart_and_run():
    assert len(TOKEN) >= 3 and not set(TOKEN) & set(builtin_scenarios())
    for name in TOKEN:
        code, out, err = run_cli(["run", name, "--requests", "200", "--json"])
        assert code == 0, err
        s = json.loads(out)
        assert s["mode"] == "token" and s["requests"] == 200
        for k in ("ttft_s", "tpot_s", "itl_s", "e2e_s"):
            assert s[k]["p50"] <= s[k]["p95"] <= s[k]["p99"]
        assert s["output_tokens"] > 0 and 0 <= s["goodput"]["share"] <= 1
    code, out, _ = run_cli(["list"])
    assert code == 0 and all(re.search(rf"^{n}\s+\[token, \d+\.\d\d B parameters\]", out, re.M) for n in TOKEN)


def test_text_summary_and_chrome_trace(tmp_path):
    f = tmp_path / "s.toml"
    f.write_text(BASE)
    out_json = tmp_path / "t.json"
    code, out, err = run_cli(["run", str(f), "--trace", str(out_json)])
    assert code == 0, err
    assert "TTFT ms" in out and "goodput" in out and "preemptions 0" in out
    events = json.loads(out_json.read_text())["traceEvents"]
    slices = [e for e in events if e["ph"] == "X"]
    assert slices and all(e["dur"] > 0 for e in slices)
    assert {e["cat"] for e in slices} <= {"prefill", "decode", "mixed"}
    assert any(e["name"] == "KV blocks held" for e in events)


@pytest.mark.parametrize("old, new, key", [
    ("max_num_batched_tokens = 4096", "max_num_batched_tokens = 0", "serving.max_num_batched_tokens = 0"),
    ("max_num_batched_tokens = 4096", "max_num_batched_tokens = -5", "serving.max_num_batched_tokens = -5"),
    ("block_size = 16", "block_size = 0", "serving.kv.block_size = 0"),
    ("blocks = 2048", "blocks = 40", "serving.kv.blocks = 40"),
    ("output = { median = 50,", "output = { median = 0,", "serving.tenants[0].output.median = 0"),
    ("output = { median = 50,", "output = { median = -2,", "serving.tenants[0].output.median = -2"),
    ('mode = "token"', 'mode = "tokens"', "serving.mode = 'tokens'"),
    ("[serving.kv]", "[serving.kv]\nblok_size = 3", "serving.kv.blok_size = 3"),
    ("[serving.kv]", "[serving.buckets]\nsizes = [64, 32]\n[serving.kv]", "serving.buckets.sizes = [64, 32]"),
    ("[serving.kv]", '[serving.buckets]\nout_of_envelope = "pad"\n[serving.kv]', "serving.buckets.out_of_envelope"),
    ("[serving.kv]", '[serving.buckets]\nfusion = "max"\n[serving.kv]', "serving.buckets.fusion"),
    ("d_ff = 2048", "d_ff = 2048\nkv_heads = 3", "serving.model.kv_heads = 3"),
    ("d_ff = 2048", 'd_ff = 2048\ngated_mlp = "yes"', "serving.model.gated_mlp = 'yes'"),
    ("d_ff = 2048", "d_ff = 2048\nvocab = -1", "serving.model.vocab = -1"),
    ("blocks = 2048", 'blocks = "many"', "serving.kv.blocks = 'many'"),
    ("blocks = 2048", "blocks = 2048\ngpu_memory_utilization = 1.5", "serving.kv.gpu_memory_utilization = 1.5"),
    ('mode = "token"', 'mode = "token"\nefficiency = "magic"', "serving.efficiency = 'magic'"),
    ("[serving.kv]", "[serving.surge]\nfactor = 2.0\nstart_s = 5.0\nend_s = 1.0\n[serving.kv]",
     "serving.surge.end_s = 1.0"),
    # a 7B-class model on a 32 GiB chip: 12 GiB of weights, and 200,000 blocks of 16 tokens need 48.8 GiB
    ("d_ff = 2048", "d_ff = 11008\nvocab = 32000", "serving.kv.blocks = 200000"),
])
def test_bad_values_are_one_clear_line_and_status_2(tmp_path, old, new, key):
    f = tmp_path / "bad.toml"
    assert old in BASE
    text = BASE.replace(old, new)
    if "11008" in new:  # the model card of a 7B-class model and a cache far larger than HBM leaves
        text = text.replace("layers = 4\nd_model = 512\nheads = 8", "layers = 32\nd_model = 4096\nheads = 32")
        text = text.replace("blocks = 2048", "blocks = 200000")
    f.write_text(text)
    code, out, err = run_cli(["run", str(f)])
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and str(f) in err and key in err, err
    assert "Traceback" not in err


def test_buckets_section_reaches_the_summary(tmp_path):
    f = tmp_path / "b.toml"
    f.write_text(BASE.replace("[serving.kv]", "[serving.buckets]\nsizes = [16, 64, 256]\n[serving.kv]"))
    code, out, err = run_cli(["run", str(f), "--json"])
    assert code == 0, err
    b = json.loads(out)["buckets"]
    assert b["sizes"] == 3 and b["fallback"] > 0 and b["padding_share"] > 0  # prompts past 256 fall back


def test_load_scenario_gives_a_serving_scenario(tmp_path):
    from workbench.scenario import load_scenario

    f = tmp_path / "s.toml"
    f.write_text(BASE)
    sc = load_scenario(f)
    assert isinstance(sc, ServingScenario) and sc.run.requests == 200 and sc.run.kv.blocks == 2048


def test_a_request_count_out_of_range_is_refused_from_the_file_and_the_command_line(tmp_path):
    f = tmp_path / "r.toml"
    f.write_text(BASE.replace("requests = 200", "requests = 0"))
    code, out, err = run_cli(["run", str(f)])
    assert code == 2 and "requests = 0" in err and str(f) in err
    code, out, err = run_cli(["run", TOKEN[0], "--requests", "9000000"])
    assert code == 2 and "command line: requests = 9000000" in err

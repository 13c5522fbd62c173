"""Hostile input in token mode: a run that cannot fit memory is refused before it allocates, seeds and priorities in
request mode's ranges, and a clock too coarse for its iterations still gives a strict summary.

Memory cases never allocate gigabytes here: a refusal is asserted to come before any allocation (tracemalloc sees
numpy's buffers), and the memory estimate is checked against a small run's measured peak.
"""

from __future__ import annotations

import dataclasses
import json
import math
import tracemalloc

import pytest

from workbench.cli import main
from workbench.errors import ConfigError
from workbench.limits import TOKEN_BYTES_PER_STEP, TOKEN_RUN_BYTES, token_run_bytes
from workbench.scenario import load_scenario
from workbench.serving.config import LengthLaw, SchedulerConfig, Tenant
from workbench.serving.engine import ServingRun, simulate_tokens
from workbench.serving.metrics import summarize_tokens
from workbench.serving.run import drawn_steps, worst_steps

LLM = ("llm_chunked_prefill", "llm_kv_pressure", "llm_llama3_8b_h100", "llm_priority_budget", "llm_speculative",
       "llm_tp_link")

HEAD = """seed = {seed}
requests = {requests}
[hardware]
preset = "generic-4core"
[serving]
mode = "token"
chunked_prefill = true
[serving.kv]
blocks = 65536
[serving.model]
layers = 2
d_model = 256
heads = 4
d_ff = 1024
[[serving.tenants]]
name = "a"
rate = 5.0
priority = {priority}
prompt = {{ median = 50, max = 100 }}
output = {output}
"""


def scenario(tmp_path, seed=1, requests=50, priority=0, output="{ median = 20, max = 40 }"):
    path = tmp_path / "s.toml"
    path.write_text(HEAD.format(seed=seed, requests=requests, priority=priority, output=output))
    return path


def refused_before_allocating(make) -> ConfigError:
    """``make()`` raises a ConfigError having allocated less than 64 MiB on the way (numpy's buffers included)."""
    tracemalloc.start()
    try:
        with pytest.raises(ConfigError) as e:
            make()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 * 2**20, f"{peak / 2**20:.0f} MiB allocated before the refusal"
    return e.value


def one_error_line(capsys) -> str:
    err = capsys.readouterr().err
    assert err.startswith("workbench: error: ") and err.count("\n") == 1 and "Traceback" not in err
    return err


# --- S1, S2: a run whose trace cannot fit is refused up front -------------------------------------------------
@pytest.mark.parametrize("name", LLM)
def test_the_documented_maximum_of_requests_is_refused_before_allocating_in_every_llm_scenario(name):
    run = load_scenario(name).run
    e = refused_before_allocating(lambda: dataclasses.replace(run, requests=5_000_000))
    assert e.key == "requests" and "GiB" in e.why and "output token" in e.why


def test_the_command_line_refuses_five_million_requests_in_one_line(capsys):
    assert main(["run", "llm_chunked_prefill", "--requests", "5000000", "--json"]) == 2
    assert "command line: requests = 5000000" in one_error_line(capsys)


def test_long_outputs_in_range_are_refused_by_their_drawn_token_count(tmp_path, capsys):
    path = scenario(tmp_path, requests=2000, output="{ median = 100000, max = 100000 }")
    e = refused_before_allocating(lambda: load_scenario(str(path)))
    assert "200,000,000 output tokens" in e.why and str(path) in str(e)
    assert main(["run", str(path), "--json"]) == 2
    one_error_line(capsys)


def test_a_loose_bound_is_refined_by_the_draw_and_built_in_scenarios_run_at_their_defaults():
    for name in LLM:  # every documented scenario at its defaults fits by the laws' maxima alone (nothing drawn)
        run = load_scenario(name).run
        assert token_run_bytes(run.requests, worst_steps(run)) <= TOKEN_RUN_BYTES
    # outputs of median 20 tokens clipped at 100,000: the maxima would refuse the run, the drawn count accepts it
    run = ServingRun((Tenant("a", 5.0, LengthLaw(50, 0.0, 100), LengthLaw(20, 0.5, 100_000)),), requests=25)
    big = dataclasses.replace(run, requests=(TOKEN_RUN_BYTES // TOKEN_BYTES_PER_STEP) // 100_000 + 1)
    assert token_run_bytes(big.requests, worst_steps(big)) > TOKEN_RUN_BYTES
    assert drawn_steps(big) < big.requests * 100


def test_prefill_chunks_count_as_steps():
    law = LengthLaw(1e6, 0.0, 1 << 20)  # a million-token prompt, prefilled one token an iteration
    run = ServingRun((Tenant("a", 5.0, law, LengthLaw(1, 0.0, 1)),), requests=1,
                     scheduler=SchedulerConfig(max_num_batched_tokens=1, chunked_prefill=True))
    assert worst_steps(run) == (1 << 20) + 1 and drawn_steps(run) == 1_000_000 + 1
    e = refused_before_allocating(lambda: dataclasses.replace(run, requests=1000))
    assert "prefill" in e.why


def traced_peak(loop: str, requests: int, output: int) -> tuple[int, int]:
    """(peak bytes allocated, iterations) of a run and its summary: one sequence at a time (an arrival every
    1,000 s), an iteration per output token, the worst case of every step."""
    law = LengthLaw(output, 0.0, output)
    run = ServingRun((Tenant("a", 0.001, LengthLaw(10, 0.0, 10), law),), requests=requests)
    tracemalloc.start()
    try:
        tr = simulate_tokens(run, loop)
        summarize_tokens(tr)
        return tracemalloc.get_traced_memory()[1], len(tr.it_end_s)
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize(("loop", "small", "large"), [("python", 30, 90), ("auto", 200, 1000)])
def test_the_estimate_bounds_the_memory_each_more_step_takes(loop, small, large):
    traced_peak(loop, small, 100)  # warm: what the first run of a process builds once
    (p1, i1), (p2, i2) = traced_peak(loop, small, 100), traced_peak(loop, large, 100)
    assert i2 - i1 >= 0.99 * (large - small) * 100  # nearly an iteration per token
    assert (p2 - p1) / ((large - small) * 100) <= TOKEN_BYTES_PER_STEP


@pytest.mark.parametrize(("loop", "small", "large"), [("python", 1000, 5000), ("auto", 20_000, 100_000)])
def test_the_estimate_bounds_the_memory_each_more_request_takes(loop, small, large):
    traced_peak(loop, small, 1)
    (p1, _), (p2, _) = traced_peak(loop, small, 1), traced_peak(loop, large, 1)
    assert (p2 - p1) / (large - small) <= token_run_bytes(1, 1)  # a request of one token: one step


# --- S3, S4: seed and priority in request mode's ranges -----------------------------------------------------------
@pytest.mark.parametrize("seed", [-1, -(2**63)])
def test_a_negative_seed_is_refused_in_token_mode(tmp_path, capsys, seed):
    path = scenario(tmp_path, seed=seed)
    with pytest.raises(ConfigError, match=r"seed = -\d+: must be an integer in \[0, "):
        load_scenario(str(path))
    assert main(["run", str(path), "--json"]) == 2
    one_error_line(capsys)
    assert main(["run", "llm_priority_budget", "--seed", "-1"]) == 2
    assert "command line: seed = -1" in one_error_line(capsys)


@pytest.mark.parametrize("priority", [2**31, -(2**63), 2**63 - 1])
def test_a_priority_past_32_bits_is_refused_in_token_mode(tmp_path, capsys, priority):
    path = scenario(tmp_path, priority=priority)
    with pytest.raises(ConfigError, match=r"serving\.tenants\.a\.priority = -?\d+: must be an integer in"):
        load_scenario(str(path))
    assert main(["run", str(path), "--json"]) == 2
    one_error_line(capsys)


def test_32_bit_priorities_still_run(tmp_path, capsys):
    assert main(["run", str(scenario(tmp_path, priority=-(2**31))), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["requests"] == 50


# --- S5: iterations too short for the clock ---------------------------------------------------------------------
FAST = """seed = 1
requests = 50
[hardware]
cores = 1
peak_flops_per_core = 1e18
hbm_bandwidth_bytes_per_s = 1e16
launch_s = 0.0
[serving]
mode = "token"
efficiency = "ideal"
[serving.model]
layers = 1
d_model = 16
heads = 1
d_ff = 16
[[serving.tenants]]
name = "a"
rate = 1e-6
prompt = { median = 1, max = 1 }
output = { median = 2, max = 2 }
"""


def test_iterations_shorter_than_the_clocks_step_give_a_strict_summary(tmp_path, capsys):
    path = tmp_path / "fast.toml"
    path.write_text(FAST)
    assert main(["run", str(path), "--json"]) == 0
    s = json.loads(capsys.readouterr().out)  # strict JSON: no NaN
    kv = s["kv_utilisation"]
    assert 0.0 <= kv["mean"] <= kv["max"] <= 1.0 and 0.0 <= s["busy_share"] <= 1.0
    assert math.isfinite(s["iteration_time_shares"]["mean_seqs"])
    assert main(["run", str(path)]) == 0  # and the text summary

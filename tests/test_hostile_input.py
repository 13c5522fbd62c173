"""Hostile input, scenarios: bounded reads, counts and finite ranges; every case one line and exit 2, in bounded time.

The cases are the tracebacks and hangs the issue found (each named after it), run through the
CLI in-process with a time bound (:func:`tests.helpers.run_cli`).
"""

from __future__ import annotations

import os

import pytest

from tests.helpers import run_cli

BASE = 'requests = 300\n[[streams]]\nname = "a"\nrate = 0.5\n'
MLP = 'requests = 300\n[model]\ngraph = "mlp"\nenvelope = { seq = [128] }\n'
MLP_STREAM = '[[streams]]\nname = "a"\nrate = 0.5\nshapes = { seq = { dist = "fixed", value = 100 } }\n'


def onoff(on: str, off: str) -> str:
    return ('requests = 300\n[[streams]]\nname = "a"\narrivals = { process = "onoff", rate_on = 2, rate_off = 1, '
            f'mean_on_s = {on}, mean_off_s = {off} }}\n')


def categorical(probs: str) -> str:
    return ('requests = 300\n[[streams]]\nname = "a"\nrate = 0.5\n'
            f'shapes = {{ seq = {{ dist = "categorical", values = [1, 2], probs = {probs} }} }}\n')


CASES = {  # name: (scenario text, what the one error line must say)
    "seed -1": ("seed = -1\n" + BASE, "seed = -1"),
    "requests 2**63": (BASE.replace("300", str(2**63 - 1)), "GiB of memory"),
    "requests 1e9": (BASE.replace("300", "1000000000"), "GiB of memory"),
    "rate 1e308": (BASE.replace("0.5", "1e308"), "streams[0].rate = 1e+308"),
    "rate 1e-308": (BASE.replace("0.5", "1e-308"), "streams[0].rate = 1e-308"),
    "rate -1 names the key once": (BASE.replace("0.5", "-1"), "streams[0].rate = -1.0: must be"),
    "base_s 1e308": (BASE + "[service]\nbase_s = 1e308\n", "service.base_s"),
    "per_item_s 1e308": (BASE + "[service]\nper_item_s = 1e308\n", "service.per_item_s"),
    "cv 1e308": (BASE + '[service]\nlaw = "lognormal"\ncv = 1e308\n', "service.cv"),
    "cores 10**6 (hang)": (BASE + "[hardware]\ncores = 1000000\n", "hardware.cores"),
    "cores 10**18": (BASE + "[hardware]\ncores = 1000000000000000000\n", "hardware.cores"),
    "launch_s inf (hang)": (BASE + "[hardware]\nlaunch_s = inf\n", "hardware.launch_s = inf"),
    "launch_s 1e308 (hang)": (BASE + "[hardware]\nlaunch_s = 1e308\n", "hardware.launch_s"),
    "bandwidth 1e-300 (hang)": (BASE + "[hardware]\nhbm_bandwidth_bytes_per_s = 1e-300\n", "hbm_bandwidth"),
    "peak flops 1e-308": (BASE + "[hardware]\npeak_flops_per_core = 1e-308\n", "peak_flops_per_core"),
    "host link 1e-300 (hang)": (BASE + "[hardware]\nhost_link_bytes_per_s = 1e-300\n", "host_link_bytes_per_s"),
    "host link nan": (BASE + "[hardware]\nhost_link_bytes_per_s = nan\n", "hardware.host_link_bytes_per_s"),
    "host link a string": (BASE + '[hardware]\nhost_link_bytes_per_s = "pcie5"\n', "hardware.host_link_bytes_per_s"),
    "max_batch 10**18 (hang)": (BASE + '[batching]\npolicy = "dynamic"\nmax_batch = 1000000000000000000\n',
                                "batching.max_batch"),
    "max_batch 10**6 with a plan (hang)": (MLP + '[batching]\npolicy = "dynamic"\nmax_batch = 1000000\n'
                                           + MLP_STREAM, "batching.max_batch"),
    "service_scale 1e308 (hang)": ('requests = 300\n[[models]]\nname = "m"\nservice_scale = 1e308\n'
                                   '[[streams]]\nname = "a"\nrate = 0.5\nmodel = "m"\n', "service_scale"),
    "on/off means 1e308": (onoff("1e308", "1e308"), "mean_on_s"),
    "on/off means 1e-300 (hang)": (onoff("1e-300", "1e-300"), "mean_on_s"),
    "on/off cycle without arrivals (hang)": (onoff("1e-6", "1e-6"), "at least 0.01 arrivals"),
    "probs [-5, 1]": (categorical("[-5, 1]"), "probs = -5.0"),
    "probs [nan, 1]": (categorical("[nan, 1]"), "probs = nan"),
    "probs [inf, 1]": (categorical("[inf, 1]"), "probs = inf"),
    "dist empty names dist": ('requests = 300\n[[streams]]\nname = "a"\nrate = 0.5\n'
                              'shapes = { seq = { dist = "", median = 3 } }\n', "seq.dist = ''"),
    "process unknown names process": ('requests = 300\n[[streams]]\nname = "a"\n'
                                      'arrivals = { process = "zipf", rate = 3 }\n', "arrivals.process = 'zipf'"),
    "shape median 1e18": (MLP + '[[streams]]\nname = "a"\nrate = 0.5\n'
                          'shapes = { seq = { dist = "lognormal", median = 1e18 } }\n', "seq.median = 1e+18"),
    "generic_slowdown inf": (MLP.replace("[model]\n", "[model]\ngeneric_slowdown = inf\n") + MLP_STREAM,
                             "model.generic_slowdown"),
    "granule 10**18": (MLP.replace("[model]\n", "[model]\ngranule = 1000000000000000000\n") + MLP_STREAM,
                       "model.granule"),
    "params 10**9": (MLP.replace("[model]\n", "[model]\nparams = { d_model = 1000000000 }\n") + MLP_STREAM,
                     "params.d_model"),
    "envelope of 10**6 buckets": (MLP.replace("[128]", "[" + ", ".join(str(i) for i in range(1, 1001)) + "]")
                                  + MLP_STREAM, "at most 32"),
    "expected_shares named with the file": (MLP.replace("[model]\n", "[model]\nexpected_shares = [1, 2]\n")
                                            + MLP_STREAM, "s.toml: model.expected_shares"),
    "10**3 streams": ("requests = 300\n" + "".join(f'[[streams]]\nname = "s{i}"\nrate = 1\n' for i in range(1000)),
                      "streams = '<1,000 items>'"),
    "many shape dims (memory)": ("requests = 300\n" + "".join(
        f'[[streams]]\nname = "s{i}"\nrate = 1\nshapes = {{ d{i} = {{ dist = "fixed", value = 1 }} }}\n'
        for i in range(9)), "at most 8 distinct dims"),
    "100,000-character value cut": ('seed = "' + "x" * 100_000 + '"\n' + BASE, "xxx...xxx"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_each_hostile_scenario_is_one_clear_line(tmp_path, name):
    text, expected = CASES[name]
    path = tmp_path / "s.toml"
    path.write_text(text)
    status, out, err = run_cli(["run", str(path), "--json"], seconds=30)
    assert status == 2, (status, err)
    assert err.count("\n") == 1 and len(err) < 400 and expected in err, err
    assert out == ""


TRACES = {  # file content: what the error says (None: it runs)
    "0\n0\n": "span more than 0",
    "0\n1e-320\n": "mean rate",
    "0\ninf\n": "finite",
    "0\nnan\n1\n": "finite",
    "1\n0\n": "sorted",
    "0\n0\n0\n1\n1\n2\n": None,  # equal timestamps run
}


@pytest.mark.parametrize("content", list(TRACES))
def test_trace_timestamps_are_finite_sorted_and_equal_ones_run(tmp_path, content):
    (tmp_path / "ts.txt").write_text(content)
    (tmp_path / "s.toml").write_text('requests = 300\n[[streams]]\nname = "a"\n'
                                     'arrivals = { process = "trace", file = "ts.txt" }\n')
    status, out, err = run_cli(["run", str(tmp_path / "s.toml"), "--json"], seconds=30)
    if TRACES[content] is None:
        assert status == 0 and '"completed": 300' in out
    else:
        assert status == 2 and err.count("\n") == 1 and TRACES[content] in err, err


@pytest.mark.parametrize("kind", ["fifo", "device", "folder", "too big"])
def test_files_read_are_regular_and_capped(tmp_path, kind):
    target = {"fifo": tmp_path / "f", "device": "/dev/zero", "folder": tmp_path / "d", "too big": tmp_path / "b"}[kind]
    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "folder":
        target.mkdir()
    elif kind == "too big":
        with open(target, "wb") as f:
            f.truncate(64 * 1024**2 + 1)
    (tmp_path / "s.toml").write_text('requests = 300\n[[streams]]\nname = "a"\n'
                                     f'arrivals = {{ process = "trace", file = "{target}" }}\n')
    (tmp_path / "p.toml").write_text(MLP.replace("[model]\n", f'[model]\nprofile = "{target}"\n') + MLP_STREAM)
    big_scenario = tmp_path / "big.toml"
    big_scenario.write_text("# " + "x" * (1024**2) + "\n" + BASE)
    for scenario in ("s.toml", "p.toml"):
        status, _, err = run_cli(["run", str(tmp_path / scenario)], seconds=30)
        reason = "larger than" if kind == "too big" else "not a regular file"
        assert status == 2 and err.count("\n") == 1 and reason in err, err
    for scenario in (str(target), str(big_scenario)):
        if kind != "too big":
            status, _, err = run_cli(["run", scenario], seconds=30)
            assert status == 2 and err.count("\n") == 1, err
    assert run_cli(["run", str(big_scenario)], seconds=30)[0] == 2


def test_a_drill_file_is_capped_and_its_missing_scenario_is_one_line(tmp_path):
    from pathlib import Path

    src = Path(__file__).resolve().parents[1] / "drills" / "fusion-memory-bursts.toml"
    text = src.read_text().replace('name = "fusion_memory_bursts"', 'name = "gone.toml"', 1)
    assert 'name = "gone.toml"' in text
    (tmp_path / "fusion-memory-bursts.toml").write_text(text)
    status, _, err = run_cli(["practice", "--drills-dir", str(tmp_path), "--db", str(tmp_path / "p.db")],
                             seconds=60)
    assert status == 2 and err.count("\n") == 1 and "gone.toml" in err, err
    wrong = src.read_text().replace('"model.fusion" = "elementwise"', '"modle.fusion" = "elementwise"', 1)
    (tmp_path / "fusion-memory-bursts.toml").write_text(wrong)
    status, _, err = run_cli(["practice", "--drills-dir", str(tmp_path), "--db", str(tmp_path / "p.db")])
    assert status == 2 and "[scenario]: drill override modle.fusion" in err and "--set" not in err, err
    (tmp_path / "fusion-memory-bursts.toml").write_text("# " + "x" * (1024**2) + "\n" + text)
    status, _, err = run_cli(["grade", "--drill", "fusion-memory-bursts", "--drills-dir", str(tmp_path)])
    assert status == 2 and "larger than" in err, err

"""Hostile input: writes only where asked, strict JSON, errors that survive a worker, bounded reads."""

from __future__ import annotations

import json
import os
import pickle
import stat

import pytest

from workbench.cli import main
from workbench.cli_io import strict_json
from workbench.errors import ConfigError


def test_trace_refuses_a_symlink_or_a_device_and_keeps_a_files_mode(tmp_path, capsys):
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    link = tmp_path / "t.json"
    link.symlink_to(victim)
    assert main(["run", "mm1", "--requests", "200", "--trace", str(link)]) == 2
    assert victim.read_text() == "keep me" and link.is_symlink()
    assert "symbolic link" in capsys.readouterr().err
    assert main(["run", "mm1", "--requests", "200", "--trace", str(tmp_path)]) == 2  # a folder
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert main(["run", "mm1", "--requests", "200", "--trace", str(fifo)]) == 2
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    plain = tmp_path / "plain.json"
    plain.write_text("{}")
    plain.chmod(0o644)
    assert main(["run", "mm1", "--requests", "200", "--trace", str(plain)]) == 0
    assert stat.S_IMODE(plain.stat().st_mode) == 0o644 and json.loads(plain.read_text())["traceEvents"]


def test_report_never_writes_through_a_link_in_its_folder(tmp_path, capsys):
    victim = tmp_path / "victim.md"
    victim.write_text("keep me")
    out = tmp_path / "rep"
    out.mkdir()
    (out / "report.md").symlink_to(victim)
    assert main(["report", "mm1", "--requests", "2000", "--out", str(out)]) == 2
    assert victim.read_text() == "keep me"
    assert "symbolic link" in capsys.readouterr().err


def test_report_folder_from_a_hostile_name_stays_here(tmp_path, monkeypatch):
    sc = tmp_path / "s.toml"
    sc.write_text('name = "/../../../../x/y"\nrequests = 500\n[[streams]]\nname = "a"\nrate = 0.5\n')
    monkeypatch.chdir(tmp_path)
    assert main(["report", str(sc)]) == 0
    made = [p for p in tmp_path.iterdir() if p.is_dir()]
    assert [p.name for p in made] == ["report-x_y"]


def test_json_is_strict_when_statistics_are_undefined(tmp_path, capsys):
    sc = tmp_path / "s.toml"
    sc.write_text('requests = 100\n[[streams]]\nname = "a"\nrate = 1.0\n[[streams]]\nname = "b"\nrate = 1e-6\n')
    assert main(["run", str(sc), "--json"]) == 0
    out = capsys.readouterr().out
    json.loads(out, parse_constant=lambda c: pytest.fail(f"non-strict JSON constant {c}"))
    assert strict_json({"a": [float("nan"), float("inf"), 1.0]}) == {"a": [None, None, 1.0]}


def test_config_error_survives_pickling():
    e = pickle.loads(pickle.dumps(ConfigError("rate", -1, "must be > 0", "f.toml")))
    assert (e.key, e.value, e.why, e.source) == ("rate", -1, "must be > 0", "f.toml")
    assert str(e) == "f.toml: rate = -1: must be > 0"


def test_answer_file_reads_are_bounded(tmp_path, capsys):
    assert main(["grade", "--drill", "fusion-memory-bursts", "--answer-file", "/dev/zero"]) == 2
    big = tmp_path / "a.txt"
    big.write_bytes(b"x" * 200_000)
    assert main(["grade", "--drill", "fusion-memory-bursts", "--answer-file", str(big)]) == 2
    assert "at most 20,000 characters" in capsys.readouterr().err


def test_a_new_output_file_gets_the_usual_mode_not_the_temp_files(tmp_path):
    out = tmp_path / "t.json"
    old = os.umask(0o022)
    try:
        assert main(["run", "mm1", "--requests", "200", "--trace", str(out)]) == 0
    finally:
        os.umask(old)
    assert stat.S_IMODE(out.stat().st_mode) == 0o644

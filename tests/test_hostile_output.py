"""Hostile output (round 3): closed pipes, full disks, report targets, empty paths, executors, token mode.

A closed pipe ends a command quietly (exit 0, as ``head`` expects); a full disk is one line and
exit 2. ``report`` and ``sweep`` check every output before writing any. An empty path option is
refused. ``--executor`` takes tcp:// only, and a peer that is not a Dask scheduler (silent, HTTP,
closed) is refused within the timeout, on local sockets only. ``report``/``sweep`` refuse a
token-mode scenario, saying what they cover; names in report.md are escaped as in report.html.
"""

from __future__ import annotations

import errno
import os
import re
import socket
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import pytest
from helpers import run_cli, scenario

from workbench.cli import main
from workbench.errors import ConfigError
from workbench.feedback.sweep import dask_executor
from workbench.safe_io import OutputError

ANSWER = "Owner: the compiler team. Proof: the per-bucket hit rate. Roll back with a canary.\n"


def _cli(argv: list[str], stdout, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "workbench.cli", *argv], stdout=stdout, stderr=subprocess.PIPE,
                          text=True, timeout=60, env={**os.environ, **(env or {})})


@pytest.fixture
def commands(tmp_path):
    answer = tmp_path / "a.txt"
    answer.write_text(ANSWER)
    return {"list": ["list"], "run": ["run", "mm1", "--json"], "progress": ["progress"],
            "grade": ["grade", "--drill", "fusion-memory-bursts", "--answer-file", str(answer)]}


@pytest.mark.parametrize("name", ["list", "run", "progress", "grade"])
def test_a_closed_pipe_ends_quietly_with_status_0(tmp_path, commands, name):
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first byte, as `| head -1` is after its line
    try:
        r = _cli(commands[name], write, {"WORKBENCH_DB": str(tmp_path / "p.sqlite3")})
    finally:
        os.close(write)
    assert (r.returncode, r.stderr) == (0, "")


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("name", ["list", "run", "grade"])
def test_a_full_stdout_is_one_line_and_status_2(commands, name):
    with open("/dev/full", "w") as full:
        r = _cli(commands[name], full)
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert r.stderr.startswith("workbench: error: stdout") and "No space left on device" in r.stderr


class _Failing:
    """A stdout whose writes fail with ``err``."""

    def __init__(self, err: int):
        self.err = err

    def write(self, text: str) -> int:
        raise OSError(self.err, os.strerror(self.err)) if self.err != errno.EPIPE else BrokenPipeError(self.err, "")

    def flush(self) -> None:
        pass


def test_stdout_failures_in_process(monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdout", _Failing(errno.EPIPE))
    assert main(["list"]) == 0
    assert capsys.readouterr().err == ""
    monkeypatch.setattr(sys, "stdout", _Failing(errno.ENOSPC))
    assert main(["list"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "stdout" in err and "No space left" in err


def test_report_checks_every_target_before_writing_any(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    out = tmp_path / "rep"
    out.mkdir()
    (out / "report.html").symlink_to(victim)
    status, _, err = run_cli(["report", "mm1", "--requests", "300", "--out", str(out)])
    assert status == 2 and err.count("\n") == 1 and "symbolic link" in err, err
    assert [p.name for p in out.iterdir()] == ["report.html"] and victim.read_text() == "keep me"


def test_write_report_writes_nothing_when_one_target_is_refused(tmp_path):
    from workbench.feedback.guard import closed_loop
    from workbench.feedback.report import build_report, write_report

    loop = closed_loop(scenario(requests=300))
    out = tmp_path / "rep"
    out.mkdir()
    (out / "report.md").mkdir()  # a folder where a file goes
    with pytest.raises(OutputError, match="not a regular file"):
        write_report(loop, build_report(loop, "test"), out)
    assert [p.name for p in out.iterdir()] == ["report.md"]


def test_sweep_checks_both_targets_first_and_errors_in_one_line(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    out = tmp_path / "sw"
    out.mkdir()
    (out / "sweep.png").symlink_to(victim)
    status, _, err = run_cli(["sweep", "mm1", "--set", "hardware.cores=1", "--requests", "200", "--workers", "1",
                              "--out", str(out)])
    assert status == 2 and err.count("\n") == 1 and "symbolic link" in err, err
    assert [p.name for p in out.iterdir()] == ["sweep.png"] and victim.read_text() == "keep me"
    r = _cli(["sweep", "mm1", "--set", "hardware.cores=2,0", "--requests", "200", "--workers", "1", "--out",
              str(tmp_path / "sw2")], subprocess.PIPE)  # the process's own stderr, as a user's pipe sees it
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "hardware.cores = 0" in r.stderr, r.stderr
    assert r.stderr.startswith("workbench: error: ")  # no progress bar first: it is drawn on a terminal only


@pytest.mark.parametrize("argv", [
    ["run", "mm1", "--trace", ""], ["report", "mm1", "--out", ""], ["sweep", "mm1", "--set", "hardware.cores=1",
                                                                     "--out", ""],
    ["progress", "--db", ""], ["practice", "--db", ""], ["interview", "--db", ""],
    ["grade", "--drill", "fusion-memory-bursts", "--answer-file", ""], ["list", "--drills", "--drills-dir", ""],
    ["practice", "--figures", ""]], ids=lambda a: " ".join(a))
def test_an_empty_path_option_is_refused(tmp_path, monkeypatch, argv):
    monkeypatch.chdir(tmp_path)
    status, out, err = run_cli(argv)
    option = next(a for a in argv if a.startswith("--") and argv[argv.index(a) + 1] == "")
    assert status == 2 and out == "" and err.count("\n") == 1 and f"{option} ''" in err, err
    assert not any(p.name != "progress.sqlite3" for p in tmp_path.iterdir())


@pytest.mark.parametrize("address", ["tls://127.0.0.1:8786", "ucx://127.0.0.1:8786", "inproc://x/1",
                                     "tcp://127.0.0.1:99999", "tcp://127.0.0.1:x", "tcp://:8786"])
def test_only_tcp_scheduler_addresses_are_taken(tmp_path, address):
    status, out, err = run_cli(["sweep", "mm1", "--set", "hardware.cores=1", "--requests", "200",
                                "--executor", address, "--out", str(tmp_path / "sw")])
    assert status == 2 and out == "" and err.count("\n") == 1 and "--executor" in err and "tcp://" in err, err
    with pytest.raises(ConfigError, match="tcp://"):
        dask_executor(address)


@contextmanager
def _peer(behaviour):
    """A local TCP server on 127.0.0.1 that treats each connection with ``behaviour(conn)``."""
    server = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def serve():
        server.settimeout(0.1)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            with conn:
                behaviour(conn, stop)

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    try:
        yield f"tcp://127.0.0.1:{server.getsockname()[1]}"
    finally:
        stop.set()
        t.join(5)
        server.close()


def _silent(conn, stop):
    stop.wait(10)  # accepts and never answers


def _http(conn, stop):
    conn.settimeout(5)
    try:
        conn.recv(4096)  # an HTTP server answers a request
        conn.sendall(b"HTTP/1.0 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
    except OSError:
        pass


def _banner(conn, stop):
    conn.sendall(b"HTTP/1.0 200 OK\r\nServer: not-dask\r\n\r\nhello")  # speaks first, not Dask


@pytest.mark.parametrize("behaviour, why", [(_silent, "did not answer"), (_http, "did not answer"),
                                            (_banner, "not a Dask scheduler")])
def test_a_peer_that_is_not_a_dask_scheduler_is_refused_in_time(behaviour, why):
    pytest.importorskip("distributed", reason="the optional Dask extra: pip install '.[cluster]'")
    with _peer(behaviour) as address:
        start = time.monotonic()
        with pytest.raises(ConfigError, match=why) as e:
            dask_executor(address, timeout_s=0.5)
        assert time.monotonic() - start < 2.0
    assert "\n" not in str(e.value)


def test_a_closed_port_is_refused_at_once():
    pytest.importorskip("distributed", reason="the optional Dask extra: pip install '.[cluster]'")
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    start = time.monotonic()
    with pytest.raises(ConfigError, match="no Dask scheduler answered"):
        dask_executor(f"tcp://127.0.0.1:{port}", timeout_s=5.0)
    assert time.monotonic() - start < 2.0


def test_report_and_sweep_refuse_a_token_mode_scenario_saying_what_they_cover(tmp_path):
    from workbench.feedback.guard import closed_loop
    from workbench.scenario import load_scenario

    for argv in (["report", "llm_chunked_prefill", "--out", str(tmp_path / "r")],
                 ["report", "llm_chunked_prefill", "--json"],
                 ["sweep", "llm_chunked_prefill", "--set", "serving.kv.blocks=1000", "--workers", "1",
                  "--out", str(tmp_path / "s")]):
        status, out, err = run_cli(argv)
        assert status == 2 and out == "" and err.count("\n") == 1, err
        assert "token-mode" in err and "request-level" in err and "workbench run" in err, err
    assert not any(tmp_path.iterdir())
    with pytest.raises(ConfigError, match="token-mode"):
        closed_loop(load_scenario("llm_chunked_prefill"))


HOSTILE_NAME = "evil <img src=x onerror=alert(1)> [click](javascript:alert(1)) | **bold** `code`"
HOSTILE_TEXT = ("first line\n# Injected heading\n<script>alert(1)</script>\n- [x](http://evil.example)\n> quoted\n"
                "1. ordered")


def test_names_in_report_md_are_escaped_as_in_report_html(tmp_path):
    def toml(text: str) -> str:
        return "".join(c if c.isprintable() and c not in '"\\' else f"\\u{ord(c):04x}" for c in text)

    sc = tmp_path / "s.toml"
    sc.write_text(f'name = "{toml(HOSTILE_NAME)}"\ndescription = "{toml(HOSTILE_TEXT)}"\nrequests = 300\n'
                  '[[streams]]\nname = "s"\nrate = 0.5\n')
    status, _, err = run_cli(["report", str(sc), "--out", str(tmp_path / "r")])
    assert status == 0, err
    md = (tmp_path / "r" / "report.md").read_text()
    for raw in ("<img", "<script", "\n# Injected", "\n- [x]", "\n> quoted", "**bold**", " `code`"):
        assert raw not in md, raw
    assert re.findall(r"(?<!\\)\]\(", md) == ["]("] * 2  # the figures' links only: the name's brackets escaped
    assert "click" in md and "Injected heading" in md and "![latency_survival.png](latency_survival.png)" in md
    mistune = pytest.importorskip("mistune")
    rendered = mistune.html(md).split("<h2>Reproduce")[0]  # the command is shown in a code block
    for raw in ('<img src="x"', "<script", 'href="javascript', 'href="http://evil', "<strong>", "<code>", "<ol>"):
        assert raw not in rendered, raw
    assert rendered.count("<h1>") == 1 and rendered.count("<blockquote>") == 1  # the no-model note only
    assert Path(tmp_path / "r" / "report.html").read_text().count("<img ") == 2  # the two figures only

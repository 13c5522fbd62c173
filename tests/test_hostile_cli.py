"""Hostile input at the command line: sweeps, practice sessions and what reaches the terminal."""

from __future__ import annotations

import io

import pytest

from tests.helpers import run_cli
from workbench.terminal import printable


def test_a_bad_grid_point_in_a_worker_is_one_clear_line(tmp_path):
    status, _, err = run_cli(["sweep", "mm1", "--set", "hardware.cores=2,0", "--requests", "300",
                              "--out", str(tmp_path / "sw")], seconds=120)
    assert status == 2 and "hardware.cores = 0" in err and "Traceback" not in err, err
    assert err.strip().splitlines()[-1].startswith("workbench: error:")


def test_sweep_seeds_must_be_integers(tmp_path):
    status, _, err = run_cli(["sweep", "mm1", "--set", "hardware.cores=2", "--seeds", "a",
                              "--out", str(tmp_path / "sw")])
    assert status == 2 and err.count("\n") == 1 and "--seeds" in err, err
    status, _, err = run_cli(["sweep", "mm1", "--set", "hardware.cores=2", "--seeds", "1,-1",
                              "--out", str(tmp_path / "sw")])
    assert status == 2 and "--seeds" in err and not (tmp_path / "sw").exists(), err
    status, _, err = run_cli(["sweep", "mm1", "--set", "seed.x=2", "--out", str(tmp_path / "sw")])
    assert status == 2 and err.count("\n") == 1 and "no such table" in err, err


@pytest.mark.parametrize("argv", [["--drills", "-1"], ["--drills", "0"], ["--minutes", "nan"]])
def test_practice_refuses_nonsense_counts(tmp_path, argv):
    status, _, err = run_cli(["practice", "--db", str(tmp_path / "p.db"), *argv])
    assert status == 2 and "must be in" in err
    assert not (tmp_path / "p.db").exists()


def test_practice_writes_figures_only_when_asked(tmp_path, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO("no idea\n.\n"))
    status, out, _ = run_cli(["practice", "--db", str(tmp_path / "p.db")], seconds=300)
    assert status == 0 and "attempt #1 saved" in out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.db", "p.db-shm", "p.db-wal"] or \
        not (tmp_path / "figures").exists()
    monkeypatch.setattr("sys.stdin", io.StringIO("no idea\n.\n"))
    status, out, _ = run_cli(["practice", "--db", str(tmp_path / "p.db"), "--figures", str(tmp_path / "f")],
                             seconds=300)
    assert status == 0 and len(list((tmp_path / "f").glob("*.png"))) == 1
    assert not (tmp_path / "figures").exists()


ESCAPES = "\x1b]0;pwned\x07\x1b[2J\x9b31m\x00\u202e"


def _clean(text: str) -> bool:
    return not any(c in text for c in "\x1b\x07\x9b\x00\u202e")


def _esc(text: str) -> str:
    """A TOML basic-string body for ``text`` (control characters as \\u escapes)."""
    return "".join(c if c.isprintable() and c not in '"\\' else f"\\u{ord(c):04x}" for c in text)


def test_control_characters_from_input_are_escaped_when_printed(tmp_path):
    assert printable("a\x1b[31mb\n\tc") == "a\\x1b[31mb\n\tc"
    assert printable("a\nb", one_line=True) == "a\\x0ab"
    e = _esc(ESCAPES)
    sc = tmp_path / "s.toml"
    sc.write_text(f'name = "n{e}"\ndescription = "d{e}"\nrequests = 300\n[[streams]]\nname = "s{e}"\nrate = 0.5\n')
    status, out, _ = run_cli(["run", str(sc)])
    assert status == 0 and _clean(out) and out.count("\\x1b") >= 6, out
    bad = tmp_path / "b.toml"
    bad.write_text(f'"k{e}" = 1\n' + sc.read_text())
    status, _, err = run_cli(["run", str(bad)])
    assert status == 2 and _clean(err) and err.count("\n") == 1, err
    answer = tmp_path / "a.txt"
    answer.write_text("Owner: the compiler team " + ESCAPES.replace("\x00", "") + " rolls back with a canary.\n")
    status, out, _ = run_cli(["grade", "--drill", "fusion-memory-bursts", "--answer-file", str(answer)])
    assert status == 0 and _clean(out)


def test_sweep_outputs_never_go_through_a_link(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    out = tmp_path / "sw"
    out.mkdir()
    (out / "sweep.csv").symlink_to(victim)
    status, _, err = run_cli(["sweep", "mm1", "--set", "hardware.cores=1", "--requests", "200", "--workers", "1",
                              "--out", str(out)], seconds=120)
    assert status == 2 and "symbolic link" in err and victim.read_text() == "keep me", err

"""A ``run`` command line parsed by the ``run`` parser alone gives what the full parser gives: namespace or message."""

from __future__ import annotations

import pytest

from workbench.cli import build_parser, parse_args

GOOD = [["run", "mm1"], ["run", "mm1", "--json", "--seed", "3", "--requests", "10"], ["run", "x.toml", "--j"],
        ["run", "x.toml", "--trace", "out.json", "--req", "5"], ["run", "--json", "mm1"]]
BAD = [["run"], ["run", "--help"], ["run", "mm1", "-h"], ["run", "mm1", "--he"], ["run", "x.toml", "--bogus"],
       ["run", "x.toml", "--requests", "abc"], ["run", "a", "b"], ["run", "x", "--seed"]]


@pytest.mark.parametrize("argv", GOOD)
def test_run_lines_parse_to_the_full_parsers_namespace(argv: list[str]) -> None:
    assert vars(parse_args(argv)) == vars(build_parser().parse_args(argv))


@pytest.mark.parametrize("argv", BAD)
def test_run_lines_that_print_print_the_full_parsers_words(argv: list[str], capsys) -> None:
    with pytest.raises(SystemExit) as got:
        parse_args(argv)
    mine = capsys.readouterr()
    with pytest.raises(SystemExit) as want:
        build_parser().parse_args(argv)
    full = capsys.readouterr()
    assert got.value.code == want.value.code and mine == full

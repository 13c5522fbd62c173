"""Fixtures shared by the tests (plain helpers live in helpers.py)."""

from __future__ import annotations

import os

import pytest
from hypothesis import settings

# Property tests draw the same examples on every run of `make test` (the project's rule: same seed, same
# result), so a failure in CI is a failure anyone can rerun; `make fuzz` draws new ones
# (WORKBENCH_HYPOTHESIS=explore) to look for what the fixed draw misses.
settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
settings.register_profile("explore", derandomize=False, print_blob=True)
settings.load_profile(os.environ.get("WORKBENCH_HYPOTHESIS", "ci"))


@pytest.fixture
def tmp_toml(tmp_path):
    """Write a TOML text to a file and return its path."""
    def write(text: str, name: str = "s.toml"):
        p = tmp_path / name
        p.write_text(text)
        return p
    return write


@pytest.fixture(autouse=True)
def _private_progress_store(tmp_path, monkeypatch):
    """No test writes into the user's own progress database: the default store is a temporary file."""
    monkeypatch.setenv("WORKBENCH_DB", str(tmp_path / "progress.sqlite3"))

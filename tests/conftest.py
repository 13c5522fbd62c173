"""Fixtures shared by the tests (plain helpers live in helpers.py)."""

from __future__ import annotations

import pytest


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

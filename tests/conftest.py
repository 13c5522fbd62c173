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

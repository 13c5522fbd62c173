"""The compiled loop's cost-book tables for a run without a compiled plan, built without importing the compiler.

The loop is one compiled function: a run costed in Python still hands it a cost book's tables,
empty. :func:`workbench.compiler.cost_book.no_book` builds them from the cost model's own
definitions, and importing those (the cost model, fusion, the graph IR: ~10 ms) is most of
what a plain M/M/c run would import of the compiler. This is the same tuple, written out;
``tests/test_no_book.py`` checks it equal to ``no_book``, array for array (dtype, shape,
values), so the two cannot drift apart unnoticed.
"""

from __future__ import annotations

import numpy as np

_TILE_CANDIDATES = (16, 32, 64, 128, 256, 512, 1024, 2048, 4096)  # compiler.cost.TILE_CANDIDATES


def no_book_tables(keyval: np.ndarray) -> tuple:
    """``cost_book.no_book(keyval)``: empty mapping tables (a ``Flat`` of nothing), then the book's other tables."""
    i8 = np.int64
    flat = (np.zeros((0, 11), i8), np.zeros(0, i8), np.zeros((0, 10), i8), np.zeros((0, 4), i8), np.zeros(0, i8),
            np.zeros(0, i8), np.zeros(1, i8), np.zeros((0, 2)))  # ti, tout, ki, ops, ops_in1, live, live_at, fit
    return (*flat, np.zeros((0, 2), i8), np.zeros((0, 4), i8), np.zeros(0), np.zeros(0, i8),
            np.zeros(0), keyval.astype(i8), np.zeros(3), np.zeros(3, i8), np.array(_TILE_CANDIDATES, dtype=i8),
            np.zeros((2, 4), i8), np.zeros((6, 1)), np.zeros((2, 1, 4)))

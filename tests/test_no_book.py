"""runtime/no_book.no_book_tables equals compiler.cost_book.no_book, array for array."""

from __future__ import annotations

import numpy as np

from workbench.compiler.cost_book import no_book
from workbench.runtime.no_book import no_book_tables


def test_no_book_tables_equal_the_cost_books_own():
    for keyval in (np.zeros(1, np.int64), np.array([3, 17, 512], np.int64), np.array([5], np.int32)):
        got, want = no_book_tables(keyval), no_book(keyval)
        assert type(got) is type(want) and len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            assert g.dtype == w.dtype and g.shape == w.shape and g.tobytes() == w.tobytes()
            assert g.flags.c_contiguous == w.flags.c_contiguous and g.flags.writeable == w.flags.writeable

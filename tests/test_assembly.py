"""The lean assembly helpers against the plain numpy they replace."""

import numpy as np
import pytest

from workbench.runtime.assembly import dense_floats, narrow, rejections, table_column
from workbench.unique import distinct, distinct_values


@pytest.mark.parametrize("top", [1, 50, 10_000, 2**40])
def test_distinct_equals_np_unique(top):
    rng = np.random.default_rng(top)
    for n in (0, 1, 7, 5_000):
        codes = rng.integers(0, top, n, dtype=np.int64)
        values, inverse = distinct(codes)
        want_v, want_i = np.unique(codes, return_inverse=True)
        assert values.tolist() == want_v.tolist()
        assert inverse.tolist() == want_i.ravel().tolist()


def test_distinct_values_equal_np_unique():
    rng = np.random.default_rng(4)
    for dtype in (np.int16, np.int32, np.int64):
        cases = ((0, 5, 1000), (0, 1 << 20, 50), (-7, 7, 300), (3, 4, 1), (0, 1, 0), (-(1 << 14), 1 << 14, 999))
        for lo, hi, n in cases:
            x = rng.integers(lo, hi, n).astype(dtype)
            got, want = distinct_values(x), np.unique(x)
            assert got.dtype == want.dtype and got.tolist() == want.tolist()


def test_narrow_widens_when_a_value_does_not_fit():
    assert narrow([1, 2, 3], np.int16).dtype == np.int16
    assert narrow([1, 40_000], np.int16).dtype == np.int32
    assert narrow(np.array([1, 2**40]), np.int16).dtype == np.int64
    assert narrow([1, 40_000], np.int16).tolist() == [1, 40_000]


def test_zero_columns_and_sparse_inputs():
    assert dense_floats({2: 1.5}, 4).tolist() == [0.0, 0.0, 1.5, 0.0]
    assert dense_floats(np.zeros(6), 4).tolist() == [0.0] * 4
    assert dense_floats(np.array([0.0, 2.0, 0.0]), 2).tolist() == [0.0, 2.0]
    assert rejections(np.full(3, np.nan), 3) is None
    assert rejections({}, 3) is None
    assert np.isnan(rejections({1: 0.5}, 3)).tolist() == [True, False, True]
    assert table_column([0, 0], np.array([1, 0, 1]), np.int16).tolist() == [0, 0, 0]
    assert table_column([3, 5], np.array([1, 0, 1]), np.int16).tolist() == [5, 3, 5]


def test_release_free_memory_is_safe_and_only_for_large_runs():
    from workbench.runtime.allocator import LARGE_RUN, release_free_memory

    assert release_free_memory(10) is False
    release_free_memory(LARGE_RUN)  # True with glibc, False elsewhere: either way nothing else changes


def test_keep_freed_blocks_changes_no_result():
    """The allocator's thresholds, set in a fresh process (a setting of the whole process), change no figure."""
    import json
    import platform
    import subprocess
    import sys

    code = ("import dataclasses, json, sys\n"
            "from workbench.runtime.allocator import keep_freed_blocks\n"
            "from workbench.analysis.metrics import summarize\n"
            "from workbench.pipeline import run_scenario\n"
            "from workbench.scenario import load_scenario\n"
            "ok = keep_freed_blocks() if sys.argv[1] == 'keep' else None\n"
            "sc = dataclasses.replace(load_scenario('priority_two_streams'), requests=30_000)\n"
            "print(json.dumps([ok, summarize(run_scenario(sc))]))\n")
    runs = [json.loads(subprocess.run([sys.executable, "-c", code, how], capture_output=True, text=True,
                                      check=True).stdout) for how in ("keep", "default")]
    if platform.libc_ver()[0] == "glibc":
        assert runs[0][0] is True
    assert json.dumps(runs[0][1]) == json.dumps(runs[1][1])

"""Sweeps beyond one machine: ``workbench sweep --executor`` on a Dask distributed cluster.

A sweep run on a ``dask.distributed.LocalCluster`` must give the local executor's rows,
seed for seed and field for field; a worker's configuration error arrives as one clean
line; a bad ``--executor`` value is refused with one line and exit status 2. The Dask
tests skip, saying so, where the optional ``cluster`` extra is not installed.
"""

from __future__ import annotations

import pytest
from helpers import run_cli

from workbench.errors import ConfigError
from workbench.feedback.sweep import dask_executor, sweep

GRID = {"hardware.cores": [1, 2], "streams.0.rate": [0.5, 0.7]}
SEEDS = [1, 2]


@pytest.fixture(scope="module")
def cluster():
    """Two Dask worker processes: every point and every error crosses a process boundary, pickled."""
    distributed = pytest.importorskip("distributed", reason="the optional Dask extra: pip install '.[cluster]'")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=40) as lc:
        yield lc.scheduler_address


def test_dask_sweep_equals_local_seed_for_seed(cluster):
    local = sweep("mm1", GRID, SEEDS, requests=2000, progress=None)  # the default: local processes
    seen: list[tuple[int, int]] = []
    pool = dask_executor(cluster)
    try:
        remote = sweep("mm1", GRID, SEEDS, requests=2000, executor=pool,
                       progress=lambda done, total: seen.append((done, total)))
    finally:
        pool.shutdown()
    assert len(remote) == len(local) == 8
    assert remote == local  # the same rows, in grid order, bit for bit
    assert [(r["hardware.cores"], r["streams.0.rate"], r["seed"]) for r in remote][:2] == [(1, 0.5, 1), (1, 0.5, 2)]
    assert seen == [(i, 8) for i in range(1, 9)]  # the progress bar moved as each point finished


def test_dask_worker_error_is_one_clean_line(cluster):
    pool = dask_executor(cluster)
    try:
        with pytest.raises(ConfigError, match="hardware.cores") as e:
            sweep("mm1", {"hardware.cores": [1, 0]}, [1], requests=500, executor=pool, progress=None)
    finally:
        pool.shutdown()
    assert "\n" not in str(e.value)


def test_cli_sweep_on_dask(cluster, tmp_path):
    status, out, err = run_cli(["sweep", "mm1", "--set", "hardware.cores=1,2", "--requests", "500",
                                "--executor", cluster, "--out", str(tmp_path / "sw")])
    assert status == 0, err
    assert "2 points" in out and (tmp_path / "sw" / "sweep.csv").is_file()
    status, _, err = run_cli(["sweep", "mm1", "--set", "hardware.cores=2,0", "--requests", "500",
                              "--executor", cluster, "--out", str(tmp_path / "sw2")])
    assert status == 2
    assert err.strip().splitlines()[-1].startswith("workbench: error: ") and "hardware.cores" in err


@pytest.mark.parametrize("value", ["lokal", "host:8786", "tcp://", "http://host:8786", "tcp://a b"])
def test_bad_executor_is_one_line_exit_2(value, tmp_path):
    status, out, err = run_cli(["sweep", "mm1", "--set", "hardware.cores=1", "--requests", "200",
                                "--executor", value, "--out", str(tmp_path / "sw")])
    assert status == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "--executor" in lines[0] and "tcp://host:8786" in lines[0]


def test_unreachable_scheduler_is_one_line_exit_2(tmp_path):
    dask = pytest.importorskip("dask", reason="the optional Dask extra: pip install '.[cluster]'")
    pytest.importorskip("distributed", reason="the optional Dask extra: pip install '.[cluster]'")
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):
        status, _, err = run_cli(["sweep", "mm1", "--set", "hardware.cores=1", "--requests", "200",
                                  "--executor", f"tcp://127.0.0.1:{port}", "--out", str(tmp_path / "sw")])
    assert status == 2, err
    assert len(err.strip().splitlines()) == 1 and "no Dask scheduler answered" in err


def test_missing_dask_is_one_line_exit_2(monkeypatch, tmp_path):
    import sys

    monkeypatch.setitem(sys.modules, "distributed", None)  # as if the cluster extra were not installed
    status, out, err = run_cli(["sweep", "mm1", "--set", "hardware.cores=1", "--requests", "200",
                                "--executor", "tcp://127.0.0.1:8786", "--out", str(tmp_path / "sw")])
    assert status == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "pip install 'accel-mapping-workbench[cluster]'" in err

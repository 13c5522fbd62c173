"""Calibrating the roofline from a profile table of measured kernel times.

Profiling-based serving simulators predict operator time from measured profiles; here
a CSV of measurements (``op,dims,seconds``, one kernel per row) is fitted per op kind
as ``measured = a + b * roofline``: ``a`` absorbs launch and fixed costs the model
misses, ``b`` the achieved fraction of peak. Kernels whose master op has a fit are
rescaled by it; others keep the plain roofline. The fit's error is reported as the
mean absolute percentage error (MAPE) of the raw roofline and of the calibrated one.

``dims`` names the op's sizes, ``;``-separated: matmul ``m;k;n``; batch_matmul
``b;h;m;k;n``; softmax, layernorm ``rows;cols``; gelu, relu, add, mul, bias_add
``rows;cols``; conv2d ``b;hw;cin;cout;k``. For example ``matmul,m=4096;k=1024;n=4096,0.00091``.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from workbench.compiler.cost import best_cost
from workbench.compiler.fusion import fuse_ops
from workbench.errors import ConfigError
from workbench.graph import Builder, Graph, Op
from workbench.hardware import Hardware
from workbench.limits import MAX_SHAPE, PROFILE_MAX_BYTES, PROFILE_MAX_ROWS
from workbench.safe_io import read_capped

_DIMS = {
    Op.MATMUL: ("m", "k", "n"), Op.BATCH_MATMUL: ("b", "h", "m", "k", "n"), Op.CONV2D: ("b", "hw", "cin", "cout", "k"),
    Op.SOFTMAX: ("rows", "cols"), Op.LAYERNORM: ("rows", "cols"), Op.GELU: ("rows", "cols"),
    Op.RELU: ("rows", "cols"), Op.ADD: ("rows", "cols"), Op.MUL: ("rows", "cols"), Op.BIAS_ADD: ("rows", "cols"),
}


@dataclass(frozen=True)
class Calibration:
    """Per op kind: ``seconds = a + b * roofline``, and the fit's error."""

    fits: dict[Op, tuple[float, float]]  # op -> (a s, b)
    error: dict[str, dict[str, float]]  # op name -> {rows, mape_roofline, mape_calibrated}

    def adjust(self, op: Op, seconds: float) -> float:
        """A kernel's roofline time, corrected by its master op's fit (unchanged without one)."""
        a, b = self.fits.get(op, (0.0, 1.0))
        return a + b * seconds


def single_op_graph(op: Op, d: dict[str, int]) -> Graph:
    """A one-op graph for a profile row."""
    g = Builder(f"profile_{op.value}")
    if op == Op.MATMUL:
        x = g.add("x", Op.INPUT, shape=(1, d["m"], d["k"]))
        out = g.add("y", op, (x, g.add("w", Op.PARAM, shape=(d["k"], d["n"]))))
    elif op == Op.BATCH_MATMUL:
        a = g.add("a", Op.INPUT, shape=(d["b"], d["h"], d["m"], d["k"]))
        out = g.add("y", op, (a, g.add("c", Op.INPUT, shape=(d["b"], d["h"], d["k"], d["n"]))))
    elif op == Op.CONV2D:
        x = g.add("x", Op.INPUT, shape=(d["b"], d["hw"], d["hw"], d["cin"]))
        out = g.add("y", op, (x, g.add("w", Op.PARAM, shape=(d["k"], d["k"], d["cin"], d["cout"]))))
    else:
        x = g.add("x", Op.INPUT, shape=(1, d["rows"], d["cols"]))
        if op == Op.ADD:
            inputs = (x, g.add("x2", Op.INPUT, shape=(1, d["rows"], d["cols"])))
        elif op == Op.BIAS_ADD:
            inputs = (x, g.add("bias", Op.PARAM, shape=(d["cols"],)))
        else:
            inputs = (x,)
        out = g.add("y", op, inputs)
    return g.build((out,))


def roofline_seconds(op: Op, d: dict[str, int], hw: Hardware) -> float:
    """The uncalibrated model's time for one profiled op (best tiling, no fusion)."""
    g = single_op_graph(op, d)
    return sum(best_cost(g, k, {}, hw).seconds for k in fuse_ops(g, "none"))


def _parse_row(path: Path, n: int, row: list[str]) -> tuple[Op, dict[str, int], float]:
    where = f"{path}:{n}"
    if len(row) != 3:
        raise ConfigError("model.profile", where, "each row needs op,dims,seconds")
    name, dims, seconds = (c.strip() for c in row)
    op = next((o for o in _DIMS if o.value == name), None)
    if op is None:
        raise ConfigError("model.profile", where, f"unknown op {name!r} (known: {', '.join(o.value for o in _DIMS)})")
    try:
        d = {k.strip(): int(v) for k, v in (p.split("=") for p in dims.split(";"))}
        t = float(seconds)
    except ValueError:
        raise ConfigError("model.profile", where, "dims like m=4096;k=1024;n=4096 and seconds as a number") from None
    if set(d) != set(_DIMS[op]) or not all(0 < v <= MAX_SHAPE for v in d.values()) or not 0 < t <= 1e6:
        raise ConfigError("model.profile", where, f"{name} needs dims {';'.join(_DIMS[op])} in [1, {MAX_SHAPE}] "
                          "and seconds in (0, 1e6]")
    return op, d, t


def fit(rows: list[tuple[Op, dict[str, int], float]], hw: Hardware) -> Calibration:
    """Least-squares fit per op kind of measured against roofline seconds (a >= 0, b > 0)."""
    by_op: dict[Op, list[tuple[float, float]]] = {}
    for op, d, t in rows:
        by_op.setdefault(op, []).append((roofline_seconds(op, d, hw), t))
    fits, error = {}, {}
    for op, pts in by_op.items():
        x, y = np.array(pts).T
        if len(pts) >= 2 and np.ptp(x) > 0:
            b, a = np.polyfit(x, y, 1)
            if a < 0 or b <= 0:  # keep the fit physical: a proportional fit instead
                a, b = 0.0, float((x @ y) / (x @ x))
        else:
            a, b = 0.0, float(y.mean() / x.mean())
        fits[op] = (float(a), float(b))
        error[op.value] = {"rows": len(pts), "mape_roofline": float(np.mean(np.abs(x - y) / y)),
                           "mape_calibrated": float(np.mean(np.abs(a + b * x - y) / y))}
    return Calibration(fits, error)


def read_profile(path: str | Path) -> list[tuple[Op, dict[str, int], float]]:
    """The rows of a profile CSV, checked; a bad file names the file, the line and the field."""
    path = Path(path)
    try:
        text = read_capped(path, PROFILE_MAX_BYTES, "model.profile", "the profile").decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError("model.profile", str(path), "the profile is not UTF-8 text") from None
    rows = []
    for n, row in enumerate(csv.reader(text.splitlines()), 1):
        if not row or row[0].strip().startswith("#") or (n == 1 and row[0].strip() == "op"):
            continue
        if len(rows) == PROFILE_MAX_ROWS:
            raise ConfigError("model.profile", str(path), f"more than {PROFILE_MAX_ROWS:,} measurements")
        rows.append(_parse_row(path, n, row))
    if not rows:
        raise ConfigError("model.profile", str(path), "has no measurements")
    return rows


def load_profile(path: str | Path, hw: Hardware) -> Calibration:
    """Read and fit a profile CSV (see :func:`read_profile`)."""
    return fit(read_profile(path), hw)

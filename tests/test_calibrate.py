"""Calibration from a profile table: the fit recovers a known law and the plan uses it.

The table here is synthetic on purpose: it is generated from a known ground truth
(``seconds = a + b * roofline`` per op, with 5% noise) so the test can check that the
fit recovers ``a`` and ``b``; it is not a measurement of any device.
"""

from __future__ import annotations

import numpy as np
import pytest

from workbench.compiler import CompileOptions, compile_plan
from workbench.compiler.calibrate import load_profile, roofline_seconds
from workbench.errors import ConfigError
from workbench.graph import Op
from workbench.hardware import Hardware
from workbench.models import transformer_block

HW = Hardware()
TRUTH = {Op.MATMUL: (20e-6, 1.6), Op.SOFTMAX: (8e-6, 2.5), Op.LAYERNORM: (6e-6, 1.2)}


def synthetic_profile(path, noise=0.05, seed=0):
    rng = np.random.default_rng(seed)
    lines = ["op,dims,seconds"]
    for m in (128, 512, 2048, 8192):
        for k, n in ((1024, 1024), (1024, 4096), (4096, 1024)):
            dims = {"m": m, "k": k, "n": n}
            a, b = TRUTH[Op.MATMUL]
            t = (a + b * roofline_seconds(Op.MATMUL, dims, HW)) * rng.lognormal(0, noise)
            lines.append(f"matmul,m={m};k={k};n={n},{t:.9g}")
    for op in (Op.SOFTMAX, Op.LAYERNORM):
        for rows in (1024, 8192, 65536, 262144):
            dims = {"rows": rows, "cols": 1024}
            a, b = TRUTH[op]
            t = (a + b * roofline_seconds(op, dims, HW)) * rng.lognormal(0, noise)
            lines.append(f"{op.value},rows={rows};cols=1024,{t:.9g}")
    path.write_text("\n".join(lines) + "\n")
    return path


def test_fit_recovers_the_ground_truth_and_reports_its_error(tmp_path):
    cal = load_profile(synthetic_profile(tmp_path / "p.csv"), HW)
    for op, (_, b) in TRUTH.items():
        _, fb = cal.fits[op]
        assert fb == pytest.approx(b, rel=0.1)
        assert cal.error[op.value]["mape_calibrated"] < 0.06 < cal.error[op.value]["mape_roofline"]


def test_a_calibrated_plan_predicts_slower_kernels(tmp_path):
    cal = load_profile(synthetic_profile(tmp_path / "p.csv", noise=0.0), HW)
    g, env = transformer_block(), {"seq": [256, 512]}
    raw = compile_plan(g, HW, env, CompileOptions())
    calibrated = compile_plan(g, HW, env, CompileOptions(), calibration=cal)
    assert calibrated.predict(1, 8) > 1.3 * raw.predict(1, 8)


@pytest.mark.parametrize("row,match", [
    ("warp,m=1;k=1;n=1,0.1", "unknown op"),
    ("matmul,m=1;k=1,0.1", "needs dims"),
    ("matmul,m=1;k=1;n=1,-3", "needs dims"),
    ("matmul,m=x;k=1;n=1,0.1", "dims like"),
    ("matmul,0.1", "op,dims,seconds"),
])
def test_bad_profile_rows_name_the_file_and_line(tmp_path, row, match):
    p = tmp_path / "bad.csv"
    p.write_text("op,dims,seconds\n" + row + "\n")
    with pytest.raises(ConfigError, match=match) as e:
        load_profile(p, HW)
    assert "bad.csv:2" in str(e.value)

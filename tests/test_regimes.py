"""The three regimes against hand arithmetic, the spec table against the data sheets, one kernel on every chip."""

from __future__ import annotations

import pytest

from workbench.analysis import regimes as rg
from workbench.hardware import GIB, MIB, PRESETS, REAL_PRESETS
from workbench.models import transformer_block
from workbench.ui.figures import chips

# one GEMM, M = 128 tokens, K = 1024, N = 4096, bf16 (2 bytes): 2MKN FLOPs; reads A and B, writes C once
M, K, N = 128, 1024, 4096
GEMM_FLOPS = 2 * M * K * N  # 1,073,741,824
GEMM_BYTES = 2 * (M * K + K * N + M * N)  # 9,699,328


def test_split_by_hand():
    h100 = rg.split(GEMM_FLOPS, GEMM_BYTES, PRESETS["h100-sxm"])
    assert h100.compute_s == pytest.approx(1.073741824e9 / 989.4e12)  # 1.085 µs
    assert h100.memory_s == pytest.approx(9.699328e6 / 3.35e12)  # 2.895 µs
    assert h100.overhead_s == 5e-6 and h100.regime == "overhead"  # the launch beats both
    assert h100.seconds == pytest.approx(5e-6 + 2.8953e-6, rel=1e-4)
    inf2 = rg.split(GEMM_FLOPS, GEMM_BYTES, PRESETS["inferentia2"])  # one NeuronCore-v2: 95 TFLOP/s, 820 GB/s
    assert inf2.compute_s == pytest.approx(11.30e-6, rel=1e-3) and inf2.memory_s == pytest.approx(11.83e-6, rel=1e-3)
    assert inf2.regime == "memory" and inf2.headroom == pytest.approx(1.047, rel=1e-3)
    generic = rg.split(GEMM_FLOPS, GEMM_BYTES, PRESETS["generic-4core"])  # 50 TFLOP/s, 1.6 TB/s per core
    assert generic.compute_s == pytest.approx(21.47e-6, rel=1e-3) and generic.regime == "compute"
    assert rg.regime(GEMM_FLOPS * 64, GEMM_BYTES, PRESETS["h100-sxm"]) == "compute"  # 64x the work: 69 µs


def test_ties_and_edges():
    assert rg.RegimeSplit(1.0, 1.0, 1.0).regime == "compute"  # ties: the earlier name
    assert rg.RegimeSplit(0.0, 2.0, 1.0).regime == "memory" and rg.RegimeSplit(0.0, 2.0, 1.0).headroom == 2.0
    assert rg.RegimeSplit(0.0, 0.0, 1.0).headroom == float("inf")
    assert rg.break_even_flops(PRESETS["h100-sxm"]) == pytest.approx(4.947e9)  # 5 µs x 989.4 TFLOP/s


def test_spec_table_reads_the_presets():
    rows = {r["name"]: r for r in rg.chip_specs()}
    assert set(REAL_PRESETS) <= set(rows) and "generic-4core" in rows
    inf2 = rows["inferentia2"]  # AWS Neuron docs: 2 NeuronCore-v2, 190 TFLOP/s bf16, 820 GB/s, 32 GiB, 24 MiB SBUF
    assert (inf2["cores"], inf2["peak_flops"], inf2["hbm_bytes_per_s"]) == (2, 190e12, 820e9)
    assert inf2["hbm_bytes"] == 32 * GIB and inf2["sram_bytes_per_core"] == 24 * MIB
    assert inf2["ridge_flop_per_byte"] == pytest.approx(95e12 / 820e9)  # 115.9: one core alone on the HBM
    assert rows["h100-sxm"]["ridge_flop_per_byte"] == pytest.approx(295.3, abs=0.05)
    assert rows["a100-sxm"]["ridge_flop_per_byte"] == pytest.approx(153.0, abs=0.05)
    text = chips.spec_table(rg.chip_specs())
    assert "inferentia2          2    190.0   95.0       820    116   24.0 MiB      32" in text


def test_one_kernel_on_every_chip():
    """The up projection (up + up_bias + gelu) of one 128-token request: three regimes on seven chips."""
    out = rg.kernel_on_chips(transformer_block(1024, 16), "k5_up", {"batch": 1, "seq": 128})
    regimes = {name: s.regime for name, (_, s) in out.items()}
    assert regimes == {"generic-4core": "compute", "edge-2core": "compute", "datacenter-8core": "compute",
                       "h100-sxm": "overhead", "a100-sxm": "overhead", "a40": "memory", "inferentia2": "memory"}
    for cost, s in out.values():
        assert s.seconds == pytest.approx(cost.seconds)  # the split adds up to the cost model's time
    fig = chips.split_figure({n: s for n, (_, s) in out.items()})
    assert fig._repr_png_()[:4] == b"\x89PNG"
    assert "h100-sxm              1.09     2.90     5.00   overhead-bound" in chips.split_text(
        {n: s for n, (_, s) in out.items()})

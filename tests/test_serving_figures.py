"""The token-serving pictures draw what the trace holds: one bar pair per iteration in the window, a KV line
that stays within the cache, preemption marks exactly where the trace has them, and images at 100 dpi; the GPU
picture draws the times the serving study computed, and the study splits an iteration as the model prices it."""

from __future__ import annotations

import io

import numpy as np
from matplotlib.image import imread

from workbench.serving.config import Decoder, KVConfig, LengthLaw, SchedulerConfig, Tenant
from workbench.serving.engine import ServingRun, simulate_tokens
from workbench.ui.figures import serving as sf
from workbench.ui.figures.base import new_figure

RUN = ServingRun((Tenant("chat", 45.0, LengthLaw(300, 0.6, 1500), LengthLaw(250, 0.8, 1200)),), requests=300,
                 seed=1, model=Decoder(layers=8, d_model=1024, heads=8, d_ff=4096), kv=KVConfig(blocks=320),
                 scheduler=SchedulerConfig(max_num_batched_tokens=4096))


def test_iterations_and_kv_are_the_trace():
    tr = simulate_tokens(RUN)
    t0, t1 = sf.busiest_window(tr, 0.05)
    in_window = int(((tr.it_start_s >= t0) & (tr.it_start_s < t1)).sum())
    assert in_window > 0 and tr.it_prefill_tokens[(tr.it_start_s >= t0) & (tr.it_start_s < t1)].sum() > 0
    fig, (a, b) = new_figure(2)
    sf.iterations(a, tr, t0, t1)
    assert len(a.patches) == 2 * in_window  # a decode bar and a prompt bar per iteration
    sf.kv_fill(b, tr)
    kv_line = b.get_lines()[0]
    assert np.array_equal(kv_line.get_ydata(), tr.it_blocks_used / RUN.kv.blocks)
    assert kv_line.get_ydata().max() <= 1.0
    ticks = [ln for ln in b.get_lines() if ln.get_marker() == "|"]
    assert tr.preemptions.sum() > 0 and len(ticks[0].get_xdata()) == int((tr.it_preemptions > 0).sum())


def test_pictures_render_as_png_at_100_dpi():
    tr = simulate_tokens(RUN)
    fig = sf.serving_picture(tr)
    img = imread(io.BytesIO(fig._repr_png_()))
    assert img.shape[1] >= 1000  # 11 inches at 100 dpi, trimmed to its content
    fig, (a, _) = new_figure(2)
    sf.itl_cdf(a, tr, tr)
    assert len(a.get_lines()) == 2 + 3  # compared run, this run, p50/p95/p99 marks


def test_gpu_phases_draw_the_study_fitted_over_roofline():
    from workbench.analysis import serving_study as ss

    card = Decoder(layers=2, d_model=1024, heads=8, kv_heads=2, d_ff=3584, gated_mlp=True, vocab=32000)
    curves = ss.phase_curves(card, batches=(1, 8, 64), prompts=(128, 1024))
    assert list(curves) == ["h100-sxm", "a100-sxm", "a40"]
    for c in curves.values():  # the roofline is a bound: every fitted time lies above it
        assert all(f > i for f, i in zip(c["decode_fitted_s"], c["decode_roofline_s"]))
        assert all(f > i for f, i in zip(c["prefill_fitted_s"], c["prefill_roofline_s"]))
    row = {r["name"]: r for r in ss.gpu_phases(card, prompt=1024, batches=(8,))}["a40"]
    assert row["prefill_s"] == curves["a40"]["prefill_fitted_s"][1] and row["decode"][8]["s"] == \
        curves["a40"]["decode_fitted_s"][1]
    fig, (a, b) = new_figure(2)
    sf.gpu_phases(a, b, curves)
    assert len(a.get_lines()) == len(b.get_lines()) == 2 * len(curves)  # fitted and roofline per GPU
    assert np.allclose(a.get_lines()[0].get_ydata(), np.array(curves["h100-sxm"]["decode_fitted_s"]) * 1e3)
    assert np.allclose(b.get_lines()[-1].get_ydata(), np.array(curves["a40"]["prefill_roofline_s"]) * 1e3)
    lo, hi = a.get_ylim()
    assert lo < min(min(c["decode_roofline_s"]) for c in curves.values()) * 1e3 and \
        hi > max(max(c["decode_fitted_s"]) for c in curves.values()) * 1e3
    img = imread(io.BytesIO(fig._repr_png_()))
    assert img.shape[1] >= 900


def test_the_study_splits_an_iteration_as_the_serving_model_prices_it():
    from workbench.analysis import serving_study as ss
    from workbench.serving.cost import IterationCost

    cost = IterationCost.of(RUN.model, RUN.hardware)
    for rows in (1, 1000):  # the kernel table's fitted times are the serving model's dense time
        assert abs(sum(r["fitted_s"] for r in ss.kernel_rows(cost, rows)) - cost.dense_seconds(rows)) < 1e-12
    fixed, launch = ss.fixed_seconds(cost, 1, 1)
    law = cost.law  # four projections and attention at the GEMM's fixed time, two norms at theirs, per layer
    assert abs(fixed - RUN.model.layers * (5 * law.gemm_fixed_s + 2 * law.norm_fixed_s)) < 1e-12
    assert launch == RUN.hardware.launch_s and ss.fixed_seconds(cost, 1000, 1)[1] == 72 * RUN.hardware.launch_s
    ideal = ss.law_cost(cost, "ideal")
    assert ss.fixed_seconds(ideal, 1, 1)[0] == 0.0 and ideal.decode_seconds(500) < cost.decode_seconds(500)
    assert ss.weight_ridge_batch(cost) < ss.decode_ridge_batch(cost, fitted=True) < ss.decode_ridge_batch(cost)

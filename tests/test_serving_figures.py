"""The token-serving pictures draw what the trace holds: one bar pair per iteration in the window, a KV line
that stays within the cache, preemption marks exactly where the trace has them, and images at 100 dpi."""

from __future__ import annotations

import io

import numpy as np
from matplotlib.image import imread

from workbench.serving.config import Decoder, KVConfig, LengthLaw, SchedulerConfig, Tenant
from workbench.serving.engine import ServingRun, simulate_tokens
from workbench.ui import serving_figures as sf
from workbench.ui.figures import new_figure

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

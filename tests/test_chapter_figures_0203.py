"""The pictures of chapters 02 and 03 draw without error, on Figure objects, with labelled axes."""

from __future__ import annotations

from workbench.analysis import knee as kn
from workbench.analysis import roofline as rl
from workbench.config import Batching
from workbench.models import transformer_block
from workbench.scenario import load_scenario
from workbench.ui import fusion_figures as ff
from workbench.ui import knee as kf
from workbench.ui import roofline_figures as rf

HW = load_scenario("fusion_memory_bursts").hardware
G = transformer_block(1024, 16)
DIMS = {"batch": 8, "seq": 1024}


def _png(fig) -> bytes:
    data = fig._repr_png_()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return data


def test_fusion_figures():
    el = rl.plan_points(G, "elementwise", DIMS, HW)
    ag = rl.plan_points(G, "aggressive", DIMS, HW, "naive")
    fig = ff.fusion_graph(el, ag)
    assert len(fig.axes) == 2 and "9 kernels" in fig.axes[0].get_title()
    _png(fig)
    fig = ff.memory_figure(el, HW, {"a": rl.bandwidth_timeline(el, HW), "b": rl.bandwidth_timeline(ag, HW)})
    assert all(ax.get_ylabel() for ax in fig.axes)
    _png(fig)


def test_roofline_figure():
    fig = rf.roofline_figure({"elementwise": rl.plan_points(G, "elementwise", DIMS, HW)}, HW)
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log" and "FLOP" in ax.get_xlabel()
    _png(fig)


def test_knee_figure():
    base = load_scenario("batching_knee")
    rates = (200.0, 400.0)
    rows = kn.knee_sweep(base, Batching("none", 1, 0.0), rates, requests=2000)
    fig = kf.knee_figure(rows, kn.theory_waits(rates, 0.0025, 2, 0.09), 800.0, {"none": rows, "also": rows},
                         {"none": 800.0})
    assert all(ax.get_xlabel() and ax.get_ylabel() for ax in fig.axes)
    _png(fig)

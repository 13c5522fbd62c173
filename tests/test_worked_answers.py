"""The worked problems' hidden answers, and the regime sentences beside them, state what the library computes.

Each row names a notebook, the markdown cell (by id) that carries a worked problem or a regime sentence, and
the numbers it states, each as the library's value and the format the prose writes it in. The test finds the
cell in the chapter and in its solutions copy and checks every number appears there as formatted; a reworded
answer must update its row, so an answer cannot drift from the library. The answers sit in
``<details><summary>Show the worked answer</summary> ... </details>`` blocks, after the idea they practise.
"""

from __future__ import annotations

import dataclasses
from functools import cache
from pathlib import Path

import nbformat
import numpy as np
import pytest

from workbench.analysis import envelope_stats as es
from workbench.analysis import fairness as fa
from workbench.analysis import queueing as q
from workbench.analysis import regimes as rg
from workbench.analysis import residency_stats as rs
from workbench.hardware import PRESETS
from workbench.models import transformer_block

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
SUMMARY = "<details><summary>Show the worked answer</summary>"
WORKED = {  # every worked problem of the chapters this file checks
    "00_tour.ipynb": ("c00-wp1", "c00-wp2", "c00-wp3"),
    "01_shape_envelopes.ipynb": ("c01-wp1", "c01-wp2", "c01-wp3"),
    "04_fairness_and_placement.ipynb": ("c04-wp1", "c04-wp2", "c04-wp3"),
    "05_memory_residency.ipynb": ("c05-wp1", "c05-wp2"),
    "07_drills.ipynb": ("c07-wp1",),
    "08_llm_serving.ipynb": ("c08-wp1", "c08-wp2"),
}


def us(s: float) -> float:
    return s * 1e6


@cache
def block() -> dict:
    """00's kernels: the layer norm and the up projection of one 128-token request, the up projection of 8 x 512."""
    g = transformer_block(1024, 16)
    ln = rg.kernel_on_chips(g, "k0_ln1", {"batch": 1, "seq": 128})
    up = rg.kernel_on_chips(g, "k5_up", {"batch": 1, "seq": 128})
    big = rg.kernel_on_chips(g, "k5_up", {"batch": 8, "seq": 512}, ("h100-sxm",))
    return {"ln": ln, "up": up, "big": big["h100-sxm"]}


@cache
def drift_runs() -> tuple[np.ndarray, np.ndarray]:
    """00's two runs, sorted measured latencies (ms): shape_drift as shipped, and with its drift switched off."""
    from workbench.pipeline import run_scenario
    from workbench.scenario import load_scenario
    from workbench.ui.figures.base import latencies_ms

    sc = load_scenario("shape_drift")
    seq = sc.streams[0].shapes["seq"]
    steady = dataclasses.replace(sc, streams=(dataclasses.replace(
        sc.streams[0], shapes={"seq": dataclasses.replace(seq, drift=None)}),))
    return latencies_ms(run_scenario(sc)), latencies_ms(run_scenario(steady))


def n00_wp1():
    ln = block()["ln"]
    h, g = ln["h100-sxm"][1], ln["generic-4core"][1]
    assert all(s.regime == "overhead" for _, s in ln.values())  # "on every chip of the table"
    cost = ln["h100-sxm"][0]
    return [(cost.bytes / 1e6, "{:.2f} MB"), (cost.flops / 1e6, "{:.2f} MFLOP"), (cost.bytes, "{:,.0f} B"),
            (us(h.compute_s), "{:.3f} µs of compute"), (us(h.memory_s), "{:.2f} µs of HBM"),
            (us(g.compute_s), "{:.2f} µs,"), (us(g.memory_s), "{:.2f} µs and"),
            (h.overhead_s / h.memory_s, "{:.0f} and"), (g.overhead_s / g.memory_s, "and {:.0f} times")]


def n00_wp2():
    cost, s = block()["big"]
    ridge = rg.chip_specs(("h100-sxm",))[0]["ridge_flop_per_byte"]
    assert s.regime == "compute"
    return [(cost.flops / 1e9, "{:.1f} GFLOP"), (cost.bytes / 1e6, "{:.1f} MB"),
            (cost.flops / cost.bytes, "{:.0f} FLOP"), (ridge, "ridge of {:.0f}"), (us(s.compute_s), "{:.2f} µs"),
            (us(s.memory_s), "{:.2f} µs")]


def n00_split():
    up = {n: s for n, (_, s) in block()["up"].items()}
    g, h, i = up["generic-4core"], up["h100-sxm"], up["inferentia2"]
    return [(us(g.compute_s), "{:.2f} µs of compute"), (us(g.memory_s), "{:.2f} µs of HBM"),
            (us(h.compute_s), "FLOPs take {:.2f} µs"), (us(h.memory_s), "bytes {:.2f} µs"),
            (us(i.memory_s), "{:.2f} µs of traffic"), (us(i.compute_s), "against {:.2f} µs")]


def n00_specs():
    rows = {row["name"]: row for row in rg.chip_specs()}
    r = {n: row["ridge_flop_per_byte"] for n, row in rows.items()}
    chip = {n: row["peak_flops"] / row["hbm_bytes_per_s"] for n, row in rows.items()}
    return [(r["h100-sxm"], "must do {:.0f} FLOPs"), (r["generic-4core"], "only {:.0f}"),
            (r["inferentia2"], "Inferentia2 {:.0f}"), (chip["generic-4core"], "{:.0f} for `generic-4core`"),
            (chip["inferentia2"], "{:.0f} for\nInferentia2")]


def n00_wp3():
    drift, steady = drift_runs()
    p99 = float(np.percentile(steady, 99))
    a, b = np.percentile(drift, 99.9), np.percentile(steady, 99.9)
    return [(p99, "p99 (about {:.2f} ms)"), ((drift > p99).mean() * 100, "{:.1f}% of"),
            ((drift > p99).mean(), "height of {:.3f}"), (a, "{:.1f} ms against"), (b, "against {:.2f} ms"),
            (a / b, "{:.1f} times as long"), (np.median(drift) / np.median(steady), "differ {:.1f} times")]


def n01_wp1():
    share = 1 - es.lognormal_cdf(512.5, 250, 0.4)
    return [(np.log(512.5 / 250) / 0.4, "= {:.2f}$"), (share * 100, "{:.2f}% of"),
            (es.slice_quantile(share), "its own {:.3f} quantile")]


def n01_wp2():
    return [(es.mean_with_slice(1, 0.03, 4), "= {:.2f} times"), (es.slice_quantile(0.03), "= {:.3f} quantile")]


def n01_wp3():
    from workbench.compiler import envelope as env
    from workbench.ui.panels.compiler import ENVELOPES

    gap = tuple(env.parse_envelope("seq", ENVELOPES["gap: 64-128, 256-512"]))
    t140, t40 = es.pad_target(gap, 140), es.pad_target(gap, 40)
    return [(t140, "as {} tokens"), (es.padding_factor(140, t140), "{:.2f} times its tokens"),
            (t40, "its `min`, {}:"), (es.padding_factor(40, t40), "{:.2f} times.")]


def n04_wp1():
    sc = fa.two_streams(load=0.8)
    rates = [s.arrivals.rate for s in sc.streams]
    mu = 1 / fa.mean_service_s(sc)
    w = q.cobham_waits(rates, mu, sc.hardware.cores)
    return [(rates[0], "({:.1f} req/s of `interactive`"), (rates[1], "and {:.1f} req/s of `batch`"),
            (w[0] * 1e3, "waits\n{:.2f} ms"), (w[1] * 1e3, "`batch` {:.2f} ms"), (w[1] / w[0], "ratio is {:.2f}")]


def n04_wp2():
    return [(fa.jain_of([100, 90], [1, 2]), "= {:.3f}")]


def n04_wp3():
    return [(fa.overload_share(0.6), "= {:.3f}")]


def n05_wp1():
    return [(rs.reload_seconds(7 * rs.GIB, 31.5e9) * 1e3, "= {:.1f} ms"), (31.5e9 / 1.6e12 * 100, "= {:.1f}% of")]


def n05_wp2():
    u = [0.5, 0.3, 0.3, 0.3]
    slow = rs.slowdowns(u)
    return [(rs.water_level(u), "$\\theta$ = {:.2f}"), (slow[0], "runs {:.1f} times"),
            (slow[1], "phases {:.1f}\ntimes")]


def n07_wp1():
    from workbench.compiler.cost import best_cost
    from workbench.compiler.fusion import fuse_ops
    from workbench.grading.drills import drill_scenarios, load_drills

    hw = drill_scenarios(load_drills()["fusion-memory-bursts"], fixed=True)[1].hardware
    g = transformer_block(1024, 16)
    (up,) = [k for k in fuse_ops(g, "elementwise", 32, "flash") if k.name == "k5_up"]
    cost = best_cost(g, up, {"batch": 1, "seq": 128}, hw)
    s = rg.split_cost(cost, hw)
    assert s.regime == "memory" and cost.tiling.weights == "streamed"
    return [(cost.flops / 1e9, "({:.2f} GFLOP"), (cost.bytes / 1e6, "{:.1f} MB"),
            (us(s.compute_s), "{:.2f} µs of compute"), (us(s.memory_s), "{:.2f} µs of HBM"),
            (us(s.overhead_s), "a {:.0f} µs launch"),
            (cost.flops / cost.bytes, "{:.0f} FLOP per byte"), (rg.ridge_point(hw), "ridge of {:.0f}"),
            (rg.ridge_point(hw) * hw.cores, "ridge\nmoves to {:,.0f}"), (us(s.memory_s) * hw.cores, "up to\n{:.0f} µs")]


@cache
def serving() -> dict:
    from workbench.analysis import serving_study as ss
    from workbench.scenario import load_scenario
    from workbench.serving.cost import IterationCost

    sc = load_scenario("llm_chunked_prefill")
    small = ss.phase_costs(IterationCost.of(sc.run.model, sc.run.hardware))
    llama = IterationCost.of_run(load_scenario("llm_llama3_8b_h100").run)
    return {"small": small, "llama": llama, "h100": ss.phase_costs(llama), "weight_ridge": ss.weight_ridge_batch(llama)}


def n08_wp1():
    d = next(r for r in serving()["small"]["decode"] if r["batch"] == 128)
    return [(d["linear_compute_s"] * 1e3, "{:.2f} ms of dense compute"),
            (d["linear_memory_s"] * 1e3, "{:.2f} ms of weight"),
            (d["kv_read_s"] * 1e3, "{:.2f} ms of KV"), (d["fixed_s"] * 1e3, "{:.2f} ms of fixed"),
            ((d["linear_memory_s"] + d["kv_read_s"]) * 1e3, "together,\n{:.2f} ms")]


def n08_wp2():
    s = serving()
    ridge = PRESETS["h100-sxm"].peak_flops_per_core / PRESETS["h100-sxm"].hbm_bandwidth_bytes_per_s
    return [(ridge, "ridge of {:.1f}"), (s["weight_ridge"], "at {} sequences"),
            (s["h100"]["ridge_batch"], "only at {}"), (s["h100"]["ridge_batch_fitted"], "shares at {}")]


def n08_sentence1():
    d = serving()["small"]["decode"][0]
    return [(d["fixed_s"] * 1e3, "({:.2f} ms of fixed"), (d["linear_memory_s"] * 1e3, "against {:.2f} ms of weight"),
            (d["linear_compute_s"] * 1e3, "and {:.2f} ms\nof compute")]


def n08_sentence7():
    d = serving()["h100"]["decode"][0]
    return [(d["linear_memory_s"] * 1e3, "take {:.2f} ms"),
            (d["linear_compute_s"] * 1e3, "against {:.2f} ms of compute"),
            (d["fixed_s"] * 1e3, "and {:.2f} ms of fixed")]


ROWS = [
    ("00_tour.ipynb", "c00-wp1", n00_wp1), ("00_tour.ipynb", "c00-wp2", n00_wp2),
    ("00_tour.ipynb", "c00-split-md", n00_split), ("00_tour.ipynb", "c00-specs-md", n00_specs),
    ("00_tour.ipynb", "c00-wp3", n00_wp3),
    ("01_shape_envelopes.ipynb", "c01-wp1", n01_wp1), ("01_shape_envelopes.ipynb", "c01-wp2", n01_wp2),
    ("01_shape_envelopes.ipynb", "c01-wp3", n01_wp3),
    ("04_fairness_and_placement.ipynb", "c04-wp1", n04_wp1), ("04_fairness_and_placement.ipynb", "c04-wp2", n04_wp2),
    ("04_fairness_and_placement.ipynb", "c04-wp3", n04_wp3),
    ("05_memory_residency.ipynb", "c05-wp1", n05_wp1), ("05_memory_residency.ipynb", "c05-wp2", n05_wp2),
    ("07_drills.ipynb", "c07-wp1", n07_wp1),
    ("08_llm_serving.ipynb", "c08-wp1", n08_wp1), ("08_llm_serving.ipynb", "c08-wp2", n08_wp2),
    ("08_llm_serving.ipynb", "c9da325c", n08_sentence1), ("08_llm_serving.ipynb", "b365bc9d", n08_sentence7),
]


def folded(text: str) -> str:
    return " ".join(text.split())


def cell_text(path: Path, cell_id: str) -> str:
    """The cell's text, whitespace folded; in a solutions copy whose ids differ, the markdown cell that reads the
    same as the chapter's (its glossary links one folder up)."""
    cells = nbformat.read(path, as_version=4).cells
    same = [c for c in cells if c.get("id") == cell_id]
    if same:
        return folded(same[0].source)
    (chapter,) = [c for c in nbformat.read(NOTEBOOKS / path.name, as_version=4).cells if c.get("id") == cell_id]
    text = folded(chapter.source)
    (cell,) = [c for c in cells if folded(c.source).replace("../GLOSSARY.md", "GLOSSARY.md") == text]
    return folded(cell.source)


@pytest.mark.parametrize("copy", ["", "solutions"])
@pytest.mark.parametrize(("notebook", "cell_id", "numbers"), ROWS, ids=[f"{n}:{c}" for n, c, _ in ROWS])
def test_the_answer_states_the_library_number(notebook, cell_id, numbers, copy):
    text = cell_text(NOTEBOOKS / copy / notebook, cell_id)
    missing = [folded(fmt.format(v)) for v, fmt in numbers() if folded(fmt.format(v)) not in text]
    assert not missing, f"{copy or 'chapter'} {notebook} {cell_id}: not stated as computed: {missing}"


@pytest.mark.parametrize("copy", ["", "solutions"])
@pytest.mark.parametrize("notebook", sorted(WORKED))
def test_each_worked_problem_hides_its_answer(notebook, copy):
    cells = nbformat.read(NOTEBOOKS / copy / notebook, as_version=4).cells
    ids = [c.get("id") for c in cells]
    for cid in WORKED[notebook]:
        src = cells[ids.index(cid)].source
        problem, _, rest = src.partition(SUMMARY)
        assert problem.startswith("**Worked problem") and rest.rstrip().endswith("</details>"), cid
        assert "Predict" not in src  # a worked problem is no prediction prompt: nothing waits below it
    worked = [c.get("id") for c in cells if c.cell_type == "markdown" and SUMMARY in c.source]
    assert worked == list(WORKED[notebook])  # every answer block is one this file checks

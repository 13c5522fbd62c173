"""Exercise checkers of chapters 02 (fusion and memory) and 03 (batching and queues).

Each returns "right", "not yet: <hint>" or "not answered yet" (see
:mod:`workbench.ui.exercises.base`). Panel exercises run the panel's model headless at fixed
settings (so neither the learner's slider positions nor checking moves anything);
arithmetic exercises compare with the library's own number. ``tests/test_exercises_fusion_batching.py``
is the instructor's key.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from workbench.analysis import queueing as q
from workbench.analysis.roofline import plan_points, spill_seconds
from workbench.compiler.cost import footprint
from workbench.compiler.fusion import fuse_ops
from workbench.models import transformer_block
from workbench.ui.exercises.base import _run, _verdict

FUSION_AT = {"rate": 6610.0, "cores": 8, "attention": "flash", "sram_mib": 4.0}  # fusion_memory_bursts as shipped
BATCHING_AT = {"rate": 1500.0, "policy": "dynamic", "max_batch": 16}
BLOCK = {"d_model": 1024, "heads": 16}  # the scenario's transformer block
MIB = 2**20


def fusion_summary(panel, **changes: Any) -> dict:
    """The run summary of the fusion panel's model at the shipped point (``FUSION_AT``, aggressive fusion) with
    ``changes`` (``fusion``, ``sram_mib``, ``max_depth``, ...), whatever the sliders show."""
    return _run(panel, **{"fusion": "aggressive", **FUSION_AT, **changes})


def fusion_p95_ms(panel, **changes: Any) -> float:
    """p95 (ms) of :func:`fusion_summary`'s run."""
    return fusion_summary(panel, **changes)["latency_s"]["p95"] * 1e3


def _verdict_with(answers: tuple, expected: str, test, hint) -> str:
    """``_verdict`` with a hint written for the wrong answer given (``hint()`` runs only for a wrong answer)."""
    verdict = _verdict(answers, expected, test, "")
    return "not yet: " + hint() if verdict == "not yet: " else verdict


def _no_worse(panel, **changes: Any) -> bool:
    """Whether aggressive fusion's p95 is no worse than elementwise fusion's, both with ``changes``."""
    elementwise = {k: v for k, v in changes.items() if k != "max_depth"}
    return fusion_p95_ms(panel, **changes) <= fusion_p95_ms(panel, fusion="elementwise", **elementwise)


def _mlp_chain(graph, max_depth: int = 32):
    """The kernel of the aggressive plan (capped at ``max_depth`` ops) that holds the MLP's up-projection."""
    kernels = fuse_ops(graph, "aggressive", max_depth, FUSION_AT["attention"])
    return next(k for k in kernels if "up" in k.nodes)


def smallest_sram_no_worse_p95(panel, sram_mib: Any) -> str:
    """02, exercise 1: at 6,610 req/s on 8 cores (flash attention), the smallest whole MiB of SRAM per core at which
    aggressive fusion's p95 is no worse than elementwise fusion's at the same SRAM."""
    lo = int(panel.ctrl["sram_mib"].min)
    hi = int(panel.ctrl["sram_mib"].max)

    def test() -> bool:
        mib = int(sram_mib)
        if mib != sram_mib or not lo <= mib <= hi:
            raise ValueError(f"a whole number of MiB on the slider ({lo} to {hi})")
        return _no_worse(panel, sram_mib=mib) and not any(_no_worse(panel, sram_mib=m) for m in range(lo, mib))

    def hint() -> str:
        mib = int(sram_mib)
        if _no_worse(panel, sram_mib=mib):
            return (f"at {mib} MiB aggressive fusion is no worse, but it is already no worse with less: how much SRAM "
                    "does the MLP chain's smallest compute-bound tile (512 rows, section 4) need?")
        if fusion_summary(panel, fusion="elementwise", sram_mib=mib)["load"]["overloaded"]:
            return (f"at {mib} MiB neither plan carries the load: the elementwise plan's GEMMs overflow SRAM too, "
                    "and both re-read their weights tile by tile")
        return (f"at {mib} MiB aggressive fusion's p95 is still worse: the MLP chain's smallest compute-bound tile "
                "(512 rows) still overflows SRAM, so it spills its hidden row (section 4); how much SRAM does that "
                "tile need?")

    return _verdict_with((sram_mib,), "a whole number of MiB", test, hint)


def best_depth_p95(panel, max_depth: Any) -> str:
    """02, exercise 2: aggressive fusion at the shipped point (4 MiB, 6,610 req/s, 8 cores): the cap on ops per kernel
    (``max_depth``) that gives it the lowest p95. A cap at or above the uncapped plan's largest kernel changes nothing,
    so only the caps below it are run."""
    graph = transformer_block(**BLOCK)
    ops = len(graph.compute_nodes())
    top = max(len(k.nodes) for k in fuse_ops(graph, "aggressive", attention=FUSION_AT["attention"]))

    def test() -> bool:
        depth = int(max_depth)
        if depth != max_depth or not 1 <= depth <= ops:
            raise ValueError(f"a whole number of ops per kernel, 1 to {ops}")
        p95 = {d: fusion_p95_ms(panel, max_depth=d) for d in range(1, top + 1)}
        return p95[min(depth, top)] == min(p95.values())

    def hint() -> str:
        depth = int(max_depth)
        if depth >= top:
            return (f"a cap of {top} or more is the uncapped plan, the scenario itself: compare the HBM bytes per "
                    "batch of section 6, not the launches")
        if fusion_summary(panel, max_depth=depth)["load"]["overloaded"]:
            return ("at that cap the aggressive plan cannot carry the load at all: its cuts send intermediates "
                    "through HBM kernel after kernel (section 6's bytes); fusing less is not always safer")
        chain = _mlp_chain(graph, max_depth=depth)
        if "down" in chain.nodes:
            return ("at that cap the MLP chain still holds the up- and the down-projection, so it still keeps its "
                    "hidden row on chip and spills, and the cut adds a round trip elsewhere: which cap cuts the chain "
                    "at the down-projection?")
        return "not the lowest: compare the HBM bytes per batch of section 6, not the spill or the launches"

    return _verdict_with((max_depth,), "a whole number of ops per kernel", test, hint)


def lowest_p95_depth(panel) -> tuple[int, str]:
    """02, exercise 2 as a prediction's answer: (the cap on ops per kernel with the lowest p95, why), run on demand."""
    graph = transformer_block(**BLOCK)
    top = max(len(k.nodes) for k in fuse_ops(graph, "aggressive", attention=FUSION_AT["attention"]))
    p95 = {d: fusion_p95_ms(panel, max_depth=d) for d in range(1, top + 1)}
    best = min(p95, key=p95.get)
    shown = ", ".join(f"{d}: {v:.2f} ms" for d, v in p95.items())
    return best, (f"under load the cap that moves the fewest HBM bytes per batch wins, since the cores' bursts "
                  f"collide in the shared HBM (p95 by cap: {shown}; {top} is the uncapped plan)")


LONE = {"batch": 1, "seq": 512}  # 02, exercise 3: one request of the stream's median length, alone


def chain_spill_us(hw) -> float:
    """HBM time (us) of the aggressive plan's MLP chain spill for one request of 512 tokens on ``hw`` (the library's
    number)."""
    chain = next(p for p in plan_points(transformer_block(**BLOCK), "aggressive", LONE, hw) if "up" in p.kernel.nodes)
    return spill_seconds(chain.cost.spill_bytes, hw) * 1e6


def spill_time_us(answer_us: Any, hw) -> str:
    """02, exercise 3: the HBM time (us) of the aggressive plan's MLP chain kernel's spill for one request of 512
    tokens (one 512-row tile, weights streamed)."""
    expected = chain_spill_us(hw)
    graph = transformer_block(**BLOCK)
    f = footprint(graph, _mlp_chain(graph), LONE)
    tile = f.working_set(LONE["seq"], stationary=False)
    over = tile - hw.sram_bytes_per_core

    def test() -> bool:
        return abs(float(answer_us) - expected) <= 0.01 * expected

    def hint() -> str:
        x = float(answer_us) / expected
        slips = ((0.5, "half the answer: a spill goes out and comes back, and scattered traffic runs at half the "
                       "bandwidth; did you count both?"),
                 (1e6 / MIB, "MiB are 2**20 bytes, not 10**6"),
                 (2.0, "twice the answer: the efficiency halves the bandwidth once, not twice"),
                 (tile / over, "subtract the SRAM: only the overflow past it moves"),
                 ((over - f.stage_bytes) / over, "the staged weight tiles (two 128 x 128 tiles, 64 KiB) are on chip "
                                                 "too, beside the rows"))
        for factor, why in slips:
            if abs(x - factor) <= 0.01 * factor:
                return why
        return ("working set of the one 512-row tile (bytes per row x rows + the staged weight tiles), minus SRAM, "
                "out and back once, at SPILL_EFFICIENCY x the HBM bandwidth")

    return _verdict_with((answer_us,), "a time in us (a number)", test, hint)


LITTLE_AT = {"rate": 1200.0, "policy": "dynamic", "max_batch": 16, "max_delay_ms": 4.0}  # 03, exercise 1


def littles_law_depth(panel, mean_waiting: Any) -> str:
    """03, exercise 1: the mean number of requests waiting at 1,200 req/s with a 4 ms window (dynamic, 16), from
    L = lambda W (the panel's run there gives W)."""
    def test() -> bool:
        s = _run(panel, **LITTLE_AT)
        return abs(float(mean_waiting) - s["queue_depth"]["mean"]) <= 0.1 * s["queue_depth"]["mean"]

    return _verdict((mean_waiting,), "a number of requests", test,
                    "L = lambda x W: the arrival rate in req/s times the mean queue wait in seconds, not ms")


def smallest_delay_under_utilisation(panel, max_delay_ms: Any, target: float = 0.8) -> str:
    """03, exercise 2: at 1,500 req/s (dynamic, max batch 16), the smallest max delay (0.25 ms grid) under 80% busy."""
    step = panel.ctrl["max_delay_ms"].step

    def util(d: float) -> float:
        return float(np.mean(_run(panel, max_delay_ms=d, **BATCHING_AT)["cores"]["utilization"]))

    def test() -> bool:
        d = float(max_delay_ms)
        if d < step or abs(d / step - round(d / step)) > 1e-9:
            raise ValueError(f"a delay on the slider's {step} ms grid, above 0")
        return util(d) < target and util(d - step) >= target

    return _verdict((max_delay_ms,), "a delay in ms", test,
                    "a longer window fills bigger batches; each batch pays the 2 ms fixed cost once")


def first_rate_wait_exceeds_service(panel, rate: Any) -> str:
    """03, exercise 3: without batching, the first load (50 req/s grid) whose mean wait exceeds the 2.5 ms service."""
    def wait(r: float) -> float:
        return _run(panel, policy="none", rate=r)["wait_s"]["mean"]

    def test() -> bool:
        r = float(rate)
        if r % 50 or not 100 <= r <= 3000:
            raise ValueError("a load on the slider's 50 req/s grid")
        formula = [q.allen_cunneen_wait(x, 0.0025, 2, 1.0, 0.09) for x in (r - 50, r)]
        return wait(r) > 2.5e-3 >= wait(r - 50) and formula[1] > 2.5e-3 >= formula[0]

    return _verdict((rate,), "a load in req/s", test,
                    "set Allen-Cunneen's wait equal to E[S] = 2.5 ms with c = 2, ca2 = 1, cs2 = 0.09")

"""Exercise checkers of chapter 02 (fusion and memory), the roofline by hand included.

Each returns "right", "not yet: <hint>" or "not answered yet" (see
:mod:`workbench.ui.exercises.base`). Panel exercises run the panel's model headless at fixed
settings (so neither the learner's slider positions nor checking moves anything);
arithmetic exercises compare with the library's own number. ``tests/test_exercises_fusion_batching.py``
is the instructor's key (with :mod:`workbench.ui.exercises.batching`).
"""

from __future__ import annotations

from typing import Any

from workbench.analysis.regimes import split_cost
from workbench.analysis.roofline import plan_points, spill_seconds
from workbench.compiler.cost import footprint
from workbench.compiler.fusion import fuse_ops
from workbench.models import transformer_block
from workbench.ui.exercises.base import _run, _verdict

FUSION_AT = {"rate": 6610.0, "cores": 8, "attention": "flash", "sram_mib": 4.0}  # fusion_memory_bursts as shipped
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


# --- 02, build it yourself: one kernel's roofline by hand -------------------------------------------------------------

HAND_KERNEL = "k5_up"  # the elementwise plan's MLP GEMM: the up-projection with its bias and GELU fused in
HAND_DIMS = {"batch": 1, "seq": 512}  # one request of the stream's median length
REGIME_NAMES = {"compute": "compute-bound", "memory": "memory-bandwidth-bound", "overhead": "overhead-bound"}


def hand_kernel(hw):
    """The cost model's :class:`~workbench.analysis.roofline.KernelPoint` of :data:`HAND_KERNEL` at
    :data:`HAND_DIMS` on ``hw``: what the learner's hand count must equal."""
    graph = transformer_block(**BLOCK)
    (point,) = [p for p in plan_points(graph, "elementwise", HAND_DIMS, hw) if p.kernel.name == HAND_KERNEL]
    return point


def hand_regime(hw) -> str:
    """The regime of :func:`hand_kernel`, by the course's three names."""
    return REGIME_NAMES[split_cost(hand_kernel(hw).cost, hw).regime]


def _flops_hint(flops: float) -> str:
    rows, d, f = HAND_DIMS["batch"] * HAND_DIMS["seq"], BLOCK["d_model"], 4 * BLOCK["d_model"]
    if flops == 2 * rows * d * f:
        return "the matmul alone: the bias adds one FLOP per output element and GELU eight, and both are in the kernel"
    if flops in (rows * d * f, rows * d * f + 9 * rows * f):
        return "a multiply-add is two FLOPs: 2 x rows x K x N"
    return "2 x rows x K x N for the matmul, plus one FLOP per output element for the bias and eight for GELU"


def _bytes_hint(hbm_bytes: float, expected: float) -> str:
    rows, d, f = HAND_DIMS["batch"] * HAND_DIMS["seq"], BLOCK["d_model"], 4 * BLOCK["d_model"]
    bias = 2 * f
    if hbm_bytes == expected - bias:
        return "the bias is a weight too: 4,096 bf16 values read from HBM"
    if hbm_bytes == 2 * expected:
        return "bf16 is 2 bytes an element, not 4"
    if hbm_bytes in (expected + 2 * 2 * rows * f, expected + 2 * rows * f):
        return ("the bias and GELU work on the matmul's output tile on chip: only the kernel's output (GELU's) is "
                "written to HBM")
    if hbm_bytes == expected - 2 * rows * f:
        return "the kernel writes its output, GELU's [512, 4096] activation, to HBM"
    if hbm_bytes == expected - 2 * rows * d:
        return "the kernel reads its input, ln2's [512, 1024] row, from HBM"
    return "input activation + weights (and bias) read once + output written once, 2 bytes an element"


def kernel_by_hand(hw, flops: Any, hbm_bytes: Any, intensity: Any, seconds: Any, regime: Any) -> str:
    """02, build it yourself: FLOPs, HBM bytes, arithmetic intensity (FLOP/byte), roofline time (s, launch
    included) and regime of :data:`HAND_KERNEL` at :data:`HAND_DIMS`, each equal to the cost model's."""
    p = hand_kernel(hw)
    c = p.cost
    want_regime = hand_regime(hw)

    def parts() -> dict[str, str]:
        out = {}
        fl, by, i, s = float(flops), float(hbm_bytes), float(intensity), float(seconds)
        if not isinstance(regime, str):
            raise TypeError("the regime is a name, as a string")
        out["FLOPs"] = "" if fl == c.flops else _flops_hint(fl)
        out["HBM bytes"] = "" if by == c.bytes else _bytes_hint(by, c.bytes)
        out["intensity"] = "" if abs(i - p.intensity) <= 1e-9 * p.intensity else \
            "FLOPs over HBM bytes, both of this kernel"
        if abs(s - c.seconds) <= 1e-12:
            out["time"] = ""
        elif abs(s - (c.seconds - hw.launch_s)) <= 1e-12:
            out["time"] = "add the launch: the cost model charges 10 us per kernel before any work"
        elif abs(s - (hw.launch_s + c.compute_s + c.memory_s)) <= 1e-12:
            out["time"] = "max, not sum: the kernel moves bytes while it computes, so the longer of the two counts"
        else:
            out["time"] = "launch + max(FLOPs / peak FLOP/s, bytes / HBM bandwidth), in seconds"
        out["regime"] = "" if regime.strip().lower() == want_regime else (
            f"name it by the largest of the three terms (launch, FLOPs / peak, bytes / bandwidth): one of "
            f"{', '.join(REGIME_NAMES.values())}")
        return out

    def test() -> bool:
        return not any(parts().values())

    def hint() -> str:
        got = parts()
        right = [k for k, v in got.items() if not v]
        wrong = "; ".join(f"{k}: {v}" for k, v in got.items() if v)
        return wrong + (f" (right so far: {', '.join(right)})" if right else "")

    return _verdict_with((flops, hbm_bytes, intensity, seconds, regime), "five numbers and a regime name", test, hint)

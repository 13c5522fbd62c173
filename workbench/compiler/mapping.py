"""What the compiler produces per bucket: the options a compile takes, a mapping, a compiled bucket.

A :class:`Mapping` is kernels and their tilings; a :class:`CompiledBucket` is one shape
bucket's specialised mapping with its static placement and predicted latencies. A
:class:`~workbench.compiler.plan.Plan` holds them; :func:`~workbench.compiler.pipeline.compile_plan`
makes them from :class:`CompileOptions`.
"""

from __future__ import annotations

from dataclasses import dataclass

from workbench.compiler import envelope as env
from workbench.compiler.cost import ATTENTION, Tiling
from workbench.compiler.fusion import Kernel
from workbench.errors import check, check_non_negative, check_one_of

GENERIC_TILING = Tiling(64, "streamed")


@dataclass(frozen=True, slots=True)
class CompileOptions:
    """Everything ``compile_plan`` takes besides the graph, the hardware and the envelope."""

    fusion: str = "elementwise"  # none | elementwise | aggressive
    max_depth: int = 32  # ops per fused kernel
    attention: str = "flash"  # flash (tiled, online softmax) | naive (whole score matrices on chip)
    out_of_envelope: str = "fallback"  # reject | pad | recompile | fallback
    recompile_limit: int = 8  # torch.compile's default recompile limit
    recompile_pause_s: float = 0.25  # s, a compile on first sight of a shape
    generic_slowdown: float = 1.5  # fallback mapping vs its roofline: no shape-specific tactics
    max_batch: int = 8  # the predicted-latency table covers batch sizes 1..max_batch
    compile_batch: int = 8  # batch size the layout is tuned for
    noise_cv: float = 0.0  # lognormal jitter of observed batch times (cv)
    granule: int = 8  # live shapes are rounded up to a multiple of this before costing

    def __post_init__(self) -> None:
        check_one_of("fusion", self.fusion, ("none", "elementwise", "aggressive"))
        check_one_of("out_of_envelope", self.out_of_envelope, env.POLICIES)
        check_one_of("attention", self.attention, ATTENTION)
        for k in ("max_depth", "max_batch", "compile_batch", "granule"):
            v = getattr(self, k)
            check(isinstance(v, int) and v >= 1, k, v, "must be an integer >= 1")
        check(isinstance(self.recompile_limit, int) and self.recompile_limit >= 0, "recompile_limit",
              self.recompile_limit, "must be an integer >= 0")
        check_non_negative("recompile_pause_s", self.recompile_pause_s)
        check(self.generic_slowdown >= 1.0, "generic_slowdown", self.generic_slowdown, "must be >= 1")
        check_non_negative("noise_cv", self.noise_cv)


@dataclass(frozen=True, slots=True)
class Mapping:
    """Kernels and their tilings: what a bucket (or the generic fallback) runs."""

    kernels: tuple[Kernel, ...]
    tilings: tuple[Tiling, ...]  # at the compile shape; a specialised mapping re-tiles per (batch, shape)
    specialised: bool = True  # False: the generic fallback keeps its one tiling at every shape


@dataclass(frozen=True, slots=True)
class CompiledBucket:
    """One bucket's specialised mapping, static placement and predicted latencies."""

    bucket: env.Bucket
    mapping: Mapping
    cores: tuple[int, ...]
    predicted_s: tuple[float, ...]  # isolated latency at opt, batch sizes 1..max_batch
    origin: str = "envelope"  # envelope | recompile

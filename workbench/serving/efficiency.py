"""How much of its roofline a kernel reaches: one law per kernel kind, fitted on measured GPU kernel times.

The ideal roofline (:mod:`workbench.compiler.cost`: ``max(FLOPs / peak, bytes / bandwidth)``) is the
bound no kernel beats. Measured kernels sit below it, and by how much depends on the kernel's kind and
shape, not on the model it belongs to (Williams et al.'s roofline; Vidur, Agrawal et al. 2024, profiles
the same operations). Per kernel, with ``c`` its compute time and ``m`` its memory time at peak (the
compiler's: FLOPs with the rows padded to the matrix unit, over peak; HBM bytes over bandwidth):

* **GEMM** (a matmul and its fused epilogues, and attention over the KV cache):
  ``t = t0 + ((c' )^n + (m')^n)^(1/n)`` with ``c' = c (1 + K0 / K) / eta_c`` and ``m' = m / eta_m``.
  ``eta_c`` is the share of peak FLOP/s a large GEMM sustains, ``K0`` an epilogue worth ``K0`` more steps of
  the reduction loop per output element (it weighs on a GEMM of small ``K``), ``eta_m`` the share of
  bandwidth a weight-streaming GEMV reaches, ``t0`` the fixed time of a kernel on the device, and ``n`` how
  softly the two bounds meet near the ridge (``n -> infinity`` is the plain max).
* **norm** (a row reduction: layer norm, RMS norm, softmax): ``t = t0_norm + m / eta_norm``.
* **elementwise** (activations, residual adds, rotary embedding, gathers): ``t = t0_ew + m / eta_ew``.

With ``cores`` cores streaming their shards at once, ``m`` is taken ``cores`` times (the HBM is shared),
as the runtime's max-min sharing gives equal demands. :data:`FITTED` was fitted by
:func:`workbench.serving.calibrate.fit` on Vidur's measured profile of Llama-2-7B on one H100
(``tests/calibration/h100-llama-2-7b.csv``, the copy of ``shared/calibration/``) and nothing else;
``tests/test_serving_efficiency.py`` refits it and checks it on other models and GPUs it never saw.
:data:`IDEAL` is the roofline itself (``t0 = 0``, every share 1, the plain max).
"""

from __future__ import annotations

from dataclasses import dataclass

from workbench.graph import Op

KINDS = ("gemm", "norm", "elementwise")


@dataclass(frozen=True, slots=True)
class EfficiencyLaw:
    """Per kernel kind: what share of peak compute and bandwidth it reaches, and its fixed time."""

    gemm_fixed_s: float = 0.0  # s: a GEMM's fixed time on the device
    gemm_compute: float = 1.0  # share of peak FLOP/s a large GEMM sustains
    gemm_epilogue_k: float = 0.0  # K0: the epilogue's cost in steps of the reduction loop per output element
    gemm_memory: float = 1.0  # share of HBM bandwidth a weight-streaming GEMV (and a KV read) reaches
    blend: float = 0.0  # n of the soft maximum; 0: the plain max
    norm_fixed_s: float = 0.0  # s
    norm_memory: float = 1.0
    elementwise_fixed_s: float = 0.0  # s
    elementwise_memory: float = 1.0

    def gemm_seconds(self, compute_s: float, memory_s: float, depth: float) -> float:
        """A GEMM's time on the device (no launch): compute at peak ``compute_s``, memory at peak ``memory_s``, its
        reduction depth ``depth`` (K; 0: no epilogue term, as for attention)."""
        c = compute_s * (1.0 + (self.gemm_epilogue_k / depth if depth > 0.0 else 0.0)) / self.gemm_compute
        m = memory_s / self.gemm_memory
        if self.blend <= 0.0:
            return self.gemm_fixed_s + max(c, m)
        n = self.blend
        top = max(c, m)
        if top <= 0.0:
            return self.gemm_fixed_s
        return self.gemm_fixed_s + top * ((c / top) ** n + (m / top) ** n) ** (1.0 / n)

    def kernel_seconds(self, kind: str, compute_s: float, memory_s: float, depth: float = 1.0) -> float:
        """A kernel's time on the device (no launch) by its kind (:data:`KINDS`)."""
        if kind == "gemm":
            return self.gemm_seconds(compute_s, memory_s, depth)
        if kind == "norm":
            return self.norm_fixed_s + memory_s / self.norm_memory
        return self.elementwise_fixed_s + memory_s / self.elementwise_memory


def kernel_kind(ops) -> str:
    """The law a (fused) kernel of ``ops`` follows: a GEMM if it holds a matmul, a norm if it holds a row
    reduction, else elementwise."""
    ops = set(ops)
    if ops & {Op.MATMUL, Op.BATCH_MATMUL, Op.CONV2D}:
        return "gemm"
    if ops & {Op.LAYERNORM, Op.SOFTMAX}:
        return "norm"
    return "elementwise"


def reduction_depth(shapes) -> float:
    """The ``K`` a kernel's epilogue term sees, from its matmuls' weight shapes ``(K, N)``: multiply-adds per output
    element, ``sum(K x N) / sum(N)`` (a single matmul's ``K``; 0 without one)."""
    shapes = list(shapes)
    cols = sum(n for _, n in shapes)
    return float(sum(k * n for k, n in shapes) / cols) if cols else 0.0


IDEAL = EfficiencyLaw()
# fitted by workbench.serving.calibrate.fit on tests/calibration/h100-llama-2-7b.csv (the h100-sxm preset);
# tests/test_serving_efficiency.py refits and compares
FITTED = EfficiencyLaw(gemm_fixed_s=5.714439941196624e-06, gemm_compute=0.7402582152117834,
                       gemm_epilogue_k=26.017958643672884, gemm_memory=0.901216769618349, blend=1.75,
                       norm_fixed_s=2.321305566059572e-06, norm_memory=0.40887726984531003,
                       elementwise_fixed_s=1.0201968885548355e-06, elementwise_memory=0.8644308520167421)
LAWS = {"fitted": FITTED, "ideal": IDEAL}

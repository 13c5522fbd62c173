"""Fit the serving efficiency law on measured kernel times, and judge it on what it was not fitted on.

A profile (``tests/calibration/*.csv``, reduced from Vidur's per-operation GPU profiles) gives, for one
model on one GPU and each token count, the median time of every non-attention operation of one decoder
layer. Each operation is one unfused kernel of :func:`workbench.models.decoder_layer` (the compiler's
``none`` fusion), so the compiler supplies its compute and memory time at peak, and the law
(:mod:`workbench.serving.efficiency`) maps those to seconds. :func:`fit` estimates the law in three
linear steps and one line search, from one profile only:

1. GEMMs at 64 tokens or fewer are weight-streaming GEMVs: ``t = t0 + m / eta_m`` by least squares;
2. GEMMs at 1,024 tokens or more are compute-bound: ``t - t0 = c / eta_c + (c / K) K0 / eta_c``;
3. ``n``, the softness of the max, by a grid search on the GEMMs between (128 to 512 tokens);
4. norms and elementwise kernels: ``t = t0 + m / eta`` by least squares on relative error, each kind apart.

:func:`compare` prices a profile's layer with a law and sets it beside the measured one.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from workbench.compiler.cost import best_cost
from workbench.compiler.fusion import fuse_ops
from workbench.hardware import Hardware
from workbench.models import decoder_layer
from workbench.serving.config import Decoder
from workbench.serving.efficiency import EfficiencyLaw, kernel_kind

# a profile's operation -> the unfused kernels of decoder_layer it is (gated MLP first, GELU MLP second)
PROFILE_OPS = {"input_layernorm": (("ln1",), ("ln1",)), "attn_pre_proj": (("qkv",), ("qkv",)),
               "attn_rope": (("rope",), ("rope",)), "attn_post_proj": (("attn_out",), ("attn_out",)),
               "post_attention_layernorm": (("ln2",), ("ln2",)), "mlp_up_proj": (("gate_up",), ("up", "up_bias")),
               "mlp_act": (("glu",), ("gelu",)), "mlp_down_proj": (("down",), ("down",)),
               "add": (("residual1",), ("residual1",))}
LAYER_COUNT = {"add": 2}  # a layer adds the residual twice; the profile times one add
GEMM_OPS = ("attn_pre_proj", "attn_post_proj", "mlp_up_proj", "mlp_down_proj")
NORM_OPS = ("input_layernorm", "post_attention_layernorm")
ELEMENTWISE_OPS = ("attn_rope", "mlp_act", "add")


@dataclass(frozen=True)
class Profile:
    """Measured median times (s) of one decoder layer's operations, per token count, for one model on one GPU."""

    name: str
    model: Decoder  # layers = 1: the profile times one layer
    tokens: tuple[int, ...]
    seconds: dict[str, np.ndarray]  # operation -> median s per row


def read_profile(path: str | Path) -> Profile:
    """A reduced profile table (``tests/calibration/extract.py`` writes them)."""
    path = Path(path)
    with path.open() as f:
        rows = list(csv.DictReader(f))
    first = rows[0]
    model = Decoder(layers=1, d_model=int(first["n_embd"]), heads=int(first["n_head"]),
                    kv_heads=int(first["n_kv_head"]), d_ff=int(first["n_expanded_embd"]),
                    gated_mlp=first["use_gated_mlp"] == "True", vocab=int(first["vocab_size"]))
    ops = [c[:-3] for c in first if c.endswith("_ms") and c[:-3] in PROFILE_OPS]
    return Profile(path.stem, model, tuple(int(r["num_tokens"]) for r in rows),
                   {o: np.array([float(r[f"{o}_ms"]) * 1e-3 for r in rows]) for o in ops})


@dataclass(frozen=True)
class KernelFacts:
    """One profiled operation as the compiler sees it: its law, compute and memory time at peak, and K."""

    kind: str
    compute_s: float
    memory_s: float
    depth: float  # K of a GEMM (1 otherwise)


def layer_facts(model: Decoder, hw: Hardware, tokens: int) -> dict[str, list[KernelFacts]]:
    """Per profiled operation, the unfused kernels of one layer of ``model`` at ``tokens`` rows on ``hw``."""
    g = decoder_layer(model.d_model, model.heads, model.d_ff, model.kv_heads, model.gated_mlp, cores=1)
    by_node = {}
    for k in fuse_ops(g, "none"):
        node = g.node(k.nodes[0])
        c = best_cost(g, k, {"batch": 1, "seq": tokens}, hw)
        depth = float(g.node(node.inputs[1]).shape[0]) if node.op.name == "MATMUL" else 1.0
        by_node[node.name] = KernelFacts(kernel_kind((node.op,)), c.compute_s, c.memory_s, depth)
    pick = 0 if model.gated_mlp else 1
    return {op: [by_node[n] for n in names[pick]] for op, names in PROFILE_OPS.items()}


def _facts(profile: Profile, hw: Hardware) -> list[dict[str, list[KernelFacts]]]:
    return [layer_facts(profile.model, hw, t) for t in profile.tokens]


def _predict(law: EfficiencyLaw, facts: list[KernelFacts]) -> float:
    return sum(law.kernel_seconds(f.kind, f.compute_s, f.memory_s, f.depth) for f in facts)


def _linear(a: np.ndarray, t: np.ndarray, relative: bool = False) -> np.ndarray:
    w = 1.0 / t if relative else np.ones_like(t)
    return np.linalg.lstsq(a * w[:, None], t * w, rcond=None)[0]


def fit(profile: Profile, hw: Hardware) -> EfficiencyLaw:
    """The law fitted on one profile measured on ``hw`` (the module docstring's four steps)."""
    facts = _facts(profile, hw)
    tok = np.array(profile.tokens)
    gemm = [(i, f[op][0], profile.seconds[op][i]) for op in GEMM_OPS if op in profile.seconds
            for i, f in enumerate(facts)]
    small = [(f, t) for i, f, t in gemm if tok[i] <= 64]
    t0, inv_m = _linear(np.array([[1.0, f.memory_s] for f, _ in small]), np.array([t for _, t in small]))
    big = [(f, t) for i, f, t in gemm if tok[i] >= 1024]
    a, b = _linear(np.array([[f.compute_s, f.compute_s / f.depth] for f, _ in big]),
                   np.array([t - t0 for _, t in big]))
    law = EfficiencyLaw(gemm_fixed_s=float(t0), gemm_compute=float(1.0 / a), gemm_epilogue_k=float(b / a),
                        gemm_memory=float(1.0 / inv_m))
    middle = [(f, t) for i, f, t in gemm if 128 <= tok[i] <= 512]

    def miss(n: float) -> float:
        trial = EfficiencyLaw(law.gemm_fixed_s, law.gemm_compute, law.gemm_epilogue_k, law.gemm_memory, n)
        return float(np.mean([np.log(trial.gemm_seconds(f.compute_s, f.memory_s, f.depth) / t) ** 2
                              for f, t in middle]))

    blend = min(np.arange(1.0, 8.01, 0.25), key=miss)
    kinds = {}
    for name, ops in (("norm", NORM_OPS), ("elementwise", ELEMENTWISE_OPS)):
        rows = [(sum(x.memory_s for x in f[op]), profile.seconds[op][i]) for op in ops if op in profile.seconds
                for i, f in enumerate(facts)]
        c0, inv = _linear(np.array([[1.0, m] for m, _ in rows]), np.array([t for _, t in rows]), relative=True)
        kinds[name] = (float(c0), float(1.0 / inv))
    return EfficiencyLaw(law.gemm_fixed_s, law.gemm_compute, law.gemm_epilogue_k, law.gemm_memory, float(blend),
                         kinds["norm"][0], kinds["norm"][1], kinds["elementwise"][0], kinds["elementwise"][1])


@dataclass(frozen=True)
class Comparison:
    """A law's prices of a profile's layer beside the measured ones."""

    name: str
    tokens: np.ndarray
    measured_s: np.ndarray  # one layer's profiled operations, summed (the residual add twice)
    predicted_s: np.ndarray
    per_op: dict[str, np.ndarray]  # operation -> predicted / measured

    @property
    def ratio(self) -> np.ndarray:
        """Predicted over measured, per token count."""
        return self.predicted_s / self.measured_s

    def error(self, mask: np.ndarray | None = None) -> tuple[float, float]:
        """(median, worst) of |predicted / measured - 1| over the rows ``mask`` selects (all by default)."""
        e = np.abs(self.ratio - 1.0)[mask if mask is not None else slice(None)]
        return float(np.median(e)), float(e.max())


def compare(law: EfficiencyLaw, profile: Profile, hw: Hardware) -> Comparison:
    """Price every row of ``profile`` with ``law`` on ``hw`` (the operations the profile times, the add twice)."""
    facts = _facts(profile, hw)
    ops = list(profile.seconds)
    pred = {o: np.array([_predict(law, f[o]) for f in facts]) for o in ops}
    count = {o: LAYER_COUNT.get(o, 1) for o in ops}
    measured = sum(profile.seconds[o] * count[o] for o in ops)
    predicted = sum(pred[o] * count[o] for o in ops)
    return Comparison(profile.name, np.array(profile.tokens), measured, predicted,
                      {o: pred[o] / profile.seconds[o] for o in ops})

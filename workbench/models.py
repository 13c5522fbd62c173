"""Example graphs: an MLP, a transformer block and a conv block, with symbolic dims.

Each builder returns a verified :class:`~workbench.graph.Graph` whose activations are
shaped by the symbolic dims ``batch`` and a per-request dim (``seq`` for token models,
``hw`` for images), and whose parameters are static. FLOPs and bytes of every op
follow from the op table at any concrete shape (``Node.flops``, ``Node.bytes``).
"""

from __future__ import annotations

from collections.abc import Callable

from workbench.errors import ConfigError, check
from workbench.graph import Builder, Graph, Op


def mlp(d_model: int = 1024, d_ff: int = 4096) -> Graph:
    """A token MLP: up-projection, bias, GELU, down-projection, bias."""
    b = Builder("mlp")
    x = b.add("x", Op.INPUT, shape=("batch", "seq", d_model))
    w1 = b.add("w1", Op.PARAM, shape=(d_model, d_ff))
    b1 = b.add("b1", Op.PARAM, shape=(d_ff,))
    w2 = b.add("w2", Op.PARAM, shape=(d_ff, d_model))
    b2 = b.add("b2", Op.PARAM, shape=(d_model,))
    h = b.add("up", Op.MATMUL, (x, w1))
    h = b.add("up_bias", Op.BIAS_ADD, (h, b1))
    h = b.add("gelu", Op.GELU, (h,))
    h = b.add("down", Op.MATMUL, (h, w2))
    h = b.add("down_bias", Op.BIAS_ADD, (h, b2))
    return b.build((h,))


def transformer_block(d_model: int = 1024, heads: int = 16, d_ff: int | None = None) -> Graph:
    """A pre-norm transformer block: attention sub-block and GELU MLP, each with a residual add."""
    d_ff = d_ff or 4 * d_model
    check(d_model % heads == 0, "params.heads", heads, f"must divide d_model ({d_model})")
    b = Builder("transformer_block")
    x = b.add("x", Op.INPUT, shape=("batch", "seq", d_model))
    wqkv, wo, w1, b1, w2 = _layer_weights(b, d_model, 3 * d_model, d_model, d_ff)
    h = b.add("ln1", Op.LAYERNORM, (x,))
    qkv = b.add("qkv", Op.MATMUL, (h, wqkv))
    q = b.add("q", Op.SPLIT_HEADS, (qkv,), heads=heads, parts=3)
    k = b.add("k", Op.SPLIT_HEADS, (qkv,), heads=heads, parts=3)
    v = b.add("v", Op.SPLIT_HEADS, (qkv,), heads=heads, parts=3)
    s = b.add("scores", Op.BATCH_MATMUL, (q, k), transpose_b=True)
    s = b.add("scale", Op.MUL, (s,), factor=(d_model // heads) ** -0.5)
    p = b.add("softmax", Op.SOFTMAX, (s,))
    c = b.add("context", Op.BATCH_MATMUL, (p, v))
    c = b.add("merge", Op.MERGE_HEADS, (c,))
    o = b.add("attn_out", Op.MATMUL, (c, wo))
    r1 = b.add("residual1", Op.ADD, (x, o))
    return b.build((_residual_mlp(b, r1, w1, b1, w2),))


def _layer_weights(b: Builder, d_model: int, qkv_cols: int, o_rows: int, ff_cols: int) -> tuple[str, ...]:
    """A block's weights, whole or one core's shard: QKV and MLP-up by columns, output and MLP-down by rows."""
    return (b.add("w_qkv", Op.PARAM, shape=(d_model, qkv_cols)), b.add("w_o", Op.PARAM, shape=(o_rows, d_model)),
            b.add("w1", Op.PARAM, shape=(d_model, ff_cols)), b.add("b1", Op.PARAM, shape=(ff_cols,)),
            b.add("w2", Op.PARAM, shape=(ff_cols, d_model)))


def _residual_mlp(b: Builder, r1: str, w1: str, b1: str, w2: str) -> str:
    """The pre-norm MLP sub-block on the residual stream ``r1``: norm, up, bias, GELU, down, residual add."""
    h = b.add("ln2", Op.LAYERNORM, (r1,))
    h = b.add("up", Op.MATMUL, (h, w1))
    h = b.add("up_bias", Op.BIAS_ADD, (h, b1))
    h = b.add("gelu", Op.GELU, (h,))
    h = b.add("down", Op.MATMUL, (h, w2))
    return b.add("residual2", Op.ADD, (r1, h))


def decoder_layer(d_model: int, heads: int, d_ff: int, kv_heads: int | None = None, gated_mlp: bool = False,
                  cores: int = 1) -> Graph:
    """One core's share of a pre-norm decoder layer's dense part, as a model card describes the layer
    (layers apart): tensor-parallel over ``cores`` the way Megatron-LM splits it (QKV and MLP
    up-projection by columns, output and down-projection by rows); ``cores = 1`` is the whole layer.

    * attention projections: one QKV matmul of ``d_model + 2 x kv_heads x head_dim`` columns (grouped-query
      attention when ``kv_heads < heads``: Llama-3, Mistral), rotary embedding on its output;
    * MLP: ``gated_mlp`` (SwiGLU, Llama's: one matmul to the gate and up projections side by side, ``silu(gate)
      x up``, three d_model x d_ff matrices in all) or GELU with a bias (GPT-2's).

    Inputs: ``x`` (the residual stream, ``[batch, seq, d_model]``) and ``attn`` (this core's heads' attention
    output, ``[batch, seq, d_model / cores]``). Outputs: ``rope`` (this core's queries, keys and values, for the
    attention kernel) and the layer's output (a partial sum until the all-reduce). Widths that do not divide are
    rounded up.
    """
    kv_heads = kv_heads or heads
    head_dim = d_model // heads
    qkv_cols = -(-(d_model + 2 * kv_heads * head_dim) // cores)
    heads_cols, ff_cols = -(-d_model // cores), -(-d_ff // cores)
    b = Builder("decoder_layer_shard")
    x = b.add("x", Op.INPUT, shape=("batch", "seq", d_model))
    attn = b.add("attn", Op.INPUT, shape=("batch", "seq", heads_cols))
    w_qkv = b.add("w_qkv", Op.PARAM, shape=(d_model, qkv_cols))
    w_o = b.add("w_o", Op.PARAM, shape=(heads_cols, d_model))
    h = b.add("ln1", Op.LAYERNORM, (x,))
    qkv = b.add("qkv", Op.MATMUL, (h, w_qkv))
    rope = b.add("rope", Op.ROPE, (qkv,))
    o = b.add("attn_out", Op.MATMUL, (attn, w_o))
    r1 = b.add("residual1", Op.ADD, (x, o))
    h = b.add("ln2", Op.LAYERNORM, (r1,))
    if gated_mlp:
        w_gu = b.add("w_gate_up", Op.PARAM, shape=(d_model, 2 * ff_cols))
        h = b.add("glu", Op.GLU, (b.add("gate_up", Op.MATMUL, (h, w_gu)),))
    else:
        w1, b1 = b.add("w1", Op.PARAM, shape=(d_model, ff_cols)), b.add("b1", Op.PARAM, shape=(ff_cols,))
        h = b.add("gelu", Op.GELU, (b.add("up_bias", Op.BIAS_ADD, (b.add("up", Op.MATMUL, (h, w1)), b1)),))
    w2 = b.add("w2", Op.PARAM, shape=(ff_cols, d_model))
    out = b.add("residual2", Op.ADD, (r1, b.add("down", Op.MATMUL, (h, w2))))
    return b.build((rope, out))



def conv_block(channels: int = 128, kernel: int = 3) -> Graph:
    """A residual conv block (NHWC): conv, bias, ReLU, conv, bias, residual add, ReLU."""
    b = Builder("conv_block")
    x = b.add("x", Op.INPUT, shape=("batch", "hw", "hw", channels))
    w1 = b.add("w1", Op.PARAM, shape=(kernel, kernel, channels, channels))
    b1 = b.add("b1", Op.PARAM, shape=(channels,))
    w2 = b.add("w2", Op.PARAM, shape=(kernel, kernel, channels, channels))
    b2 = b.add("b2", Op.PARAM, shape=(channels,))
    h = b.add("conv1", Op.CONV2D, (x, w1))
    h = b.add("bias1", Op.BIAS_ADD, (h, b1))
    h = b.add("relu1", Op.RELU, (h,))
    h = b.add("conv2", Op.CONV2D, (h, w2))
    h = b.add("bias2", Op.BIAS_ADD, (h, b2))
    h = b.add("residual", Op.ADD, (x, h))
    h = b.add("relu2", Op.RELU, (h,))
    return b.build((h,))


BUILDERS: dict[str, Callable[..., Graph]] = {"mlp": mlp, "transformer_block": transformer_block,
                                              "conv_block": conv_block}
REQUEST_DIM = {"mlp": "seq", "transformer_block": "seq", "conv_block": "hw"}


MAX_PARAM = 65536  # widths, heads, channels: wider than any production layer


def build(name: str, params: dict | None = None) -> Graph:
    """A model graph by name, with keyword parameters checked."""
    if name not in BUILDERS:
        raise ConfigError("graph", name, f"must be one of {', '.join(BUILDERS)}")
    params = dict(params or {})
    fn = BUILDERS[name]
    allowed = fn.__code__.co_varnames[: fn.__code__.co_argcount]
    for k, v in params.items():
        check(k in allowed, f"params.{k}", v, f"unknown parameter of {name} (known: {', '.join(allowed)})")
        check(isinstance(v, int) and not isinstance(v, bool) and 0 < v <= MAX_PARAM, f"params.{k}", v,
              f"must be an integer in [1, {MAX_PARAM}]")
    return fn(**params)

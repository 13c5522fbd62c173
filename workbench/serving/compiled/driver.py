"""The compiled serving loop's Python side: lay a run out as flat arrays, run the kernel, answer it, assemble.

:func:`simulate_compiled` returns the same :class:`~workbench.serving.trace.ServingTrace` as
the readable loop, field for field and bit for bit (``tests/test_serving_compiled.py``). The
kernel (:mod:`.run`, :mod:`.loop`) asks Python for one thing only: more
room for iteration rows. It prices one layer's dense kernels at a row count it meets for the
first time itself, from the compiler's flat cost tables
(:meth:`~workbench.serving.cost.IterationCost.dense_tables`), as
:meth:`~workbench.serving.cost.IterationCost.dense_seconds` prices it (a fresh process once
returned to Python for each of ~900 row counts, ~0.6 s of the compiler's Python cost model
on a 1M-token run). The kernel runs from the ahead-of-time build when there is one of
the current sources (:mod:`workbench.aot`: no numba in the process), else by numba's JIT,
imported on first use, its machine code cached on disk (the build is made at install;
``python -m workbench.warm`` warms the JIT's cache by hand).
"""

from __future__ import annotations

import numpy as np

from workbench.serving.buckets import bucket_summary
from workbench.serving.cost import GRAPH_MAX_TOKENS, HEAD_KERNELS, ITEM, IterationCost
from workbench.serving.run import ServingRun
from workbench.serving.trace import ServingTrace, assemble
from workbench.serving.workload import draw

i8, f8 = np.int64, np.float64


def dense_model(cost: IterationCost, pi: np.ndarray, pf: np.ndarray) -> tuple:
    """What the kernel prices a layer's dense kernels from (``run._dense``): the chip's and the efficiency
    law's slots of ``pi`` and ``pf`` filled in, and the cost model's tables (with their scratch) returned."""
    from workbench.compiler.cost_flat import TILES, scratch
    from workbench.serving.compiled import layout as K

    hw, law = cost.hw, cost.law
    flat, kd = cost.dense_tables()
    pi[K.P_NSPEC], pi[K.P_NALL] = len(cost.mapping.kernels), len(kd)
    pi[K.P_CORES], pi[K.P_SRAM], pi[K.P_MMA] = hw.cores, hw.sram_bytes_per_core, hw.mma_rows
    pi[K.P_NAIVE] = cost.plan.options.attention == "naive"
    pf[K.F_BW], pf[K.F_LAUNCH] = hw.hbm_bandwidth_bytes_per_s, hw.launch_s
    pf[K.F_T0], pf[K.F_ETA_C], pf[K.F_ETA_M], pf[K.F_BLEND] = (law.gemm_fixed_s, law.gemm_compute, law.gemm_memory,
                                                               law.blend)
    pf[K.F_EW_T0], pf[K.F_ETA_EW] = law.elementwise_fixed_s, law.elementwise_memory
    pf[K.F_EPILOGUE_K], pf[K.F_NORM_T0], pf[K.F_ETA_NORM] = law.gemm_epilogue_k, law.norm_fixed_s, law.norm_memory
    pf[K.F_PEAK_CORE], pf[K.F_SLOWDOWN] = hw.peak_flops_per_core, cost.plan.options.generic_slowdown
    return (*flat, TILES, *scratch(flat), kd, np.empty((1, 3)))  # kernel_costs' scratch and output last


def simulate_compiled(run: ServingRun, path: str = "auto") -> ServingTrace:
    """Run ``run`` through the compiled loop of build ``path`` (``auto``, ``aot``, ``jit``:
    :func:`workbench.aot.kernel`); the caller has checked it with ``check_run``."""
    from workbench.aot import kernel_for
    from workbench.serving.compiled import layout as K

    req = draw(run.tenants, run.requests, run.seed, run.surge)
    cost = IterationCost.of_run(run)
    cfg, kv, hw, model, buckets = run.scheduler, run.kv, run.hardware, run.model, run.buckets
    n = len(req.arrival_s)
    pi = np.zeros(K.N_PI, i8)
    pi[K.P_N] = n
    pi[K.P_MODE] = K.REQUEST if cfg.batching == "request" else K.CHUNKED if cfg.chunked_prefill else K.PREFILL_FIRST
    pi[K.P_TOKENS], pi[K.P_SEQS] = cfg.max_num_batched_tokens, cfg.max_num_seqs
    pi[K.P_BS], pi[K.P_TOTAL], pi[K.P_WATER] = kv.block_size, kv.blocks, int(kv.watermark * kv.blocks)
    pi[K.P_SWAP] = kv.preemption == "swap"
    pi[K.P_NSIZES0], pi[K.P_RECOMPILE] = len(buckets.sizes), buckets.out_of_envelope == "recompile"
    pi[K.P_LIMIT], pi[K.P_SHARED], pi[K.P_PARTS] = buckets.recompile_limit, hw.cores > 1, 3 * hw.cores + 1
    pi[K.P_D], pi[K.P_ITEM], pi[K.P_LAYERS] = model.d_model, ITEM, model.layers
    pi[K.P_NK0], pi[K.P_NK1] = cost.kernels_per_layer(False), cost.kernels_per_layer(True)
    pi[K.P_HEADK], pi[K.P_GRAPHS], pi[K.P_VOCAB] = HEAD_KERNELS if model.vocab else 0, cost.cuda_graphs, model.vocab > 0
    pi[K.P_GRAPH_TOKENS] = GRAPH_MAX_TOKENS
    pf = np.zeros(K.N_PF, f8)
    pf[K.F_BLOCK_BYTES] = kv.block_size * cost.kv_bytes_per_token()
    pf[K.F_SWAP_BW], pf[K.F_PAUSE] = kv.swap_bandwidth_bytes_per_s, buckets.recompile_pause_s
    pf[K.F_ATT], pf[K.F_PEAK] = 4.0 * model.d_model, hw.cores * hw.peak_flops_per_core
    pf[K.F_KV] = 2.0 * model.kv_width * ITEM
    cm = dense_model(cost, pi, pf)
    offset = np.concatenate([[0], np.cumsum(req.output)]).astype(i8)
    q = np.zeros((K.N_Q, n), i8)
    rank = np.unique(req.priority, return_inverse=True)[1].ravel() if cfg.policy == "priority" else np.zeros(n, i8)
    q[K.Q_KEY] = (rank.astype(i8) << K.KEY_SHIFT) | np.arange(n)  # integer order = the reference's (priority, i)
    q[K.Q_PROMPT], q[K.Q_OUT], q[K.Q_TARGET] = req.prompt, req.output, req.prompt
    q[K.Q_PHASE], q[K.Q_OFFSET] = K.WAITING, offset[:-1]
    g = np.full((K.N_G, n), np.nan)
    g[K.G_ARRIVAL] = req.arrival_s
    token_s = np.full(int(offset[-1]), np.nan)
    si, sf = np.zeros(K.N_SI, i8), np.zeros(K.N_SF, f8)
    sizes = np.zeros(len(buckets.sizes) + buckets.recompile_limit + 1, i8)
    sizes[:len(buckets.sizes)] = buckets.sizes
    si[K.S_NSIZES] = len(buckets.sizes)
    top = max(cfg.max_num_batched_tokens, cfg.max_num_seqs, *buckets.sizes, 1)
    # (generic, rows) -> s: rows <= the next power of two of any iteration; row D_HEAD: the LM head by sequences
    dense = np.full((3, 2 * top + 2), np.nan)
    for (r, gen), s in cost._dense.items():  # noqa: SLF001 - what this process has already priced
        if r < dense.shape[1]:
            dense[int(gen), r] = s
    dense[K.D_HEAD] = 0.0
    if model.vocab:
        for seqs in range(min(cfg.max_num_seqs, n) + 1):  # an iteration holds at most this many sequences
            dense[K.D_HEAD, seqs] = cost.head_seconds(seqs)
    # room for an iteration per output token (most emit many): zero pages, touched only as the kernel fills them;
    # a column per iteration (column-major rows), so that each of assemble's columns is one contiguous run
    rows = np.zeros((10, max(1024, n * 4, int(offset[-1]) + n)), f8)
    queues = [np.zeros(n, i8) for _ in range(5)]  # running, waiting, swapped, snapshot, decodes
    pre = np.zeros((2, n), i8)
    args = [pi, pf, si, sf, q, g, token_s, *queues, pre, sizes, dense, cm, rows]
    run_tokens = kernel_for("run_tokens", path, tuple(args))  # the types checked once, not at every re-entry
    while True:
        status = run_tokens(*args)
        if status == K.DONE:
            break
        if status == K.NEED_ROOM:  # twice the room: the rows so far copied, the rest zero pages the kernel touches
            grown = np.zeros((rows.shape[0], 2 * rows.shape[1]), f8)
            grown[:, :rows.shape[1]] = rows
            rows = args[-1] = grown  # the same type: no new check
        else:
            raise RuntimeError("serving loop: nothing can run and nothing will arrive")
    it = rows[:, :si[K.S_NROWS]].T  # (iterations, 10), each column contiguous
    counts = [int(si[K.S_HIT]), int(si[K.S_PADDED]), int(si[K.S_FALLBACK]), int(si[K.S_RECOMPILED])]
    plan = bucket_summary(int(si[K.S_NSIZES]), counts, int(si[K.S_PAD_TOKENS]), len(it),
                          int(it[:, 2].sum() + it[:, 3].sum()))
    return assemble(run, req, g[K.G_FIRST], g[K.G_FINISH], q[K.Q_PREEMPT].astype(np.int32), offset, token_s, it,
                    g[K.G_ADMIT], plan)

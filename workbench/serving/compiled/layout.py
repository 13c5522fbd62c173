"""The compiled serving loop's memory layout: which slot or row of which flat array holds what.

Compile-time names shared by the kernel (:mod:`.loop`, :mod:`.run`) and its
Python side (:mod:`.driver`), kept apart from the kernel so that the Python side reads
them without importing numba (the kernel may run from the ahead-of-time build,
:mod:`workbench.aot`).
"""

from __future__ import annotations

# status codes
DONE, NEED_ROOM, STUCK = 0, 1, 2
# phases (as workbench.serving.state)
WAITING, PREFILL, DECODE, SWAPPED, FINISHED = 0, 1, 2, 3, 4
# modes
PREFILL_FIRST, CHUNKED, REQUEST = 0, 1, 2
# integer parameters pi[...]; the last six: the dense kernels' cost model (specialised kernels 0 .. P_NSPEC - 1,
# generic P_NSPEC .. P_NALL - 1 of the flat tables), the chip's cores, SRAM bytes and matrix-unit rows
P_N, P_MODE, P_TOKENS, P_SEQS, P_BS, P_TOTAL, P_WATER, P_SWAP, P_NSIZES0, P_RECOMPILE, P_LIMIT, P_SHARED, \
    P_PARTS, P_D, P_ITEM, P_LAYERS, P_NK0, P_NK1, P_HEADK, P_GRAPHS, P_VOCAB, P_GRAPH_TOKENS, P_NSPEC, P_NALL, \
    P_CORES, P_SRAM, P_MMA, P_NAIVE, N_PI = range(29)
# float parameters pf[...]: the run's, then the efficiency law's (serving.efficiency.EfficiencyLaw), then the
# dense kernels' (peak FLOP/s of one core, the generic fallback's slowdown)
F_BLOCK_BYTES, F_SWAP_BW, F_PAUSE, F_ATT, F_PEAK, F_KV, F_BW, F_LAUNCH, F_T0, F_ETA_C, F_ETA_M, F_BLEND, \
    F_EW_T0, F_ETA_EW, F_EPILOGUE_K, F_NORM_T0, F_ETA_NORM, F_PEAK_CORE, F_SLOWDOWN, N_PF = range(20)
# law kinds of a dense kernel (serving.efficiency.KINDS), in column 0 of the kernels' (kind, depth) table
GEMM, NORM, ELEMENTWISE = 0, 1, 2
# rows of the dense-cost table: one layer's dense kernels (specialised, generic) by row count (nan: not priced
# yet, the kernel prices it), the head by sequences
D_SPEC, D_GENERIC, D_HEAD = 0, 1, 2
# integer state si[...]
S_NXT, S_DONE, S_USED, S_NWAIT, S_NSWAP, S_NRUN, S_NROWS, S_PENDING, S_NDEC, S_NPRE, S_PREEMPTED, S_NSIZES, \
    S_RECOMPILES, S_HIT, S_PADDED, S_FALLBACK, S_RECOMPILED, S_PAD_TOKENS, S_ROWS, S_GEN, S_CTX, S_RUNNING, S_BTOK, \
    S_BSEQ, N_SI = range(25)
# float state sf[...]
T_NOW, T_SWAP_BYTES, T_KEYS, T_PAUSE, N_SF = range(5)
# per-sequence integer columns q[...]
Q_KEY, Q_PROMPT, Q_OUT, Q_GEN, Q_CACHED, Q_TARGET, Q_PHASE, Q_HELD, Q_PREEMPT, Q_OFFSET, N_Q = range(11)
# a queue key: the scheduling rank in the high bits, the request's index in the low 32 (key & KEY_INDEX): the same
# order as (rank, i), and the index read back with a mask, not a division
KEY_SHIFT, KEY_INDEX = 32, (1 << 32) - 1
# per-sequence float columns g[...]
G_ARRIVAL, G_ADMIT, G_FIRST, G_FINISH, N_G = range(5)

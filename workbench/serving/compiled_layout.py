"""The compiled serving loop's memory layout: which slot or row of which flat array holds what.

Compile-time names shared by the kernel (:mod:`.compiled_loop`, :mod:`.compiled_run`) and its
Python side (:mod:`.compiled`), kept apart from the kernel so that the Python side reads
them without importing numba (the kernel may run from the ahead-of-time build,
:mod:`workbench.aot`).
"""

from __future__ import annotations

# status codes
DONE, NEED_DENSE, NEED_ROOM, STUCK = 0, 1, 2, 3
# phases (as workbench.serving.state)
WAITING, PREFILL, DECODE, SWAPPED, FINISHED = 0, 1, 2, 3, 4
# modes
PREFILL_FIRST, CHUNKED, REQUEST = 0, 1, 2
# integer parameters pi[...]
P_N, P_MODE, P_TOKENS, P_SEQS, P_BS, P_TOTAL, P_WATER, P_SWAP, P_NSIZES0, P_RECOMPILE, P_LIMIT, P_SHARED, \
    P_PARTS, P_D, P_ITEM, P_LAYERS, P_NK0, P_NK1, P_HEADK, P_GRAPHS, P_VOCAB, P_GRAPH_TOKENS, N_PI = range(23)
# float parameters pf[...]: the run's, then the efficiency law's (serving.efficiency.EfficiencyLaw)
F_BLOCK_BYTES, F_SWAP_BW, F_PAUSE, F_ATT, F_PEAK, F_KV, F_BW, F_LAUNCH, F_T0, F_ETA_C, F_ETA_M, F_BLEND, \
    F_EW_T0, F_ETA_EW, N_PF = range(15)
# rows of the dense-cost table: one layer's dense kernels (specialised, generic) by row count; the head by sequences
D_SPEC, D_GENERIC, D_HEAD = 0, 1, 2
# integer state si[...]
S_NXT, S_DONE, S_USED, S_NWAIT, S_NSWAP, S_NRUN, S_NROWS, S_PENDING, S_NEED_ROWS, S_NEED_GEN, S_NDEC, S_NPRE, \
    S_PREEMPTED, S_NSIZES, S_RECOMPILES, S_HIT, S_PADDED, S_FALLBACK, S_RECOMPILED, S_PAD_TOKENS, S_ROWS, S_GEN, \
    S_CTX, S_RUNNING, S_BTOK, S_BSEQ, N_SI = range(27)
# float state sf[...]
T_NOW, T_SWAP_BYTES, T_KEYS, T_PAUSE, N_SF = range(5)
# per-sequence integer columns q[...]
Q_KEY, Q_PROMPT, Q_OUT, Q_GEN, Q_CACHED, Q_TARGET, Q_PHASE, Q_HELD, Q_PREEMPT, Q_OFFSET, N_Q = range(11)
# per-sequence float columns g[...]
G_ARRIVAL, G_ADMIT, G_FIRST, G_FINISH, N_G = range(5)

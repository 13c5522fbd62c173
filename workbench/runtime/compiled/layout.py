"""The compiled loop's memory layout: which row or slot of which flat array holds what.

The loop's state is a handful of numpy arrays laid out by :mod:`.driver` and passed to
the numba functions one by one (a compiled call that passes an array on costs a
reference-count update per array, and a call with more than 30 arguments cannot be
inlined, so related columns share one 2-D array). These constants are that layout:
compile-time names, not state.
"""

from __future__ import annotations

import numpy as np

INF = np.inf
COMPLETE, TIMER = 0, 1  # heap event kinds

# scalar state: int64 ``si`` and float64 ``sf``
(NEXT, SEQ, NBATCH, FI, NF, WAITING, HSIZE, BCOUNT, TURN, RESUME, N_IDLE, N_ACTIVE, SB_COUNT, SMEM_TOP,
 USED_BYTES, LOADS, EVICTIONS, OVERCOMMITS, CLOCK, MISS_C, MISS_S, MISS_K, N_COST, N_PH, N_REC) = range(25)
N_SI = 25  # N_COST, N_PH: costs and phases in the cost tables; N_REC: mapping evaluations recorded (cost book)
NOW, DEMAND, VIRTUAL, STALE_MAX, LINK_FREE, LINK_BUSY = range(6)  # LINK_*: the host link's queue end, busy s
N_SF = 6  # then, from READY0, one float per model: when its last load finished (s)
READY0 = N_SF

# parameters: int64 ``pi`` and float64 ``pf``; ``pref`` holds the preferred batch sizes, largest first
(P_N, P_NCLS, P_CORES, P_BATCH, P_MAXB, P_PLACE, P_ONLINE, P_MAXQ, P_TRACK, P_EXTRA, P_RES, P_NEUMAIER,
 P_NPREF, P_CAPACITY, P_CQI, P_KCP, P_KCI, P_SMEM0, P_DEFER, P_BOOK) = range(20)  # P_DEFER: dispatch
# load_then_dispatch; P_BOOK: batches are costed in the loop from a cost book (else by Python)
N_PI = 20
PF_DELAY, PF_TIMEOUT, PF_LINK, PF_LINK_SHARE = range(4)  # a weights copy's bytes/s, and its share of HBM
N_PF = 4
B_NONE, B_DYNAMIC, B_STATIC = range(3)  # batching
PL_LEAST, PL_ROUND, PL_PINNED = range(3)  # placement

# per request: float64 ``rf`` and int32 ``ri4`` rows
# the rows the trace keeps come first: the driver shrinks each array to them in place (realloc)
RF_REJ, RF_ARR, RF_KEY, RF_WW = range(4)  # time of rejection (s; nan), arrival (s), discipline key; RF_WW (a row
# only under load_then_dispatch): the class's waits for weights at arrival, then the request's own (s)
RI_BATCH, RI_OUT, RI_Q, RI_STREAM, RI_KRANK = range(5)  # batch, outcome, queue (-1 refused), stream, shape-key rank

# queues: ``qbuf`` (int32) holds each queue's requests in a slice, then (static batching) the sealed
# batches' members from pi[P_SMEM0]; ``qt`` (int64) rows per queue
QT_HEAD, QT_TAIL, QT_CLASS = range(3)
# ``csr`` (int32): [class -> queues pointers | queue ids | core -> classes pointers | class ids]

# per class: int64 ``cli`` and float64 ``clf`` rows; per stream: float64 ``sw`` rows
CL_N, CL_MODEL, CL_BLOCKED, CL_SBHEAD, CL_SBTAIL, CL_HOLD = range(6)  # CL_HOLD: holds its model's weights
CF_TIMER, CF_SINCE, CF_CUM, CF_PARK, CF_PARKED, CF_PCUM = range(6)  # CF_PARK: queued for weights until (s);
# CF_PARKED: s the next batch waited for them; CF_PCUM: s waited for them in all, through the end of the last wait
# a finished load_then_dispatch load is a TIMER event whose class is P_NCLS + its model (a wake-up)
SW_FINISH, SW_INVW = range(2)
# sealed static batches: int64 ``sb`` rows, float64 ``sbt`` (when sealed)
SB_OFF, SB_LEN, SB_NEXT = range(3)

# per core: int64 ``ci`` and float64 ``cf`` rows; ``todo`` (2, cores, phases): a batch's phases (s, demand)
C_IDLE, C_BATCH, C_HPOS, C_FREE, C_PI, C_PN, C_ACT = range(7)  # C_ACT: the active cores, in order; C_HPOS:
# the heap slot of the core's completion event (-1: none)
K_BUSY, K_RATE, K_M, K_REM, K_LAST, K_MAX, K_T0, K_HUNG = range(8)  # K_HUNG: scratch for water-filling

# per batch: int32 ``bi`` and float64 ``bf`` rows (the trace keeps bf's first two, three when sealed)
BI_CORE, BI_CLASS, BI_SIZE, BI_KEY = range(4)  # BI_KEY: the shape-key rank
BF_START, BF_END, BF_DISP, BF_EXTRA, BF_RELOAD, BF_COPY = range(6)  # BF_COPY: own weights copy (s)

# the heap: float64 ``ht`` (time) and int64 ``hq`` rows
HQ_SEQ, HQ_PAY = range(2)

# residency: int64 ``rres`` rows per model
R_WEIGHTS, R_RESIDENT, R_STAMP, R_IN_USE = range(4)

# what the loop asks of Python when it returns, and where it goes on when re-entered
DONE, NEED_FACTORS, NEED_COST, NEED_ROOM, NEED_COST_ROOM = range(5)  # NEED_COST_ROOM: grow the cost tables
GO_ON, REDO_DISPATCH = range(2)

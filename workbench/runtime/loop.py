"""The general event loop: every policy, queue and core, one event at a time.

The heap holds ``(time, seq, kind, a, b)`` with a monotonic ``seq`` so ties break the
same way every run (SimPy's core does the same). Arrivals are not heap events: they
are a pre-drawn sorted array read with a cursor. At one instant, all heap events
(completions, batching timers) are handled first, then the dispatcher runs once, then
the arrivals at that instant, each followed by the dispatcher. Same scenario and seed,
same trace, bit for bit.

Shared HBM bandwidth (processor sharing of bandwidth, Massoulie & Roberts 1999): a
batch runs as its sequence of kernel phases, each with an isolated duration (s) and a
bandwidth demand u in [0, 1] (bytes / (duration x bandwidth): the share of HBM it draws
alone). The phases running at one instant share HBM max-min fairly: if their demands
add up to at most 1 each gets what it asks; otherwise a water level theta with
sum_j min(u_j, theta) = 1 caps the hungry ones, and a phase progresses at
min(1, theta / u_j) isolated seconds per second (its memory traffic, overlapped with its
compute, is the bottleneck). No instant draws more than the HBM delivers, so four
batches of demand 0.5 started together finish at twice their isolated time. Rates
change only when a phase starts or ends; remaining work is carried across changes.
With one core, or zero demands, service is unchanged.

The parts with state of their own sit beside it: the class queues and static sealing
(:mod:`.loop_queues`), weights acquired and parked (:mod:`.loop_residency`), time
blocked by a non-conserving placement (:mod:`.loop_blocked`).
"""

from __future__ import annotations

import heapq
import math
from array import array
from bisect import insort
from typing import TYPE_CHECKING

import numpy as np

from workbench.runtime.columns import FACTOR_CHUNK, RunColumns
from workbench.runtime.loop_blocked import BlockedTracker
from workbench.runtime.loop_queues import ClassQueues
from workbench.runtime.loop_residency import LoopResidency
from workbench.runtime.trace import COMPLETED, REJECTED_BY_PLAN, REJECTED_QUEUE_FULL, REJECTED_TIMEOUT

if TYPE_CHECKING:
    from workbench.runtime.run_setup import RunSetup
    from workbench.service_model import Classification

INF = math.inf
_COMPLETE, _TIMER, _LOADED = 0, 1, 2  # _LOADED: a load_then_dispatch load finished: wake the dispatcher


def batch_cost(cls: Classification, bucket: int, size: int, key: int,
               scale: float) -> tuple[float, float, tuple[tuple[float, float], ...]]:
    """(mean isolated s, mean demand, phases) of a batch, scaled by its model; adjacent equal-demand phases merged."""
    mean, mshare, _ = cls.cost(bucket, size, key)
    ph = cls.phases(bucket, size, key) if cls.phases is not None else ((mean, mshare),)
    merged: list[tuple[float, float]] = []
    for d, u in ph:  # adjacent phases of equal demand are one phase
        if merged and merged[-1][1] == u:
            merged[-1] = (merged[-1][0] + d * scale, u)
        else:
            merged.append((d * scale, u))
    return mean * scale, mshare, tuple(merged)


def run_events(e: RunSetup, free: bool = True) -> RunColumns:  # noqa: C901 - the event loop is one function for speed
    """Simulate every request to completion or rejection with the general event loop.

    ``free=False`` tracks every kernel phase of every batch (the reference); by default a
    batch whose demands cannot meet any sharing skips its phase events (same physics,
    equal up to float rounding, ``tests/test_timeline.py``).
    """
    sc, model, rng = e.scenario, e.model, e.rng
    batching, discipline, placement = e.batching, e.discipline, e.placement
    req, cls = e.requests, e.classification
    n, n_cls, cores = len(req), len(e.class_qs), sc.hardware.cores
    arr = req.arrival_s.tolist()
    q_of, q_class = e.qid.tolist(), e.q_class
    class_qs, class_bucket, class_model = e.class_qs, e.class_bucket, e.class_model
    core_classes = [[c for c in range(n_cls) if k in e.class_cores[c]] for k in range(cores)]
    online = discipline.online
    key = [0.0] * n if online else discipline.keys(req.stream, sc)
    stream_of = req.stream.tolist()
    extra = cls.extra_s.tolist() if cls.extra_s is not None else None
    shape_key = cls.shape_key.tolist() if cls.shape_key is not None else None
    take, deadline, sealed = batching.take, batching.deadline, batching.sealed
    timeout_s, max_queue = sc.scheduler.timeout_s, sc.scheduler.max_queue
    scales = [m.service_scale for m in sc.models] or [1.0]
    outcome = [COMPLETED] * n
    rejected_at: dict[int, float] = {}
    req_batch = [-1] * n
    b_core: list[int] = []
    b_class: list[int] = []
    b_size: list[int] = []
    b_key: list[int] = []
    b_start, b_end = array("d", bytes(8 * n)), array("d", bytes(8 * n))  # batches <= requests
    b_disp = array("d", bytes(8 * n)) if sealed else b_start  # static: sealed before it starts
    b_extra: dict[int, float] = {}  # sparse: recompile pauses
    nbatch = 0
    idle = list(range(cores))
    busy_s = [0.0] * cores
    core_batch = [-1] * cores
    c_rate, c_m, c_rem, c_last, c_ver = [1.0] * cores, [0.0] * cores, [0.0] * cores, [0.0] * cores, [0] * cores
    c_phases: list[list[tuple[float, float]]] = [[] for _ in range(cores)]  # phases still to run, reversed
    # a batch that cannot meet any sharing runs "free": one completion event, no phase events (see start)
    c_free, c_max, c_t0 = [False] * cores, [0.0] * cores, [0.0] * cores
    c_all: list[list[tuple[float, float]]] = [[] for _ in range(cores)]  # a free batch's phases, in order
    active: list[int] = []
    heap: list[tuple] = []
    push, pop = heapq.heappush, heapq.heappop
    seq, waiting, demand = 0, 0, 0.0
    cost_cache: dict[tuple[int, int, int], tuple[float, float, tuple]] = {}
    factor_chunks: list[np.ndarray] = []
    factors: list[float] = []
    fi = 0

    def next_seq() -> int:
        nonlocal seq
        seq += 1
        return seq

    # the queues of each batch class (heads, batch pops, static sealing) and its batching timer
    cq = ClassQueues(class_qs, len(q_class), key, arr, discipline, batching,
                     lambda t, c: push(heap, (t, next_seq(), _TIMER, c, 0)))
    queues, class_n, sealed_q, timer_at = cq.queues, cq.class_n, cq.sealed_q, cq.timer_at
    heads, pop_batch, seal = cq.heads, cq.pop_batch, cq.seal

    # weights residency: which models are in HBM, and (load_then_dispatch) classes parked for their weights
    weights = LoopResidency(sc, class_model, n, lambda t, m: push(heap, (t, next_seq(), _LOADED, m, 0)))
    residency, defer, park_until, holds = weights.residency, weights.defer, weights.park_until, weights.holds

    def rebalance(now: float) -> None:
        """Share HBM bandwidth max-min fairly among the running phases; re-time those whose rate changed."""
        theta = INF
        if demand > 1.0:  # water-filling: the level at which the capped demands use all of HBM
            hungry = sorted(c_m[j] for j in active if c_m[j] > 0.0)
            left, n_left = 1.0, len(hungry)
            for u in hungry:
                if u * n_left <= left:
                    left -= u
                    n_left -= 1
                else:
                    theta = left / n_left
                    break
        for k in active:
            m = c_m[k]
            r = theta / m if m > theta else 1.0
            if r != c_rate[k]:
                c_rem[k] -= (now - c_last[k]) * c_rate[k]
                if c_rem[k] < 0.0:
                    c_rem[k] = 0.0
                c_last[k], c_rate[k] = now, r
                c_ver[k] += 1
                push(heap, (now + c_rem[k] / r, next_seq(), _COMPLETE, k, c_ver[k]))

    def enter(k: int, now: float, dur: float, u: float) -> None:
        """Core ``k`` begins a phase of ``dur`` isolated seconds drawing ``u`` of the bandwidth."""
        nonlocal demand
        before = demand
        c_m[k], c_rem[k], c_last[k] = u, dur, now
        demand = sum([c_m[j] for j in active])  # summed afresh: no drift from adding and removing
        if before <= 1.0 and demand <= 1.0:  # no sharing before or after: only this phase needs timing
            c_rate[k] = 1.0
            c_ver[k] += 1
            push(heap, (now + dur, next_seq(), _COMPLETE, k, c_ver[k]))
        else:
            c_rate[k] = 0.0  # forces a re-time
            rebalance(now)

    def start(k: int, c: int, members: list[int], t_disp: float, now: float) -> None:
        """Batch ``members`` of class ``c`` starts on core ``k``."""
        nonlocal waiting, demand, nbatch, fi, factors
        size = len(members)
        key = max([shape_key[r] for r in members]) if shape_key is not None else 0
        cost = cost_cache.get((c, size, key))
        if cost is None:
            cost = cost_cache[(c, size, key)] = batch_cost(cls, class_bucket[c], size, key, scales[class_model[c]])
        if fi == len(factors):  # one unit-mean factor per batch, drawn in chunks
            chunk = model.draw_factors(rng, FACTOR_CHUNK)
            factor_chunks.append(chunk)
            factors, fi = chunk.tolist(), 0
        x = factors[fi]
        work = cost[0] * x
        fi += 1
        b = nbatch
        nbatch += 1
        pre: list[tuple[float, float]] = []
        e = 0.0
        if extra is not None:
            e = max([extra[r] for r in members])
            if e:
                b_extra[b] = e
                pre.append((e, 0.0))  # a recompile pause: the core compiles, HBM idle
                work += e
        if residency is not None:
            work += weights.acquire(b, c, members, now + e, pre)  # the weights are asked for after any pause
        for r in members:
            req_batch[r] = b
        b_core.append(k)
        b_class.append(c)
        b_size.append(size)
        b_key.append(key)
        b_start[b] = now
        if sealed:
            b_disp[b] = t_disp
        waiting -= size
        idle.remove(k)
        core_batch[k] = b
        placement.dispatched(k)
        if cores == 1:
            push(heap, (now + work, next_seq(), _COMPLETE, k, 0))
            return
        todo = pre + [(d * x, u) for d, u in cost[2]]
        peak = max([u for _, u in todo])
        if free and peak + sum([c_max[j] for j in active]) <= 1.0:
            # even at every batch's hungriest phase the demands fit the HBM: no phase can be slowed until
            # the next batch starts, so this one runs free to its end (checked again at every start)
            c_free[k], c_max[k], c_t0[k], c_all[k] = True, peak, now, todo
            c_m[k] = peak  # an upper bound: keeps the demand sum conservative while phases are not tracked
            active.append(k)
            demand = sum([c_m[j] for j in active])
            c_ver[k] += 1
            push(heap, (now + work, next_seq(), _COMPLETE, k, c_ver[k]))
            return
        for j in active:
            if c_free[j]:
                follow(j, now)
        demand = sum([c_m[j] for j in active])
        todo.reverse()
        d, u = todo.pop()
        c_phases[k] = todo
        c_m[k], c_max[k], c_free[k] = 0.0, peak, False
        active.append(k)
        enter(k, now, d, u)

    def follow(j: int, now: float) -> None:
        """A free batch becomes phase-tracked: find its phase from the time it has run at full speed."""
        elapsed, acc = now - c_t0[j], 0.0
        phases = c_all[j]
        i = 0
        while i < len(phases) - 1 and acc + phases[i][0] <= elapsed:
            acc += phases[i][0]
            i += 1
        rest = phases[i + 1:]
        rest.reverse()
        c_phases[j] = rest
        c_free[j] = False
        c_m[j], c_rem[j], c_last[j], c_rate[j] = phases[i][1], max(acc + phases[i][0] - elapsed, 0.0), now, 1.0
        c_ver[j] += 1
        push(heap, (now + c_rem[j], next_seq(), _COMPLETE, j, c_ver[j]))

    def purge(now: float) -> None:
        """Reject requests that have waited longer than the timeout."""
        nonlocal waiting
        for c in range(n_cls):
            if class_n[c]:
                for q in class_qs[c]:
                    dq = queues[q]
                    while dq and arr[dq[0]] + timeout_s < now:
                        r = dq.popleft()
                        outcome[r], rejected_at[r] = REJECTED_TIMEOUT, arr[r] + timeout_s
                        class_n[c] -= 1
                        waiting -= 1
                if holds[c] and not class_n[c] and not sealed_q[c]:  # nobody left to wait for the weights
                    weights.drop_hold(c)

    def dispatch(now: float) -> None:
        """Start batches on idle cores while some class is ready."""
        if timeout_s:
            purge(now)
        while idle:
            for k in placement.candidates(idle, busy_s):
                best, best_key, best_m = -1, INF, 0
                for c in core_classes[k]:
                    if park_until[c] > now:  # waiting in the queue for its weights
                        continue
                    if sealed:
                        if sealed_q[c] and key[sealed_q[c][0][0][0]] < best_key:
                            best, best_key = c, key[sealed_q[c][0][0][0]]
                        continue
                    w = class_n[c]
                    if not w:
                        continue
                    hk, oldest = heads(c)
                    m = take(w, oldest, now)
                    if not m:
                        dl = deadline(oldest)
                        if timer_at[c] != dl:
                            timer_at[c] = dl
                            push(heap, (dl, next_seq(), _TIMER, c, 0))
                    elif hk < best_key:
                        best, best_key, best_m = c, hk, m
                if best >= 0:
                    if defer and weights.park(best, now):
                        break  # look again: the core is still idle
                    if sealed:
                        members, t_seal = sealed_q[best].popleft()
                        start(k, best, members, t_seal, now)
                    else:
                        start(k, best, pop_batch(best, best_m), now, now)
                    break
            else:
                return

    # a non-conserving placement: time each class is ready with an idle core it may not use
    blocking = BlockedTracker(n_cls, sealed, sealed_q, class_n, park_until, idle, take, heads) \
        if not placement.conserving else None
    track_blocked = blocking.track if blocking is not None else None

    i = 0
    now = 0.0
    while True:
        if heap and (i >= n or heap[0][0] <= arr[i]):
            now = heap[0][0]
            changed = False  # only a finished batch or a timer can let the dispatcher start something
            while heap and heap[0][0] == now:  # every heap event of this instant, then dispatch once
                _, _, kind, a, ver = pop(heap)
                if kind == _COMPLETE:
                    if cores > 1:
                        if ver != c_ver[a]:
                            continue
                        if c_phases[a]:  # the batch's next kernel phase
                            d, u = c_phases[a].pop()
                            enter(a, now, d, u)
                            continue
                    changed = True
                    b = core_batch[a]
                    b_end[b] = now
                    busy_s[a] += now - b_start[b]
                    core_batch[a] = -1
                    insort(idle, a)  # kept sorted: ties between cores go to the lowest index
                    if residency is not None:
                        residency.release(class_model[b_class[b]])
                    if cores > 1:
                        active.remove(a)
                        before = demand
                        c_m[a] = 0.0
                        demand = sum([c_m[j] for j in active])
                        if before > 1.0:
                            rebalance(now)
                elif kind == _LOADED:
                    changed = True
                else:
                    changed = True
                    if sealed:
                        seal(a, now)
            if not changed:  # phase changes only: no core freed, no queue changed
                continue
            dispatch(now)
        elif i < n:
            now = arr[i]
            r = i
            i += 1
            q = q_of[r]
            if q < 0:
                outcome[r], rejected_at[r] = REJECTED_BY_PLAN, now
                continue
            if max_queue:
                if timeout_s:
                    purge(now)
                if waiting >= max_queue:
                    outcome[r], rejected_at[r] = REJECTED_QUEUE_FULL, now
                    continue
            if online:
                key[r] = discipline.tag(stream_of[r])
            queues[q].append(r)
            c = q_class[q]
            if defer:  # the class's waits for weights so far (one may be under way)
                weights.arrive(r, c, now)
            class_n[c] += 1
            waiting += 1
            if sealed:
                seal(c, now)
            if idle:
                # an arrival changes only its own class: unless that class is now ready, nothing can start
                # (with timeouts, dispatch also purges, so it always runs)
                if sealed or timeout_s:
                    dispatch(now)
                else:
                    oldest = heads(c)[1]
                    if take(class_n[c], oldest, now):
                        dispatch(now)
                    elif timer_at[c] != deadline(oldest):
                        timer_at[c] = deadline(oldest)
                        push(heap, (timer_at[c], next_seq(), _TIMER, c, 0))
        else:
            break
        if track_blocked is not None:
            track_blocked(now)
    return RunColumns(
        nbatch=nbatch, b_core=b_core, b_class=b_class, b_size=b_size, b_key=b_key, b_start=b_start, b_end=b_end,
        b_disp=b_disp if sealed else None, req_batch=req_batch, outcome=outcome, rejected_at=rejected_at,
        factor_chunks=factor_chunks, b_extra=b_extra, b_reload=weights.b_reload, b_copy=weights.b_copy,
        busy_s=busy_s, residency=residency, block_curves=blocking.curves(now) if blocking is not None else None,
        weights_wait=weights.weights_wait)


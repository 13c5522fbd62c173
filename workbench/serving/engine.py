"""The token-level serving loop: iterations, one after another, each priced by the roofline.

Time advances iteration by iteration (an iteration is one forward pass of a batch of
sequences). Before each, arrivals up to the current time join the waiting queue and the
scheduler builds the batch; the iteration lasts :meth:`IterationCost.seconds` of its
token counts, plus any KV swap traffic over the host link. When nothing can run, time
jumps to the next arrival. The trace keeps every request's first-token and finish
times, every token's emission time, and one row per iteration.

Two features run in this loop only (the compiled loop refuses them; ``loop="auto"`` picks this one):
tensor parallelism over GPUs (``[serving.parallel]``: priced by :class:`IterationCost`, the all-reduces
over the link kept per iteration) and speculative decoding (``[serving.speculative]``:
:mod:`workbench.serving.speculative`).
"""

from __future__ import annotations

from array import array

import numpy as np

from workbench import aot
from workbench.serving.buckets import BucketState
from workbench.serving.cost import IterationCost, causal_keys
from workbench.serving.run import ServingRun, check_run, kv_bytes_per_token_of
from workbench.serving.scheduler import scheduler_for
from workbench.serving.speculative import Speculator
from workbench.serving.state import ServingState
from workbench.serving.trace import ITERATION_COLUMNS, ServingTrace, assemble
from workbench.serving.workload import draw

LOOPS = ("auto", "compiled", "aot", "jit", "python")  # aot, jit: the compiled loop from that build


def simulate_tokens(run: ServingRun, loop: str = "auto") -> ServingTrace:
    """Run ``run`` to the last token of every request (deterministic for its seed).

    ``loop``: ``python`` runs the readable loop below (the reference); ``compiled`` (and ``auto``
    where it can run: built ahead of time, or numba installed) the same loop compiled
    (:mod:`workbench.serving.compiled.driver`), equal bit for bit; ``aot`` and ``jit`` the compiled
    loop from that build (:func:`workbench.aot.kernel`). A run with tensor parallelism over GPUs or
    speculative decoding (:func:`python_only`) runs the readable loop under ``auto``; the compiled
    loops refuse it with a ``ValueError``.
    """
    check_run(run)
    if loop not in LOOPS:
        raise ValueError(f"loop must be one of {LOOPS}, not {loop!r}")
    only = python_only(run)
    if only and loop in ("compiled", "aot", "jit"):
        raise ValueError(f"the compiled loop does not implement {' or '.join(only)}: run this with "
                         "loop='python' (or 'auto', which picks it)")
    if loop in ("compiled", "aot", "jit") or (loop == "auto" and aot.available(entry="run_tokens") and not only):
        from workbench.serving.compiled.driver import simulate_compiled

        return simulate_compiled(run, loop if loop in ("aot", "jit") else "auto")
    return _simulate_python(run)


def python_only(run: ServingRun) -> list[str]:
    """The features of ``run`` only the readable loop implements (none: the compiled loop can run it)."""
    return ((["tensor parallelism over GPUs ([serving.parallel] tensor > 1)"] if run.parallel.tensor > 1 else [])
            + (["speculative decoding ([serving.speculative] tokens > 0)"] if run.speculative.on else []))


def _simulate_python(run: ServingRun) -> ServingTrace:
    """The readable loop: iterations one after another, the scheduler's batch, its price, its tokens."""
    req = draw(run.tenants, run.requests, run.seed, run.surge)
    cost = IterationCost.of_run(run)
    state = ServingState(req, run.kv, run.scheduler.policy, kv_bytes_per_token_of(run))
    sched = scheduler_for(run.scheduler)
    spec = Speculator(run, state, req.tenant) if run.speculative.on else None
    swap_bw = run.kv.swap_bandwidth_bytes_per_s
    arrival = state.arrival
    rows = array("d")  # the iteration rows, flat: 8 bytes a value (a list of tuples takes ~4x that)
    price, record, decoded, prefilled, link = cost.pricer(), rows.extend, state.decoded, state.prefilled, \
        cost.link_seconds
    plan = BucketState(run.buckets)
    place = plan.place
    cached_of = state.cached.__getitem__
    t, nxt, n = 0.0, 0, state.n
    while state.done < n:
        while nxt < n and arrival[nxt] <= t:
            state.arrive(nxt)
            nxt += 1
        if not (state.running or state.waiting or state.swapped):
            t = arrival[nxt]
            continue
        state.preempted_now, state.swap_bytes, state.now = [], 0.0, t
        batch = sched.step(state)
        if not batch:
            if nxt >= n:
                raise RuntimeError("serving loop: nothing can run and nothing will arrive")
            t = max(t, arrival[nxt])
            continue
        decodes, prefills, speculating = batch.decodes, batch.prefills, batch.spec
        ctx = sum(map(cached_of, decodes))  # a decode attends to its context and itself
        tokens, keys, prefill = len(decodes), float(ctx + len(decodes)), 0
        for i, k in prefills:
            start = cached_of(i)
            prefill += k
            keys += causal_keys(start, k)
            ctx += start
        heads, draft_s = len(decodes) + len(prefills), 0.0  # the LM head runs on every position that yields a token
        if speculating:  # the draft's k steps, then k + 1 positions per sequence verified with the rest
            verify, verify_keys, verify_ctx, draft_s = spec.price(state.cached, speculating)
            tokens, keys, ctx, heads = tokens + verify, keys + verify_keys, ctx + verify_ctx, heads + verify
        swap_s = state.swap_bytes / swap_bw
        running = len(state.running)
        rows_priced, generic, pause = place(tokens + prefill)
        t_end = t + pause + draft_s + price(tokens + prefill, keys, float(ctx), rows_priced, generic, heads) + swap_s
        for i, k in prefills:
            prefilled(i, k, t_end)
        decoded(decodes, t_end)
        emitted = len(decodes) + (spec.emit(state, speculating, t_end) if speculating else 0)
        used = state.pool.used
        assert 0 <= used <= state.pool.total
        steps = len(decodes) + len(speculating)
        record((t, t_end, prefill, steps, steps + len(prefills), running, used, len(state.preempted_now), swap_s,
                pause, link(tokens + prefill), draft_s, len(speculating), emitted))
        t = t_end
    it = np.frombuffer(rows, dtype=float).reshape(-1, len(ITERATION_COLUMNS))  # no copy
    k = run.speculative.tokens
    return assemble(run, req, np.array(state.first_s), np.array(state.finish_s),
                    np.array(state.preemptions, dtype=np.int32), np.array(state.offset, dtype=np.int64),
                    np.frombuffer(state.token_s, dtype=float), it, np.array(state.admit_s),
                    plan.summary(len(it), int(it[:, 2].sum() + it[:, 3].sum()) + k * int(it[:, 12].sum())),
                    spec.columns() if spec else None)



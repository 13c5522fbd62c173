"""Generation requests of a serving run: arrival, tenant, prompt length, output length (seeded); and the memory a
run of them may take, bounded before it starts (:func:`check_memory`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from workbench.errors import ConfigError
from workbench.limits import GIB, TOKEN_BYTES_PER_REQUEST, TOKEN_BYTES_PER_STEP, TOKEN_RUN_BYTES, token_run_bytes
from workbench.serving.config import LengthLaw, Surge, Tenant

if TYPE_CHECKING:
    from workbench.serving.engine import ServingRun


@dataclass(frozen=True)
class TokenRequests:
    """Requests in arrival order."""

    arrival_s: np.ndarray  # float64, s
    tenant: np.ndarray  # int32, index into the run's tenants
    prompt: np.ndarray  # int64, tokens
    output: np.ndarray  # int64, tokens to generate (>= 1)
    priority: np.ndarray  # int32, the tenant's priority


def lengths(rng: np.random.Generator, law: LengthLaw, n: int, arrival_s: np.ndarray | None = None) -> np.ndarray:
    """``n`` lengths from ``law``: lognormal(median at each arrival, sigma), rounded, clipped to [1, max]."""
    median = law.median if law.drift_to is None or arrival_s is None else law.median_at(arrival_s)
    x = median * np.exp(law.sigma * rng.standard_normal(n)) if law.sigma > 0 else np.broadcast_to(median, (n,))
    return np.clip(np.rint(x), 1, law.max).astype(np.int64)


NO_SURGE = Surge()


def draw(tenants: tuple[Tenant, ...], n: int, seed: int, surge: Surge = NO_SURGE) -> TokenRequests:
    """``n`` requests from the tenants' merged Poisson streams (each request's tenant drawn by rate share), every
    rate multiplied during a ``surge`` window (the same draws, the arrival clock warped: no surge, no change).

    Each quantity draws from its own child stream of ``seed`` (arrival gaps, tenants, and every tenant's prompt and
    output lengths), so request ``i`` is the same in a run of any length: a longer run only adds requests after it.
    """
    arrivals, choice, *per_tenant = (np.random.default_rng(s)
                                     for s in np.random.SeedSequence(seed).spawn(2 + 2 * len(tenants)))
    rates = np.array([t.rate for t in tenants])
    arrival = surge.warp(np.cumsum(arrivals.exponential(1.0 / rates.sum(), n)))
    tenant = choice.choice(len(tenants), size=n, p=rates / rates.sum()).astype(np.int32)
    prompt = np.empty(n, dtype=np.int64)
    output = np.empty(n, dtype=np.int64)
    for k, t in enumerate(tenants):
        mine = tenant == k
        m = int(mine.sum())
        prompt[mine] = lengths(per_tenant[2 * k], t.prompt, m, arrival[mine])
        output[mine] = lengths(per_tenant[2 * k + 1], t.output, m, arrival[mine])
    priority = np.array([t.priority for t in tenants], dtype=np.int32)[tenant]
    return TokenRequests(arrival, tenant, prompt, output, priority)


def worst_steps(run: ServingRun) -> int:
    """The most steps (:data:`workbench.limits.TOKEN_BYTES_PER_STEP`) the run can take, from its laws' maxima alone:
    every request of the longest output and the longest prompt (in chunks of ``max_num_batched_tokens``)."""
    budget = run.scheduler.max_num_batched_tokens
    return run.requests * max(t.output.max + t.prompt.max // budget for t in run.tenants)


def drawn_counts(run: ServingRun) -> tuple[int, int]:
    """The run's output tokens and prefill chunks from its drawn workload (request lengths only: nothing per token
    is allocated): its prompt tokens in chunks of ``max_num_batched_tokens`` are what iterations that emit
    nothing can prefill, preemptions aside."""
    req = draw(run.tenants, run.requests, run.seed, run.surge)
    return int(req.output.sum()), int(req.prompt.sum()) // run.scheduler.max_num_batched_tokens


def drawn_steps(run: ServingRun) -> int:
    """The run's steps (:data:`workbench.limits.TOKEN_BYTES_PER_STEP`) from its drawn workload."""
    return sum(drawn_counts(run))


def check_memory(run: ServingRun) -> None:
    """Refuse, before anything per token is allocated, a run whose trace would not fit ``TOKEN_RUN_BYTES``.

    Why a cap and not streamed summaries: both loops write every output token's emission time into one
    column (the compiled kernel takes it as an argument), the ITL percentiles are exact over every gap, and
    the iteration rows feed the summary, the Chrome trace and the plots; streaming them would change the kernel
    and every reader of a trace, and a sketch the figures of every normal run. So a run keeps its exact
    columns, and the memory they need is bounded up front (:func:`workbench.limits.token_run_bytes`). The bound
    from the laws' maxima (:func:`worst_steps`) decides at no cost; a run it would refuse has its lengths drawn
    (:func:`drawn_steps`: O(requests), prefix-stable and seeded, so the decision is the same every time) and the
    exact count decides, so a long-tailed law clipped far above its median is not refused for tokens it never
    draws. Requests too many even at one token each are refused without drawing.
    """
    n = run.requests
    if token_run_bytes(n, worst_steps(run)) <= TOKEN_RUN_BYTES:
        return
    cap = f"a token run may take at most {TOKEN_RUN_BYTES / GIB:g} GiB ({TOKEN_BYTES_PER_REQUEST} bytes per " \
          f"request and {TOKEN_BYTES_PER_STEP} per output token or prefill chunk: each token's time and, at worst, " \
          "an iteration row of its own)"
    if token_run_bytes(n, n) > TOKEN_RUN_BYTES:
        raise ConfigError("requests", n, f"{n:,} requests of at least one output token each need at least "
                          f"{token_run_bytes(n, n) / GIB:,.2f} GiB, but {cap}")
    (out, chunks), budget = drawn_counts(run), run.scheduler.max_num_batched_tokens
    need = token_run_bytes(n, out + chunks)
    if need > TOKEN_RUN_BYTES:
        raise ConfigError("requests", n, f"{n:,} requests draw {out:,} output tokens"
                          + (f" and {chunks:,} prefill chunks of {budget:,} tokens" if chunks else "")
                          + f", up to {need / GIB:,.2f} GiB, but {cap}; use fewer requests or shorter outputs")

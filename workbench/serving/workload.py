"""Generation requests of a serving run: arrival, tenant, prompt length, output length (seeded). The memory a run
of them may take is bounded before it starts (:func:`workbench.serving.run.check_memory`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from workbench.serving.config import LengthLaw, Surge, Tenant


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

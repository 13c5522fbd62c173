"""Exercise checkers of chapter 03 (batching and queues), the twenty-line batcher included.

Same contract as :mod:`workbench.ui.exercises.base`: "right", "not yet: <hint>" or "not answered yet";
panel exercises run the panel's model headless. ``tests/test_exercises_fusion_batching.py`` is the
instructor's key (with :mod:`workbench.ui.exercises.fusion`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from workbench.analysis import queueing as q
from workbench.ui.exercises.base import NOT_ANSWERED, _run, _verdict

BATCHING_AT = {"rate": 1500.0, "policy": "dynamic", "max_batch": 16}


LITTLE_AT = {"rate": 1200.0, "policy": "dynamic", "max_batch": 16, "max_delay_ms": 4.0}  # 03, exercise 1


def littles_law_depth(panel, mean_waiting: Any) -> str:
    """03, exercise 1: the mean number of requests waiting at 1,200 req/s with a 4 ms window (dynamic, 16), from
    L = lambda W (the panel's run there gives W)."""
    def test() -> bool:
        s = _run(panel, **LITTLE_AT)
        return abs(float(mean_waiting) - s["queue_depth"]["mean"]) <= 0.1 * s["queue_depth"]["mean"]

    return _verdict((mean_waiting,), "a number of requests", test,
                    "L = lambda x W: the arrival rate in req/s times the mean queue wait in seconds, not ms")


def smallest_delay_under_utilisation(panel, max_delay_ms: Any, target: float = 0.8) -> str:
    """03, exercise 2: at 1,500 req/s (dynamic, max batch 16), the smallest max delay (0.25 ms grid) under 80% busy."""
    step = panel.ctrl["max_delay_ms"].step

    def util(d: float) -> float:
        return float(np.mean(_run(panel, max_delay_ms=d, **BATCHING_AT)["cores"]["utilization"]))

    def test() -> bool:
        d = float(max_delay_ms)
        if d < step or abs(d / step - round(d / step)) > 1e-9:
            raise ValueError(f"a delay on the slider's {step} ms grid, above 0")
        return util(d) < target and util(d - step) >= target

    return _verdict((max_delay_ms,), "a delay in ms", test,
                    "a longer window fills bigger batches; each batch pays the 2 ms fixed cost once")


def first_rate_wait_exceeds_service(panel, rate: Any) -> str:
    """03, exercise 3: without batching, the first load (50 req/s grid) whose mean wait exceeds the 2.5 ms service."""
    def wait(r: float) -> float:
        return _run(panel, policy="none", rate=r)["wait_s"]["mean"]

    def test() -> bool:
        r = float(rate)
        if r % 50 or not 100 <= r <= 3000:
            raise ValueError("a load on the slider's 50 req/s grid")
        formula = [q.allen_cunneen_wait(x, 0.0025, 2, 1.0, 0.09) for x in (r - 50, r)]
        return wait(r) > 2.5e-3 >= wait(r - 50) and formula[1] > 2.5e-3 >= formula[0]

    return _verdict((rate,), "a load in req/s", test,
                    "set Allen-Cunneen's wait equal to E[S] = 2.5 ms with c = 2, ca2 = 1, cs2 = 0.09")


# --- 03, build it yourself: a dynamic batcher in twenty lines ---------------------------------------------------------

BATCHER_UNBATCHED = (600.0, 700.0)  # req/s, max batch 1: against Allen-Cunneen (deterministic service, cs2 = 0)
BATCHER_BATCHED = ((250.0, 16, 0.002), (1500.0, 16, 0.002), (1500.0, 16, 0.008), (2500.0, 16, 0.002))
BATCHER_TOLERANCE = 0.10  # relative, on the mean wait: two runs of 20,000 requests on different seeds
BATCHER_REQUESTS = 20000


def _knee():
    from workbench.scenario import load_scenario

    return load_scenario("batching_knee")


def batcher_law() -> tuple[float, float, int]:
    """(base_s, per_item_s, cores) of the ``batching_knee`` scenario: the affine service law the learner's
    batcher uses (chapter 03, section 2: the compiled plan's launches and per-request work)."""
    sc = _knee()
    return sc.service.base_s, sc.service.per_item_s, sc.hardware.cores


def library_batcher_wait_s(rate: float, max_batch: int, max_delay_s: float) -> float:
    """Mean queue wait (s) of the library's simulator on ``batching_knee`` with a deterministic service (the
    same affine law, no noise), dynamic batching at ``max_batch`` / ``max_delay_s``, 20,000 requests."""
    import dataclasses

    from workbench.analysis import knee as kn
    from workbench.config import Batching

    sc = _knee()
    sc = dataclasses.replace(sc, service=dataclasses.replace(sc.service, law="deterministic"))
    policy = Batching("none", 1, 0.0) if max_batch == 1 else Batching("dynamic", max_batch, max_delay_s)
    return kn.knee_sweep(sc, policy, (rate,), requests=BATCHER_REQUESTS)[0]["wait_mean_s"]


def allen_cunneen_batcher_wait_s(rate: float) -> float:
    """Allen-Cunneen's mean wait (s) for the unbatched queue with the deterministic affine service (cs2 = 0)."""
    base, per, cores = batcher_law()
    return q.allen_cunneen_wait(rate, base + per, cores, 1.0, 0.0)


def _has_placeholder(fn) -> bool:
    code = getattr(fn, "__code__", None)
    return code is not None and Ellipsis in code.co_consts


def _waits(fn, rate: float, max_batch: int, max_delay_s: float) -> np.ndarray:
    w = np.asarray(fn(rate, max_batch, max_delay_s), dtype=float)
    if w.shape != (BATCHER_REQUESTS,):
        raise ValueError(f"one wait per request: an array of {BATCHER_REQUESTS:,} (got shape {w.shape})")
    return w


def batcher_matches(fn: Any) -> str:
    """03, build it yourself: the learner's ``fn(rate, max_batch, max_delay_s)`` returns each request's queue wait
    (s). Right when its mean wait is within 10% of Allen-Cunneen unbatched and of the library's simulator
    batched, at every case of :data:`BATCHER_UNBATCHED` and :data:`BATCHER_BATCHED`."""
    if fn is ... or _has_placeholder(fn):
        return NOT_ANSWERED
    if not callable(fn):
        return f"expected a function my_batcher(rate, max_batch, max_delay_s); got {fn!r}"
    problems: list[str] = []

    def check() -> bool:
        for rate in BATCHER_UNBATCHED:
            w = _waits(fn, rate, 1, 0.0)
            if (w < -1e-12).any():
                problems.append("some requests leave before they arrive: t is at least arrive[i]")
                return False
            ac = allen_cunneen_batcher_wait_s(rate)
            if abs(w.mean() - ac) > BATCHER_TOLERANCE * ac:
                problems.append(
                    f"unbatched at {rate:.0f} req/s your mean wait is {w.mean() * 1e3:.2f} ms, Allen-Cunneen says "
                    f"{ac * 1e3:.2f} ms: " + ("a request waits for a free core: t is at least free[core]"
                                              if w.mean() < 0.5 * ac else
                                              "a core is busy base + per-item x n for a batch of n"))
                return False
        for rate, b, d in BATCHER_BATCHED:
            w = _waits(fn, rate, b, d)
            lib = library_batcher_wait_s(rate, b, d)
            if abs(w.mean() - lib) > BATCHER_TOLERANCE * lib:
                problems.append(
                    f"max batch {b}, {d * 1e3:g} ms at {rate:.0f} req/s: your mean wait {w.mean() * 1e3:.2f} ms, the "
                    f"library's {lib * 1e3:.2f} ms: " + (
                        "a batch leaves when a core is free and it is full or its window has closed, whichever "
                        "comes first" if w.mean() > lib else
                        "everyone waiting at t leaves, up to max_batch, and no batch leaves before a core is free"))
                return False
        return True

    def test() -> bool:
        try:
            return check()
        except ValueError:  # the wrong shape of answer: said as "expected ..."
            raise
        except Exception as e:  # a half-written function fails in its own way: say how
            problems.append(f"the function failed: {type(e).__name__}: {e}")
            return False

    verdict = _verdict(("your function",), "a function my_batcher(rate, max_batch, max_delay_s) -> waits (s)", test,
                       "")
    return "not yet: " + (problems[0] if problems else "compare your waits with the library's") \
        if verdict == "not yet: " else verdict


def batcher_comparison(fn: Any, unbatched: tuple[float, ...] = (200.0, 300.0, 400.0, 500.0, 600.0, 700.0, 750.0),
                       batched: tuple[float, ...] = (250.0, 500.0, 1000.0, 1500.0, 2000.0, 2500.0, 3000.0),
                       max_batch: int = 16, max_delay_s: float = 0.002) -> dict:
    """Mean wait (s) per load: the learner's batcher (``None`` while it holds a placeholder or fails), the
    library's simulator (deterministic service) and, unbatched, Allen-Cunneen. For 03's comparison figure."""
    ready = callable(fn) and not _has_placeholder(fn)

    def mine(rate: float, b: int, d: float):
        if not ready:
            return None
        try:
            return float(_waits(fn, rate, b, d).mean())
        except Exception:  # a half-written function: the figure shows the library alone
            return None

    return {
        "unbatched": {"rate": list(unbatched), "mine": [mine(r, 1, 0.0) for r in unbatched],
                      "library": [library_batcher_wait_s(r, 1, 0.0) for r in unbatched],
                      "allen_cunneen": [allen_cunneen_batcher_wait_s(r) for r in unbatched]},
        "batched": {"rate": list(batched), "mine": [mine(r, max_batch, max_delay_s) for r in batched],
                    "library": [library_batcher_wait_s(r, max_batch, max_delay_s) for r in batched]},
    }

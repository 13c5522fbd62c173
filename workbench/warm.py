"""Warm numba's JIT cache of the compiled loops and cost model: ``python -m workbench.warm``.

Not part of set-up any more: runs import the kernels built ahead of time at install
(:mod:`workbench.aot`), which need neither numba nor its cache. The JIT serves what the build
does not: the tests of the JIT path (``tests/test_compiled.py`` and its siblings run each
path), a call whose argument types do not fit the build's signatures, a kernel edited since
the build, a venv moved to another CPU. Each compiles on first use and stores its machine
code next to the modules (numba ``cache=True``; a cache older than any of the package's
sources is dropped first: see :mod:`workbench.aot.stale`). This command does that first use at
once, for the argument types every run uses, and prints the time taken.
"""

from __future__ import annotations

import time

from workbench.config import Arrivals, Batching, Scenario, Service, Stream
from workbench.hardware import Hardware


def warm() -> float:
    """Compile (or load) the loop on a tiny run; seconds taken."""
    from workbench.runtime.compiled import available

    if not available():
        print("numba is not installed: the workbench runs its Python loop")
        return 0.0
    from workbench.runtime.engine import Engine

    t = time.perf_counter()
    sc = Scenario(streams=(Stream("s", Arrivals(rate=2.0)),), requests=50, hardware=Hardware(cores=2),
                  service=Service(memory_share=0.5), batching=Batching(policy="dynamic", max_batch=4))
    Engine(sc, loop="jit").run()
    from workbench.compiler import compile_plan
    from workbench.compiler.plan import _compiled_phases
    from workbench.models import build

    plan = compile_plan(build("transformer_block", {"d_model": 64, "heads": 2}), Hardware(), {"seq": [16]})
    mapping = plan.buckets[0].mapping  # the compiled cost model (workbench.compiler.cost_table):
    _compiled_phases(plan, plan._flat(mapping), 2, 16, "jit")
    from dataclasses import replace

    from workbench.pipeline import service_model
    from workbench.scenario import load_scenario

    sc = replace(load_scenario("shape_drift"), requests=200)
    Engine(sc, service_model(sc), loop="jit").run()  # batches costed in the loop (a cost book)
    from workbench.serving.config import LengthLaw, Tenant
    from workbench.serving.engine import ServingRun, simulate_tokens

    simulate_tokens(ServingRun((Tenant("c", 10.0, LengthLaw(8, 0.0, 16), LengthLaw(4, 0.0, 8)),), requests=4),
                    loop="jit")  # the token-level serving loop (workbench.serving.compiled.driver)
    return time.perf_counter() - t


if __name__ == "__main__":
    print(f"compiled event loop ready ({warm():.1f} s)")

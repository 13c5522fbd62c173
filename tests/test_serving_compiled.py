"""The compiled token-level loop equals the readable one, field by field, bit for bit.

Random runs (hypothesis) over everything the loop implements: continuous batching with
whole prompts or chunked prefill, request-level batching, fcfs and priority, recompute and
swap preemption under caches small enough to preempt, watermarks, token budgets and
sequence caps, buckets with fallback or recompile, one to four cores, the fitted and the ideal
efficiency law, eager or graph-replayed decodes, model cards with and without grouped-query
attention, a gated MLP and a vocabulary, with and without a traffic surge; plus the built-in
scenarios. Every column of the trace is compared with ``array_equal`` (nan = nan), dtypes
included, and the bucket summary with ``==``. The equality tests run every build of the
compiled loop this install has (``aot``, ``jit``: :mod:`workbench.aot`).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workbench import aot
from workbench.errors import ConfigError
from workbench.hardware import Hardware
from workbench.serving.config import Decoder, KVConfig, LengthLaw, SchedulerConfig, Surge, Tenant, TokenBuckets
from workbench.serving.cost import IterationCost
from workbench.serving.engine import ServingRun, check_run, simulate_tokens

PATHS = aot.paths()
if not PATHS:
    pytest.skip("no compiled loop: neither an ahead-of-time build nor numba", allow_module_level=True)

SMALL = Decoder(layers=4, d_model=512, heads=4, d_ff=2048)
# the model card's options: grouped-query attention, a gated MLP, a vocabulary (embedding and LM head)
CARDS = (SMALL, Decoder(layers=3, d_model=512, heads=8, d_ff=1536, kv_heads=2, gated_mlp=True, vocab=5000))


def both_loops(run: ServingRun, path: str):
    """(reference, compiled) traces of ``run``, the compiled loop first on an empty dense-cost memo, so that it
    prices every row count itself (after the reference, it would be handed the reference's own figures)."""
    IterationCost.of_run(run)._dense.clear()
    fast = simulate_tokens(run, loop=path)
    return simulate_tokens(run, loop="python"), fast


def differences(a, b) -> list[str]:
    """Names of the trace fields that differ (values, shapes or dtypes)."""
    out = []
    for f in dataclasses.fields(a):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, np.ndarray):
            if x.dtype != y.dtype or x.shape != y.shape or not np.array_equal(x, y, equal_nan=True):
                out.append(f.name)
        elif dataclasses.is_dataclass(x) and f.name == "requests":
            out += [f"requests.{d}" for d in differences(x, y)]
        elif x != y:
            out.append(f.name)
    return out


@st.composite
def serving_runs(draw) -> ServingRun:
    tenants = []
    for k in range(draw(st.integers(1, 3))):
        prompt = LengthLaw(draw(st.sampled_from([20.0, 150.0, 600.0])), draw(st.sampled_from([0.0, 0.7])),
                           draw(st.sampled_from([600, 1200])))
        output = LengthLaw(draw(st.sampled_from([5.0, 60.0, 200.0])), draw(st.sampled_from([0.0, 0.9])),
                           draw(st.sampled_from([300, 600])))
        tenants.append(Tenant(f"t{k}", draw(st.sampled_from([5.0, 40.0, 200.0])), prompt, output,
                              draw(st.integers(-2, 3))))
    batching = draw(st.sampled_from(["continuous", "continuous", "request"]))
    sched = SchedulerConfig(max_num_batched_tokens=draw(st.sampled_from([256, 1024, 4096])),
                            max_num_seqs=draw(st.sampled_from([4, 32, 256])),
                            policy=draw(st.sampled_from(["fcfs", "priority"])), batching=batching,
                            chunked_prefill=draw(st.booleans()))
    bs, water = draw(st.sampled_from([8, 16])), draw(st.sampled_from([0.0, 0.01, 0.1]))
    longest = max(t.prompt.max + t.output.max for t in tenants)  # the cache holds it, a few times over at most
    blocks = int(-(-longest // bs) * draw(st.sampled_from([1.05, 2.0, 4.0, 40.0])) / (1 - water)) + 2
    kv = KVConfig(block_size=bs, blocks=blocks, watermark=water,
                  preemption=draw(st.sampled_from(["recompute", "swap"])))
    sizes = draw(st.sampled_from([(), (64, 256), (8, 32, 128, 512, 2048)]))
    buckets = TokenBuckets(sizes=sizes, out_of_envelope=draw(st.sampled_from(["fallback", "recompile"])),
                           recompile_limit=draw(st.integers(0, 3)), recompile_pause_s=0.01,
                           fusion=draw(st.sampled_from(["none", "elementwise", "aggressive"])))
    return ServingRun(tuple(tenants), requests=draw(st.integers(20, 160)), seed=draw(st.integers(0, 10_000)),
                      scheduler=sched, kv=kv, model=draw(st.sampled_from(CARDS)),
                      hardware=Hardware(cores=draw(st.sampled_from([1, 2, 4]))), buckets=buckets,
                      efficiency=draw(st.sampled_from(["fitted", "ideal"])), cuda_graphs=draw(st.booleans()),
                      surge=draw(st.sampled_from([Surge(), Surge(3.0, 0.2, 1.0)])))


@pytest.mark.parametrize("path", PATHS)
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(serving_runs())
def test_the_compiled_loop_equals_the_reference_bit_for_bit(path, run):
    try:
        check_run(run)
    except ConfigError:  # a run the workbench refuses before either loop starts
        return
    ref, fast = both_loops(run, path)
    assert differences(ref, fast) == []
    assert fast.buckets == ref.buckets


@pytest.mark.skipif(not aot.numba_installed(), reason="the kernel's pricing is called through numba's JIT")
@pytest.mark.parametrize("card", CARDS)
@pytest.mark.parametrize(("fusion", "cores", "efficiency", "attention"), [
    ("none", 1, "fitted", "flash"), ("elementwise", 2, "ideal", "flash"), ("aggressive", 4, "fitted", "naive")])
def test_the_kernel_prices_dense_kernels_as_the_cost_model_bit_for_bit(card, fusion, cores, efficiency, attention):
    from workbench.serving.compiled import layout as K
    from workbench.serving.compiled.driver import dense_model
    from workbench.serving.compiled.run import _dense

    cost = IterationCost.of(card, Hardware(cores=cores, mma_rows=8), fusion, 1.7, efficiency)
    if attention == "naive":  # the cost model's other attention (whole score matrices on chip)
        plan = cost.plan
        cost = dataclasses.replace(cost, plan=dataclasses.replace(
            plan, options=dataclasses.replace(plan.options, attention="naive"), _memo={}), _dense={}, _facts={})
    pi, pf = np.zeros(K.N_PI, np.int64), np.zeros(K.N_PF)
    cm = dense_model(cost, pi, pf)
    for generic in (False, True):
        for rows in (*range(1, 70), 127, 128, 129, 511, 512, 513, 1000, 4096, 8191):
            assert _dense(pi, pf, cm, rows, int(generic)) == cost.dense_seconds(rows, generic), (rows, generic)


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("name", ["llm_kv_pressure", "llm_chunked_prefill", "llm_priority_budget"])
def test_the_built_in_scenarios_run_the_same_on_both_loops(name, path):
    from workbench.scenario import load_scenario

    run = dataclasses.replace(load_scenario(name).run, requests=400)
    ref, fast = both_loops(run, path)
    assert differences(ref, fast) == []
    assert int(ref.preemptions.sum()) == int(fast.preemptions.sum())


def test_preemptions_and_swaps_happen_in_the_random_runs():
    """The equality above must cover the hard paths: this run preempts by swap and by recompute."""
    base = ServingRun((Tenant("c", 200.0, LengthLaw(150, 0.5, 600), LengthLaw(200, 0.8, 600)),), requests=150,
                      seed=5, scheduler=SchedulerConfig(max_num_batched_tokens=1024, chunked_prefill=True),
                      kv=KVConfig(blocks=150), model=SMALL)
    for mode in ("recompute", "swap"):
        run = dataclasses.replace(base, kv=KVConfig(blocks=150, preemption=mode))
        fast = simulate_tokens(run, loop="compiled")
        assert fast.preemptions.sum() > 0
        assert differences(simulate_tokens(run, loop="python"), fast) == []


def test_an_unknown_loop_is_refused():
    with pytest.raises(ValueError, match="loop"):
        tiny = ServingRun((Tenant("c", 1.0, LengthLaw(10, 0.0, 20), LengthLaw(5, 0.0, 10)),), requests=5)
        simulate_tokens(tiny, loop="gpu")


def test_a_sequence_swapped_out_while_prefilling_gets_its_whole_prompt_back(monkeypatch):
    """Found by hypothesis: a prompt preempted (swap) in the middle of its chunked prefill came back with
    blocks for its cached tokens only, and its next chunk ran past its blocks. Both loops, equal."""
    run = ServingRun(
        tenants=(Tenant("t0", 40.0, LengthLaw(600.0, 0.0, 600), LengthLaw(5.0, 0.0, 300)),
                 Tenant("t1", 40.0, LengthLaw(150.0, 0.0, 600), LengthLaw(60.0, 0.0, 300)),
                 Tenant("t2", 5.0, LengthLaw(20.0, 0.0, 600), LengthLaw(5.0, 0.0, 300))),
        requests=27, seed=1,  # seed 0 until the workload's streams became prefix-stable: the same case, redrawn
        scheduler=SchedulerConfig(max_num_batched_tokens=256, max_num_seqs=4, policy="fcfs",
                                  batching="continuous", chunked_prefill=True),
        kv=KVConfig(block_size=8, blocks=120, watermark=0.0, preemption="swap", swap_bandwidth_bytes_per_s=32e9),
        model=Decoder(layers=4, d_model=512, heads=4, d_ff=2048),
        hardware=Hardware(cores=1),
        buckets=TokenBuckets(sizes=(), out_of_envelope="fallback", generic_slowdown=1.5, recompile_pause_s=0.01,
                             recompile_limit=0, fusion="none"),
        efficiency="ideal", cuda_graphs=False)  # the timing hypothesis found it with: the roofline, eager launches
    from workbench.serving import state

    swapped_prefilling = []
    preempt = state.ServingState.preempt

    def watch(self, victim):  # the case: a sequence swapped out while its prompt is still being prefilled
        if self.phase[victim] == state.PREFILL:
            swapped_prefilling.append(victim)
        preempt(self, victim)

    monkeypatch.setattr(state.ServingState, "preempt", watch)
    a = simulate_tokens(run, loop="python")
    monkeypatch.undo()
    b = simulate_tokens(run, loop="compiled")
    assert int(a.preemptions.sum()) > 0 and swapped_prefilling
    assert not differences(a, b)

"""The workload element's rules on the sentence shapes candidates write (cases written here, not corpus answers)."""

from __future__ import annotations

from workbench.grading.drills import load_drills
from workbench.grading.grader import grade

D = load_drills()


def test_workload_is_named_anywhere_in_the_answer():
    """The definition asks for the workload and its moved metric, not for both in one sentence."""
    text = ("The API stream runs at 1,500 req/s on two cores. After the change the batcher waits longer. "
            "Each request sits in the batch window first. Then it runs in a batch of 30. p99 went from 11 to 46 ms.")
    assert grade(D["batching-queueing-delay"], text).elements["workload"].present
    # a moved metric with no workload anywhere earns nothing
    assert not grade(D["batching-queueing-delay"], "p99 went from 11 to 46 ms.").elements["workload"].present
    # two figures joined by 'to' are a move, with or without units ('pooled p99 went 0.3 to 1.9')
    moved = "Requests from the document tenant are slow: pooled p99 went 0.3 to 1.9."
    assert grade(D["average-hides-tail"], moved).elements["workload"].present
    # a busy core or the throughput a change bought is evidence, not the regressed metric; a rollback's condition
    # ('until the canary shows p99 not worse') is no regression either
    busy = "On the API stream, utilisation fell from 73% to 43% and throughput per core went up 20%."
    assert not grade(D["batching-queueing-delay"], busy).elements["workload"].present
    gate = "Decision: the API stream keeps the old batcher until a canary shows p99 not worse than 11 ms."
    assert not grade(D["batching-queueing-delay"], gate).elements["workload"].present
    ttft = "The document tenant's TTFT p99 went from 12 to 17 ms."
    assert grade(D["chunked-prefill-ttft"], ttft).elements["workload"].present
    # the tail-driver table is evidence, not the tail latency
    drivers = "On the four cores, the tail drivers show memory contention going from 1% to 46%."
    assert not grade(D["cost-model-misses-contention"], drivers).elements["workload"].present
    # a bare level read off the evidence ('p99 is 4.5 ms') is no regression; set against something it is
    level = "On the four cores under production traffic, p99 is 4.5 ms."
    assert not grade(D["cost-model-misses-contention"], level).elements["workload"].present
    contrast = "Chat traffic: p95 is better but the p99 of 1.04 s is the compile pause."
    assert grade(D["recompile-storm"], contrast).elements["workload"].present
    # a bare direction restates the prompt ('p99 regressed'): it needs a size somewhere, or the workload beside it
    bare = "Batches take longer and requests queue. Latency went up, p99 is higher."
    assert not grade(D["batching-queueing-delay"], bare).elements["workload"].present
    sized = "Batches take longer and requests queue at 46 ms p99, before 11. Latency went up."
    assert grade(D["batching-queueing-delay"], sized).elements["workload"].present
    beside = "The API stream's p99 went up after the change."
    assert grade(D["batching-queueing-delay"], beside).elements["workload"].present
    # the shape-drift drill's workload in plain words: the requests and their lengths
    plain = "Request lengths grew, and the slowest 1% went from about 1.8 ms to 4.2 ms."
    assert grade(D["compiler-runtime-mapping"], plain).elements["workload"].present

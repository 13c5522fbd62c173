"""The workload element's rules on the sentence shapes candidates write (cases written here, not corpus answers)."""

from __future__ import annotations

import pytest

from workbench.grading.drills import load_drills
from workbench.grading.grader import grade

D = load_drills()

CASES = [
    # a multiple is a move and a size, in words or with the multiplication sign
    ("batching-queueing-delay", "The API stream's p99 roughly quadrupled after the change.", True),
    ("memory-residency-eviction", "Chat, code and embedding p99 all about 7× the old figure.", True),
    # the definition asks for the workload and its moved metric, not for both in one sentence
    ("batching-queueing-delay", "The API stream runs at 1,500 req/s on two cores. After the change the batcher waits "
     "longer. Each request sits in the batch window first. Then it runs in a batch of 30. p99 went from 11 to 46 ms.",
     True),
    # a moved metric with no workload anywhere earns nothing
    ("batching-queueing-delay", "p99 went from 11 to 46 ms.", False),
    # two figures joined by 'to' are a move, with or without units ('pooled p99 went 0.3 to 1.9')
    ("average-hides-tail", "Requests from the document tenant are slow: pooled p99 went 0.3 to 1.9.", True),
    # a busy core or the throughput a change bought is evidence, not the regressed metric; a rollback's condition
    # ('until the canary shows p99 not worse') is no regression either
    ("batching-queueing-delay", "On the API stream, utilisation fell from 73% to 43% and throughput per core went "
     "up 20%.", False),
    ("batching-queueing-delay", "Decision: the API stream keeps the old batcher until a canary shows p99 not worse "
     "than 11 ms.", False),
    ("chunked-prefill-ttft", "The document tenant's TTFT p99 went from 12 to 17 ms.", True),
    # the tail-driver table is evidence, not the tail latency
    ("cost-model-misses-contention", "On the four cores, the tail drivers show memory contention going from 1% to "
     "46%.", False),
    # a bare level read off the evidence ('p99 is 4.5 ms') is no regression; set against something it is
    ("cost-model-misses-contention", "On the four cores under production traffic, p99 is 4.5 ms.", False),
    ("recompile-storm", "Chat traffic: p95 is better but the p99 of 1.04 s is the compile pause.", True),
    # a bare direction restates the prompt ('p99 regressed'): it needs a size somewhere, or the workload beside it
    ("batching-queueing-delay", "Batches take longer and requests queue. Latency went up, p99 is higher.", False),
    ("batching-queueing-delay", "Batches take longer and requests queue at 46 ms p99, before 11. Latency went up.",
     True),
    ("batching-queueing-delay", "The API stream's p99 went up after the change.", True),
    # the shape-drift drill's workload in plain words: the requests and their lengths
    ("compiler-runtime-mapping", "Request lengths grew, and the slowest 1% went from about 1.8 ms to 4.2 ms.", True),
    # a metric that moved the good way is what the change bought, not the regression: by its words or its figures
    ("recompile-storm", "For chat traffic, p95 improved from 5.7 to 3.1 ms.", False),
    ("fairness-starvation", "Interactive requests did well: their p99 went from 426 ms to 67 ms.", False),
    ("chunked-prefill-ttft", "For the document tenant, goodput rose from 58% to 75%.", False),
    # ... and the other side of the trade stated next is the regression, its metric left implied
    ("fairness-starvation", "Strict priority moved the wait. Interactive p99 went 426 -> 67 ms, batch 430 -> 842 ms. "
     "The mean did not move.", True),
    ("chunked-prefill-ttft", "For the document tenant, goodput fell from 75% to 58%.", True),
    # 'slow' is no SLO: a slower path is the mechanism, not the regressed metric
    ("average-hides-tail", "The docs tenant's long prompts miss the buckets. The generic path is slower, down from "
     "the fast lanes. Fix: add buckets.", False),
    # the tail in plain words
    ("static-placement-imbalance", "The short prompts got slower: their worst-case times went from 1.4 to 2.7 ms.",
     True),
    # the good move and the bad one in one sentence: the bad one counts, in either unit
    ("recompile-storm", "For chat, p95 got better while p99 went from 15 ms to 1.04 s.", True),
    # 'requests' or 'traffic' beside a bare direction do not say which workload regressed ('requests wait longer')
    ("batching-queueing-delay", "The API stream is what we serve. Why 1: requests wait longer before they run.",
     False),
    ("batching-queueing-delay", "Why 1: the API stream's requests wait longer before they run.", True),
    # 'from' moves with a figure after it, in digits or words, not where a metric comes from
    ("static-placement-imbalance", "Short prompts queue on the hot core, which is where the p99 comes from.", False),
    ("recompile-storm", "The p99 on the chat service going from tens of milliseconds to over a second is the odd "
     "part.", True),
    ("fairness-starvation", "The batch stream's slowest 1% went from under half a second to over 0.8 seconds.", True),
    ("batching-queueing-delay", "The slow end of the API traffic went from around 11 ms to around 46 ms.", True),
    # a multiple in the present tense, or 'N times' a figure
    ("fairness-starvation", "The waiting moved, so the batch stream's worst cases double.", True),
    ("precision-win-without-fallback", "p99 on the INT8 canary is roughly six times what the benchmark predicted.",
     True),
    # a move the sentence calls noise is dismissed, not stated; a caveat that p99 is noisy still states it
    ("average-hides-tail", "For the docs tenant, the p99 jump is probably just noise from a few long prompts.", False),
    ("average-hides-tail", "The docs tenant's p99 went up about 6x, but p99 on a small window is noisy.", True),
    # a gate names its test before the metric ('until the load test at production shapes shows p99 ...'), up to the
    # clause's end: a move after 'hence' is stated
    ("compiler-runtime-mapping", "Hold the release until the load test at production shapes shows p99 back under 50 "
     "ms for chat traffic.", False),
    ("chunked-prefill-ttft", "No token comes out until the last chunk is done, hence higher TTFT for the document "
     "tenant (p99 12.4 -> 16.6 ms).", True),
    # figures with thousands separators and 'A vs B' comparisons are moves
    ("recompile-storm", "Chat traffic: p99 15 ms -> 1,041 ms.", True),
    ("fairness-starvation", "So the batch stream p99 is 842 vs 430 before.", True),
    # each move judged on its own: one inside a condition does not hide a stated one after it
    ("fairness-starvation", "Batch requests are served only when nobody interactive is waiting, and they end up "
     "waiting much longer: the batch stream's p99 went from 430 to 842 ms.", True),
    # a move only supposed under a negated modal, or a level set against a threshold it is still under, is not stated
    ("batching-queueing-delay", "For the API stream, a few milliseconds of extra wait shouldn't quadruple p99.", False),
    ("average-hides-tail", "For the docs tenant, p99 at 1.9 ms is still under 2 ms.", False),
    ("cost-model-misses-contention", "Under production load on four cores each batch slows down, which could explain "
     "p99 tripling.", True),
]


@pytest.mark.parametrize(("drill", "text", "present"), CASES)
def test_workload_shapes(drill: str, text: str, present: bool) -> None:
    assert grade(D[drill], text).elements["workload"].present is present

"""Token-level serving: prefill and decode, continuous batching, a paged KV cache (issue 15).

``config`` (what a run is), ``workload`` (requests), ``cost`` (an iteration's roofline time),
``kv`` (the block pool), ``state`` and ``scheduler`` (who runs next), ``engine`` (the loop and
the trace), ``metrics`` (TTFT, TPOT, ITL, goodput).
"""

"""Token-level serving: prefill and decode, continuous batching, a paged KV cache (issues 15 and 35).

``config`` (what a run is: the scheduler, the KV cache, the model card, tenants, a surge), ``workload``
(requests, prefix-stable), ``cost`` (an iteration's time: the compiler's kernels through ``efficiency``, the
law fitted by ``calibrate`` on measured GPU kernels), ``kv`` (the block pool), ``state`` and ``scheduler``
(who runs next), ``engine`` (the loop, the trace, the capacity checks), ``metrics`` (TTFT, TPOT, ITL, goodput).
"""

"""A finished token-level run: :class:`ServingTrace`, assembled from a loop's columns and iteration rows.

Both loops, the readable one (:mod:`workbench.serving.engine`) and the compiled one
(:mod:`workbench.serving.compiled`), end in :func:`assemble`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from workbench.serving.run import ServingRun
from workbench.serving.workload import TokenRequests


@dataclass(frozen=True)
class ServingTrace:
    """A finished run. Times in seconds from the start."""

    run: ServingRun
    requests: TokenRequests
    first_token_s: np.ndarray  # per request
    finish_s: np.ndarray  # per request
    preemptions: np.ndarray  # per request
    token_offset: np.ndarray  # request i's tokens are token_s[token_offset[i]:token_offset[i + 1]]
    token_s: np.ndarray  # emission time of every output token
    it_start_s: np.ndarray  # per iteration
    it_end_s: np.ndarray
    it_prefill_tokens: np.ndarray  # prompt tokens processed (chunks included)
    it_decodes: np.ndarray  # decode steps (one token each)
    it_seqs: np.ndarray  # sequences in the iteration
    it_running: np.ndarray  # sequences holding KV on the chip during it (some may wait out a prefill iteration)
    it_blocks_used: np.ndarray  # KV blocks held at the end of the iteration
    it_preemptions: np.ndarray  # sequences preempted while building it
    it_swap_s: np.ndarray  # host-link time for swaps in it
    admit_s: np.ndarray  # per request: when it was first admitted to the chip
    it_pause_s: np.ndarray  # per iteration: recompile pause before it ran
    buckets: dict  # iterations by plan outcome (exact, padded, fallback), padding share, recompiles
    it_link_s: np.ndarray  # per iteration: all-reduces over the link between GPUs (s; 0 on one GPU)
    it_draft_s: np.ndarray  # per iteration: the draft model's steps (s; 0 without speculation)
    it_spec: np.ndarray  # per iteration: speculating decode steps (among it_decodes)
    it_decode_tokens: np.ndarray  # per iteration: tokens the decode steps emitted (it_decodes without speculation)
    spec_proposed: np.ndarray  # per request: draft tokens proposed
    spec_accepted: np.ndarray  # per request: draft tokens accepted
    spec_judged: np.ndarray  # per request: draft tokens judged (up to and including the first rejection)
    spec_stopped: np.ndarray  # per request: the acceptance guard stopped its speculation (bool)


# an iteration row: the first ten are what the compiled loop records too
ITERATION_COLUMNS = ("start_s", "end_s", "prefill_tokens", "decodes", "seqs", "running", "blocks_used",
                     "preemptions", "swap_s", "pause_s", "link_s", "draft_s", "spec", "decode_tokens")


def assemble(run: ServingRun, req: TokenRequests, first_s: np.ndarray, finish_s: np.ndarray,
             preemptions: np.ndarray, offset: np.ndarray, token_s: np.ndarray, it: np.ndarray,
             admit_s: np.ndarray, buckets: dict, spec: dict | None = None) -> ServingTrace:
    """The trace of a finished run from its per-request columns and its iteration rows (:data:`ITERATION_COLUMNS`;
    a row of the first ten, as the compiled loop records it, has no link, draft or speculation: its decodes
    emitted one token each), and the per-request speculation counts ``spec`` (none: zeros)."""
    m = len(it)
    decodes = it[:, 3].astype(np.int64)
    if it.shape[1] < len(ITERATION_COLUMNS):  # no copy of the rows: zero columns (their pages untouched until read)
        zeros = np.zeros(m)
        it_link_s, it_draft_s, it_spec, decode_tokens = zeros, zeros, np.zeros(m, np.int64), decodes
    else:
        it_link_s, it_draft_s, it_spec, decode_tokens = it[:, 10], it[:, 11], it[:, 12].astype(np.int64), \
            it[:, 13].astype(np.int64)
    n = len(first_s)
    spec = spec or {"spec_proposed": np.zeros(n, np.int64), "spec_accepted": np.zeros(n, np.int64),
                    "spec_judged": np.zeros(n, np.int64), "spec_stopped": np.zeros(n, bool)}
    return ServingTrace(
        run=run, requests=req, first_token_s=first_s, finish_s=finish_s, preemptions=preemptions,
        token_offset=offset, token_s=token_s,
        it_start_s=it[:, 0], it_end_s=it[:, 1], it_prefill_tokens=it[:, 2].astype(np.int64),
        it_decodes=decodes, it_seqs=it[:, 4].astype(np.int64),
        it_running=it[:, 5].astype(np.int64), it_blocks_used=it[:, 6].astype(np.int64),
        it_preemptions=it[:, 7].astype(np.int64), it_swap_s=it[:, 8], admit_s=admit_s,
        it_pause_s=it[:, 9], buckets=buckets, it_link_s=it_link_s, it_draft_s=it_draft_s, it_spec=it_spec,
        it_decode_tokens=decode_tokens, **spec)

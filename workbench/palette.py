"""One visual language for every notebook, panel, report and trace picture.

One colour per cause, the same wherever the cause is drawn; the baseline (the run a
panel keeps until reset, the run before retuning) is always grey and drawn faintly under the current run, which is
always ``CURRENT``. Colour-blind-safe hues (Okabe-Ito), so red/green never carry the
meaning alone: lines also differ in style and every mark is labelled.
"""

from __future__ import annotations

BASELINE = "#9a9a9a"  # grey: the baseline, a panel's kept run, the run before retuning
BASELINE_ALPHA = 0.55
CURRENT = "#0072b2"  # blue: the run being looked at now, the run after retuning
SECOND = "#d55e00"  # vermillion: a second run compared side by side (a second stream, a variant)

# Tail drivers (workbench.analysis.metrics.DRIVERS) and the timeline causes of the same origin share a hue.
CAUSES: dict[str, str] = {
    "queueing": "#56b4e9",  # sky blue: waiting for a core or a batch
    "core_imbalance": "#cc79a7",  # reddish purple: work waited while another core idled
    "memory_contention": "#e69f00",  # orange: a kernel stretched by other cores' HBM traffic
    "memory_residency": "#d55e00",  # vermillion: weights reloaded into HBM
    "mapping_fallback": "#000000",  # black: the generic fallback kernel, no bucket fitted
    "service": "#009e73",  # bluish green: the specialised kernel doing its work
}

# What a core's time went on, drawn in the per-core timeline: each maps to a cause above.
TIMELINE: dict[str, str] = {
    "specialised": CAUSES["service"],
    "padded": "#7fcfb9",  # light green: specialised kernel running padding
    "generic fallback": CAUSES["mapping_fallback"],
    "recompile pause": "#f0e442",  # yellow: the core stalled compiling a new bucket
    "reload": CAUSES["memory_residency"],
    "contention stretch": CAUSES["memory_contention"],
}

# Token-level serving: what an iteration spent its time on, and a preemption (KV dropped: a residency event).
TOKEN_PHASES: dict[str, str] = {
    "prefill": CAUSES["service"],  # prompt tokens: compute-heavy matmuls
    "decode": "#7fcfb9",  # one token per running sequence: memory-bound on weights and KV reads
    "preemption": CAUSES["memory_residency"],
}

# p50 / p95 / p99 marks: line style by percentile, never by colour.
PERCENTILE_STYLES: tuple[tuple[int, str], ...] = ((50, ":"), (95, "--"), (99, "-"))


def cause_color(name: str) -> str:
    """The colour of a tail driver or timeline cause (``KeyError`` names what exists)."""
    key = name.replace(" ", "_") if name.replace(" ", "_") in CAUSES else name
    if key in CAUSES:
        return CAUSES[key]
    if name in TIMELINE:
        return TIMELINE[name]
    raise KeyError(f"no colour for {name!r}; known: {sorted(CAUSES) + sorted(TIMELINE)}")

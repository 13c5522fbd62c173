"""Token serving's first run in a fresh process against its warm runs (issue 39, item 4).

    python tests/benchmarks/bench_serving_cold.py [--tokens 1000000] [--fresh 7] [--warm 15]

The 1M-token run of ``bench_serving.py`` (one chat tenant, the small decoder, continuous batching). Each fresh
process imports the workbench, builds the run, then times ``simulate_tokens`` and ``summarize_tokens``, each once
(CPU ms, ``time.process_time``): what a learner's first call pays, the imports it triggers (``numpy.random`` on the
first draw, the ahead-of-time extension) and the first touch of every page it writes included. The peer is the
same calls repeated in one process (warm: imports done, freed pages reused). Best of each: the machine is shared.
Figures only, no pass/fail.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
CHILD = """
import json, sys, time
sys.path.insert(0, {here!r})
from bench_serving import serving_run
from workbench.serving.engine import simulate_tokens
from workbench.serving.metrics import summarize_tokens
run = serving_run({tokens})
out = []
for _ in range({repeat}):
    t0 = time.process_time(); tr = simulate_tokens(run); t1 = time.process_time(); summarize_tokens(tr)
    out.append((t1 - t0, time.process_time() - t1))
print(json.dumps(out))
"""


def child(tokens: int, repeat: int) -> list[tuple[float, float]]:
    """(simulate s, summarize s) of each of ``repeat`` runs in one fresh process."""
    code = CHILD.format(here=str(HERE), tokens=tokens, repeat=repeat)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return [tuple(x) for x in json.loads(done.stdout)]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tokens", type=int, default=1_000_000)
    ap.add_argument("--fresh", type=int, default=7, help="fresh processes (the first run of each is cold)")
    ap.add_argument("--warm", type=int, default=15, help="runs in one process after a first (warm)")
    a = ap.parse_args()
    cold = [child(a.tokens, 1)[0] for _ in range(a.fresh)]
    warm = child(a.tokens, a.warm + 1)[1:]
    best = {k: (min(x[0] for x in runs), min(x[1] for x in runs)) for k, runs in (("cold", cold), ("warm", warm))}
    print(f"{a.tokens:,}-token run, CPU ms, best of {a.fresh} fresh processes (cold) and of {a.warm} runs in one "
          "process (warm)")
    print(f"{'':<6}{'simulate':>10}{'summary':>10}{'total':>10}")
    for k, (s, m) in best.items():
        print(f"{k:<6}{1e3 * s:>10.1f}{1e3 * m:>10.1f}{1e3 * (s + m):>10.1f}")
    (cs, cm), (ws, wm) = best["cold"], best["warm"]
    print(f"cold / warm: simulate {cs / ws:.2f}x, summary {cm / wm:.2f}x, total {(cs + cm) / (ws + wm):.2f}x")


if __name__ == "__main__":
    main()

"""Whole-process wall and CPU of ``workbench ARGS``: two trees, interleaved run by run (SPEED.md, fifth round).

``python tests/benchmarks/ab_cli.py BEFORE N ARGS...`` runs ``workbench ARGS`` N times with the
tree ``BEFORE`` first on ``PYTHONPATH`` (e.g. ``git archive 278d2f3 | tar -x -C /tmp/before``, its
``workbench/aot/_build`` copied in) and N times with the installed tree, alternating which goes
first, from ``/tmp`` (so the working directory shadows neither), and prints the best and median
wall (``perf_counter``) and CPU (``getrusage`` of the child), in ms. Compile both trees' ``.pyc``
first where ``PYTHONDONTWRITEBYTECODE`` is set, or every start compiles the sources.
"""

from __future__ import annotations

import os
import resource
import shutil
import statistics
import subprocess
import sys
import time


def main(before: str, n: int, args: list[str]) -> None:
    """Print best and median wall and CPU (ms) of ``workbench args``, before and after."""
    exe = shutil.which("workbench") or os.path.join(os.path.dirname(sys.executable), "workbench")
    res: dict[str, tuple[list[float], list[float]]] = {"before": ([], []), "after": ([], [])}
    for i in range(n):
        for tag in ("before", "after") if i % 2 == 0 else ("after", "before"):
            env = dict(os.environ, PYTHONPATH=before) if tag == "before" else dict(os.environ)
            r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            t = time.perf_counter()
            subprocess.run([exe, *args], stdout=subprocess.DEVNULL, env=env, cwd="/tmp", check=True)
            wall = time.perf_counter() - t
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            res[tag][0].append(wall * 1e3)
            res[tag][1].append((r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime) * 1e3)
    for tag, (w, c) in res.items():
        print(f"{' '.join(args)} | {tag}: wall best {min(w):.0f} median {statistics.median(w):.0f}; "
              f"cpu best {min(c):.0f} median {statistics.median(c):.0f} ms (n={n})")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), sys.argv[3:])

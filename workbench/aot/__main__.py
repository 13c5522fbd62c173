"""Build the kernels ahead of time by hand: ``python -m workbench.aot [--jobs N]``.

``pip install`` builds them already (``setup.py``); this rebuilds what is missing after an
edit to the kernels' sources, into the package's ``_build`` folder (:mod:`workbench.aot.build`;
``--jobs N``: N entry points at once, in separate processes). Prints the time taken. A failed
build is one line and exit status 0: runs then take numba's JIT.
"""

from __future__ import annotations

import argparse
import time


def main(argv: list[str] | None = None) -> int:
    """Build, print what was built and how long it took; 0 whether or not a build could be made."""
    from workbench.aot import numba_installed

    parser = argparse.ArgumentParser(prog="python -m workbench.aot", description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=1, help="entry points compiled at once, each in its own process")
    args = parser.parse_args(argv)
    if not numba_installed():
        print("numba is not installed: no ahead-of-time build (the workbench runs its Python loop)")
        return 0
    from workbench.aot.build import build

    t = time.perf_counter()
    try:
        paths = build(jobs=args.jobs)
    except Exception as err:  # no compiler, no setuptools, no numba.pycc: runs take numba's JIT
        print(f"no ahead-of-time build ({type(err).__name__}: {err}): runs take numba's JIT")
    else:
        print(f"ahead-of-time kernels ready ({time.perf_counter() - t:.1f} s): {', '.join(p.name for p in paths)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

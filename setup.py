"""The build hook: ``pip install`` compiles the numba kernels ahead of time into the package.

The metadata lives in ``pyproject.toml``; this file adds one thing, setuptools' ``build_ext``
step replaced by :func:`workbench.aot.build.build` (numba's ``pycc``), so a plain
``pip install .``, an editable ``pip install -e .`` and a wheel from ``pip wheel .`` all carry
the compiled kernels and a first run compiles nothing.
Why at install and not on first import: ``workbench/aot/__init__.py``.

- A wheel: the extensions go into the wheel (copied from the source tree's ``_build`` when a
  current build is there, as after ``make``; otherwise compiled), and the wheel is tagged for
  this interpreter and platform. They are compiled for the CPU they are built on: on another
  CPU the workbench finds no build for it and takes numba's JIT.
- Editable: the extensions go into the source tree's ``workbench/aot/_build``, unless another
  process is building them there already (the Makefile starts one beside ``pip install``).
- A build that fails (no C compiler, a numba without ``pycc``) is a warning, not a failed
  install: runs then take numba's JIT, same results, slower first run.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from setuptools import Distribution, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent


class BinaryDistribution(Distribution):
    """A distribution with compiled code: its wheel is tagged for one interpreter and platform."""

    def has_ext_modules(self) -> bool:
        return True


class build_kernels(build_ext):
    """``build_ext``: the kernels' extensions, by numba's pycc (there are no C sources to compile)."""

    def run(self) -> None:
        self._built: list[str] = []
        sys.path.insert(0, str(HERE))  # the workbench being built, not any installed one
        try:
            from workbench import aot
            from workbench.aot.build import build, copy_current

            t = time.perf_counter()
            if self.editable_mode or self.inplace:
                done = build(aot.BUILD, wait=False)
                what = "kernels built ahead of time" if done is not None else "kernels being built by another process"
            else:
                folder = Path(self.build_lib) / "workbench" / "aot" / "_build"
                if copy_current(aot.BUILD, folder):
                    what = "kernels copied from the source tree's current build"
                else:
                    build(folder)
                    what = "kernels built ahead of time"
                (folder / ".lock").unlink(missing_ok=True)
                self._built = [str(p) for p in folder.glob("_kernels_*")]
            print(f"workbench: {what} ({time.perf_counter() - t:.1f} s)")
        except Exception as err:  # noqa: BLE001 (any failure: the install goes on, runs take the JIT)
            print(f"workbench: WARNING: no ahead-of-time build ({type(err).__name__}: {err}); "
                  "runs take numba's JIT (python -m workbench.aot retries)", file=sys.stderr)
        finally:
            sys.path.remove(str(HERE))

    def get_outputs(self) -> list[str]:
        return list(getattr(self, "_built", []))

    def get_output_mapping(self) -> dict[str, str]:
        return {}


setup(distclass=BinaryDistribution, cmdclass={"build_ext": build_kernels})

"""The ahead-of-time build of the kernels (:mod:`workbench.aot`): current, guarded, and numba-free at run time.

That it gives the JIT's and the reference's results bit for bit is ``tests/test_compiled.py``
and ``tests/test_cost_table.py`` (each runs every build available); here: the build's
signatures are the ones numba infers for what the callers pass, a call that does not fit is
refused (``aot``) or handed to the JIT (``auto``), a build of other sources is never
imported, the digest covers what the kernels are compiled from, and a ``workbench run``
served by the build imports no numba (an event-loop run and a token-serving run).
"""

from __future__ import annotations

import ast
import dataclasses
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from workbench import aot
from workbench.aot.spec import ENTRIES, fits

needs_build = pytest.mark.skipif(not aot.available("aot"),
                                 reason="no ahead-of-time build of the current sources (python -m workbench.aot)")


def test_the_kernel_sources_cover_every_module_the_kernels_import():
    # a kernel freezes the constants and inlines the code of what it imports: an edit there changes the build
    sources = set(aot.SOURCES)
    for name, entry in ENTRIES.items():
        assert entry.module.removeprefix("workbench.").replace(".", "/") + ".py" in sources, name
    for rel in aot.SOURCES:
        tree = ast.parse((aot.PACKAGE / rel).read_text())
        if "njit" not in {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}:
            continue  # constants only
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("workbench"):
                mod = node.module.removeprefix("workbench.").replace(".", "/")
                names = [mod + ".py"] if (aot.PACKAGE / (mod + ".py")).exists() else \
                    [f"{mod}/{a.name}.py" for a in node.names]
                for n in names:
                    assert n in sources, f"{rel} imports {n}, not in aot.SOURCES"


def test_a_build_of_other_sources_is_never_imported(tmp_path, monkeypatch):
    for rel in aot.SOURCES:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(aot.PACKAGE / rel, tmp_path / rel)
    monkeypatch.setattr(aot, "PACKAGE", tmp_path)
    before = aot.digest()
    with open(tmp_path / "runtime/compiled/run.py", "a") as f:
        f.write("# an edit\n")
    assert aot.digest() != before
    for name in ENTRIES:
        assert not aot.extension_path(name).exists()
        assert aot.extension.__wrapped__(name) is None  # the lookup itself, not its cached answer


def test_a_build_for_another_cpu_is_never_imported(monkeypatch):
    """The build is compiled for the CPU it was made on and named by that CPU's instruction-set key: a venv moved to
    a CPU with other extensions finds no build (and takes the JIT) rather than running instructions it lacks."""
    here = aot.extension_path("run_loop").name
    assert aot.cpu_key() in here
    monkeypatch.setattr(aot, "cpu_key", lambda: "0123abcd")
    assert aot.extension_path("run_loop").name != here and not aot.extension_path("run_loop").exists()
    assert aot.extension.__wrapped__("run_loop") is None


@pytest.mark.skipif(not aot.numba_installed(), reason="numba infers the types")
def test_the_signatures_are_what_numba_infers_for_the_callers_arguments(monkeypatch):
    from numba import typeof

    from workbench.aot.build import numba_type
    from workbench.pipeline import run_scenario
    from workbench.runtime.compiled import driver
    from workbench.scenario import load_scenario
    from workbench.serving.engine import simulate_tokens

    seen: dict[str, list] = {name: [] for name in ENTRIES}
    original, original_for = aot.kernel, aot.kernel_for

    def recording(name: str, path: str = "auto"):
        fn = original(name, path)
        return lambda *args: seen[name].append(args) or fn(*args)

    def recording_for(name: str, path: str, first: tuple):
        fn = original_for(name, path, first)
        return lambda *args: seen[name].append(args) or fn(*args)

    monkeypatch.setattr(driver, "kernel", recording)
    monkeypatch.setattr(aot, "kernel", recording)  # the plan's cost model
    monkeypatch.setattr(aot, "kernel_for", recording_for)  # the token loop: its types checked once a run
    for name in ("shape_drift", "placement_skew", "memory_residency", "mm1"):
        run_scenario(dataclasses.replace(load_scenario(name), requests=500))
    simulate_tokens(dataclasses.replace(load_scenario("llm_kv_pressure").run, requests=200))
    for name, calls in seen.items():
        assert calls, name
        want = numba_type(ENTRIES[name].args)
        for args in calls:
            assert typeof(args) == want, name
            assert fits(args, ENTRIES[name].args), name


@needs_build
def test_a_call_that_does_not_fit_is_refused_by_the_build_and_taken_by_the_jit():
    from workbench.compiler.cost_flat import TILES

    args = [np.zeros((1, 10), np.int64), np.zeros(1, np.int64), np.zeros((1, 10), np.int64),
            np.zeros((0, 4), np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(1, np.int64),
            np.zeros((1, 2)), 0, 0, 1, 1, False, 1, 1.0, 1.0, 0.0, 1, TILES, np.zeros((2, 4), np.int64),
            np.zeros((4, 1)), np.zeros((1, 3))]
    assert fits(tuple(args), ENTRIES["kernel_costs"].args)
    aot.kernel("kernel_costs", "aot")(*args)  # no kernel in range: nothing computed, nothing refused
    narrow = list(args)
    narrow[1] = np.zeros(1, np.int32)  # an int32 array: pycc's wrapper checks the item size only
    float_index = list(args)
    float_index[8] = 0.0
    for bad in (narrow, float_index):
        with pytest.raises(TypeError):
            aot.kernel("kernel_costs", "aot")(*bad)
    if aot.numba_installed():
        aot.kernel("kernel_costs", "auto")(*narrow)  # the JIT compiles what it is given


@needs_build
@pytest.mark.parametrize("scenario", ["shape_drift", "llm_kv_pressure"])
def test_a_run_served_by_the_build_imports_no_numba(scenario):
    code = (f"import sys; from workbench.cli import main; main(['run', '{scenario}', '--requests', '2000']); "
            "print('numba' in sys.modules, file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          cwd=Path(__file__).parent.parent)
    assert done.stderr.strip().splitlines()[-1] == "False", done.stderr

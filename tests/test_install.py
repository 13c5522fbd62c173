"""Installing the workbench: its own distribution name, and the kernels built by the install (``setup.py``).

The name: ``workbench`` on the package index is another project, so the distribution is
``accel-mapping-workbench`` (the import package and the CLI stay ``workbench``), and every
install line says so. The build: ``pip install`` runs :func:`workbench.aot.build.build` from
setuptools' ``build_ext``; a wheel carries the extensions of every entry point and is tagged
for its interpreter and platform; an editable install leaves a build under way to its builder
(the Makefile runs one beside ``pip install``). That the extensions compute what the JIT and the
readable loops compute is ``tests/test_compiled.py`` and its siblings.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from workbench import aot
from workbench.aot import build as aot_build
from workbench.aot.spec import ENTRIES

ROOT = Path(__file__).parent.parent
NAME = "accel-mapping-workbench"


def test_the_distribution_has_its_own_name_and_every_install_line_uses_it():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["name"] == NAME and project["scripts"] == {"workbench": "workbench.cli:main"}
    texts = [ROOT / "README.md", ROOT / "Makefile"] + sorted((ROOT / "workbench").rglob("*.py")) + \
        sorted((ROOT / "tests").glob("*.py"))
    for path in texts:
        for line in path.read_text().splitlines():
            assert not re.search(r"pip install [^\n]*(?<![-\w])workbench\[", line), f"{path.name}: {line.strip()}"


def test_a_build_under_way_is_left_to_its_builder(tmp_path):
    with aot_build._lock(tmp_path, wait=True) as held:  # another process's build, as the Makefile starts one
        assert held
        assert aot_build.build(tmp_path, wait=False) is None
    assert not list(tmp_path.glob("_kernels_*"))


def test_a_wheel_takes_the_current_build_only_when_every_entry_is_there(tmp_path):
    source, folder = tmp_path / "source", tmp_path / "wheel"
    source.mkdir()
    names = [aot.extension_name(name) for name in ENTRIES]
    for name in names[:-1]:
        (source / name).write_bytes(b"built")
    assert not aot_build.copy_current(source, folder) and not folder.exists()
    (source / names[-1]).write_bytes(b"built")
    assert aot_build.copy_current(source, folder)
    assert sorted(p.name for p in folder.iterdir()) == sorted(names)


@pytest.mark.skipif(not aot.available("aot"), reason="no ahead-of-time build of the current sources to package")
def test_a_wheel_carries_the_kernels_and_is_tagged_for_its_platform(tmp_path):
    tree = tmp_path / "tree"  # a copy: pip wheel writes build/ and *.egg-info where it builds
    tree.mkdir()
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy(ROOT / name, tree / name)
    shutil.copytree(aot.PACKAGE, tree / "workbench",  # the package imported: a checkout's, or an install's
                    ignore=shutil.ignore_patterns("__pycache__", ".lock", "tmp*"))
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                           "-w", str(tmp_path / "dist"), str(tree)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    (wheel,) = (tmp_path / "dist").glob("*.whl")
    assert wheel.name.startswith(NAME.replace("-", "_") + "-") and not wheel.name.endswith("-none-any.whl")
    inside = set(zipfile.ZipFile(wheel).namelist())
    for name in ENTRIES:
        assert f"workbench/aot/_build/{aot.extension_name(name)}" in inside, name
    assert not any(n.endswith(".lock") for n in inside)

"""Prose against its own numbers: a sentence that states a number or a direction says what the library computes.

Each :class:`Claim` names a notebook, the chapter's cell id that carries the sentence, a pattern for the sentence
(whitespace and line breaks folded to one space; named groups capture its numbers) and a function that computes
those numbers with the library. The test finds the sentence, in the chapter's cell and somewhere in the worked
solutions' copy of the chapter, and checks each captured number within its own rounding (``1.288`` agrees with
1.2884, ``12`` with 0.1249 written as a percentage). A pattern that no longer matches fails too: rewording a
claim means updating its row here, so a sentence cannot quietly stop saying what the figure shows.
"""

from __future__ import annotations

import dataclasses
import re
import tempfile
from collections.abc import Callable
from functools import cache
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"


@dataclasses.dataclass(frozen=True)
class Claim:
    notebook: str  # file name under notebooks/ (and notebooks/solutions/)
    cell_id: str  # the chapter's cell that carries the sentence
    pattern: str  # regex over the cell's text, whitespace folded; named groups are the numbers
    compute: Callable[[], dict[str, float]]  # group name -> the library's value, in the prose's unit
    why: str  # the issue item it guards


def folded(text: str) -> str:
    return " ".join(text.split())


def agrees(stated: str, value: float) -> bool:
    """Whether ``stated`` (e.g. "1.288", "+12", "98") is ``value`` rounded to the digits it shows."""
    decimals = len(stated.split(".")[1]) if "." in stated else 0
    return abs(float(stated) - value) <= 0.5 * 10 ** -decimals + 1e-9


# --- the library's numbers, each computed once ----------------------------------------------------------------
@cache
def evidence(drill_id: str) -> dict:
    from workbench.grading.drills import load_drills
    from workbench.grading.practice import prepare

    return prepare(load_drills()[drill_id], figure_dir=Path(tempfile.mkdtemp())).summaries


def fusion_mean() -> dict[str, float]:
    """07: the drill's production-load mean, baseline and regressed (ms), and the rise (%)."""
    s = evidence("fusion-memory-bursts")
    base, reg = (s[k]["latency_s"]["mean"] * 1e3 for k in ("base", "reg"))
    return {"base": base, "reg": reg, "pct": (reg / base - 1) * 100}


@cache
def fusion_offline_gain() -> dict[str, float]:
    """The drill's offline condition, a twentieth of the production rate: the mean's fall (%), aggressive
    against elementwise (07 section 2 runs the same)."""
    from workbench.analysis.metrics import summarize
    from workbench.grading.drills import drill_scenarios, load_drills
    from workbench.pipeline import run_scenario

    scs = drill_scenarios(load_drills()["fusion-memory-bursts"])

    def at_low_rate(sc):
        (st,) = sc.streams
        rate = round(st.arrivals.rate / 20, -1)
        arrivals = dataclasses.replace(st.arrivals, rate=rate)
        return dataclasses.replace(sc, streams=(dataclasses.replace(st, arrivals=arrivals),))

    base, reg = (summarize(run_scenario(at_low_rate(sc)))["latency_s"]["mean"] for sc in scs[:2])
    return {"gain": (1 - reg / base) * 100}


def recompile_storm_drivers() -> dict[str, float]:
    """The recompile-storm drill's regressed tail: core imbalance's and mapping fallback's shares (%)."""
    d = evidence("recompile-storm")["reg"]["tail_drivers"]
    return {"imb": d["core_imbalance"] * 100, "fb": d["mapping_fallback"] * 100}


@cache
def block_counts() -> dict[str, float]:
    """The transformer block of chapters 00-02: its nodes, operations, and kernels under each fusion level."""
    from workbench.compiler import CompileOptions, compile_plan
    from workbench.hardware import PRESETS
    from workbench.models import transformer_block

    g = transformer_block(1024, 16)
    kernels = {}
    for fusion in ("none", "elementwise", "aggressive"):
        plan = compile_plan(g, PRESETS["generic-4core"], {"seq": [128]}, CompileOptions(fusion=fusion, max_batch=8))
        kernels[fusion] = len(plan.buckets[0].mapping.kernels)
        generic = len(plan.generic.kernels)
    return {"nodes": len(g.nodes), "ops": len(g.compute_nodes()), "weights": len(g.nodes) - len(g.compute_nodes()) - 1,
            "unfused": kernels["none"], "generic": generic, "elementwise": kernels["elementwise"],
            "aggressive": kernels["aggressive"]}


WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7}

CLAIMS = (
    Claim("07_drills.ipynb", "96372d5e",
          r"At production load, in the table, the mean got worse too: (?P<base>[\d.]+) -> (?P<reg>[\d.]+) ms "
          r"\((?P<pct>[+-]\d+)%\)", fusion_mean, "4a: the prompt's 'mean improved' against the table's mean"),
    Claim("07_drills.ipynb", "4bf2657f", r"aggressive fusion is the faster plan, by about (?P<gain>\d+)% on the mean",
          fusion_offline_gain, "4a: the offline benchmark, where the mean did improve"),
    Claim("00_tour.ipynb", "19e93197",
          r"files (?P<imb>\d+)% of its tail under core imbalance and (?P<fb>\d+)% under mapping fallback",
          recompile_storm_drivers, "4b: where a recompile storm's tail is filed"),
    Claim("00_tour.ipynb", "ad28a175",
          r"(?P<ops>\d+) operations \(layer norms[^)]*\) on one input and (?P<weights>\w+) weight tensors, "
          r"(?P<nodes>\d+) nodes in all", block_counts, "4c: the op count, and what else the graph holds"),
    Claim("00_tour.ipynb", "e25caaa0", r"The compiler fuses (?P<ops>\d+) operations into (?P<elementwise>\d+) kernels",
          block_counts, "4c: the op count in the summary"),
    Claim("01_shape_envelopes.ipynb", "b96c6d80",
          r"The specialised plan runs (?P<elementwise>\d+) fused kernels .* runs (?P<generic>\d+) unfused ones, "
          r"one per operation", block_counts, "4c: unfused kernels, one per op"),
    Claim("02_fusion_and_memory.ipynb", "c02-00",
          r"a transformer block's (?P<ops>\d+) operations into (?P<aggressive>\d+) kernels where elementwise "
          r"fusion makes (?P<elementwise>\d+)", block_counts, "4c: the op count in chapter 02"),
)


def _cells(path: Path) -> list:
    return nbformat.read(path, as_version=4).cells


def _check(text: str, claim: Claim, where: str) -> None:
    m = re.search(claim.pattern, folded(text))
    assert m, f"{where}: no sentence matches {claim.pattern!r} ({claim.why})"
    values = claim.compute()
    for name, stated in m.groupdict().items():
        stated = str(WORDS.get(stated, stated))
        assert agrees(stated, values[name]), \
            f"{where}: the prose says {name} = {stated}, the library computes {values[name]:.4g} ({claim.why})"


@pytest.mark.parametrize("claim", CLAIMS, ids=lambda c: f"{c.notebook}:{c.cell_id}")
def test_chapter_prose_states_the_library_number(claim):
    (cell,) = [c for c in _cells(NOTEBOOKS / claim.notebook) if c.get("id") == claim.cell_id]
    _check(cell.source, claim, f"{claim.notebook} cell {claim.cell_id}")


@pytest.mark.parametrize("claim", CLAIMS, ids=lambda c: f"solutions/{c.notebook}")
def test_solutions_prose_states_the_library_number(claim):
    cells = [c for c in _cells(NOTEBOOKS / "solutions" / claim.notebook) if c.cell_type == "markdown"]
    text = next((c.source for c in cells if re.search(claim.pattern, folded(c.source))), "")
    _check(text, claim, f"solutions/{claim.notebook}")


def test_the_prompt_direction_holds_where_it_says():
    """The fusion drill's prompt says the mean improved in the offline benchmark: it does, at low load."""
    from workbench.grading.drills import load_drills

    assert "the mean improved in the offline benchmark" in load_drills()["fusion-memory-bursts"].prompt
    assert fusion_offline_gain()["gain"] > 0
    assert fusion_mean()["pct"] > 0  # ... and at production load it does not, which 07 says beside the table


def test_recompile_pause_lands_where_the_tour_says():
    """00 section 4: a recompile pause is mapping fallback in the batch that compiles it (the pause is in that
    batch's fallback time), while the requests queued behind it are filed elsewhere (core imbalance)."""
    from workbench.grading.drills import drill_scenarios, load_drills
    from workbench.pipeline import run_scenario

    reg = drill_scenarios(load_drills()["recompile-storm"])[1]
    trace = run_scenario(reg)
    assert trace.batch_fallback_s.max() >= reg.model.recompile_pause_s
    drivers = recompile_storm_drivers()
    assert drivers["imb"] > 90 > 5 > drivers["fb"]


DEVELOPER_NOTES = ("an earlier version of", "false positives")  # release notes, not lessons


@pytest.mark.parametrize("path", [NOTEBOOKS / "07_drills.ipynb", NOTEBOOKS / "solutions" / "07_drills.ipynb"],
                         ids=lambda p: p.parent.name + "/" + p.name)
def test_07_speaks_to_the_learner(path):
    """4d: 07's prose carries no note written for the grader's developers."""
    found = [(c.get("id"), note) for c in _cells(path) if c.cell_type == "markdown"
             for note in DEVELOPER_NOTES if note in folded(c.source).lower()]
    assert found == []

"""Interview drills: one TOML file per drill under ``drills/``, read safely and checked field by field.

A drill names its prompt, the scenario that reproduces the regression (a built-in or a
file, with dotted-path overrides for the healthy ``baseline`` run and the ``regressed``
run), the rubric's vocabulary for this scenario (the steps of the causal chain it
accepts, the wrong mechanisms it rejects, concrete artifacts and bounded fixes), the
strong and weak reference answers, debug branches, pitfalls, takeaways and the senior
review question. A malformed file fails with one message naming the file and the field.
"""

from __future__ import annotations

import copy
import os
from dataclasses import replace
from functools import lru_cache
from pathlib import Path

from workbench.errors import ConfigError
from workbench.grading.concepts import FILE as CONCEPTS_FILE
from workbench.grading.concepts import expand, own, referenced
from workbench.grading.concepts import lexicon as concept_lexicon
from workbench.grading.drill_check import check_data, check_drill, check_folder, check_folder_files
from workbench.grading.drill_types import Drill, DrillScenario, Rubric
from workbench.grading.reference import check_template, needs
from workbench.limits import DRILL_MAX_BYTES

ENV_DRILLS = "WORKBENCH_DRILLS"


def _get(d: dict, key: str, kind: type | tuple, where: str, default=None):
    if key not in d:
        if default is None:
            raise ConfigError(key, None, "is required", source=where)
        return default
    v = d[key]
    if isinstance(v, bool) and kind is not bool or not isinstance(v, kind):
        raise ConfigError(key, v, f"must be {getattr(kind, '__name__', kind)}", source=where)
    return v


def _strings(d: dict, key: str, where: str, nonempty: bool = True) -> tuple[str, ...]:
    v = _get(d, key, list, where, default=[] if not nonempty else None)
    if (nonempty and not v) or not all(isinstance(x, str) and x.strip() for x in v):
        raise ConfigError(key, v, "must be a non-empty list of non-empty strings", source=where)
    return tuple(x.strip() for x in v)


KNOWN = {"id", "title", "topic", "prompt", "senior_review_question", "scenario", "rubric", "reference",
         "debug_branches", "pitfalls", "takeaways"}


def _per_step(r: dict, key: str, steps: int, where: str, lists: bool = False) -> tuple:
    """An optional list with one entry per mechanism step (a string, or a list of strings)."""
    value = r.get(key, [])
    ok = isinstance(value, list) and (not value or len(value) == steps) and all(
        (isinstance(v, list) and all(isinstance(t, str) for t in v)) if lists else isinstance(v, str) for v in value)
    if not ok:
        kind = "a list of phrasings" if lists else "a string"
        raise ConfigError(f"rubric.{key}", str(value)[:80], f"must have one entry per mechanism step ({steps}), "
                          f"each {kind}", source=where)
    return tuple(tuple(t.lower() for t in v) for v in value) if lists else tuple(value)


def words_of(step: list[str], lexicon: dict, where: str, written: list[str]) -> tuple[str, ...]:
    """One mechanism step's phrasings, its concepts expanded (terms and plain)."""
    written.extend(step)
    return expand(tuple(t.strip().lower() for t in step), lexicon, "rubric.mechanism_chain", where)


def parse_drill(data: dict, where: str, concepts: dict | None = None) -> Drill:
    """Validate a parsed drill document; ``@name`` references expand from the concept lexicon (``concepts``, or
    the drill folder's: :func:`workbench.grading.concepts.lexicon`)."""
    check_data(data, where, concepts)
    unknown = sorted(set(data) - KNOWN)
    if unknown:
        raise ConfigError(unknown[0], data[unknown[0]], "unknown field", source=where)
    s = _get(data, "scenario", dict, where)
    r = _get(data, "rubric", dict, where)
    ref = _get(data, "reference", dict, where)
    chain = _get(r, "mechanism_chain", list, f"{where} [rubric]")
    if len(chain) < 2 or not all(isinstance(step, list) and step and all(isinstance(t, str) for t in step)
                                 for step in chain):
        raise ConfigError("rubric.mechanism_chain", chain, "must list at least 2 steps, each a list of phrasings",
                          source=where)
    required = tuple(_get(r, "mechanism_required", list, f"{where} [rubric]", default=[0]))
    if not all(isinstance(i, int) and 0 <= i < len(chain) for i in required):
        raise ConfigError("rubric.mechanism_required", list(required), "must index mechanism_chain", source=where)
    min_steps = _get(r, "mechanism_min_steps", int, f"{where} [rubric]", default=3)
    if not 2 <= min_steps <= len(chain):
        raise ConfigError("rubric.mechanism_min_steps", min_steps, f"must be in [2, {len(chain)}]", source=where)
    lexicon = concepts if concepts is not None else concept_lexicon(Path(where).parent)
    written: list[str] = []

    def words(key: str, nonempty: bool = True, part: str = "both") -> tuple[str, ...]:
        raw = _strings(r, key, f"{where} [rubric]", nonempty=nonempty)
        written.extend(raw)
        return expand(tuple(t.lower() for t in raw), lexicon, f"rubric.{key}", where, part)

    steps = tuple(words_of(step, lexicon, where, written) for step in chain)
    plain = _per_step(r, "mechanism_plain", len(chain), where, lists=True)
    rubric = Rubric(
        workload_terms=words("workload_terms"), mechanism_chain=steps,
        mechanism_required=required, mechanism_min_steps=min_steps,
        rejected_mechanisms=words("rejected_mechanisms"), artifact_terms=words("artifact_terms"),
        fix_terms=words("fix_terms", part="terms"), fix_plain=words("fix_plain", nonempty=False, part="plain"),
        revert_terms=words("revert_terms", nonempty=False), rejected_fixes=words("rejected_fixes", nonempty=False),
        fix_knobs=words("fix_knobs", nonempty=False),
        mechanism_plain=tuple(expand(step, lexicon, "rubric.mechanism_plain", where) for step in plain),
        step_names=_per_step(r, "step_names", len(chain), where),
        step_questions=_per_step(r, "step_questions", len(chain), where),
        mechanism_class=_get(r, "mechanism_class", str, f"{where} [rubric]", default="") or "",
        change_terms=words("change_terms", nonempty=False))
    written += [t for step in plain for t in step]
    rubric = replace(rubric, own_phrases=len(own(tuple(written))),
                     concepts=tuple(dict.fromkeys(referenced(tuple(written)))))
    scenario = DrillScenario(
        name=_get(s, "name", str, f"{where} [scenario]"), requests=_get(s, "requests", int, where, default=20000),
        baseline=_get(s, "baseline", dict, f"{where} [scenario]"),
        regressed=_get(s, "regressed", dict, f"{where} [scenario]", default={}) if "regressed" in s else {},
        metric=_get(s, "metric", str, f"{where} [scenario]", default="latency_s.p99"),
        fixed=_get(s, "fixed", dict, f"{where} [scenario]", default={}))
    drill = Drill(
        id=_get(data, "id", str, where), title=_get(data, "title", str, where), topic=_get(data, "topic", str, where),
        prompt=_get(data, "prompt", str, where).strip(),
        senior_review_question=_get(data, "senior_review_question", str, where).strip(),
        scenario=scenario, rubric=rubric,
        strong_answer=_get(ref, "strong", str, f"{where} [reference]").strip(),
        weak_answer=_get(ref, "weak", str, f"{where} [reference]").strip(),
        debug_branches=_strings(data, "debug_branches", where), pitfalls=_strings(data, "pitfalls", where),
        takeaways=_strings(data, "takeaways", where), path=where)
    check_template(drill.strong_answer, where, "reference.strong")
    if "fix" in needs(drill.strong_answer) and not scenario.fixed:
        raise ConfigError("reference.strong", "{fix...}", "reads the fix run but [scenario] has no 'fixed'",
                          source=where)
    if Path(where).stem != drill.id:
        raise ConfigError("id", drill.id, f"must match the file name ({Path(where).stem})", source=where)
    check_drill(drill, where)
    return drill


def load_drill(path: str | Path) -> Drill:
    """Read one drill file (a regular file of at most 1 MB)."""
    from workbench.scenario import read_toml

    path = Path(path)
    return parse_drill(read_toml(path, DRILL_MAX_BYTES, "drill"), str(path))


def drills_dir(override: str | Path | None = None) -> Path:
    """The drills folder: an explicit path, $WORKBENCH_DRILLS, or the repository's drills/."""
    chosen = override or os.environ.get(ENV_DRILLS)
    if chosen:
        return Path(chosen)
    return Path(__file__).resolve().parents[2] / "drills"


def load_drills(folder: str | Path | None = None) -> dict[str, Drill]:
    """Every drill in the folder, by id."""
    folder = drills_dir(folder)
    check_folder_files(folder)
    drills = {}
    for p in sorted(folder.glob("*.toml")):
        if p.name == CONCEPTS_FILE:
            continue  # the concept lexicon, not a drill
        d = load_drill(p)
        drills[d.id] = d
    if not drills:
        raise ConfigError("drills", str(folder), "no drill files (*.toml) found")
    check_folder(folder, drills.values())
    return drills


@lru_cache(maxsize=8)
def siblings(folder: str) -> tuple[Drill, ...]:
    """The drills of a folder, read once (the grader checks an answer against its drill's siblings)."""
    try:
        return tuple(load_drills(folder).values())
    except ConfigError:
        return ()


def get_drill(drill_id: str, folder: str | Path | None = None) -> Drill:
    """One drill by id; an unknown id lists the valid ones."""
    drills = load_drills(folder)
    if drill_id not in drills:
        raise ConfigError("--drill", drill_id, f"unknown drill; valid ids: {', '.join(sorted(drills))}")
    return drills[drill_id]


def drill_scenarios(drill: Drill, fixed: bool = False):
    """(baseline, regressed) scenarios of a drill, built from its scenario and overrides; with ``fixed``, also
    the proposed fix's scenario."""
    from workbench.feedback.sweep import set_path
    from workbench.scenario import parse_scenario, read_toml, resolve

    base_dir = Path(drill.path).parent
    name = drill.scenario.name
    where = f"{drill.path} [scenario]"
    try:
        path = base_dir / name if name.endswith(".toml") else resolve(name)
        raw = read_toml(path)
    except ConfigError as e:
        raise ConfigError("scenario.name", name, f"cannot be loaded ({e})", source=where) from None
    out = []
    runs = [drill.scenario.baseline, drill.scenario.regressed]
    if fixed:  # the fix is applied on top of the regressed configuration
        runs.append({**drill.scenario.regressed, **drill.scenario.fixed})
    for overrides in runs:
        data = copy.deepcopy(raw)
        data["requests"] = drill.scenario.requests
        try:
            for key, value in overrides.items():
                set_path(data, key, value, what="drill override")
        except ConfigError as e:
            raise e.in_file(where) from None
        out.append(parse_scenario(data, f"{where} {name}", Path(path).parent))
    return tuple(out)

"""``workbench drills check DIR``: a folder of drills checked whole, for authors.

Every drill file is checked as it loads (:mod:`workbench.grading.drill_check`), its scenario
overrides applied, and with ``run`` its runs simulated and its reference rendered
(:func:`workbench.grading.practice.prepare`); then the folder's limits.
"""

from __future__ import annotations

from pathlib import Path

from workbench.errors import ConfigError
from workbench.grading.concepts import lexicon as concept_lexicon
from workbench.grading.drill_check import (
    MAX_DRILL_PHRASES,
    MAX_FOLDER_PHRASES,
    check_folder,
    check_folder_files,
    check_lexicon,
    distinct_phrases,
    drill_files,
    rubric_size,
)
from workbench.grading.drills import drill_scenarios, load_drill


def check_dir(folder: Path, run: bool = False) -> tuple[str, list[str]]:
    """``workbench drills check``: (a one-line summary, one line per problem). Every drill file is checked as it
    loads, and its scenario overrides are applied; with ``run``, its runs are simulated and its reference rendered.
    A folder that is not one, or holds no drill file, is one ConfigError."""
    if not folder.is_dir():
        raise ConfigError("drills check", str(folder), "is not a folder")
    paths = drill_files(folder)
    if not paths:
        raise ConfigError("drills check", str(folder), "holds no drill files (*.toml)")
    try:
        check_folder_files(folder)
        check_lexicon(concept_lexicon(folder), folder)  # every drill reads it: its problem is one, not one per drill
    except ConfigError as e:
        return "", [str(e)]
    problems, drills = [], []
    for path in paths:
        try:
            d = load_drill(path)
            drill_scenarios(d, fixed=bool(d.scenario.fixed))
            if run:
                from workbench.grading.practice import prepare

                prepare(d)
            drills.append(d)
        except ConfigError as e:
            problems.append(str(e))
    if problems:
        return "", problems
    try:
        check_folder(folder, drills)
    except ConfigError as e:
        return "", [str(e)]
    largest = max(drills, key=lambda d: rubric_size(d.rubric))
    return (f"{folder}: {len(drills)} drills fine; largest rubric {largest.id}, {rubric_size(largest.rubric):,} of "
            f"{MAX_DRILL_PHRASES:,} phrases; {distinct_phrases(drills):,} of {MAX_FOLDER_PHRASES:,} distinct phrases "
            f"in the folder" + ("; every reference rendered from its runs" if run else "")), []

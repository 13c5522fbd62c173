"""How many phrases each drill writes itself, before the concept lexicon and now.

Run: ``python tests/benchmarks/rubric_size.py [--before REV]`` (default REV 24a2edd, the last commit before
``drills/concepts.toml``; needs the git history, which a clone has).

Per drill: the phrases its file wrote before (every rubric list: steps and their plain phrasings, workload,
rejected classes, artifact, fix, plain fix, knobs, reverts, rejected fixes); the phrases it writes now (its
``@concept`` references left out); the concepts it names; and, to count honestly, the phrases of the concepts no
other drill names (a concept one drill uses is still that drill's vocabulary, even if it lives in the lexicon).
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from collections import Counter
from pathlib import Path

from workbench.grading.concepts import lexicon
from workbench.grading.drills import drills_dir, load_drills

LISTS = ("workload_terms", "rejected_mechanisms", "artifact_terms", "fix_terms", "fix_plain", "revert_terms",
         "rejected_fixes", "fix_knobs", "change_terms")


def written(rubric: dict) -> int:
    """Every phrase a drill file's rubric writes (its references included, as one each)."""
    steps = sum(len(s) for s in rubric.get("mechanism_chain", [])) + sum(len(s) for s in rubric.get(
        "mechanism_plain", []))
    return steps + sum(len(rubric.get(k, [])) for k in LISTS)


def before(rev: str, drill_id: str) -> int | None:
    try:
        text = subprocess.run(["git", "show", f"{rev}:drills/{drill_id}.toml"], capture_output=True, text=True,
                              check=True, cwd=Path(__file__).resolve().parents[2]).stdout
    except (subprocess.CalledProcessError, FileNotFoundError):
        return None  # a drill written after REV, or no history
    return written(tomllib.loads(text)["rubric"])


def main(argv: list[str]) -> None:
    rev = argv[argv.index("--before") + 1] if "--before" in argv else "24a2edd"
    drills = load_drills()
    concepts = lexicon(drills_dir())
    users = Counter(c for d in drills.values() for c in set(d.rubric.concepts))
    print(f"{'drill':<32}{'before':>8}{'own now':>9}{'concepts':>10}{'alone':>7}{'own+alone':>11}{'reached':>9}")
    for d in sorted(drills.values(), key=lambda d: d.id):
        r = d.rubric
        alone = [c for c in r.concepts if users[c] == 1]
        alone_phrases = sum(len(concepts[c].terms) + len(concepts[c].plain) for c in alone)
        reached = sum(len(s) for s in r.mechanism_chain) + sum(len(getattr(r, k)) for k in LISTS)
        was = before(rev, d.id)
        print(f"{d.id:<32}{was if was is not None else '-':>8}{r.own_phrases:>9}{len(r.concepts):>10}"
              f"{len(alone):>7}{r.own_phrases + alone_phrases:>11}{reached:>9}")
    shared = sorted(c for c, n in users.items() if n > 1)
    print(f"\n{len(concepts)} concepts in the lexicon; {len(shared)} named by two drills or more: {', '.join(shared)}")


if __name__ == "__main__":
    main(sys.argv[1:])

"""The checks a drill file passes when it loads (``workbench drills check DIR`` runs them: :mod:`.drill_folder`).

A drill is data that other people's answers are graded against and that practice prints, so
every part of it is bounded where it enters: no blank phrase (the phrase matcher has nothing
to match), no phrase longer than a few words, at most so many phrases per list, per rubric
and per folder (grading time grows with the phrases it matches: about 1 ms each on the
development machine, and the grader keeps at most 8,192 compiled), texts of bounded length,
and a reference template of the documented forms (:mod:`workbench.grading.reference`).
:func:`workbench.grading.drills.parse_drill` calls :func:`check_data` on the parsed TOML
before it reads it and :func:`check_drill` once the concepts are expanded;
:func:`workbench.grading.drills.load_drills` calls :func:`check_folder_files` before it reads
a file and :func:`check_folder` after; ``drills check`` also checks the concept lexicon whole
(:func:`check_lexicon`: a bad phrase in it is one problem of ``concepts.toml``, not one per
drill naming its concept). Each refusal is one :class:`ConfigError` naming the file, the key
and the value. The limits are listed in ``drills/README.md`` ("Limits").
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.errors import ConfigError
from workbench.grading.concepts import DEFAULT as CONCEPTS_DEFAULT
from workbench.grading.concepts import FILE as CONCEPTS_FILE
from workbench.grading.concepts import lexicon as concept_lexicon
from workbench.grading.reference import MAX_FIELDS, MAX_PRECISION, MAX_WIDTH  # listed with the limits below
from workbench.limits import MIB

if TYPE_CHECKING:
    from workbench.grading.concepts import Concept
    from workbench.grading.drill_types import Drill, Rubric

# --- a phrase, a list, a rubric (phrases counted once the drill's @concepts are expanded) ------------------------
MAX_PHRASE_CHARS = 80  # the built-in drills' longest phrase is 37
MAX_PHRASE_WORDS = 8  # words; the built-in longest is 6
MAX_LIST_PHRASES = 200  # one mechanism step, its plain phrasings, or one rubric list; built-in largest 125
MAX_DRILL_PHRASES = 1_000  # all of a rubric's lists together; built-in largest 410
MAX_STEPS = 12  # steps of the mechanism chain; built-in at most 5
# --- texts (characters) ------------------------------------------------------------------------------------------
MAX_TEXT = {"title": 200, "prompt": 4_000, "senior_review_question": 1_000, "reference.strong": 10_000,
            "reference.weak": 10_000, "rubric.mechanism_class": 100}
MAX_ITEMS = 20  # debug_branches, pitfalls, takeaways: items in each
MAX_ITEM_CHARS = 500  # one item of those, one step name, one step question
MAX_OVERRIDES = 64  # dotted paths in each of [scenario] baseline, regressed, fixed
# --- a folder of drills ------------------------------------------------------------------------------------------
MAX_DRILLS = 64  # drill files (concepts.toml aside)
MAX_FOLDER_BYTES = 16 * MIB  # their sizes together: read and parsed before the first answer is graded
MAX_FOLDER_PHRASES = 6_000  # distinct phrases over every rubric (built-in: 2,420), under the grader's 8,192 compiled
# --- a reference template: MAX_FIELDS, MAX_WIDTH, MAX_PRECISION (workbench.grading.reference, imported above) -----

LISTS = ("workload_terms", "rejected_mechanisms", "artifact_terms", "fix_terms", "fix_plain", "revert_terms",
         "rejected_fixes", "fix_knobs", "change_terms")
__all__ = ["MAX_FIELDS", "MAX_PRECISION", "MAX_WIDTH", "check_data", "check_drill", "check_folder",
           "check_folder_files", "check_lexicon", "rubric_size"]


def _at(data: dict, dotted: str):
    """The value at a dotted key, or None where a table on the way is missing or not a table."""
    for part in dotted.split("."):
        if not isinstance(data, dict):
            return None
        data = data.get(part)
    return data


def _phrase_lists(rubric: dict) -> Iterator[tuple[str, list]]:
    """(key, phrases) of every phrase list a rubric table writes (what is not a list is parse_drill's to refuse)."""
    for key in ("mechanism_chain", "mechanism_plain"):
        steps = rubric.get(key)
        if isinstance(steps, list):
            yield from ((f"rubric.{key}[{k}]", step) for k, step in enumerate(steps) if isinstance(step, list))
    yield from ((f"rubric.{key}", rubric[key]) for key in LISTS if isinstance(rubric.get(key), list))


def _shape(text: str) -> str | None:
    """Why a phrase cannot be matched well, or None."""
    if len(text) > MAX_PHRASE_CHARS:
        return f"is longer than {MAX_PHRASE_CHARS} characters"
    if len(text.split()) > MAX_PHRASE_WORDS:
        return f"has more than {MAX_PHRASE_WORDS} words"
    if not any(c.isalnum() or c == "#" for c in text):
        return "has no letter, digit or '#' to match"
    return None


def _check_phrase(p: str, key: str, where: str, concepts: dict[str, Concept]) -> None:
    text = p.strip()
    if not text or text == "@":
        raise ConfigError(key, p, "is an empty phrase: it matches nothing; remove it", source=where)
    if text.startswith("@"):  # a concept: its own phrases (a name no concept has is refused where it is expanded)
        c = concepts.get(text[1:])
        for t in (c.terms + c.plain) if c is not None else ():
            why = _shape(t)
            if why:
                raise ConfigError(key, p, f"concept {c.name!r} ({CONCEPTS_FILE}) holds the phrase {t[:40]!r}, which "
                                  f"{why}; a phrase is at most {MAX_PHRASE_WORDS} words", source=where)
        return
    why = _shape(text)
    if why:
        raise ConfigError(key, p, f"{why}; a phrase is a few words (at most {MAX_PHRASE_WORDS}, "
                          f"{MAX_PHRASE_CHARS} characters)", source=where)


def check_lexicon(concepts: dict[str, Concept], folder: Path) -> None:
    """Refuse a concept lexicon (the folder's ``concepts.toml`` over the repository's) holding a phrase the matcher
    cannot use, naming the lexicon and the concept's key."""
    own = folder / CONCEPTS_FILE
    for c in concepts.values():
        for part in ("terms", "plain"):
            for j, t in enumerate(getattr(c, part)):
                why = _shape(t)
                if why:
                    raise ConfigError(f"{c.name}.{part}[{j}]", t, f"{why}; a phrase is a few words (at most "
                                      f"{MAX_PHRASE_WORDS}, {MAX_PHRASE_CHARS} characters)",
                                      source=str(own if own.is_file() else CONCEPTS_DEFAULT))


def check_data(data: dict, where: str, concepts: dict[str, Concept] | None = None) -> None:
    """Refuse a parsed drill file whose phrases are blank or too long, whose lists are too long, or whose texts
    exceed the limits (before any of it is read; the types are :func:`parse_drill`'s to check)."""
    if not isinstance(data, dict):
        return
    _check_texts(data, where)
    rubric = data.get("rubric")
    if isinstance(rubric, dict):
        _check_rubric(rubric, where, concepts)


def _check_texts(data: dict, where: str) -> None:
    for key, limit in MAX_TEXT.items():
        text = _at(data, key)
        if isinstance(text, str) and len(text) > limit:
            raise ConfigError(key, f"<{len(text):,} characters>", f"at most {limit:,} characters", source=where)
    for key in ("debug_branches", "pitfalls", "takeaways", "rubric.step_names", "rubric.step_questions"):
        items = _at(data, key)
        if not isinstance(items, list):
            continue
        if len(items) > MAX_ITEMS and not key.startswith("rubric."):
            raise ConfigError(key, f"<{len(items):,} items>", f"at most {MAX_ITEMS} items", source=where)
        for k, item in enumerate(items):
            if isinstance(item, str) and len(item) > MAX_ITEM_CHARS:
                raise ConfigError(f"{key}[{k}]", item, f"at most {MAX_ITEM_CHARS} characters", source=where)
    for key in ("baseline", "regressed", "fixed"):
        table = _at(data, f"scenario.{key}")
        if isinstance(table, dict) and len(table) > MAX_OVERRIDES:
            raise ConfigError(f"scenario.{key}", f"<{len(table):,} overrides>", f"at most {MAX_OVERRIDES} overrides",
                              source=where)


def _check_rubric(rubric: dict, where: str, concepts: dict[str, Concept] | None) -> None:
    chain = rubric.get("mechanism_chain")
    if isinstance(chain, list) and len(chain) > MAX_STEPS:
        raise ConfigError("rubric.mechanism_chain", f"<{len(chain):,} steps>", f"at most {MAX_STEPS} steps",
                          source=where)
    lists = list(_phrase_lists(rubric))
    for key, phrases in lists:  # every count before any phrase: a list of 30,000 is refused at once
        if len(phrases) > MAX_LIST_PHRASES:
            raise ConfigError(key, f"<{len(phrases):,} phrases>", f"at most {MAX_LIST_PHRASES} phrases per list "
                              "(grading time grows with every phrase)", source=where)
    if concepts is None:
        concepts = concept_lexicon(Path(where).parent)
    for key, phrases in lists:
        for j, p in enumerate(phrases):
            if isinstance(p, str):
                _check_phrase(p, f"{key}[{j}]", where, concepts)


def _lists(r: Rubric) -> Iterator[tuple[str, tuple[str, ...]]]:
    """(key, expanded phrases) of every list the grader matches."""
    yield from ((f"rubric.mechanism_chain[{k}]", step) for k, step in enumerate(r.mechanism_chain))
    yield from ((f"rubric.mechanism_plain[{k}]", step) for k, step in enumerate(r.mechanism_plain))
    yield from ((f"rubric.{key}", getattr(r, key)) for key in LISTS)


def rubric_size(r: Rubric) -> int:
    """The phrases a rubric's lists hold, its concepts expanded: what grading one answer matches."""
    return sum(len(phrases) for _, phrases in _lists(r))


def check_drill(drill: Drill, where: str) -> None:
    """Refuse a parsed drill whose lists, once its concepts are expanded, exceed the limits."""
    for key, phrases in _lists(drill.rubric):
        if len(phrases) > MAX_LIST_PHRASES:
            raise ConfigError(key, f"<{len(phrases):,} phrases>", f"at most {MAX_LIST_PHRASES} phrases per list once "
                              "its concepts are expanded", source=where)
    size = rubric_size(drill.rubric)
    if size > MAX_DRILL_PHRASES:
        raise ConfigError("rubric", f"<{size:,} phrases>", f"a rubric holds at most {MAX_DRILL_PHRASES:,} phrases "
                          "once its concepts are expanded (grading time grows with every phrase)", source=where)


def drill_files(folder: Path) -> list[Path]:
    """The drill files of a folder, in name order (the concept lexicon left out)."""
    return [p for p in sorted(folder.glob("*.toml")) if p.name != CONCEPTS_FILE]


def check_folder_files(folder: Path) -> None:
    """Refuse a folder of more drill files, or more bytes of them, than the limits (before any is read)."""
    paths = drill_files(folder)
    if len(paths) > MAX_DRILLS:
        raise ConfigError("drill files", f"<{len(paths):,} files>", f"a folder holds at most {MAX_DRILLS} drills",
                          source=str(folder))
    size = 0
    for p in paths:
        try:
            size += p.stat().st_size
        except OSError:
            continue  # reading it reports why
    if size > MAX_FOLDER_BYTES:
        raise ConfigError("drill files", f"<{size:,} bytes>", f"a folder's drills hold at most "
                          f"{MAX_FOLDER_BYTES // MIB} MiB in all", source=str(folder))


def distinct_phrases(drills: Iterable[Drill]) -> int:
    """Distinct phrases over the rubrics of a folder's drills (the grader compiles each once and keeps it)."""
    return len({p for d in drills for _, phrases in _lists(d.rubric) for p in phrases})


def check_folder(folder: Path, drills: Iterable[Drill]) -> None:
    """Refuse a folder whose drills hold more distinct phrases than the grader keeps compiled."""
    n = distinct_phrases(drills)
    if n > MAX_FOLDER_PHRASES:
        raise ConfigError("rubric", f"<{n:,} distinct phrases>", f"the drills of a folder hold at most "
                          f"{MAX_FOLDER_PHRASES:,} distinct phrases in all (grading an answer matches its siblings' "
                          "chains too)", source=str(folder))

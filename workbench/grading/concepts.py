"""The concept lexicon: the field's concepts with their paraphrases, shared by every drill.

``drills/concepts.toml`` holds one table per concept: ``about`` (what it means), ``terms`` (the
field's words for it) and ``plain`` (the same in plain language). A drill's rubric names a
concept as ``"@name"`` in any phrase list, so a drill states its causal chain as links between
concepts plus the few phrases that are its own (its figures, tenants and settings). In a
mechanism step a reference stands for the concept's terms and plain phrasings; in ``fix_terms``
for its terms; in ``fix_plain`` for its plain phrasings; elsewhere for both.

A drills folder of a teacher's own may hold a ``concepts.toml`` too: its concepts are added to the
repository's, and replace those of the same name. A reference to no concept fails with one
message naming the file, the key and the name.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from workbench.errors import ConfigError
from workbench.limits import DRILL_MAX_BYTES

FILE = "concepts.toml"
DEFAULT = Path(__file__).resolve().parents[2] / "drills" / FILE


@dataclass(frozen=True)
class Concept:
    """One concept of the field and its phrasings."""

    name: str
    about: str
    terms: tuple[str, ...]
    plain: tuple[str, ...] = ()


def _parse(data: dict, where: str) -> dict[str, Concept]:
    out = {}
    for name, body in data.items():
        if not isinstance(body, dict):
            raise ConfigError(name, body, "must be a table (about, terms, plain)", source=where)
        unknown = sorted(set(body) - {"about", "terms", "plain"})
        if unknown:
            raise ConfigError(f"{name}.{unknown[0]}", body[unknown[0]], "unknown field", source=where)
        lists = {}
        for key in ("terms", "plain"):
            v = body.get(key, [])
            if not isinstance(v, list) or not all(isinstance(t, str) and t.strip() for t in v) or (
                    key == "terms" and not v):
                raise ConfigError(f"{name}.{key}", v, "must be a list of non-empty strings" +
                                  (" (at least one)" if key == "terms" else ""), source=where)
            lists[key] = tuple(t.strip().lower() for t in v)
        about = body.get("about", "")
        if not isinstance(about, str):
            raise ConfigError(f"{name}.about", about, "must be a string", source=where)
        out[name] = Concept(name, about, lists["terms"], lists["plain"])
    return out


@lru_cache(maxsize=8)
def _read(path: str) -> dict[str, Concept]:
    from workbench.scenario import read_toml

    return _parse(read_toml(Path(path), DRILL_MAX_BYTES, "concepts"), path)


def lexicon(folder: str | Path | None = None) -> dict[str, Concept]:
    """The repository's concepts, with those of ``folder``'s own ``concepts.toml`` added (or replacing)."""
    concepts = dict(_read(str(DEFAULT))) if DEFAULT.is_file() else {}
    own = Path(folder) / FILE if folder is not None else None
    if own is not None and own.is_file() and own.resolve() != DEFAULT.resolve():
        concepts.update(_read(str(own.resolve())))
    return concepts


def expand(phrases: tuple[str, ...], concepts: dict[str, Concept], key: str, where: str,
           part: str = "both") -> tuple[str, ...]:
    """The phrases with each ``@name`` replaced by the concept's ``part`` ('terms', 'plain' or 'both')."""
    out: list[str] = []
    for p in phrases:
        if not p.startswith("@"):
            out.append(p)
            continue
        c = concepts.get(p[1:])
        if c is None:
            raise ConfigError(key, p, f"names no concept; known: {', '.join(sorted(concepts))}", source=where)
        out += c.terms if part == "terms" else c.plain if part == "plain" else c.terms + c.plain
    return tuple(dict.fromkeys(out))


def own(phrases: tuple[str, ...]) -> tuple[str, ...]:
    """The phrases a drill writes itself, its concept references left out."""
    return tuple(p for p in phrases if not p.startswith("@"))


def referenced(phrases: tuple[str, ...]) -> tuple[str, ...]:
    """The concepts a list names."""
    return tuple(p[1:] for p in phrases if p.startswith("@"))

"""The glossary: one file, every term a notebook links to is defined there, every chapter links it."""

from __future__ import annotations

import json
import re
from pathlib import Path

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
GLOSSARY = NOTEBOOKS / "GLOSSARY.md"
CHAPTERS = sorted(NOTEBOOKS.glob("0*.ipynb"))


def anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lowercase, punctuation dropped (hyphens kept), spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def entries() -> dict[str, str]:
    """Heading anchor -> the entry's text."""
    parts = re.split(r"^## (.+)$", GLOSSARY.read_text(encoding="utf-8"), flags=re.M)
    return {anchor(h): body.strip() for h, body in zip(parts[1::2], parts[2::2], strict=True)}


def links(path: Path) -> set[str]:
    text = "".join("".join(c["source"]) for c in json.loads(path.read_text(encoding="utf-8"))["cells"])
    return set(re.findall(r"GLOSSARY\.md#([\w\-]+)", text))


def test_anchor_rule_by_hand():
    assert anchor("Little's law") == "littles-law" and anchor("M/M/1 queue") == "mm1-queue"
    assert anchor("Warm-up") == "warm-up" and anchor("p99") == "p99"


def test_every_link_from_every_notebook_resolves():
    defined = entries()
    for nb in [*CHAPTERS, *sorted((NOTEBOOKS / "solutions").glob("*.ipynb"))]:
        missing = links(nb) - set(defined)
        assert not missing, (nb.name, sorted(missing))


def test_every_chapter_links_the_glossary():
    assert len(CHAPTERS) >= 9
    for nb in CHAPTERS:
        assert links(nb), nb.name


def test_entries_are_unique_and_say_something():
    heads = re.findall(r"^## (.+)$", GLOSSARY.read_text(encoding="utf-8"), flags=re.M)
    assert len(heads) == len({anchor(h) for h in heads}) >= 80
    assert heads == sorted(heads, key=str.lower)  # alphabetical, so a learner finds a term
    for name, body in entries().items():
        assert len(body.split()) >= 12 and "." in body, name
    index = set(re.findall(r"\]\(#([\w\-]+)\)", GLOSSARY.read_text(encoding="utf-8")))
    assert index <= set(entries())  # the index and the cross-references point at real entries

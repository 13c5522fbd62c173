"""The concept lexicon: references expand, a teacher's folder adds or replaces concepts, bad input is named."""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path

import pytest

from workbench.errors import ConfigError
from workbench.grading.concepts import DEFAULT, lexicon
from workbench.grading.drills import load_drill, load_drills

DRILLS = Path(__file__).resolve().parents[1] / "drills"


def test_every_reference_expands_to_the_concepts_phrases():
    concepts = lexicon()
    d = load_drills()["fairness-starvation"]
    assert "strict_priority" in d.rubric.concepts and "tail" in d.rubric.concepts
    step0 = set(d.rubric.mechanism_chain[0])
    assert set(concepts["strict_priority"].terms) <= step0 and set(concepts["strict_priority"].plain) <= step0
    assert not any(t.startswith("@") for step in d.rubric.mechanism_chain for t in step)
    # fix_terms take a remedy's terms, fix_plain its plain phrasings
    assert set(concepts["fair_share_scheduling"].terms) <= set(d.rubric.fix_terms)
    assert set(concepts["fair_share_scheduling"].plain) <= set(d.rubric.fix_plain)


def test_a_drill_counts_only_the_phrases_it_writes():
    d = load_drills()["priority-budget-starvation"]
    rubric = tomllib.loads((DRILLS / "priority-budget-starvation.toml").read_text())["rubric"]
    phrases = [t for step in rubric["mechanism_chain"] for t in step] + [
        t for k, v in rubric.items() if k.endswith(("_terms", "_mechanisms", "_plain", "_fixes", "_knobs"))
        and isinstance(v, list) for t in v]
    assert d.rubric.own_phrases == sum(not t.startswith("@") for t in phrases) < len(phrases)
    assert d.rubric.concepts == tuple(dict.fromkeys(t[1:] for t in phrases if t.startswith("@")))


def test_a_shared_concept_serves_every_drill_that_names_it():
    drills = load_drills()
    users = [d for d in drills.values() if "queue_wait" in d.rubric.concepts]
    assert len(users) >= 4
    phrase = lexicon()["queue_wait"].terms[0]
    assert all(any(phrase in step for step in d.rubric.mechanism_chain) for d in users)


def test_a_teachers_folder_adds_and_replaces_concepts(tmp_path):
    shutil.copy(DRILLS / "fairness-starvation.toml", tmp_path)
    (tmp_path / "concepts.toml").write_text('[strict_priority]\nabout = "mine"\nterms = ["vip lane"]\n'
                                            '[my_own]\nterms = ["a thing"]\n')
    d = load_drills(tmp_path)["fairness-starvation"]  # concepts.toml itself is no drill
    assert "vip lane" in d.rubric.mechanism_chain[0] and "strict priority" not in lexicon(tmp_path)[
        "strict_priority"].terms
    assert "tail" in lexicon(tmp_path) and "my_own" in lexicon(tmp_path)


@pytest.mark.parametrize(("lexicon_text", "drill_edit", "key"), [
    (None, ('"@strict_priority"', '"@no_such_concept"'), "rubric.mechanism_chain"),
    ('[strict_priority]\nterms = []\n', None, "strict_priority.terms"),
    ('[strict_priority]\nterms = ["x"]\nsynonyms = ["y"]\n', None, "strict_priority.synonyms"),
])
def test_bad_input_names_the_file_the_key_and_the_value(tmp_path, lexicon_text, drill_edit, key):
    text = (DRILLS / "fairness-starvation.toml").read_text()
    if drill_edit:
        text = text.replace(*drill_edit)
    (tmp_path / "fairness-starvation.toml").write_text(text)
    if lexicon_text:
        (tmp_path / "concepts.toml").write_text(lexicon_text)
    with pytest.raises(ConfigError) as e:
        load_drill(tmp_path / "fairness-starvation.toml")
    assert key in str(e.value) and str(tmp_path) in str(e.value)


def test_the_lexicon_file_is_where_the_drills_are():
    assert DEFAULT == DRILLS / "concepts.toml" and DEFAULT.is_file()

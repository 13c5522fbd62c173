"""Hostile drill files and hostile answers (issue 38, G1-G6 and I1-I3).

A drill file is checked when it loads (blank phrases, rubric sizes, template fields and format specs), and its
reference is rendered by a formatter that walks only the run summaries: one clear line and exit status 2 for a bad
file, never a traceback, a file's worth of memory or the process's globals. Practice and the mock interview keep
what the learner gave: bytes that are not UTF-8 are replaced, a reply that is too long or holds NUL bytes is
refused and may be typed again, Ctrl-C ends cleanly, and nothing empty is saved.
"""

from __future__ import annotations

import io
import time
import tomllib
from pathlib import Path

import pytest

from tests.helpers import run_cli
from workbench.errors import ConfigError
from workbench.grading import drill_check
from workbench.grading.drills import load_drills, parse_drill
from workbench.grading.interview import run_interview
from workbench.grading.practice import Evidence, session
from workbench.grading.reference import check_template, render
from workbench.grading.store import Store

DRILLS_DIR = Path(__file__).resolve().parents[1] / "drills"
ID = "fusion-memory-bursts"
SOURCE = (DRILLS_DIR / f"{ID}.toml").read_text(encoding="utf-8")
SUMMARIES = {"base": {"latency_s": {"p99": 0.002}}, "reg": {"latency_s": {"p99": 0.008}, "scenario": "s"}}
ANSWER = "The p95 of the transformer block rose because the fused chain spills its hidden row to HBM."


def drill_folder(tmp_path: Path, old: str = "", new: str = "", text: str | None = None) -> Path:
    """A folder holding the fusion drill, with ``old`` replaced by ``new`` once (or ``text`` as the whole file)."""
    if text is None:
        assert old in SOURCE
        text = SOURCE.replace(old, new, 1)
    folder = tmp_path / "drills"
    folder.mkdir(exist_ok=True)
    (folder / f"{ID}.toml").write_text(text, encoding="utf-8")
    return folder


def one_line(status, err: str) -> bool:
    return status == 2 and err.count("\n") == 1 and err.startswith("workbench: error:") and "Traceback" not in err


# --- G1: blank phrases -----------------------------------------------------------------------------------------

@pytest.mark.parametrize(("old", "new", "key"), [
    ('["@tail"],', '["@tail", ""],', "rubric.mechanism_chain[4][1]"),
    ('["@tail"],', '["@tail", "   "],', "rubric.mechanism_chain[4][1]"),
    ('["@tail"],', '["@tail", "@"],', "rubric.mechanism_chain[4][1]"),
    ('mechanism_required = [0, 1]', 'mechanism_plain = [[], [], [""], [], []]\nmechanism_required = [0, 1]',
     "rubric.mechanism_plain[2][0]"),
])
def test_a_blank_phrase_is_refused_when_the_drill_loads(tmp_path, old, new, key):
    folder = drill_folder(tmp_path, old, new)
    status, _, err = run_cli(["grade", "--drill", ID, "--drills-dir", str(folder)], seconds=30)
    assert one_line(status, err) and f"{ID}.toml: {key}" in err and "empty" in err, err


# --- G2, G3, G4: reference templates -----------------------------------------------------------------------------

@pytest.mark.parametrize(("field", "why"), [
    ("{reg.ms.p99:.2q}", "format spec"),
    ("{reg.ms:.2f}", "group of figures"),
    ("{reg.pct}", "group of figures"),
    ("{reg}", "group of figures"),
    ("{reg.ms.p99:{base.ms.p99}}", "format spec"),
    ("{reg.ms.p99:>5000000000}", "width"),
    ("{reg.ms.p99:>500000000}", "width"),
    ("{reg.ms.p99:.500f}", "precision"),
    ("{reg.ms.p99!r}", "conversion"),
    ("{reg.__init__.__globals__}", "field"),
    ("{reg._data}", "field"),
    ("{reg.ms[0]}", "field"),
    ("{reg.ms[__class__]}", "field"),
    ("{0}", "root"),
    ("{}", "root"),
])
def test_a_template_field_outside_the_documented_forms_is_refused_at_load_and_at_render(tmp_path, field, why):
    with pytest.raises(ConfigError, match=why):
        check_template(f"p99 {field} ms", "x.toml", "reference.strong")
    with pytest.raises(ConfigError, match=why):
        render(f"p99 {field} ms", SUMMARIES)
    folder = drill_folder(tmp_path, "{reg.ms.p95:.1f}", field)
    started = time.monotonic()
    status, out, err = run_cli(["practice", "--drills-dir", str(folder), "--db", str(tmp_path / "p.db")], seconds=30)
    assert one_line(status, err) and "reference.strong" in err and "__builtins__" not in out + err, err
    assert time.monotonic() - started < 10 and not (tmp_path / "p.db").exists()


def test_a_group_of_figures_or_a_spec_its_value_does_not_take_is_one_clear_error():
    with pytest.raises(ConfigError, match=r"reg\.streams'?: names a group of figures"):
        render("{reg.streams:.2f}", {"reg": {"streams": {"a": {"latency_s": {"p99": 0.1}}}}})
    with pytest.raises(ConfigError, match="reg.ms.p99.*cannot be formatted"):
        render("{reg.ms.p99:d}", SUMMARIES)
    with pytest.raises(ConfigError, match="reg.scenario.*cannot be formatted"):
        render("{reg.scenario:.2f}", SUMMARIES)


def test_the_documented_forms_render_as_before():
    out = render("{reg.ms.p99:.1f} {reg.ms.p99:>8.2f} {ratio.ms.p99:+.0%} {reg.scenario} {{literal}} "
                 "{reg.ms.p99:,.0f} {delta.ms.p99:.0f}", SUMMARIES)
    assert out == "8.0     8.00 +400% s {literal} 8 6"  # ratio 8 / 2 as a percentage


def test_a_template_with_too_many_fields_is_refused():
    with pytest.raises(ConfigError, match="fields"):
        check_template("{reg.ms.p99:.1f} " * (drill_check.MAX_FIELDS + 1), "x.toml", "reference.strong")


# --- G6 and the size limits ------------------------------------------------------------------------------------

def _data() -> dict:
    return tomllib.loads(SOURCE)


def test_a_rubric_over_the_documented_size_is_refused_fast(tmp_path):
    phrases = ", ".join(f'"phrase number {i} here"' for i in range(30_000))
    folder = drill_folder(tmp_path, '["@tail"],', f'["@tail", {phrases}],')
    started = time.monotonic()
    status, _, err = run_cli(["grade", "--drill", ID, "--drills-dir", str(folder)], seconds=30)
    assert one_line(status, err) and "rubric.mechanism_chain[4]" in err and "at most" in err, err
    assert time.monotonic() - started < 5


@pytest.mark.parametrize(("edit", "key"), [
    (lambda r: r["mechanism_chain"][4].extend(f"tail phrase {i}" for i in range(drill_check.MAX_LIST_PHRASES)),
     "rubric.mechanism_chain[4]"),
    (lambda r: r["artifact_terms"].extend(f"artifact phrase {i}" for i in range(drill_check.MAX_LIST_PHRASES)),
     "rubric.artifact_terms"),
    (lambda r: [r[k].extend(f"{k} phrase {i}" for i in range(drill_check.MAX_LIST_PHRASES - 40))
                for k in ("workload_terms", "artifact_terms", "rejected_mechanisms", "fix_terms", "fix_knobs",
                          "rejected_fixes")], "rubric"),
    (lambda r: r["artifact_terms"].append("a " * drill_check.MAX_PHRASE_WORDS + "b"), "rubric.artifact_terms[8]"),
    (lambda r: r["artifact_terms"].append("x" * (drill_check.MAX_PHRASE_CHARS + 1)), "rubric.artifact_terms[8]"),
    (lambda r: r["mechanism_chain"].extend([["step"]] * drill_check.MAX_STEPS), "rubric.mechanism_chain"),
])
def test_each_rubric_limit_names_the_file_and_the_key(edit, key):
    data = _data()
    edit(data["rubric"])
    with pytest.raises(ConfigError, match="at most") as e:
        parse_drill(data, f"/d/{ID}.toml")
    assert str(e.value).startswith(f"/d/{ID}.toml: {key} = "), e.value


@pytest.mark.parametrize(("key", "value"), [("prompt", "p" * 5000), ("pitfalls", ["p"] * 40),
                                            ("takeaways", ["t" * 600])])
def test_the_texts_beside_the_rubric_are_bounded(key, value):
    data = _data()
    data[key] = value
    with pytest.raises(ConfigError, match=f"{key}.*at most"):
        parse_drill(data, f"/d/{ID}.toml")


def test_a_drill_just_inside_the_limits_loads():
    data = _data()
    extra = drill_check.MAX_DRILL_PHRASES - drill_check.rubric_size(parse_drill(_data(), f"/d/{ID}.toml").rubric)
    steps = data["rubric"]["mechanism_chain"]
    for k in range(extra):
        steps[k % len(steps)].append(f"inside phrase {k}")
    assert all(len(s) <= drill_check.MAX_LIST_PHRASES for s in steps)
    d = parse_drill(data, f"/d/{ID}.toml")
    assert drill_check.rubric_size(d.rubric) == drill_check.MAX_DRILL_PHRASES


def test_the_folder_limits_stay_inside_the_graders_phrase_cache():
    from workbench.grading.text import phrase

    assert drill_check.MAX_FOLDER_PHRASES + 1000 < phrase.cache_info().maxsize  # 1,000: the grader's own phrases
    assert drill_check.MAX_DRILL_PHRASES <= drill_check.MAX_FOLDER_PHRASES


def test_a_folder_of_too_many_drills_is_refused_before_any_is_read(tmp_path):
    for i in range(drill_check.MAX_DRILLS + 1):
        (tmp_path / f"d{i:03}.toml").write_text("not toml at all [[[")  # never parsed: the count comes first
    status, _, err = run_cli(["grade", "--drill", "d000", "--drills-dir", str(tmp_path)])
    assert one_line(status, err) and str(tmp_path) in err and f"at most {drill_check.MAX_DRILLS}" in err, err


def test_a_folder_over_the_distinct_phrase_limit_is_refused(tmp_path):
    per = drill_check.MAX_LIST_PHRASES // 2
    for i in range(drill_check.MAX_FOLDER_PHRASES // (5 * per) + 1):
        text = SOURCE.replace(f'id = "{ID}"', f'id = "d{i}"', 1)
        for s, step in enumerate(("@fused_chain", "@sram_overflow", "@hbm_traffic", "@hbm_contention", "@tail")):
            words = ", ".join(f'"d{i} s{s} phrase {k}"' for k in range(per))
            text = text.replace(f'["{step}"', f'["{step}", {words}', 1)
        (tmp_path / f"d{i}.toml").write_text(text)
    status, _, err = run_cli(["grade", "--drill", "d0", "--drills-dir", str(tmp_path)], seconds=30)
    assert one_line(status, err) and "distinct phrases" in err, err


# --- workbench drills check -------------------------------------------------------------------------------------

def test_drills_check_passes_every_built_in_drill():
    status, out, err = run_cli(["drills", "check", str(DRILLS_DIR)], seconds=60)
    assert status == 0 and not err, err
    assert out.count("\n") == 1 and f"{len(load_drills(DRILLS_DIR))} drills" in out and "fine" in out, out


def test_drills_check_reports_one_line_per_problem(tmp_path):
    folder = drill_folder(tmp_path, '["@tail"],', '["@tail", ""],')
    bad = SOURCE.replace(f'id = "{ID}"', 'id = "second"', 1).replace("{reg.ms.p95:.1f}", "{reg.ms.p95:.2q}", 1)
    (folder / "second.toml").write_text(bad)
    (folder / "fine.toml").write_text(SOURCE.replace(f'id = "{ID}"', 'id = "fine"', 1))
    status, out, err = run_cli(["drills", "check", str(folder)], seconds=60)
    lines = err.splitlines()
    assert status == 2 and not out and len(lines) == 2, err
    assert all(line.startswith("workbench: error: ") for line in lines)
    assert f"{ID}.toml: rubric.mechanism_chain[4][1]" in lines[0] and "second.toml: reference.strong" in lines[1]


def test_drills_check_of_a_scenario_override_that_does_not_apply(tmp_path):
    folder = drill_folder(tmp_path, '"model.fusion" = "elementwise"', '"modle.fusion" = "elementwise"')
    status, _, err = run_cli(["drills", "check", str(folder)], seconds=60)
    assert one_line(status, err) and "modle.fusion" in err, err


@pytest.mark.parametrize("where", ["missing", "file"])
def test_drills_check_of_no_folder_is_one_line(tmp_path, monkeypatch, where):
    monkeypatch.chdir(tmp_path)  # a short path: a value past 80 characters is shown cut (a test worker's tmp_path is)
    target = Path("nothing")
    if where == "file":
        target.write_text("x")
    status, _, err = run_cli(["drills", "check", str(target)])
    assert one_line(status, err) and str(target) in err, err


# --- I1, I2, I3: the interview and practice at the terminal -----------------------------------------------------

def _stdin(data: bytes) -> io.TextIOWrapper:
    """Standard input as Python opens it under a C.UTF-8 locale: undecodable bytes become lone surrogates."""
    return io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors="surrogateescape")


DRILL = load_drills(DRILLS_DIR)[ID]


def test_bytes_that_are_not_utf8_are_replaced_in_the_interview(tmp_path):
    store, out = Store(tmp_path / "p.db"), io.StringIO()
    attempt = run_interview(DRILL, store, "table", "reference", stdin=_stdin(b"p95 rose \xff\xfe badly\n.\n"),
                            stdout=out)
    assert attempt == 1 and "\ufffd" in store.transcript(1)["turns"][0]["text"]
    assert "Traceback" not in out.getvalue()


def test_bytes_that_are_not_utf8_through_the_cli(tmp_path, monkeypatch):
    for command in ("interview", "practice"):
        monkeypatch.setattr("sys.stdin", _stdin(b"p95 rose \xff\xfe badly\n.\n"))
        status, out, err = run_cli([command, "--drill" if command == "interview" else "--topic",
                                    ID if command == "interview" else "fusion", "--db", str(tmp_path / "p.db")],
                                   seconds=120)
        assert status == 0 and "saved" in out and not err, (command, status, err)
    store = Store(tmp_path / "p.db")
    assert [a["drill"] for a in store.attempts()] == [ID, ID]


def test_ctrl_c_during_the_interviews_simulation_ends_cleanly_and_saves_nothing(tmp_path, monkeypatch):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr("workbench.grading.practice.prepare", interrupted)
    status, out, err = run_cli(["interview", "--drill", ID, "--db", str(tmp_path / "p.db")])
    assert status == 0 and "nothing saved" in out and not err, (status, err)
    assert Store(tmp_path / "p.db").attempts() == []


def test_ctrl_c_while_the_exchange_is_graded_saves_nothing_half_made(tmp_path, monkeypatch):
    import workbench.grading.interview as interview

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    store, out = Store(tmp_path / "p.db"), io.StringIO()
    monkeypatch.setattr(interview.Interview, "save", interrupted)
    attempt = run_interview(DRILL, store, "table", "reference", stdin=io.StringIO(ANSWER + "\n.\n"), stdout=out)
    assert attempt is None and "nothing saved" in out.getvalue() and store.attempts() == []


def test_an_over_long_reply_is_refused_and_the_answer_so_far_kept(tmp_path):
    store, out = Store(tmp_path / "p.db"), io.StringIO()
    long = "word " * 5000  # 25,000 characters: with the opening, past the exchange's 20,000
    replies = f"{ANSWER}\n.\n{long}\n.\nThe ML compiler team owns it.\n.\n"
    attempt = run_interview(DRILL, store, "table", "reference", stdin=io.StringIO(replies), stdout=out)
    text = out.getvalue()
    assert "refused" in text and "kept" in text and attempt == 1, text[-800:]
    turns = [t["text"] for t in store.transcript(1)["turns"] if t["role"] == "candidate"]
    assert turns == [ANSWER + "\n", "The ML compiler team owns it.\n"]


def test_an_over_long_opening_may_be_typed_again(tmp_path):
    store, out = Store(tmp_path / "p.db"), io.StringIO()
    stdin = io.StringIO("x" * 30_000 + "\n.\n" + ANSWER + "\n.\n")
    assert run_interview(DRILL, store, "table", "reference", stdin=stdin, stdout=out) == 1
    assert "refused" in out.getvalue()
    assert store.transcript(1)["turns"][0]["text"] == ANSWER + "\n"


def test_an_over_long_reply_is_not_held_in_memory_whole(monkeypatch):
    from workbench.grading.practice import read_block

    class Endless(io.TextIOBase):  # one line that never ends: only a bounded part of it may be read at a time
        reads = 0

        def readline(self, size=-1):
            assert 0 < size <= 100_000
            Endless.reads += 1
            return "x" * size if Endless.reads < 50 else ""

    block = read_block(Endless(), 20_000)
    assert block.too_long and block.text == "" and Endless.reads == 50


def test_nul_bytes_are_refused_and_nothing_empty_is_saved(tmp_path):
    store, out = Store(tmp_path / "p.db"), io.StringIO()
    stdin = io.StringIO(f"p95 rose\x00 badly\n.\n \n.\n{ANSWER}\n.\n")
    assert run_interview(DRILL, store, "table", "reference", stdin=stdin, stdout=out) == 1
    assert [line for line in out.getvalue().splitlines() if line.startswith("refused: ")] == [
        "refused: it holds NUL bytes (binary data?); type it again", "refused: it is empty; type it again"]
    assert "\x00" not in store.transcript(1)["turns"][0]["text"]
    for stdin in ("", " \n\n.\n", "\x00\n.\n"):
        out = io.StringIO()
        assert run_interview(DRILL, Store(tmp_path / "q.db"), "t", "r", stdin=io.StringIO(stdin), stdout=out) is None
    assert Store(tmp_path / "q.db").attempts() == []


def test_practice_at_end_of_input_saves_no_empty_attempt(tmp_path, monkeypatch):
    ev = Evidence("table", None, "reference", {})
    monkeypatch.setattr("workbench.grading.practice.prepare", lambda d, f=None: ev)
    drills = {ID: DRILL}
    for stdin in ("", "   \n", " \n.\n", "\x00\n.\n"):
        out = io.StringIO()
        assert session(drills, Store(tmp_path / "p.db"), stdin=io.StringIO(stdin), stdout=out) == [], stdin
    assert Store(tmp_path / "p.db").attempts() == []
    out = io.StringIO()
    saved = session(drills, Store(tmp_path / "p.db"), stdin=io.StringIO("x" * 30_000 + "\n.\n" + ANSWER + "\n.\n"),
                    stdout=out)
    assert saved == [1] and "refused" in out.getvalue()


def test_the_limits_are_documented_in_the_teachers_guide():
    guide = (DRILLS_DIR / "README.md").read_text(encoding="utf-8").split("## 7. Limits", 1)[1]
    for figure in (f"{drill_check.MAX_PHRASE_WORDS} words, {drill_check.MAX_PHRASE_CHARS} characters",
                   f"{drill_check.MAX_LIST_PHRASES} phrases", f"{drill_check.MAX_DRILL_PHRASES:,} phrases",
                   f"| {drill_check.MAX_STEPS} |", f"{drill_check.MAX_ITEMS} items each",
                   f"{drill_check.MAX_ITEM_CHARS} characters an item", f"{drill_check.MAX_OVERRIDES} overrides",
                   f"{drill_check.MAX_DRILLS} drill files", f"{drill_check.MAX_FOLDER_BYTES // 2**20} MiB",
                   f"{drill_check.MAX_FOLDER_PHRASES:,} distinct phrases", f"width of at most {drill_check.MAX_WIDTH}",
                   f"precision of at most {drill_check.MAX_PRECISION}", f"At most {drill_check.MAX_FIELDS} fields",
                   "{:,}, {:,}, {:,} characters".format(*(drill_check.MAX_TEXT[k] for k in (
                       "title", "prompt", "senior_review_question"))),
                   f"{drill_check.MAX_TEXT['reference.strong']:,} characters each"):
        assert figure in guide, figure

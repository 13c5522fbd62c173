"""Fuzz: mutated drill files loaded, checked and graded against through the CLI, in-process.

Hypothesis takes a built-in drill (or the concept lexicon, ``concepts.toml``) and mutates it:
as data (a key deleted, a wrong type, an extreme value, an unknown key; a scenario override
at a path that is not there, out of range or into a value, or another scenario; empty, blank, huge,
unicode, control-character, regex-looking and template-looking phrases added to a phrase list;
a list grown past its limits; a template field with an odd format spec put into the reference;
a text made huge; a table of another drill grafted in) or as bytes (cut short, invalid UTF-8,
NUL bytes, a duplicated or dropped line). The file goes into a fresh folder with one unmutated
sibling drill and the concept lexicon, and three commands run on it: ``workbench drills check
DIR`` (now and then with ``--run``, which simulates the drill's runs and renders its reference),
``workbench list --drills --drills-dir DIR`` and ``workbench grade --drill ID --drills-dir DIR
--json`` with an answer on stdin or in a file; after a ``--run``, a mock interview on the drill
too (its step questions and rendered reference printed). Each ends with exit 0 and its output
(strict JSON for the grade), or exit 2 and one ``workbench: error:`` line
(:func:`tests.fuzz_support.ended`).
"""

from __future__ import annotations

import io
import json
import shutil
import sys
import tempfile
import tomllib
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fuzz_support import Tally, ended, examples
from tests.helpers import run_cli
from tests.test_fuzz import EXTREMES, _key, _mutate, _paths, _value

EXAMPLES, FIXED = examples(ci=40)
DRILLS_DIR = Path(__file__).resolve().parents[1] / "drills"
CONCEPTS = "concepts.toml"
SOURCES = {p.name: p.read_text(encoding="utf-8") for p in sorted(DRILLS_DIR.glob("*.toml"))}
DOCS = {name: tomllib.loads(text) for name, text in SOURCES.items()}
DRILLS = sorted(n for n in SOURCES if n != CONCEPTS)
SLOW = {"chunked-prefill-ttft.toml", "spec-decode-acceptance.toml", "tp-allreduce-slow-link.toml"}  # --run: > 0.5 s
PHRASES = ["", " ", "\t", "@", "@@tail", "@tail", "@no_such_concept", "#", "# #", "x" * 81, "é" * 80,
           " ".join(["w"] * 9), "ü𝄞\u202e\u2066", "\x1b[31mred\x1b[0m", "\x00", "\x7f\x9b", "{reg.ms.p99}", "{", "}",
           "\\", "(", "[a-z]+", ".*", "a|b", "p99?", "*", "(?i)x", "\\b", "\n.\n", "🔥" * 10, "1e308", "nan"]
TEMPLATES = ["{reg.ms.p99:.1f}", "{base.ms.p99}", "{fix.ms.p99:.0f}", "{ratio.ms.p99:.2f}", "{delta.ms.p99:+.0f}",
             "{reg.ms.p99:>99999}", "{reg.ms.p99:.99999f}", "{reg.ms.p99:,.2%}", "{reg.ms.p99:x}", "{reg.ms.p99:n}",
             "{reg.ms.p99:=^40}", "{reg.ms.p99:" + "9" * 30 + "}", "{reg.ms.p99!r}", "{reg.ms.p99!s:>10}",
             "{reg.__class__}", "{reg.__init__.__globals__}", "{reg[0]}", "{reg[__class__]}", "{0}", "{}", "{",
             "}", "{{", "}}", "{reg.ms.p99:{base.ms.p99}}", "{reg.nope.p99}", "{reg.streams[api].completed}",
             "{reg.ttft_ms.p99:.0f}", "{reg.pct.busy_mean:.0f}", "{reg." + "a." * 200 + "b}", "{" * 500,
             "{reg.ms.p99:.0f}" * 400, "{nope}", "{reg.ms.p99:é}", "{reg.ms.\u202ep99}"]
TEXTS = ["", " ", "x" * 10_001, "word " * 2_001, "é𝄞" * 2_001, "\x1b]0;pwned\x07\x1b[2J", "\r\x08" * 50,
         "a\u2028b\u2029c", "x" * 1_100_000]
VALUES = EXTREMES + PHRASES[:8] + [["x"] * 21, [[]], [[""]], [["@tail"]] * 13, {"a.b": 1}, {"": []}]
GROW = [21, 65, 201, 1_001, 7_001]
OVERRIDE_KEYS = ["streams.0.rate", "streams.99.rate", "streams.-1.rate", "streams.99999999999999999999.rate",
                 "streams.0", "streams", "seed.x", "requests", "", ".", "..", "a..b", "__class__.x", "hardware.cores",
                 "serving.tenants.0.rate", "serving.tenants.1.acceptance", "serving.kv.blocks", "serving.mode",
                 "batching.max_batch", "model.fusion", "streams.1_0.rate", "streams. 0.rate", "ü.\x1b[31m"]
SCENARIO_NAMES = ["batching_knee", "llm_speculative", "mm1", "nope", "", "../drills/concepts.toml", "concepts.toml",
                  "/dev/zero", "/etc/passwd.toml", "../../../../etc/passwd", "x.toml", "ü𝄞\x1b[31m.toml"]
BYTES = [b"\xff\xfe", b"\x00", b"\xed\xa0\x80", b"\xc3", b"\r", b'"""', b"[", b"= =", b"\n[rubric]\n", b"\xef\xbb\xbf"]
OPS = ["delete", "replace", "replace", "add", "phrase", "phrase", "grow", "template", "template", "text", "graft",
       "override", "override", "scenario"]


def _lists(doc: dict) -> list[tuple]:
    """Paths of the lists of strings in a document (phrase lists, chain steps, pitfalls ...)."""
    out = []
    for path in _paths(doc):
        node = doc
        for k in path:
            node = node[k]
        if isinstance(node, list) and node and all(isinstance(x, str) for x in node):
            out.append(path)
    return out


def _at(doc, path: tuple):
    for k in path:
        doc = doc[k]
    return doc


def _mutate_doc(draw, doc: dict) -> list[str]:
    """Apply one drawn mutation to a parsed drill (or the lexicon); return what it did, for the case's label."""
    op = draw(st.sampled_from(OPS))
    if op in ("phrase", "grow"):
        lists = _lists(doc)
        if lists:
            path = draw(st.sampled_from(lists))
            items = _at(doc, path)
            if op == "phrase":
                items.insert(draw(st.integers(0, len(items))), draw(st.sampled_from(PHRASES)))
            else:
                size = draw(st.sampled_from(GROW))
                items[:] = (items * (size // len(items) + 1))[:size]
            return [f"{op} {'.'.join(map(str, path))}"]
    if op == "template":
        key = draw(st.sampled_from(["strong", "strong", "strong", "weak"]))
        ref = doc.get("reference")
        if isinstance(ref, dict) and isinstance(ref.get(key), str):
            at = draw(st.integers(0, len(ref[key])))
            field = draw(st.sampled_from(TEMPLATES))
            ref[key] = ref[key][:at] + field + ref[key][at:]
            return [f"template reference.{key} {field[:40]!r}"]
    scenario = doc.get("scenario")
    if op == "override" and isinstance(scenario, dict):
        run = draw(st.sampled_from(["baseline", "regressed", "fixed"]))
        key, value = draw(st.sampled_from(OVERRIDE_KEYS)), draw(st.sampled_from(VALUES))
        if isinstance(scenario.get(run, {}), dict):
            scenario.setdefault(run, {})[key] = value
            return [f"override scenario.{run} {key!r} = {str(value)[:30]!r}"]
    if op == "scenario" and isinstance(scenario, dict):
        scenario["name"] = draw(st.sampled_from(SCENARIO_NAMES))
        return [f"scenario.name {scenario['name']!r}"]
    if op == "graft":
        donor = DOCS[draw(st.sampled_from(DRILLS))]
        key = draw(st.sampled_from(sorted(donor)))
        doc[key] = json.loads(json.dumps(donor[key]))
        return [f"graft {key}"]
    op = op if op in ("delete", "add", "text") else "replace"  # what the drawn operation found nothing to act on
    paths = _paths(doc, leaves_only=draw(st.sampled_from([True, True, False])))
    if not paths:
        return []
    path = draw(st.sampled_from(paths))
    value = draw(st.sampled_from(TEXTS if op == "text" else VALUES))
    _mutate(doc, path, "replace" if op == "text" else op, value)
    return [f"{op} {'.'.join(map(str, path))}" + (f" {str(value)[:30]!r}" if op in ("replace", "text") else "")]


def _mutate_bytes(draw, raw: bytes) -> tuple[bytes, str]:
    """One byte-level mutation of a file: cut short, bytes put in, or a line dropped or doubled."""
    op = draw(st.sampled_from(["cut", "insert", "insert", "drop", "double"]))
    at = draw(st.integers(0, len(raw)))
    if op == "cut":
        return raw[:at], f"cut at {at}"
    if op == "insert":
        piece = draw(st.sampled_from(BYTES))
        return raw[:at] + piece + raw[at:], f"insert {piece!r} at {at}"
    lines = raw.split(b"\n")
    k = draw(st.integers(0, len(lines) - 1))
    lines[k:k + 1] = [] if op == "drop" else [lines[k], lines[k]]
    return b"\n".join(lines), f"{op} line {k}"


def _toml(doc: dict) -> str:
    return "".join(f"{_key(k)} = {_value(v)}\n" for k, v in doc.items())


ANSWERS = [b"", b" \n", b"The p99 rose because requests wait in the queue.", b"\xff\xfe\x00 p99",
           b"word " * 4_000, b"x" * 80_001, "é𝄞\u202e\x1b[31m".encode() * 100]


@st.composite
def drill_cases(draw) -> dict:
    """A folder's files (a mutated drill or lexicon, a sibling drill, the lexicon), what to grade, and a label."""
    name = draw(st.sampled_from(DRILLS))
    sibling = draw(st.sampled_from([d for d in DRILLS if d != name]))
    target = CONCEPTS if draw(st.integers(0, 7)) == 0 else name
    if draw(st.integers(0, 4)) == 0:
        raw, done = _mutate_bytes(draw, SOURCES[target].encode())
        done = [done]
    else:
        doc, done = json.loads(json.dumps(DOCS[target])), []  # a deep copy
        for _ in range(draw(st.sampled_from([1, 1, 1, 2, 2, 3, 4]))):
            done += _mutate_doc(draw, doc)
        raw = _toml(doc).encode("utf-8", "surrogatepass")
    files = {n: SOURCES[n].encode() for n in (name, sibling, CONCEPTS)}
    files[target] = raw
    grade_id = Path(draw(st.sampled_from([name, name, sibling]))).stem
    answer = draw(st.sampled_from([*ANSWERS, DOCS[name]["reference"]["weak"].encode()]))
    run = not {name, sibling} & SLOW and target == name and draw(st.integers(0, 5)) == 0
    return {"files": files, "grade": grade_id, "answer": answer, "in_file": draw(st.booleans()), "run": run,
            "label": f"{target}: {'; '.join(done)} (sibling {sibling}; grade {grade_id}{'; --run' if run else ''})"}


def _bounded_runs(raw: bytes, name: str) -> bool:
    """A drill whose runs are no longer than the built-in's (--run simulates them: their length is not fuzzed here)."""
    try:
        scenario = tomllib.loads(raw.decode("utf-8")).get("scenario")
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        return True  # refused as it loads
    if not isinstance(scenario, dict):
        return True
    own, requests = DOCS[name]["scenario"], scenario.get("requests")
    overrides = [k for run in ("baseline", "regressed", "fixed") if isinstance(scenario.get(run), dict)
                 for k in scenario[run]]
    return ((not isinstance(requests, int | float) or requests <= own["requests"])
            and scenario.get("name") == own["name"] and not any("requests" in k for k in overrides))


INTERVIEW = (b"The p99 rose because requests queue behind each other.\n.\nThe serving team owns it.\n.\n"
             b"Roll back if p99 exceeds 10 ms.\n.\n")


def _interview(folder: Path, drill_id: str, label: str) -> None:
    """``workbench interview`` on the folder's drill, a few replies on stdin, then the end of input."""
    argv = ["interview", "--drill", drill_id, "--drills-dir", str(folder), "--db", str(folder / "p.db")]
    previous, sys.stdin = sys.stdin, io.TextIOWrapper(io.BytesIO(INTERVIEW), encoding="utf-8", newline="\n")
    try:
        status, out, err = run_cli(argv)
    finally:
        sys.stdin = previous
    ended(status, out, err, f"interview: {label}", want="transcript" if status == 0 else "text")


def check_drill_case(case: dict, root: Path) -> str:
    """Write the folder, then check, list and grade with it; return how the check and the grade ended, or fail."""
    folder = Path(tempfile.mkdtemp(dir=root))  # fresh: lexicons and siblings are cached by folder
    try:
        for n, raw in case["files"].items():
            (folder / n).write_bytes(raw)
        label = case["label"]
        check = ["drills", "check", str(folder)]
        name = next(n for n in case["files"] if n != CONCEPTS)
        run = case["run"] and _bounded_runs(case["files"][name], name)
        checked = ended(*run_cli(check + ["--run"] * run), f"{' '.join(check)}: {label}", want="text")
        if run:  # the drill's runs simulated: a mock interview on it too, its questions and reference printed
            _interview(folder, Path(name).stem, label)
        ended(*run_cli(["list", "--drills", "--drills-dir", str(folder)]), f"list --drills: {label}", want="text")
        argv = ["grade", "--drill", case["grade"], "--drills-dir", str(folder), "--json"]
        if case["in_file"]:
            (folder / "answer.txt").write_bytes(case["answer"])
            argv += ["--answer-file", str(folder / "answer.txt")]
        previous, sys.stdin = sys.stdin, io.TextIOWrapper(io.BytesIO(case["answer"]), encoding="utf-8")
        try:
            status, out, err = run_cli(argv)
        finally:
            sys.stdin = previous
        graded = ended(status, out, err, f"{' '.join(argv[:3])}: {label}\nanswer {case['answer'][:200]!r}")
        return f"check {checked}/grade {graded}"
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_mutated_drill_files_end_cleanly():
    tally = Tally("drill files")
    with tempfile.TemporaryDirectory() as tmp:

        @settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=FIXED,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
        @given(drill_cases())
        def run_case(case: dict) -> None:
            tally.run(case["label"], lambda: check_drill_case(case, Path(tmp)))

        run_case()
    tally.report()
    assert sum(tally.ends.values()) >= min(EXAMPLES, 10)


def test_a_bad_phrase_in_the_lexicon_is_one_problem_of_the_lexicon(tmp_path):
    """Found by this fuzz: ``drills check`` reported a lexicon phrase the matcher cannot use once per drill naming its
    concept, each line blaming a drill file; it is one problem, of ``concepts.toml``, reported once."""
    for name in ("average-hides-tail.toml", "batching-queueing-delay.toml"):  # both name @tail
        (tmp_path / name).write_text(SOURCES[name], encoding="utf-8")
    lexicon = SOURCES[CONCEPTS].replace('terms = ["p99", ', 'terms = ["\\u007f\\u009b", "p99", ', 1)  # in [tail]
    (tmp_path / CONCEPTS).write_text(lexicon, encoding="utf-8")
    status, out, err = run_cli(["drills", "check", str(tmp_path)])
    assert ended(status, out, err, "a lexicon phrase with no letter", want="text") == "refused"
    assert f"{CONCEPTS}: tail.terms[0]" in err and "no letter, digit or '#'" in err, err

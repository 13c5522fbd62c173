"""Practice sessions in the terminal: a drill's prompt and evidence, an answer, the grade, the reference.

The evidence comes from simulating the drill's scenario twice on the same seed, the
healthy baseline and the regressed run: p50/p95/p99 overall, per stream and per
bucket, and a latency survival figure saved to a file. Answers are typed until a line with
a single ``.`` (or written in ``$EDITOR``). Every graded attempt is saved; nothing empty is: an answer that is
blank, holds NUL bytes or is longer than the grader reads is refused and asked for again (it is read in bounded
pieces, never held whole), bytes that are not UTF-8 become U+FFFD, and the end of input ends the session.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

import numpy as np

from workbench.analysis.metrics import summarize
from workbench.errors import ConfigError
from workbench.grading.drills import Drill, drill_scenarios
from workbench.grading.evidence_figure import evidence_figure
from workbench.grading.grader import ELEMENTS, MAX_CHARS, Grade, check_answer, grade
from workbench.grading.reference import needs, render
from workbench.grading.store import Store, pick_drills
from workbench.pipeline import run_scenario
from workbench.terminal import printable


@dataclass(frozen=True)
class Evidence:
    """A drill's runs at one seed as the learner sees them, and the reference rendered from the same runs."""

    table: str
    figure: Path | None
    reference: str
    summaries: dict  # base / reg (/ fix): the ``run --json`` summaries


def _row(label: str, lat: np.ndarray) -> str:
    if len(lat) == 0:
        return f"{label:<34}{'-':>9}{'-':>9}{'-':>9}{'-':>9}"
    p = np.percentile(lat, [50, 95, 99]) * 1e3
    return f"{label:<34}{lat.mean() * 1e3:>9.3f}{p[0]:>9.3f}{p[1]:>9.3f}{p[2]:>9.3f}"


def _counters(s: dict) -> str:
    """The counters a mechanism shows up in, those that are not trivially zero."""
    parts = []
    if s.get("buckets") and len(s["buckets"]) > 1:
        parts.append(f"bucket hit rate {s['bucket_hit_rate']:.1%}")
        parts += [f"{k} {v}" for k, v in s["misses"]["by_outcome"].items() if v]
    if s["batch_size"]["mean"] > 1.0:
        parts.append(f"mean batch {s['batch_size']['mean']:.1f}")
    if s["wait_s"]["p99"] > 0:
        parts.append(f"wait p99 {s['wait_s']['p99'] * 1e3:.2f} ms")
    res = s.get("residency") or {}
    if res.get("loads"):
        parts.append(f"model loads {res['loads']}, evictions {res.get('evictions', 0)}")
    if s.get("spill_bytes_per_request"):
        parts.append(f"spill {s['spill_bytes_per_request'] / 2**20:.1f} MiB/request")
    if s.get("launches_per_request"):
        parts.append(f"launches/request {s['launches_per_request']:.1f}")
    return "  " + ", ".join(parts) if parts else ""


def prepare(drill: Drill, figure_dir: Path | None = None) -> Evidence:
    """Run the drill's scenarios on one seed: the evidence table, a survival figure, the rendered reference."""
    roots = {"base", "reg"} | needs(drill.strong_answer)
    scenarios = drill_scenarios(drill, fixed="fix" in roots)
    if not hasattr(scenarios[0], "streams"):  # a token-level serving drill
        from workbench.grading.token_evidence import prepare_tokens

        return Evidence(*prepare_tokens(drill, scenarios, figure_dir))
    runs = {"baseline": run_scenario(scenarios[0]), "regressed": run_scenario(scenarios[1])}
    lines = [f"{'run / slice':<34}{'mean ms':>9}{'p50 ms':>9}{'p95 ms':>9}{'p99 ms':>9}"]
    summaries = {}
    for (name, tr), root in zip(runs.items(), ("base", "reg"), strict=True):
        ok = tr.measured & tr.completed
        lines.append(_row(name, tr.latency_s[ok]))
        if len(tr.scenario.streams) > 1:
            for i, st in enumerate(tr.scenario.streams):
                lines.append(_row(f"  stream {st.name}", tr.latency_s[ok & (tr.stream == i)]))
        if len(tr.bucket_names) > 1:
            for b in np.unique(tr.bucket[ok]).tolist():
                share = (tr.bucket[ok] == b).mean()
                lines.append(_row(f"  bucket {tr.bucket_names[b]} ({share:.0%})", tr.latency_s[ok & (tr.bucket == b)]))
        util = tr.core_busy_s / max(tr.makespan_s, 1e-300)
        lines.append(f"  cores busy: {', '.join(f'{u:.0%}' for u in util)}")
        s = summarize(tr)
        summaries[root] = s
        counters = _counters(s)
        if counters:
            lines.append(counters)
        lines.append("  tail drivers: " + ", ".join(f"{k} {v:.0%}" for k, v in s["tail_drivers"].items() if v >= 0.01))
    if len(scenarios) > 2:
        summaries["fix"] = summarize(run_scenario(scenarios[2]))
    path = _figure(runs, Path(figure_dir) / f"{drill.id}.png") if figure_dir is not None else None
    reference = render(drill.strong_answer, summaries, f"{drill.path} [reference] strong")
    return Evidence("\n".join(lines), path, reference, summaries)


def _figure(runs: dict, path: Path) -> Path:
    return evidence_figure({name: tr.latency_s[tr.measured & tr.completed] * 1e3 for name, tr in runs.items()}, path,
                      "latency (ms), dashed: p99")


@dataclass(frozen=True)
class Block:
    """What the learner typed until a single '.': the text, or why it was not kept."""

    text: str  # "" when too long
    ended: bool  # the input ended (no '.' came)
    too_long: bool = False  # more than the limit: read to its end and dropped, never held whole


def clean(text: str) -> str:
    """Typed text as valid Unicode: bytes that were not UTF-8 (lone surrogates, as Python's standard input hands
    them over) become U+FFFD, so the text can be printed, graded and stored."""
    try:
        raw = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a surrogate that is no escaped byte
        raw = text.encode("utf-8", "surrogatepass")
    return raw.decode("utf-8", "replace")


def read_block(stdin: TextIO, limit: int = MAX_CHARS) -> Block:
    """Lines until a single '.' (or the end of input), read at most ``limit`` + 1 characters at a time: a longer
    block is read to its end, dropped and reported as too long, never held whole."""
    lines: list[str] = []
    size, too_long = 0, False
    while True:
        line = stdin.readline(limit + 1)
        if not line:
            return Block("" if too_long else clean("".join(lines)), True, too_long)
        if line.rstrip("\r\n") == "." and (not lines or lines[-1].endswith("\n")):
            return Block("" if too_long else clean("".join(lines)), False, too_long)
        size += len(line)
        if size > limit:
            too_long, lines = True, lines[-1:]  # keep only the tail, to see where a line ends
        lines.append(line)


def refusal(text: str) -> str | None:
    """Why a typed answer cannot be graded and saved (nothing in it, NUL bytes, too long), or None."""
    if not text.strip():
        return "it is empty"
    if "\x00" in text:
        return "it holds NUL bytes (binary data?)"
    try:
        check_answer(text)
    except ConfigError as e:
        return e.why
    return None


def read_answer(stdin: TextIO, stdout: TextIO) -> str | None:
    """An answer from $EDITOR (on a terminal) or typed lines until a single '.'; asked again while it is refused
    (empty, NUL bytes, too long); None at the end of input with no answer."""
    editor = os.environ.get("EDITOR")
    if editor and stdin.isatty():
        with tempfile.NamedTemporaryFile("w+", suffix=".md", delete=False) as f:
            f.write("\n")
            name = f.name
        try:
            subprocess.run([*shlex.split(editor), name], check=False)
            with open(name, "rb") as f:  # bounded: an editor may save anything
                raw = f.read(4 * MAX_CHARS + 1)
            return clean(raw.decode("utf-8", "surrogateescape"))
        finally:
            Path(name).unlink(missing_ok=True)
    while True:
        stdout.write("Type your answer; end it with a line containing a single '.'\n")
        stdout.flush()
        block = read_block(stdin)
        why = f"it is longer than {MAX_CHARS} characters" if block.too_long else refusal(block.text)
        if why is None:
            return block.text
        if block.ended:
            return None
        stdout.write(f"answer refused: {why}; type it again\n")


def feedback(g: Grade) -> str:
    """Per-element feedback for one graded answer."""
    out = [f"verdict: {g.verdict} (score {g.score}/100; strong: mechanism, artifact, owner and rollback all present, "
           "weak: at most one of them; the score also weighs workload and fix)"]
    for k in ELEMENTS:
        e = g.elements[k]
        out.append(f"  [{'x' if e.present else ' '}] {k:<9} " + (f'"{e.evidence}"' if e.present else e.hint))
        if not e.present and e.question:
            out.append(f"      {'':<9} a reviewer would ask: {e.question}")
    return "\n".join(out)


def session(drills: dict[str, Drill], store: Store, count: int = 1, topic: str | None = None,
            minutes: float | None = None, stdin: TextIO | None = None, stdout: TextIO | None = None,
            figure_dir: Path | None = None) -> list[int]:
    """Run a practice session (stdin and stdout by default); returns the ids of the saved attempts.

    What it prints is control-escaped; figures are saved only when ``figure_dir`` is given.
    """
    stdin = stdin or sys.stdin
    stdout = Escaped(stdout or sys.stdout)
    pool = [d for d in drills if topic is None or drills[d].topic == topic]
    if not pool:
        topics = sorted({d.topic for d in drills.values()})
        stdout.write(f"no drill with topic {topic!r}; topics: {', '.join(topics)}\n")
        return []
    chosen = pick_drills(pool, store, count)
    deadline = time.time() + minutes * 60 if minutes else None
    saved = []
    for i, drill_id in enumerate(chosen, 1):
        if deadline and time.time() > deadline:
            stdout.write(f"time is up ({minutes:g} min); {len(saved)} attempt(s) saved\n")
            break
        d = drills[drill_id]
        stdout.write(f"\n=== drill {i}/{len(chosen)}: {d.title} [{d.topic}]\n\n{d.prompt}\n\n")
        stdout.write("Evidence (same seed; healthy baseline vs regressed run):\n")
        stdout.flush()
        ev = prepare(d, figure_dir)
        stdout.write(ev.table + "\n" + (f"figure: {ev.figure}\n" if ev.figure else "") + "\n")
        started = time.time()
        answer = read_answer(stdin, stdout)
        if answer is None:
            stdout.write(f"end of input; {len(saved)} attempt(s) saved\n")
            break
        why = refusal(answer)  # an editor's file is checked here, typed text as it was read
        if why is not None:
            stdout.write(f"answer refused: {why}; nothing saved\n")
            continue
        g = grade(d, answer)
        attempt = store.save(g, answer, started)
        saved.append(attempt)
        stdout.write("\n" + feedback(g) + "\n\nStrong reference answer (its figures are from the runs above):\n"
                     f"{ev.reference}\n\n"
                     f"Senior review question: {d.senior_review_question}\n"
                     f"(attempt #{attempt} saved to {store.path})\n")
        stdout.flush()
    return saved


class Escaped:
    """A text stream that escapes control characters (drill text, answers quoted back, names from the store)."""

    def __init__(self, stream: TextIO):
        self.stream = stream

    def write(self, text: str) -> int:
        return self.stream.write(printable(text))

    def flush(self) -> None:
        self.stream.flush()


def progress_report(store: Store) -> str:
    """History and per-element rates."""
    attempts = store.attempts()
    if not attempts:
        return f"no attempts yet in {store.path}" + ("" if store.conn else " (no database there yet)")
    lines = [f"{len(attempts)} attempts in {store.path}", f"{'when':<17}{'drill':<34}{'verdict':<9}{'score':>5}"]
    for a in attempts[-20:]:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(a["finished_at"]))
        lines.append(f"{when:<17}{a['drill']:<34}{a['verdict']:<9}{a['score']:>5}")
    rates = store.element_rates()
    lines.append("per-element rate (share of attempts where it was present):")
    lines += [f"  {k:<10}{r:>6.0%}" for k, r in rates.items() if r is not None]
    return "\n".join(lines)

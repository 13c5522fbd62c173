"""The closed-loop mapping report: offline compile profile beside runtime telemetry and retuning actions.

``build_report`` turns a :class:`~workbench.feedback.guard.LoopResult` into one dict
(the ``--json`` output); ``write_report`` renders it as a self-contained HTML page
(figures embedded as PNG data) and a Markdown twin (figures beside it as files). Every
text from the scenario is escaped in both: HTML-escaped in the page, and in the Markdown
made unable to open a tag, a link, an image, emphasis, a code span, a table cell or a
block (CommonMark backslash escapes), so a name reads the same in both. Every target is
checked before any file is written.
"""

from __future__ import annotations

import base64
import html
import io
import math
import re
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from workbench.analysis.metrics import DRIVERS
from workbench.feedback.guard import LoopResult
from workbench.feedback.telemetry import bucket_telemetry, compile_profile
from workbench.palette import BASELINE, CURRENT
from workbench.safe_io import check_targets, write_bytes
from workbench.tail_axes import draw_survival
from workbench.terminal import printable

FIGURE_NAMES = ("latency_survival.png", "tail_drivers.png")

NO_MODEL_NOTE = ("This scenario has no [model] section, so there is no compiled plan: the compile profile, "
                 "bucket telemetry and compile-time actions (re-bucketing, fusion) do not apply. Runtime "
                 "telemetry and runtime actions (batching, priorities, placement) are reported.")


def build_report(loop: LoopResult, command: str) -> dict:
    """Every number of the report, as plain JSON-able data."""
    sc, before = loop.scenario, loop.before
    final = loop.final_summary or loop.baseline_summary
    rep = {
        "scenario": sc.name, "description": sc.description.strip(), "command": command,
        "mapping_accuracy": loop.mapping_accuracy,
        "adaptation_gain": loop.adaptation_gain,
        "p99_before_s": before.p99_s, "p99_after_s": final["latency_s"]["p99"],
        "latency_before_s": loop.baseline_summary["latency_s"], "latency_after_s": final["latency_s"],
        "refused_before": loop.baseline_summary["refused_share"], "refused_after": final["refused_share"],
        "final_actions": list(loop.final_actions),
        "combined_verdict": loop.combined_verdict.why if loop.combined_verdict else None,
        "actions": [r.to_json(before) for r in loop.results],
        "tail_drivers": {"before": loop.baseline_summary["tail_drivers"], "after": final["tail_drivers"]},
        "telemetry": bucket_telemetry(loop.baseline),
        "final_config": _config(loop.final_scenario or sc),
        "note": "" if sc.model is not None else NO_MODEL_NOTE,
    }
    run = loop.baseline.service.info.get("run") if sc.model is not None else None  # the plan the baseline ran
    rep["compile_profile"] = compile_profile(run.plan) if run is not None else []
    return rep


def _config(sc) -> dict:
    b, s = sc.batching, sc.scheduler
    out = {"batching": f"{b.policy}, max_batch {b.max_batch}, max_delay_s {b.max_delay_s}",
           "scheduler": f"{s.discipline}, placement {s.placement}"}
    if sc.model is not None:
        out["plan"] = f"{sc.model.graph}, fusion {sc.model.fusion}, envelope {sc.model.envelope}, " \
                      f"out_of_envelope {sc.model.out_of_envelope}"
    return out


def _png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    return buf.getvalue()


def figures(loop: LoopResult) -> dict[str, bytes]:
    """Before/after latency survival curves (share slower than x, log-log, p50 ... p99.9 guides), and the tail
    drivers before/after."""
    fig = Figure(figsize=(7, 3.6))
    ax = fig.subplots()
    runs = {label: tr.latency_s[tr.measured & tr.completed] * 1e3
            for label, tr in (("baseline", loop.baseline), ("after retuning", loop.final)) if tr is not None}
    draw_survival(ax, runs, "latency (ms)")
    ax.grid(alpha=0.3)
    survival = _png(fig)
    fig = Figure(figsize=(7, 2.8))
    ax = fig.subplots()
    before = loop.baseline_summary["tail_drivers"]
    after = (loop.final_summary or loop.baseline_summary)["tail_drivers"]
    y = np.arange(len(DRIVERS))
    ax.barh(y - 0.2, [before[d] for d in DRIVERS], 0.4, label="baseline", color=BASELINE)
    ax.barh(y + 0.2, [after[d] for d in DRIVERS], 0.4, label="after retuning", color=CURRENT)
    ax.set_yticks(y, [d.replace("_", " ") for d in DRIVERS])
    ax.set_xlabel("share of latency of requests above p95")
    ax.legend()
    ax.invert_yaxis()
    return dict(zip(FIGURE_NAMES, (survival, _png(fig)), strict=True))


def _ms(x) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x * 1e3:.3f}"


def _tables(rep: dict) -> list[tuple[str, list[str], list[list[str]]]]:
    """(title, header, rows) of every table, shared by both renderings."""
    tables = []
    if rep["compile_profile"]:
        tables.append(("Offline compile profile (per bucket)",
                       ["bucket", "opt", "cores", "predicted ms (b=1)", "predicted ms (max b)", "kernels", "bound",
                        "bandwidth demand", "max working set / SRAM (MiB)", "spill MiB"],
                       [[p["bucket"], str(p["opt"]), ",".join(map(str, p["cores"])), _ms(p["predicted_s"][0]),
                         _ms(p["predicted_s"][-1]), str(p["kernels"]), p["bound"], f"{p['bandwidth_demand']:.2f}",
                         f"{p['max_working_set_bytes'] / 2**20:.1f} / {p['sram_bytes'] / 2**20:.0f}",
                         f"{p['spill_bytes'] / 2**20:.1f}"] for p in rep["compile_profile"]]))
    tables.append(("Runtime telemetry (per bucket)",
                   ["bucket", "kind", "share", "service p50/p99 ms", "latency p50/p99 ms",
                    "prediction error (shape, contention)", "misses by reason"],
                   [[t["bucket"], t["kind"], f"{t['share']:.1%}",
                     f"{_ms(t['service_s']['p50'])} / {_ms(t['service_s']['p99'])}",
                     f"{_ms(t['latency_s']['p50'])} / {_ms(t['latency_s']['p99'])}",
                     "-" if t.get("prediction_error") is None else
                     f"{t['prediction_error']:+.1%} ({t['shape_error']:+.1%}, {t['contention_error']:+.1%})",
                     "; ".join(f"{k}: {v}" for k, v in t.get("misses_by_reason", {}).items()) or "-"]
                    for t in rep["telemetry"]]))
    tables.append(("Tail-latency drivers (share of latency above p95)", ["driver", "baseline", "after"],
                   [[d.replace("_", " "), f"{rep['tail_drivers']['before'][d]:.0%}",
                     f"{rep['tail_drivers']['after'][d]:.0%}"] for d in DRIVERS]))
    tables.append(("Retuning actions and the rollback guard",
                   ["action", "reason (telemetry)", "change", "p50/p95/p99 after ms", "throughput", "verdict"],
                   [[a["kind"], a["reason"], a["change"],
                     f"{_ms(a['p50_after_s'])} / {_ms(a['p95_after_s'])} / {_ms(a['p99_after_s'])}",
                     f"{a['throughput_after_rps']:.4g}/s", a["verdict"]] for a in rep["actions"]]
                   or [["-", "no action: the telemetry shows nothing to retune", "-", "-", "-", "-"]]))
    return tables


def _headline(rep: dict) -> list[str]:
    acc = rep["mapping_accuracy"]
    lines = []
    if acc["bucket_hit_rate"] is not None:
        err = acc["prediction_error"]["all"]
        lines.append(f"Compile-time mapping accuracy: bucket hit rate {acc['bucket_hit_rate']:.1%}, "
                     f"prediction error {err['mean']:+.1%} (mean abs {err['mean_abs']:.1%}; shape "
                     f"{err['shape']:+.1%}, contention {err['contention']:+.1%})")
    lines.append(f"Runtime adaptation gain: p99 {_ms(rep['p99_before_s'])} -> {_ms(rep['p99_after_s'])} ms "
                 f"({rep['adaptation_gain']:+.1%}) with {', '.join(rep['final_actions']) or 'no accepted action'}")
    lb, la = rep["latency_before_s"], rep["latency_after_s"]
    lines.append("p50 / p95 / p99 before: " + " / ".join(_ms(lb[k]) for k in ("p50", "p95", "p99")) + " ms; after: "
                 + " / ".join(_ms(la[k]) for k in ("p50", "p95", "p99")) + " ms")
    if rep["refused_before"] or rep["refused_after"]:
        lines.append(f"Latency percentiles are over completed requests only: {rep['refused_before']:.1%} refused "
                     f"before, {rep['refused_after']:.1%} after")
    return lines


_MD_INLINE = re.compile(r"[\\`*\[\]|~]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")  # escaped wherever they stand
_MD_TAG = re.compile(r"<(?=[A-Za-z/!?])|&(?=#?[A-Za-z0-9]+;)")  # what would open an HTML tag or an entity
_MD_BLOCK = re.compile(r"^(\d{1,9}(?=[.)](?:\s|$))|)([#>+=.)-])")  # what opens a heading, quote, list or rule


def md(text: object, block: bool = False, cell: bool = False) -> str:
    """``text`` as Markdown that shows it literally: one line, or with ``block`` a paragraph of its lines;
    a table ``cell`` holds inline text only, so no line-start escape is needed there."""
    text = _MD_TAG.sub(lambda m: "&lt;" if m[0] == "<" else "&amp;", str(text))
    text = _MD_INLINE.sub(lambda m: "\\" + m[0], text)
    lines = [line.strip() for line in text.splitlines()]
    if not cell:
        lines = [_MD_BLOCK.sub(lambda m: m[1] + "\\" + m[2], line) for line in lines]  # "1\. ", "\# "
    return ("\n" if block else " ").join(lines)


def render_markdown(rep: dict, figure_names: list[str]) -> str:
    """The Markdown twin (figures referenced as files beside it); every text escaped by :func:`md`."""
    out = [f"# Closed-loop mapping report: {md(rep['scenario'])}", "", md(rep["description"], block=True), ""]
    if rep["note"]:
        out += [f"> {md(rep['note'])}", ""]
    out += [f"- {md(line)}" for line in _headline(rep)] + [""]
    for title, header, rows in _tables(rep):
        out += [f"## {md(title)}", "", "| " + " | ".join(md(h, cell=True) for h in header) + " |",
                "|" + " --- |" * len(header)]
        out += ["| " + " | ".join(md(c, cell=True) for c in row) + " |" for row in rows] + [""]
    out += ["## Final configuration", ""] + [f"- {md(k)}: {md(v)}" for k, v in rep["final_config"].items()] + [""]
    out += ["## Figures", ""] + [f"![{md(n)}]({n})" for n in figure_names] + [""]
    out += ["## Reproduce", "", f"    {printable(rep['command'], one_line=True)}", ""]  # a code block: one line
    return "\n".join(out)


def render_html(rep: dict, figs: dict[str, bytes]) -> str:
    """The self-contained HTML page."""
    e = html.escape
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>Closed-loop mapping report: "
             f"{e(rep['scenario'])}</title><style>body{{font-family:sans-serif;max-width:1100px;margin:2em auto;}}"
             "table{border-collapse:collapse;margin:1em 0;font-size:90%}td,th{border:1px solid #ccc;padding:4px 8px;"
             "vertical-align:top}th{background:#eee}.note{background:#fff3cd;padding:8px}</style></head><body>",
             f"<h1>Closed-loop mapping report: {e(rep['scenario'])}</h1><p>{e(rep['description'])}</p>"]
    if rep["note"]:
        parts.append(f"<p class='note'>{e(rep['note'])}</p>")
    parts.append("<ul>" + "".join(f"<li>{e(line)}</li>" for line in _headline(rep)) + "</ul>")
    for title, header, rows in _tables(rep):
        parts.append(f"<h2>{e(title)}</h2><table><tr>" + "".join(f"<th>{e(h)}</th>" for h in header) + "</tr>")
        parts += ["<tr>" + "".join(f"<td>{e(c)}</td>" for c in row) + "</tr>" for row in rows]
        parts.append("</table>")
    parts.append("<h2>Final configuration</h2><ul>"
                 + "".join(f"<li>{e(k)}: {e(v)}</li>" for k, v in rep["final_config"].items()) + "</ul>")
    images = (f"<p><img alt='{e(n)}' src='data:image/png;base64,{base64.b64encode(b).decode()}'></p>"
              for n, b in figs.items())
    parts.append("<h2>Figures</h2>" + "".join(images))
    parts.append(f"<h2>Reproduce</h2><pre>{e(rep['command'])}</pre></body></html>")
    return "".join(parts)


def report_targets(out: Path) -> list[Path]:
    """The files :func:`write_report` writes into ``out``: report.html, report.md, then the figures."""
    return [out / "report.html", out / "report.md", *(out / n for n in FIGURE_NAMES)]


def write_report(loop: LoopResult, rep: dict, out: Path) -> list[Path]:
    """Write report.html, report.md and the figures into ``out`` (created if missing); return the paths.

    Everything is rendered and every target checked first (never through a link, never over
    something that is not a regular file: :mod:`workbench.safe_io`), so a refusal writes nothing.
    """
    out.mkdir(parents=True, exist_ok=True)
    figs = figures(loop)
    texts = {"report.md": render_markdown(rep, list(figs)).encode("utf-8"),
             "report.html": render_html(rep, figs).encode("utf-8")}
    paths = report_targets(out)
    check_targets(paths)
    for path in paths[2:] + paths[:2]:  # the figures before the pages that show them
        write_bytes(path, figs[path.name] if path.name in figs else texts[path.name])
    return paths

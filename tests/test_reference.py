"""Reference answers are templates filled from the drill's own runs: reference and evidence cannot disagree."""

from __future__ import annotations

import re
import string

import pytest

from workbench.errors import ConfigError
from workbench.grading.drills import load_drills, parse_drill
from workbench.grading.practice import prepare
from workbench.grading.reference import check_template, fields, render

DRILLS = load_drills()
COLUMNS = {"mean": 1, "p50": 2, "p95": 3, "p99": 4}
TOKEN_COLUMNS = {("ttft_ms", "p50"): 1, ("ttft_ms", "p99"): 2, ("itl_ms", "p99"): 3, ("itl_ms", "p999"): 4}


def test_fields_scale_by_view_and_ratios_have_no_unit():
    base = {"latency_s": {"p99": 0.002}, "bucket_hit_rate": 0.5, "spill_bytes_per_request": 2 ** 21,
            "misses": {"by_outcome": {"fallback": 650}}, "cores": {"utilization": [0.2, 0.6]}}
    reg = {"latency_s": {"p99": 0.008}, "bucket_hit_rate": 0.25, "spill_bytes_per_request": 2 ** 22,
           "misses": {"by_outcome": {"fallback": 900}}, "cores": {"utilization": [0.1, 0.9]}}
    out = render("{base.ms.p99:.1f} {reg.ms.p99:.1f} {ratio.ms.p99:.1f}x {delta.ms.p99:.1f} "
                 "{reg.pct.bucket_hit_rate:.0f}% {reg.mib.spill_bytes_per_request:.0f} "
                 "{reg.misses.by_outcome.fallback} {reg.pct.busy_max:.0f}", {"base": base, "reg": reg})
    assert out == "2.0 8.0 4.0x 6.0 25% 4 900 90"  # hand arithmetic; the count stays an integer


def test_a_figure_the_runs_do_not_have_is_a_clear_error():
    with pytest.raises(ConfigError, match="reg.ms.p42"):
        render("{reg.ms.p42}", {"reg": {"latency_s": {"p99": 1.0}}})
    with pytest.raises(ConfigError, match="unknown root 'after'"):
        check_template("p99 {after.ms.p99}", "x.toml", "reference.strong")


def test_a_drill_whose_reference_reads_a_fix_run_must_define_the_fix():
    d = DRILLS["average-hides-tail"]
    import tomllib
    from pathlib import Path

    data = tomllib.loads(Path(d.path).read_text(encoding="utf-8"))
    del data["scenario"]["fixed"]
    with pytest.raises(ConfigError, match="fixed"):
        parse_drill(data, d.path)


@pytest.mark.parametrize("drill_id", sorted(DRILLS))
def test_every_reference_figure_comes_from_the_same_runs_as_the_evidence(drill_id):
    d = DRILLS[drill_id]
    ev = prepare(d)
    assert "{" not in ev.reference and "}" not in ev.reference
    rows = {line.split()[0]: line.split() for line in ev.table.splitlines() if line.split()[:1] in (["baseline"],
                                                                                                   ["regressed"])}
    surge, run, inside = {}, None, False  # a bounded surge's rows: (run, tenant) -> the row under "surge ..."
    for line in ev.table.splitlines():
        words = line.split()
        if words[:1] in (["baseline"], ["regressed"]):
            run, inside = words[0], False
        elif words[:1] == ["surge"]:
            inside = True
        elif inside and line.startswith("    ") and len(words) == 5:
            surge[run, words[0]] = ["", *words[1:]]
    checked = 0
    token = d.strong_answer.count("ttft_ms") > 0  # a token-level drill: TTFT p50/p99, ITL p99/p99.9 columns
    pattern = (r"(base|reg)\.(?:surge\.tenants\[(\w+)\]\.)?(ttft_ms|itl_ms)\.(p50|p99|p999)" if token
               else r"(base|reg)\.()ms\.(mean|p50|p95|p99)")
    for _, name, spec, _ in string.Formatter().parse(d.strong_answer):
        m = re.fullmatch(pattern, name or "")
        if not m:
            continue
        label = "baseline" if m[1] == "base" else "regressed"
        column = TOKEN_COLUMNS[m[3], m[4]] if token else COLUMNS[m[3]]
        row = surge[label, m[2]] if m[2] else rows[label]
        shown = float(row[column])  # the table, as printed
        said = float(render("{" + name + ":" + (spec or "") + "}", ev.summaries).replace(",", ""))
        decimals = int(re.search(r"\.(\d)f", spec).group(1)) if spec and "f" in spec else 3
        assert abs(said - shown) <= 0.5 * 10 ** -decimals + 1e-3, (name, said, shown)
        checked += 1
    assert checked >= 1  # every reference quotes its primary metric from the runs
    assert len(fields(d.strong_answer)) >= 3

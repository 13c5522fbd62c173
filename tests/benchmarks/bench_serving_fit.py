"""The serving efficiency law: its fit on the H100 profile, its error there, and on every profile it never saw.

    python tests/benchmarks/bench_serving_fit.py [--figure tests/benchmarks/serving_fit.png]

Prints the fitted constants (refitted from ``tests/calibration/h100-llama-2-7b.csv``), the per-operation and
per-layer error on that table, and for each judging table (``tests/calibration/judge/``) the median and worst
error of a layer's time at decode sizes (<= 256 tokens), prefill sizes (>= 512) and overall, beside the ideal
roofline's. With ``--figure``, draws predicted over measured layer time against tokens for every table.
"""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

import numpy as np

from workbench.hardware import PRESETS
from workbench.serving.calibrate import compare, fit, read_profile
from workbench.serving.efficiency import IDEAL, EfficiencyLaw

CAL = Path(__file__).resolve().parents[1] / "calibration"
GPU = {"h100": "h100-sxm", "a100": "a100-sxm", "a40": "a40"}


def _row(name: str, c, ideal) -> str:
    dec, pre = c.tokens <= 256, c.tokens >= 512
    cells = [c.error(dec), c.error(pre), c.error()]
    return (f"{name:<34}" + "".join(f"{m:6.1%} {w:6.1%}  " for m, w in cells)
            + f"{ideal.error()[0]:6.1%}  {float(np.median(c.ratio)):5.2f}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--figure", default="")
    a = ap.parse_args()
    own = read_profile(CAL / "h100-llama-2-7b.csv")
    law = fit(own, PRESETS["h100-sxm"])
    print("fitted on h100-llama-2-7b (Vidur's Llama-2-7B on one H100, the h100-sxm preset):")
    for f in dataclasses.fields(EfficiencyLaw):
        v = getattr(law, f.name)
        print(f"  {f.name:<20} {v * 1e6:8.3f} us" if f.name.endswith("_s") else f"  {f.name:<20} {v:8.3f}")
    c = compare(law, own, PRESETS["h100-sxm"])
    print("\nper operation on its own table: predicted / measured, median [min, max] over 261 token counts")
    for op, r in c.per_op.items():
        print(f"  {op:<26} {np.median(r):5.2f} [{r.min():4.2f}, {r.max():4.2f}]")
    head = f"{'table':<34}{'decode: median  worst':>22}{'prefill: median  worst':>24}{'all: median  worst':>20}" \
           f"  {'ideal':>6}  {'bias':>5}"
    print("\nerror of one layer's time, |predicted / measured - 1|; ideal: the roofline's median; bias: median ratio")
    print(head)
    print(_row("h100-llama-2-7b (fitted on)", c, compare(IDEAL, own, PRESETS["h100-sxm"])))
    rows = [("h100-llama-2-7b", c)]
    for path in sorted((CAL / "judge").glob("*.csv")):
        p = read_profile(path)
        hw = PRESETS[GPU[p.name.split("-")[0]]]
        cj = compare(law, p, hw)
        rows.append((p.name, cj))
        print(_row(p.name, cj, compare(IDEAL, p, hw)))
    judged = rows[1:]
    meds = [r.error()[0] for _, r in judged]
    worst = [r.error()[1] for _, r in judged]
    print(f"\njudged on {len(judged)} tables it never saw: median error {min(meds):.1%} to {max(meds):.1%}, "
          f"worst {min(worst):.1%} to {max(worst):.1%}; rows within 15 %: "
          f"{np.mean(np.concatenate([np.abs(r.ratio - 1) <= 0.15 for _, r in judged])):.1%}, within 25 %: "
          f"{np.mean(np.concatenate([np.abs(r.ratio - 1) <= 0.25 for _, r in judged])):.1%}")
    if a.figure:
        _figure(rows, Path(a.figure))
        print(f"figure: {a.figure}")


def _figure(rows, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(13, 4.2), sharey=True, constrained_layout=True)
    for ax, gpu in zip(axes, ("h100", "a100", "a40"), strict=True):
        for name, c in rows:
            if not name.startswith(gpu):
                continue
            fitted = name == "h100-llama-2-7b"
            ax.plot(c.tokens, c.ratio, lw=2.2 if fitted else 1.0, color="k" if fitted else None,
                    label=name.split("-", 1)[1] + (" (fitted on)" if fitted else ""), alpha=1.0 if fitted else 0.8)
        ax.axhspan(0.85, 1.15, color="0.9", zorder=0)
        ax.axhline(1.0, color="0.4", lw=0.8)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("tokens in the iteration")
        ax.set_title(f"{GPU[gpu]}: one layer, predicted / measured", fontsize=9)
        ax.legend(fontsize=6.5, loc="lower right")
    axes[0].set_ylabel("predicted / measured (band: +-15 %)")
    axes[0].set_ylim(0.6, 1.4)
    fig.savefig(path, dpi=100)


if __name__ == "__main__":
    main()

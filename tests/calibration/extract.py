"""Write the reduced kernel-time tables the serving efficiency law is fitted and judged on.

    python tests/calibration/extract.py FIT_CSV VIDUR_REPO_DIR

``FIT_CSV`` is ``shared/calibration/h100-llama-2-7b-mlp.csv`` (Vidur's measured per-operation profile of
Llama-2-7B on one H100); ``VIDUR_REPO_DIR`` a checkout of microsoft/vidur (MIT licence, ``LICENSE-vidur``),
whose ``data/profiling/compute/{a100,a40,h100}/<org>/<model>/mlp.csv`` hold the same profile for other models
and GPUs. Each table keeps the rows of one GPU (tensor-parallel degree 1), the model's config columns and the
median time (ms) of every operation, nothing else; the H100 Llama-2-7B table is the only one the law is fitted
on (``h100-llama-2-7b.csv``), the rest are for judging it (``judge/``).
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

HERE = Path(__file__).parent
MODEL = ("n_head", "n_kv_head", "n_embd", "n_expanded_embd", "vocab_size", "use_gated_mlp")
OPS = ("emb", "input_layernorm", "attn_pre_proj", "attn_rope", "attn_post_proj", "post_attention_layernorm",
       "mlp_up_proj", "mlp_act", "mlp_down_proj", "add")


def reduce(src: Path, dst: Path) -> int:
    """Keep tensor-parallel degree 1, the model columns, the token count and each op's median; rows written."""
    with src.open() as f:
        rows = [r for r in csv.DictReader(f) if r["num_tensor_parallel_workers"] == "1"]
    ops = [o for o in OPS if f"time_stats.{o}.median" in rows[0]]
    dst.parent.mkdir(parents=True, exist_ok=True)
    with dst.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow([*MODEL, "num_tokens", *(f"{o}_ms" for o in ops)])
        for r in sorted(rows, key=lambda r: int(r["num_tokens"])):
            w.writerow([r[m] for m in MODEL] + [r["num_tokens"]] + [r[f"time_stats.{o}.median"] for o in ops])
    return len(rows)


def main(fit_csv: str, vidur: str) -> None:
    print(reduce(Path(fit_csv), HERE / "h100-llama-2-7b.csv"), "rows: h100-llama-2-7b.csv")
    root = Path(vidur) / "data" / "profiling" / "compute"
    for src in sorted(root.glob("*/*/*/mlp.csv")):
        gpu, model = src.parts[-4], src.parts[-2]
        if gpu == "h100" and model == "Llama-2-7b-hf":
            continue  # the fitting table itself
        name = f"{gpu}-{model.lower()}.csv"
        print(reduce(src, HERE / "judge" / name), "rows:", name)


if __name__ == "__main__":
    main(*sys.argv[1:3])

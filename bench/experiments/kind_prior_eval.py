"""The file-kind prior (issue 16 item 7) on the project's own eval (bench/eval_quality.py's queries).

The shipped pipeline (with the ``kinds`` stage, ``after``) against the same pipeline before it
(``variants.no_kinds``: no stage, the old test rules; ``before``), and the prior of
``bench/file_kinds.py`` on the whole question applied after the ranking (``whole question``).

Usage: ``.venv/bin/python -m bench.experiments.kind_prior_eval`` (prints a table, writes
bench/results/archive/kind_prior_eval.{json,md}). A finished experiment: the ``kinds`` stage
shipped (docs/DECISIONS.md, "Files of other kinds come after code files").

Same projects, samples and seed as eval_quality.py; the options are ``RetrievalOptions()``
(the defaults, k = 10). Reported per task (code: docstring line -> its file; prose: docs paragraph -> the files defining
the names it mentions): file R@1/R@5/R@10/MRR per variant, each difference to ``before`` with a
95% paired-bootstrap interval over queries (the eval's noise), and the share of top-5 slots taken
by docs/change logs/templates and by tests.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path
from typing import Any

from bench.common import ARCHIVE, write_json
from bench.eval.metrics import summarize_ranks
from bench.eval.project import load_project, memo
from bench.eval_quality import HOLDOUT, PROJECTS
from bench.file_kinds import NON_CODE, kind_prior, slot_shares
from bench.variants.no_kinds import without_kinds
from oya.core.options import RetrievalOptions
from oya.core.pipeline import default_pipeline, retrieve
from oya.core.vectors import decode_f32
from oya.embedding.embedder import make_embedder
from oya.query.searcher import index_channels

VARIANTS = ("before", "after", "whole question")
METRICS = ("R@1", "R@5", "R@10", "MRR")


def first_rank(files: list[str], want: set[str]) -> int | None:
    return next((i for i, f in enumerate(files, 1) if f in want), None)


def bootstrap(a: list[int | None], b: list[int | None], metric: str, n: int = 2000) -> tuple[float, float]:
    """95% interval of metric(b) - metric(a) over queries resampled with replacement (paired)."""
    rng = random.Random(0)
    idx = range(len(a))
    diffs = []
    for _ in range(n):
        pick = [rng.choice(idx) for _ in idx]
        diffs.append(
            summarize_ranks([b[i] for i in pick])[metric] - summarize_ranks([a[i] for i in pick])[metric]
        )
    diffs.sort()
    return diffs[int(0.025 * n)], diffs[int(0.975 * n) - 1]


def run(projects: list[str], n_code: int, n_prose: int, seed: int) -> dict[str, Any]:
    embedder = make_embedder("minilm")
    after = default_pipeline(RetrievalOptions())
    before = without_kinds(after)
    ranks: dict[str, dict[str, list[int | None]]] = {}
    shares: dict[str, dict[str, list[dict[str, float]]]] = {}
    for spec in projects:
        print(f"{spec}:", file=sys.stderr, flush=True)
        project = load_project(spec, embedder, n_code=n_code, n_prose=n_prose, n_connected=0, seed=seed)
        channels = [memo(c) for c in index_channels(project.index)]
        for task, queries in (("code", project.code), ("prose", project.prose)):
            texts = [q.query for q in queries]
            vectors = [list(decode_f32(b)) for b in embedder.embed(texts)] if texts else []
            for q, vec in zip(queries, vectors, strict=True):
                want = {q.path} if task == "code" else set(q.files)  # type: ignore[union-attr]
                got = {}
                for variant, pipe in (("before", before), ("after", after)):
                    r = retrieve(
                        q.query,
                        channels=channels,
                        graph=project.index.graph,
                        corpus=project.index,
                        vector=vec,
                        pipeline=pipe,
                    )
                    got[variant] = [f.path for f in r.files]
                got["whole question"] = kind_prior(got["before"], q.query)
                for variant, files in got.items():
                    ranks.setdefault(f"{task}/{variant}", []).append(first_rank(files, want))
                    shares.setdefault(f"{task}/{variant}", []).append(slot_shares(files, 5))
        project.index.close()
    out: dict[str, Any] = {"projects": projects, "tasks": {}}
    for task in ("code", "prose"):
        a = ranks[f"{task}/before"]
        row: dict[str, Any] = {"n": len(a)}
        for variant in VARIANTS:
            s = shares[f"{task}/{variant}"]
            row[variant] = {
                **summarize_ranks(ranks[f"{task}/{variant}"]),
                "top5_noncode": sum(sum(x[k] for k in NON_CODE) for x in s) / max(len(s), 1),
                "top5_test": sum(x["test"] for x in s) / max(len(s), 1),
            }
        row["delta_ci95"] = {
            v: {m: bootstrap(a, ranks[f"{task}/{v}"], m) for m in METRICS} for v in VARIANTS[1:]
        }
        out["tasks"][task] = row
    return out


def render(res: dict[str, Any]) -> str:
    lines = [
        f"File-kind prior on the project's own eval ({', '.join(res['projects'])}); file ranks, k = 10",
        "",
        "| task | n | variant | R@1 | R@5 | R@10 | MRR | top-5 docs/changelog/template | top-5 tests |",
        "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for task, row in res["tasks"].items():
        for variant in VARIANTS:
            m = row[variant]
            lines.append(
                f"| {task} | {row['n']} | {variant} | "
                + " | ".join(f"{100 * m[k]:.1f}" for k in ("R@1", "R@5", "R@10"))
                + f" | {m['MRR']:.3f} | {100 * m['top5_noncode']:.1f} % | {100 * m['top5_test']:.1f} % |"
            )
        for v, ci in row["delta_ci95"].items():
            lines.append(
                f"| {task} | | {v} − before, 95% CI | "
                + " | ".join(f"[{100 * ci[k][0]:+.1f}, {100 * ci[k][1]:+.1f}]" for k in METRICS)
                + " | | |"
            )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--projects", default=",".join(PROJECTS + HOLDOUT))
    ap.add_argument("--code", type=int, default=150)
    ap.add_argument("--prose", type=int, default=150)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=str(ARCHIVE / "kind_prior_eval.json"))
    a = ap.parse_args(argv)
    res = run([s for s in a.projects.split(",") if s], a.code, a.prose, a.seed)
    out = Path(a.out)
    write_json(out, res, indent=1)
    md = render(res)
    out.with_suffix(".md").write_text(md)
    print(md)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Which of Oya's shipped ranking choices cost first places on fix messages? One flip at a time.

Usage: ``OYA_MIRRORS=... nice -n 10 .venv/bin/python -m bench.experiments.commits_oya_variants --per-repo 5``

Same queries, trees and index folders as ``commits_eval.py`` (its cache; the embedding cache makes
the rebuilds cheap). Each variant is ``RetrievalOptions(k=10)`` with one change, its ``--files``
list scored by the set's ``score.py`` in the ``all`` and ``source`` views. Results go to
bench/results/archive/commits_oya_variants.{json,md}; the run log (resumable) to the cache.

A finished experiment: its runs chose ``decay`` file aggregation over ``graph`` (docs/DECISIONS.md,
"Files are ranked by decay"), so its "shipped" row is the code of that time, not today's defaults.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from bench.commits_eval import CACHE, STORE, build_index, default_set, interleaved, load_log
from bench.commits_report import view
from bench.commits_set import EvalSet, sample
from bench.common import ARCHIVE, write_json
from oya.core.options import RetrievalOptions
from oya.query.searcher import Searcher

BASE = RetrievalOptions(k=10)
VARIANTS: dict[str, RetrievalOptions] = {
    "shipped (graph aggregation)": BASE,
    "files=decay": replace(BASE, file_aggregation="decay"),
    "files=max": replace(BASE, file_aggregation="max"),
    "semantic lead off": replace(BASE, semantic_lead=0.0),
    "test weight 1.0": replace(BASE, test_weight=1.0),
    "graph channel off": replace(BASE, channels=("lexical", "semantic")),
}


def rank(index_dir: Path, question: str) -> dict[str, list[str]]:
    with Searcher.open(index_dir) as searcher:
        return {
            name: [f.path for f in searcher.search(question, options=o).files] for name, o in VARIANTS.items()
        }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--per-repo", type=int, default=5)
    ap.add_argument("--repos", default="", help="comma-separated owner/name (default: all)")
    ap.add_argument("--out", default=str(ARCHIVE / "commits_oya_variants.json"))
    ap.add_argument("--report-only", action="store_true")
    a = ap.parse_args(argv)
    evalset = EvalSet(default_set())
    queries = sample(evalset.queries, a.repos, "", a.per_repo)
    log = CACHE / "oya_variants.jsonl"
    done = load_log(log)
    if not a.report_only:
        for q in interleaved(queries, False):
            if q["id"] in done:
                continue
            tree = evalset.materialize(q["id"], STORE / "trees" / q["id"])
            out = STORE / "index" / q["repo"].replace("/", "+")
            build_index(tree, out)
            rec = {"id": q["id"], "rows": rank(out, q["query"])}
            done[q["id"]] = rec
            with log.open("a") as fh:
                fh.write(json.dumps(rec) + "\n")
            print(f"  {q['id']}", flush=True)
    ran = [q for q in queries if q["id"] in done]
    result: dict[str, Any] = {"queries": len(ran), "variants": {}}
    lines = [
        f"Oya's ranking choices on {len(ran)} fix messages (commits set, --per-repo {a.per_repo} {a.repos})",
        "",
        "| variant | view | R@1 | R@5 | R@10 | MRR | Python R@1 | Python R@5 |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    preds = CACHE / "preds"
    preds.mkdir(parents=True, exist_ok=True)
    for name in VARIANTS:
        for vname in ("all", "source"):
            path = preds / f"variant.{name.replace(' ', '_')}.{vname}.jsonl"
            path.write_text(
                "".join(
                    json.dumps({"id": q["id"], "files": view(done[q["id"]]["rows"][name], q["query"], vname)})
                    + "\n"
                    for q in ran
                )
            )
            s = evalset.score(path)["summary"]
            result["variants"].setdefault(name, {})[vname] = s
            o, py = s["overall"], s.get("Python", {"R@1": 0.0, "R@5": 0.0})
            lines.append(
                f"| {name} | {vname} | {100 * o['R@1']:.1f} | {100 * o['R@5']:.1f} | {100 * o['R@10']:.1f} | "
                f"{o['MRR']:.3f} | {100 * py['R@1']:.1f} | {100 * py['R@5']:.1f} |"
            )
    md = "\n".join(lines) + "\n"
    out = Path(a.out)
    write_json(out, result, indent=1)
    out.with_suffix(".md").write_text(md)
    print(md)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

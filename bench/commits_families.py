"""Per language family (Java + Kotlin = JVM, JavaScript, TypeScript, ...) and overall, from a
commits_eval run log: R@1, R@5, MRR per row, and the issue's bars (issue 16: file R@5 >= 10 points
above ``bm25-files`` overall and in each family with >= 20 queries; R@1 >= 8 points overall).

Usage: ``.venv/bin/python -m bench.commits_families [--log bench/.cache/commits/runs.jsonl]
[--rows oya,oya-main,bm25-files]`` (prints a Markdown table; metrics by the set's own score.py).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from bench.commits_eval import CACHE, default_set
from bench.common import import_from

FAMILY = {"Java": "JVM", "Kotlin": "JVM"}
MIN_FAMILY = 20  # queries a family needs for its bar to count


def family_scores(log: Path, evalset: Path, rows: list[str]) -> dict[str, dict[str, dict[str, float]]]:
    """row -> family (and ``overall``) -> mean R@1, R@5, MRR and n."""
    scorer = import_from(evalset, "score")  # the set's own scorer
    ranked, score_one = scorer.ranked, scorer.score_one

    queries = {q["id"]: q for q in map(json.loads, (evalset / "queries.jsonl").read_text().splitlines())}
    recs = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    out: dict[str, dict[str, dict[str, float]]] = {}
    for row in rows:
        acc: dict[str, list[dict[str, Any]]] = {}
        for rec in recs:
            q = queries[rec["id"]]
            m = score_one(q["gold_files"], ranked(rec["rows"].get(row, [])))
            for key in (FAMILY.get(q["language"], q["language"]), "overall"):
                acc.setdefault(key, []).append(m)
        out[row] = {
            k: {c: sum(m[c] for m in ms) / len(ms) for c in ("R@1", "R@5", "MRR")} | {"n": len(ms)}
            for k, ms in acc.items()
        }
    return out


def table(scores: dict[str, dict[str, dict[str, float]]], rows: list[str], base: str) -> str:
    fams = sorted(k for k in scores[rows[0]] if k != "overall") + ["overall"]
    head = (
        "| family | n | " + " | ".join(f"{r} R@1 / R@5" for r in rows) + f" | R@5 − {base} | R@1 − {base} |"
    )
    lines = [head, "| --- | ---: |" + " ---: |" * (len(rows) + 2)]
    for fam in fams:
        n = int(scores[rows[0]][fam]["n"])
        cells = [f"{100 * scores[r][fam]['R@1']:.1f} / {100 * scores[r][fam]['R@5']:.1f}" for r in rows]
        d5 = 100 * (scores[rows[0]][fam]["R@5"] - scores[base][fam]["R@5"])
        d1 = 100 * (scores[rows[0]][fam]["R@1"] - scores[base][fam]["R@1"])
        bar = "" if fam == "overall" or n >= MIN_FAMILY else " (n < 20: no bar)"
        lines.append(f"| {fam} | {n} | " + " | ".join(cells) + f" | {d5:+.1f}{bar} | {d1:+.1f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--log", default=str(CACHE / "runs.jsonl"))
    ap.add_argument("--set", default=str(default_set()))
    ap.add_argument("--rows", default="oya,oya-main,bm25-files", help="first row is compared with --base")
    ap.add_argument("--base", default="bm25-files")
    a = ap.parse_args(argv)
    rows = [r for r in a.rows.split(",") if r]
    scores = family_scores(Path(a.log), Path(a.set), list(dict.fromkeys([*rows, a.base])))
    print(table(scores, rows, a.base))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Per language family (Java + Kotlin = JVM, JavaScript, TypeScript, ...) and overall, from a
commits_eval run log: R@1, R@5, MRR per row, and the issue's bars (issue 16: file R@5 >= 10 points
above ``bm25-files`` overall and in each family with >= 20 queries; R@1 >= 8 points overall).

Usage: ``.venv/bin/python -m bench.commits_families [--log bench/.cache/commits/runs.jsonl]
[--rows oya,oya-main,bm25-files]`` (prints a Markdown table; metrics by the set's own score.py).
``--set ../shared/eval/issues --preds bm25-set=../shared/eval/issues/preds_bm25.jsonl
--base bm25-set --min-family 10`` scores the issue-report set against its own BM25 row (issue 24).
``--compare oya,oya-noorigins`` adds the paired-bootstrap 95 % interval of the two rows' difference
per family (R@1, R@5; queries resampled with replacement, ``BOOTSTRAP`` draws, fixed seed).
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path
from typing import Any

from bench.commits_eval import CACHE, default_set
from bench.common import import_from, percentile

FAMILY = {"Java": "JVM", "Kotlin": "JVM"}
MIN_FAMILY = 20  # queries a family needs for its bar to count (issue 16; issue 24 says 10)
BOOTSTRAP = 2000


def _records(log: Path, preds: dict[str, Path]) -> list[dict[str, Any]]:
    """The run log's records, each with the extra rows read from prediction files added."""
    recs = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    for name, path in preds.items():
        files = {p["id"]: p["files"] for p in map(json.loads, path.read_text().splitlines()) if p}
        for rec in recs:
            rec["rows"][name] = files.get(rec["id"], [])
    return recs


def per_query(
    recs: list[dict[str, Any]], evalset: Path, rows: list[str]
) -> dict[str, list[tuple[str, dict[str, float]]]]:
    """row -> [(family, metrics)] per query, in the log's order."""
    scorer = import_from(evalset, "score")  # the set's own scorer
    ranked, score_one = scorer.ranked, scorer.score_one
    queries = {q["id"]: q for q in map(json.loads, (evalset / "queries.jsonl").read_text().splitlines())}
    out: dict[str, list[tuple[str, dict[str, float]]]] = {}
    for row in rows:
        out[row] = []
        for rec in recs:
            q = queries[rec["id"]]
            m = score_one(q["gold_files"], ranked(rec["rows"].get(row, [])))
            out[row].append((FAMILY.get(q["language"], q["language"]), m))
    return out


def family_scores(
    log: Path, evalset: Path, rows: list[str], preds: dict[str, Path] | None = None
) -> dict[str, dict[str, dict[str, float]]]:
    """row -> family (and ``overall``) -> mean R@1, R@5, MRR and n."""
    scored = per_query(_records(log, preds or {}), evalset, rows)
    out: dict[str, dict[str, dict[str, float]]] = {}
    for row, items in scored.items():
        acc: dict[str, list[dict[str, float]]] = {}
        for fam, m in items:
            for key in (fam, "overall"):
                acc.setdefault(key, []).append(m)
        out[row] = {
            k: {c: sum(m[c] for m in ms) / len(ms) for c in ("R@1", "R@5", "MRR")} | {"n": len(ms)}
            for k, ms in acc.items()
        }
    return out


def paired_interval(a: list[float], b: list[float], seed: int = 0) -> tuple[float, float, float]:
    """Mean of ``a - b`` and its 95 % paired-bootstrap interval (nearest-rank percentiles)."""
    rng = random.Random(seed)
    diffs = [x - y for x, y in zip(a, b, strict=True)]
    n = len(diffs)
    means = sorted(sum(diffs[rng.randrange(n)] for _ in range(n)) / n for _ in range(BOOTSTRAP))
    return sum(diffs) / n, percentile(means, 2.5), percentile(means, 97.5)


def compare(log: Path, evalset: Path, a: str, b: str, preds: dict[str, Path] | None = None) -> str:
    """Per family: row ``a`` minus row ``b`` in R@1 and R@5, points, with intervals."""
    scored = per_query(_records(log, preds or {}), evalset, [a, b])
    fams = sorted({f for f, _ in scored[a]}) + ["overall"]
    lines = [f"| family | n | {a} − {b} R@1 [95 %] | R@5 [95 %] |", "| --- | ---: | ---: | ---: |"]
    for fam in fams:
        idx = [i for i, (f, _) in enumerate(scored[a]) if fam in ("overall", f)]
        cells = []
        for metric in ("R@1", "R@5"):
            mean, lo, hi = paired_interval(
                [100 * scored[a][i][1][metric] for i in idx], [100 * scored[b][i][1][metric] for i in idx]
            )
            cells.append(f"{mean:+.1f} [{lo:+.1f}, {hi:+.1f}]")
        lines.append(f"| {fam} | {len(idx)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def table(
    scores: dict[str, dict[str, dict[str, float]]], rows: list[str], base: str, min_family: int = MIN_FAMILY
) -> str:
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
        bar = "" if fam == "overall" or n >= min_family else f" (n < {min_family}: no bar)"
        lines.append(f"| {fam} | {n} | " + " | ".join(cells) + f" | {d5:+.1f}{bar} | {d1:+.1f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--log", default=str(CACHE / "runs.jsonl"))
    ap.add_argument("--set", default=str(default_set()))
    ap.add_argument("--rows", default="oya,oya-main,bm25-files", help="first row is compared with --base")
    ap.add_argument("--base", default="bm25-files")
    ap.add_argument("--preds", action="append", default=[], help="NAME=PATH: a row from a predictions file")
    ap.add_argument("--min-family", type=int, default=MIN_FAMILY)
    ap.add_argument("--compare", default="", help="ROW_A,ROW_B: paired-bootstrap intervals of A − B")
    a = ap.parse_args(argv)
    rows = [r for r in a.rows.split(",") if r]
    preds = {name: Path(path) for name, path in (p.split("=", 1) for p in a.preds)}
    scores = family_scores(Path(a.log), Path(a.set), list(dict.fromkeys([*rows, a.base])), preds)
    print(table(scores, rows, a.base, a.min_family))
    if a.compare:
        first, second = a.compare.split(",")
        print()
        print(compare(Path(a.log), Path(a.set), first, second, preds))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

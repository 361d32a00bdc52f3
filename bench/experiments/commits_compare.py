"""Two runs of ``commits_eval.py`` on the same queries: file R@5 per language, before and after.

Usage (the run logs are the ``bench/.cache/commits/runs.jsonl`` of each run; only the queries both
logs hold are compared, so a run stopped early is compared on what it finished):

    python -m bench.experiments.commits_compare BEFORE/runs.jsonl AFTER/runs.jsonl [--row oya] [--views all,source]

Each view (``all`` files, ``source`` files only) is scored by the set's own ``score.py`` through
``commits_set.EvalSet.score``; the table gives R@5 per language (in brackets: the queries), the
difference in points, and the overall and non-Python means.

A finished experiment: what parsing buys over text chunks (docs/quality.md, docs/DECISIONS.md); its
table is ``bench/results/archive/commits_compare_langs.md``.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any

from bench.commits_eval import default_set, load_log
from bench.commits_report import view
from bench.commits_set import EvalSet


def per_language(
    evalset: EvalSet, log: dict[str, Any], ids: list[str], row: str, name: str
) -> dict[str, Any]:
    queries = {q["id"]: q for q in evalset.queries}
    with tempfile.TemporaryDirectory() as tmp:
        preds = Path(tmp) / "preds.jsonl"
        lines = (
            json.dumps({"id": i, "files": view(log[i]["rows"][row], queries[i]["query"], name)}) for i in ids
        )
        preds.write_text("".join(line + "\n" for line in lines))
        return evalset.score(preds)["summary"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("before", type=Path)
    ap.add_argument("after", type=Path)
    ap.add_argument("--row", default="oya")
    ap.add_argument("--views", default="all,source")
    a = ap.parse_args()
    evalset = EvalSet(default_set())
    before, after = load_log(a.before), load_log(a.after)
    ids = sorted(set(before) & set(after))
    language = {q["id"]: q["language"] for q in evalset.queries}
    counts: dict[str, int] = {}
    for i in ids:
        counts[language[i]] = counts.get(language[i], 0) + 1
    print(f"{len(ids)} queries in both runs; row {a.row!r}; file R@5 in %\n")
    for name in a.views.split(","):
        old, new = (per_language(evalset, log, ids, a.row, name) for log in (before, after))
        print(f"view {name}\n\n| language | queries | before | after | points |\n|---|---|---|---|---|")
        for lang in sorted(counts):
            b, n = 100 * old[lang]["R@5"], 100 * new[lang]["R@5"]
            print(f"| {lang} | {counts[lang]} | {b:.1f} | {n:.1f} | {n - b:+.1f} |")
        others = [lang for lang in counts if lang != "Python"]
        for label, langs in (
            ("non-Python (mean of queries)", others),
            ("all (mean of queries)", list(counts)),
        ):
            total = sum(counts[lang] for lang in langs)
            b = sum(100 * old[lang]["R@5"] * counts[lang] for lang in langs) / max(total, 1)
            n = sum(100 * new[lang]["R@5"] * counts[lang] for lang in langs) / max(total, 1)
            print(f"| **{label}** | {total} | {b:.1f} | {n:.1f} | {n - b:+.1f} |")
        print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

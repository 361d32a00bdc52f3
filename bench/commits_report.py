"""Scores and tables for bench/commits_eval.py: each row in each view, through the set's score.py."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.commits_set import EvalSet
from bench.file_kinds import NON_CODE, file_kind, kind_prior, slot_shares

VIEWS = {
    "all": "every indexed file may rank",
    "source": "non-source files (tests, docs, change logs, templates, config) removed from the list",
    "prior": "tests/docs/change logs/templates the question does not ask about moved after the rest",
    "prior-subject": "as prior, but only the question's first line can ask for a kind",
    "prior-always": "tests/docs/change logs/templates moved after the rest whatever the question says",
}
MAIN_ROWS = ("oya", "oya-nokinds", "bm25-tree", "bm25-files", "bm25-chunks", "embedding")
COLS = ("R@1", "R@5", "R@10", "Acc@5", "MRR")
LEVELS = ("HIGH", "MEDIUM", "LOW")


def gold_rank(files: Sequence[str], gold: Sequence[str]) -> int | None:
    """The 1-based rank of the first gold file in ``files`` (paths compared as score.py does)."""
    want = {g.strip().removeprefix("./").lstrip("/") for g in gold}
    for i, f in enumerate(files, 1):
        if f.strip().removeprefix("./").lstrip("/") in want:
            return i
    return None


def calibration(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Per confidence level: queries, their share, precision (a gold file in the top 5) and the
    share whose top 10 misses every gold file; and how many of all such misses were LOW."""
    n = max(len(rows), 1)
    misses = [r for r in rows if r["gold_rank"] is None or r["gold_rank"] > 10]
    levels: dict[str, dict[str, float]] = {}
    for level in LEVELS:
        at = [r for r in rows if r["level"] == level]
        m = max(len(at), 1)
        levels[level] = {
            "n": len(at),
            "share": len(at) / n,
            "precision": sum(1 for r in at if r["gold_rank"] is not None and r["gold_rank"] <= 5) / m,
            "misses": sum(1 for r in at if r in misses) / m,
        }
    low_misses = sum(1 for r in misses if r["level"] == "LOW")
    return {
        "n": len(rows),
        "levels": levels,
        "misses": len(misses),
        "low_recall_of_misses": low_misses / len(misses) if misses else 1.0,
    }


def calibration_table(cal: dict[str, Any]) -> str:
    lines = [
        "| level | queries | share | precision (gold in top 5) | top 10 misses every gold file |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for level, m in cal["levels"].items():
        lines.append(
            f"| {level} | {m['n']} | {100 * m['share']:.1f} % | {100 * m['precision']:.1f} % "
            f"| {100 * m['misses']:.1f} % |"
        )
    caught = f"of which LOW: {100 * cal['low_recall_of_misses']:.0f} %" if cal["misses"] else "none"
    lines.append(f"\n{cal['n']} queries; the top 10 misses every gold file for {cal['misses']}, {caught}.")
    return "\n".join(lines)


def view(files: Sequence[str], question: str, name: str) -> list[str]:
    if name == "all":
        return list(files)
    if name == "source":
        return [p for p in files if file_kind(p) == "source"]
    if name == "prior":
        return kind_prior(files, question)
    if name == "prior-subject":
        return kind_prior(files, question.strip().split("\n", 1)[0])
    if name == "prior-always":
        return kind_prior(files, "")
    raise ValueError(name)


def summarize(
    evalset: EvalSet, queries: Sequence[dict[str, Any]], done: dict[str, Any], preds_dir: Path
) -> dict[str, Any]:
    preds_dir.mkdir(parents=True, exist_ok=True)
    ran = [q for q in queries if q["id"] in done]
    rows = list(done[ran[0]["id"]]["rows"]) if ran else []
    out: dict[str, Any] = {"rows": {}, "ran": len(ran)}
    for row in rows:
        out["rows"][row] = {}
        for name in VIEWS:
            lists = {q["id"]: view(done[q["id"]]["rows"][row], q["query"], name) for q in ran}
            path = preds_dir / f"{row}.{name}.jsonl"
            path.write_text("".join(json.dumps({"id": i, "files": f}) + "\n" for i, f in lists.items()))
            scored = evalset.score(path)
            shares = [slot_shares(f, 5) for f in lists.values()]
            n = max(len(shares), 1)
            out["rows"][row][name] = {
                "summary": scored["summary"],
                "top5_noncode": sum(sum(s[k] for k in NON_CODE) for s in shares) / n,
                "top5_test": sum(s["test"] for s in shares) / n,
                "top1_noncode": sum(1 for f in lists.values() if f and file_kind(f[0]) in NON_CODE),
            }
    out["calibration"] = calibration(
        [
            {
                "level": done[q["id"]]["confidence"]["level"],
                "gold_rank": gold_rank(done[q["id"]]["rows"]["oya"], q["gold_files"]),
            }
            for q in ran
            if "confidence" in done[q["id"]]
        ]
    )
    builds = [done[q["id"]]["build"] for q in ran]
    out["build"] = {
        "seconds": round(sum(b["seconds"] for b in builds), 1),
        "embedded": sum(max(b["embedded"], 0) for b in builds),
        "rank_seconds": round(sum(done[q["id"]]["rank_seconds"] for q in ran), 1),
    }
    return out


def _fmt(m: dict[str, float], col: str) -> str:
    return f"{m[col]:.3f}" if col == "MRR" else f"{100 * m[col]:.1f}"


def overall_table(result: dict[str, Any]) -> str:
    head = (
        "| row | view | n | "
        + " | ".join(COLS)
        + " | top-5 slots docs/changelog/template | top-5 slots tests | top-1 non-code |"
    )
    lines = [head, "|" + " --- |" * 3 + " ---: |" * (len(COLS) + 3)]
    for row, views in result["rows"].items():
        for name, r in views.items():
            m = r["summary"]["overall"]
            cells = [row, name, str(m["n"])] + [_fmt(m, c) for c in COLS]
            cells += [
                f"{100 * r['top5_noncode']:.1f} %",
                f"{100 * r['top5_test']:.1f} %",
                str(r["top1_noncode"]),
            ]
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def language_table(result: dict[str, Any], name: str, rows: Sequence[str] = MAIN_ROWS) -> str:
    rows = [r for r in rows if r in result["rows"]]
    if not rows:
        return ""
    langs = [k for k in result["rows"][rows[0]][name]["summary"] if k != "overall"] + ["overall"]
    head = "| language | n | " + " | ".join(f"{r} R@1 | {r} R@5 | {r} MRR" for r in rows) + " |"
    lines = [head, "| --- | ---: |" + " ---: |" * (3 * len(rows))]
    for lang in langs:
        n = result["rows"][rows[0]][name]["summary"][lang]["n"]
        cells = [lang, str(n)]
        for r in rows:
            m = result["rows"][r][name]["summary"][lang]
            cells += [_fmt(m, "R@1"), _fmt(m, "R@5"), _fmt(m, "MRR")]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def render_markdown(result: dict[str, Any]) -> str:
    meta = result.get("meta", {})
    parts = [
        "# Commits eval (development set: ../shared/eval/commits)",
        "",
        f"{meta.get('date', '')}, code {meta.get('commit', '')}; {result['ran']} queries "
        f"(options {json.dumps(meta.get('options', {}))}); load average {' '.join(map(str, meta.get('loadavg', [])))}; "
        f"{result['build']['embedded']} chunks embedded, builds {result['build']['seconds']:.0f} s, "
        f"ranking {result['build']['rank_seconds']:.0f} s.",
        "",
        "R@k, Acc@5 in %, MRR as a fraction (score.py). Views: "
        + "; ".join(f"`{k}`: {v}" for k, v in VIEWS.items())
        + ".",
        "",
        "## Overall",
        "",
        overall_table(result),
    ]
    for name in ("all", "source"):
        parts += ["", f"## Per language, view `{name}`", "", language_table(result, name)]
    if result.get("calibration", {}).get("n"):
        parts += [
            "",
            "## Confidence calibration (row `oya`, view `all`)",
            "",
            calibration_table(result["calibration"]),
        ]
    return "\n".join(parts) + "\n"

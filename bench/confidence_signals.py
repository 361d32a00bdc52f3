"""The confidence's evidence on the commits set, per query, and the calibration of its thresholds.

Usage (from the project root; ranks from kept indexes, builds nothing):

    OYA_COMMITS_CACHE=/work/wt/_evalcache nice -n 10 .venv/bin/python -m bench.confidence_signals
    ... -m bench.confidence_signals --cached          # re-score the cached evidence only

For every query whose index is kept (``commits_eval.kept_index``), ``Searcher.search(query,
k=10)`` (what ``oya search --files`` runs) gives the files, the evidence and the banner; each
is logged with where the first gold file ranks (bench/.cache/confidence/signals.jsonl). The
thresholds of ``ConfidenceRule`` are then re-applied offline: the queries are split by a hash
of their id into a tuning half and a check half, a small grid is scored on the tuning half and
the shipped rule and the grid's best are printed on both halves (``calibration`` tables).
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from bench.commits_eval import default_set, kept_index
from bench.commits_report import calibration, calibration_table, gold_rank
from bench.common import CACHE_DIR
from oya.core.confidence import ConfidenceRule, assess_confidence
from oya.core.options import RetrievalOptions
from oya.core.results import Evidence, SearchQuality

CACHE = CACHE_DIR / "confidence" / "signals.jsonl"
OWN_CACHE = CACHE.with_name("own_eval.jsonl")


def split_of(query_id: str) -> str:
    """``tune`` or ``check``: a fixed half of the set by the id's hash (no peeking at results)."""
    return "tune" if hashlib.sha256(query_id.encode()).digest()[0] % 2 == 0 else "check"


def search(s: Any, question: str) -> tuple[Any, dict[str, list[str]]]:
    """``Searcher.search(question, k=10)`` step by step, to also see each channel's first files."""
    import time

    from oya.core.evidence import TOP_N
    from oya.core.filters import path_filter
    from oya.core.pipeline import default_pipeline, result_of, run
    from oya.core.stages import Query
    from oya.query.searcher import index_channels

    vector, reason = s.embed_query(question)
    pipe = default_pipeline(replace(RetrievalOptions(), k=10))
    t0 = time.perf_counter()
    query = Query(
        question=question,
        plan=pipe.plan(question),
        channels=tuple(index_channels(s.index, reason if vector is None else "", s.backends)),
        graph=s.index.graph,
        corpus=s.index,
        vector=vector,
        allowed=path_filter((), ()),
        clock=time.perf_counter,
    )
    c = run(pipe, query)
    result = result_of(query, c, pipe.options, (time.perf_counter() - t0) * 1000)
    paths = s.index.chunk_paths()
    tops: dict[str, list[str]] = {}
    for name, ranked in c.rankings.items():
        seen: dict[str, None] = {}
        for cid in ranked[:TOP_N]:
            seen[paths.get(cid, "")] = None
        tops[name] = list(seen)
    return result, tops


def collect(queries: Sequence[dict[str, Any]], out: Path) -> list[dict[str, Any]]:
    from oya.query.searcher import Searcher

    rows: list[dict[str, Any]] = []
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w") as fh:
        for q in queries:
            kept = kept_index(q["id"])
            if not (kept / "index.duckdb").exists():
                continue
            with Searcher.open(kept) as s:
                r, channel_top = search(s, q["query"])
            files = [f.path for f in r.files]
            row = {
                "id": q["id"],
                "language": q["language"],
                "files": files,
                "gold_rank": gold_rank(files, q["gold_files"]),
                "level": r.confidence.level,
                "reasons": list(r.confidence.reasons),
                "evidence": r.quality.evidence.to_dict(),
                "degraded": bool(r.quality.degraded),
                "channel_top": channel_top,
                "file_scores": [round(f.score, 6) for f in r.files],
            }
            rows.append(row)
            fh.write(json.dumps(row) + "\n")
            print(f"  {q['id']}: {row['level']} gold rank {row['gold_rank']}", flush=True)
    return rows


OWN_PROJECTS = ("networkx==3.6.1", "click==8.1.8", "attrs==25.3.0", "requests==2.32.3")


def collect_own(specs: Sequence[str], n: int) -> list[dict[str, Any]]:
    """The same log on the project's own eval (bench/eval_quality.py's code and prose queries,
    its defaults): gold = the function's file (code) or the files defining the named symbols."""
    from bench.eval.project import load_project
    from oya.core.pipeline import retrieve
    from oya.core.vectors import decode_f32
    from oya.embedding.embedder import make_embedder
    from oya.query.searcher import index_channels

    embedder = make_embedder("minilm")
    rows: list[dict[str, Any]] = []
    for spec in specs:
        project = load_project(spec, embedder, n_code=n, n_prose=n, n_connected=0, seed=0)
        channels = index_channels(project.index)
        tasks = [("code", q.query, {q.path}) for q in project.code]
        tasks += [("prose", q.query, set(q.files)) for q in project.prose]
        for task, question, gold in tasks:
            vector = list(decode_f32(embedder.embed([question])[0]))
            r = retrieve(
                question, channels=channels, graph=project.index.graph, corpus=project.index, vector=vector
            )
            files = [f.path for f in r.files]
            rows.append(
                {
                    "id": f"{spec}:{task}:{question[:60]}",
                    "language": f"{spec} {task}",
                    "files": files,
                    "gold_rank": gold_rank(files, sorted(gold)),
                    "level": r.confidence.level,
                    "reasons": list(r.confidence.reasons),
                    "evidence": r.quality.evidence.to_dict(),
                    "degraded": bool(r.quality.degraded),
                }
            )
        project.index.close()
        print(f"  {spec}: {len(tasks)} queries", flush=True)
    return rows


def _read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def evidence_of(d: dict[str, Any]) -> Evidence:
    return Evidence(
        cosine=d["cosine"],
        coverage=d["coverage"],
        convergence=tuple(d["convergence"]),
        voters=d["voters"],
        overlap=d["overlap"],
        named=tuple(d["named"]),
        named_found=d["named_found"],
        top_channels=tuple(d["top_channels"]),
        leaders=d["leaders"],
        margin=d["margin"],
    )


def relevel(rows: Iterable[dict[str, Any]], rule: ConfidenceRule) -> list[dict[str, Any]]:
    """``rows`` with the level ``rule`` gives their cached evidence."""
    quality = SearchQuality("general", (), 0, 0)
    out = []
    for row in rows:
        conf = assess_confidence(evidence_of(row["evidence"]), quality, rule, found=bool(row["files"]))
        out.append({**row, "level": conf.level, "reasons": list(conf.reasons)})
    return out


# every threshold is a count of channels or gaps: the grid is small
GRID = {
    "high_agree": (2, 3),
    "low_agree": (1, 2, 3),
    "low_gaps": (1, 2),
}


HIGH_FLOOR = 0.9  # the target for HIGH
LOW_CAP = 1 / 3  # LOW on more than a third of the answers would say little


def objective(cal: dict[str, Any]) -> tuple[bool, float, float]:
    """HIGH precision >= ``HIGH_FLOOR`` and LOW on at most ``LOW_CAP`` of the queries first (a
    confident wrong answer is the worst outcome; LOW on everything is useless), then the most
    misses at LOW, then the most HIGH."""
    levels = cal["levels"]
    ok = levels["HIGH"]["precision"] >= HIGH_FLOOR and levels["LOW"]["share"] <= LOW_CAP
    return ok, cal["low_recall_of_misses"], levels["HIGH"]["share"]


def best_rule(rows: Sequence[dict[str, Any]]) -> ConfidenceRule:
    best: tuple[tuple[bool, float, float], ConfidenceRule] | None = None
    for values in itertools.product(*GRID.values()):
        rule = replace(ConfidenceRule(), **dict(zip(GRID, values, strict=True)))
        score = objective(calibration(relevel(rows, rule)))
        if best is None or score > best[0]:
            best = (score, rule)
    assert best is not None
    return best[1]


def side_by_side(sets: dict[str, list[dict[str, Any]]], rule: ConfidenceRule) -> str:
    """One table for every set: per level its queries (share), precision and misses, then the
    misses' LOW share, for the whole set and its check half."""
    cals = {name: calibration(relevel(rows, rule)) for name, rows in sets.items()}
    checks = {
        name: calibration(relevel([r for r in rows if split_of(r["id"]) == "check"], rule))
        for name, rows in sets.items()
    }
    head = "| level | " + " | ".join(
        f"{n}: queries (share) | precision | check half: precision" for n in sets
    )
    lines = [head + " |", "| --- |" + " ---: | ---: | ---: |" * len(sets)]
    for level in ("HIGH", "MEDIUM", "LOW"):
        cells = [level]
        for name in sets:
            m, c = cals[name]["levels"][level], checks[name]["levels"][level]
            cells += [
                f"{m['n']} ({100 * m['share']:.0f} %)",
                f"{100 * m['precision']:.1f} %",
                f"{100 * c['precision']:.1f} %",
            ]
        lines.append("| " + " | ".join(cells) + " |")
    cells = ["misses shown LOW"]
    for name in sets:
        cal, chk = cals[name], checks[name]
        low = round(cal["low_recall_of_misses"] * cal["misses"])
        cells += [
            f"{low} of {cal['misses']}",
            f"{100 * cal['low_recall_of_misses']:.0f} %",
            f"{100 * chk['low_recall_of_misses']:.0f} %",
        ]
    lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def report(sets: dict[str, list[dict[str, Any]]]) -> None:
    """Tune on the union of every set's ``tune`` half; print each set's halves and whole."""
    tune = [r for rows in sets.values() for r in rows if split_of(r["id"]) == "tune"]
    print(f"\n## shipped, every set\n\n{side_by_side(sets, ConfidenceRule())}\n")
    print(f"\ntuned on {len(tune)} queries (the tune halves of {', '.join(sets)})\n")
    for name, rule in (("shipped", ConfidenceRule()), ("grid best on tune", best_rule(tune))):
        print(f"## {name}: {rule}\n")
        for set_name, rows in sets.items():
            for label in ("tune", "check", "all"):
                part = [r for r in rows if label == "all" or split_of(r["id"]) == label]
                print(f"### {set_name}, {label}\n\n{calibration_table(calibration(relevel(part, rule)))}\n")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--set", default=str(default_set()))
    ap.add_argument("--cached", action="store_true", help="re-level the logged evidence; search nothing")
    ap.add_argument("--out", default=str(CACHE))
    ap.add_argument(
        "--own-eval", type=int, default=0, help="the project's own eval instead, N code + N prose per project"
    )
    a = ap.parse_args(argv)
    out = Path(a.out)
    if a.own_eval:
        own = collect_own(OWN_PROJECTS, a.own_eval)
        OWN_CACHE.parent.mkdir(parents=True, exist_ok=True)
        OWN_CACHE.write_text("".join(json.dumps(r) + "\n" for r in own))
    elif not a.cached:
        queries = [
            json.loads(line) for line in (Path(a.set) / "queries.jsonl").read_text().splitlines() if line
        ]
        collect(queries, out)
    sets = {"commits": _read(out)}
    if OWN_CACHE.exists():
        sets["own eval"] = _read(OWN_CACHE)
    report(sets)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

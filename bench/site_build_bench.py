"""Measure the static-site build step: its seconds (full, unchanged, one file changed) and its size.

Theory of operation:

* Projects: Oya's own repository (the files ``git ls-files`` lists in the repository this script
  belongs to, copied to ``bench/.cache/site_build/oya/repo``) and networkx 3.6.1 (``bench/corpus.py``;
  about 216k lines). Indexes use the deterministic hashing embedder: the site step does not depend
  on the embedder, and embedding is measured by ``index_bench.py``. The site ships the browser
  runtime (Pyodide, mermaid, transformers.js, the core wheel) and the bundle, but no query model
  (only an index embedded with MiniLM ships one: a fixed 23 MB, listed as fixed runtime).
* Builds, each ``pipelines.build.run_build`` (what ``oya build --site`` runs) into one output folder:
  ``full`` (no previous site), ``unchanged`` (the same again) and ``one_file`` (one module gets a
  new function appended first). The table shows each asset's own seconds; ``site step`` is
  ``wiki_pages`` + ``wiki_site``.
* Site step alone, interleaved: ``--reps`` times a from-scratch site (``render_wiki_pages`` without
  a previous site, written to a new folder) and an incremental one (the previous site given, the
  same folder), alternating so that machine load hits both alike; medians are reported.
* Sizes of the full site by group: ``pages`` (HTML), ``nav`` (the shared tree script), ``static``,
  ``bundle`` (the Ask panel's index), and the fixed runtime (``vendor/``, ``models/``); per 1,000
  source lines and as a multiple of the source bytes; the largest page and how many exceed 300 kB.

Run: ``.venv/bin/python -m bench.site_build_bench [--projects oya networkx] [--reps 3]``;
results go to ``bench/results/site_build_bench.json``. Set ``OYA_CACHE_DIR`` to reuse an npm
install of the runtime.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import time
from pathlib import Path
from typing import Any

from bench.common import CACHE_DIR, RESULTS, ROOT, load_avg, machine, write_json
from bench.corpus import fetch_project

WORK = CACHE_DIR / "site_build"
RESULT = RESULTS / "site_build_bench.json"
PAGE_BUDGET = 300_000
FIXED = ("vendor", "models")  # the fixed runtime: the same for every repository


def project_repo(name: str) -> Path:
    repo = WORK / name / "repo"
    if repo.is_dir():
        return repo
    if name == "oya":
        listed = subprocess.run(
            ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
        ).stdout.split(b"\0")
        for rel in filter(None, (p.decode() for p in listed)):
            if (ROOT / rel).is_file():
                (repo / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(ROOT / rel, repo / rel)
    else:
        shutil.copytree(fetch_project(name), repo)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)  # the reader lists git's files
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True)
    return repo


def _edit_one_file(repo: Path) -> str:
    """Append a function to a mid-sized Python module (the same one every run)."""
    modules = sorted(p for p in repo.rglob("*.py") if "test" not in p.as_posix() and ".git" not in p.parts)
    modules.sort(key=lambda p: p.stat().st_size)
    target = modules[len(modules) // 2]
    with target.open("a", encoding="utf-8") as fh:
        fh.write(f"\n\ndef bench_added_{int(time.time())}():\n    return 1\n")
    return target.relative_to(repo).as_posix()


def _build(repo: Path, out: Path) -> dict[str, Any]:
    from pipelines.build import run_build

    t0 = time.perf_counter()
    summary = run_build(repo, out, embedder="hashing", cache_dir=WORK / "embcache", with_site=True).to_dict()
    seconds = {row["asset"]: row["seconds"] for row in summary["assets"]}
    seconds["site step"] = round(seconds["wiki_pages"] + seconds["wiki_site"], 2)
    seconds["run_build"] = round(time.perf_counter() - t0, 2)
    counts = summary["metadata"]["wiki_pages"]
    return {"seconds": seconds, "rendered": counts.get("rendered"), "reused": counts.get("reused")}


def _sizes(site: Path, source_bytes: int, lines: int) -> dict[str, Any]:
    groups: dict[str, int] = {}
    largest = ("", 0)
    over = 0
    for p in site.rglob("*"):
        if not p.is_file():
            continue
        rel = p.relative_to(site).as_posix()
        top = rel.split("/", 1)[0]
        size = p.stat().st_size
        group = "fixed runtime" if top in FIXED else "pages" if rel.endswith(".html") else top
        groups[group] = groups.get(group, 0) + size
        if rel.endswith(".html"):
            over += size > PAGE_BUDGET
            largest = max(largest, (rel, size), key=lambda x: x[1])
    without_fixed = sum(v for k, v in groups.items() if k != "fixed runtime")
    return {
        "bytes": dict(sorted(groups.items())),
        "source_bytes": source_bytes,
        "pages_mb_per_1k_lines": round(groups.get("pages", 0) / 1e6 / (lines / 1000), 4),
        "site_without_fixed_mb_per_1k_lines": round(without_fixed / 1e6 / (lines / 1000), 4),
        "pages_x_source": round(groups.get("pages", 0) / source_bytes, 2),
        "site_without_fixed_x_source": round(without_fixed / source_bytes, 2),
        "largest_page": largest[0],
        "largest_page_kb": round(largest[1] / 1000, 1),
        "pages_over_300kb": over,
    }


def _site_step(index_dir: Path, site: Path, fresh: Path) -> dict[str, float]:
    from oya.site.build import write_wiki_site
    from oya.site.render import render_wiki_pages

    t0 = time.perf_counter()
    pages = render_wiki_pages(index_dir, None)
    write_wiki_site(pages, index_dir, fresh)
    full = time.perf_counter() - t0
    t0 = time.perf_counter()
    pages = render_wiki_pages(index_dir, site)
    write_wiki_site(pages, index_dir, site)
    incremental = time.perf_counter() - t0
    shutil.rmtree(fresh)
    return {"full": full, "incremental": incremental}


def run_project(name: str, reps: int) -> dict[str, Any]:
    repo = project_repo(name)
    out = WORK / name / "out"
    shutil.rmtree(out, ignore_errors=True)
    builds = {"full": _build(repo, out)}
    from oya.store.index import Index

    with Index(out) as index:
        files = index.files()
    lines = sum(f[3] for f in files)
    source_bytes = sum(f[2] for f in files)
    sizes = _sizes(out / "site", source_bytes, lines)
    builds["unchanged"] = _build(repo, out)
    edited = _edit_one_file(repo)
    builds["one_file"] = _build(repo, out)
    subprocess.run(["git", "-C", str(repo), "checkout", "-q", "--", edited], check=False)
    runs = [_site_step(out, out / "site", WORK / name / "fresh-site") for _ in range(reps)]
    step = {k: round(statistics.median(r[k] for r in runs), 2) for k in ("full", "incremental")}
    return {
        "project": name,
        "files": len(files),
        "lines": lines,
        "edited": edited,
        "builds": builds,
        "site_step_median_s": step,
        "sizes": sizes,
    }


def _print(results: list[dict[str, Any]]) -> None:
    for r in results:
        print(
            f"\n## {r['project']}: {r['files']} files, {r['lines']:,} lines, {r['sizes']['source_bytes'] / 1e6:.2f} MB"
        )
        print("| seconds | full | unchanged | one file |")
        print("|---|---|---|---|")
        for key in ("search_index", "wiki_pages", "wiki_site", "site step", "run_build"):
            row = [r["builds"][b]["seconds"].get(key, "") for b in ("full", "unchanged", "one_file")]
            print(f"| {key} | " + " | ".join(str(x) for x in row) + " |")
        rr = [
            f"{r['builds'][b]['rendered']}/{r['builds'][b]['reused']}"
            for b in ("full", "unchanged", "one_file")
        ]
        print("| pages rendered/reused | " + " | ".join(rr) + " |")
        s = r["site_step_median_s"]
        print(
            f"site step alone (median): from scratch {s['full']} s, incremental (nothing changed) {s['incremental']} s"
        )
        z = r["sizes"]
        print("| size | MB |")
        print("|---|---|")
        for k, v in z["bytes"].items():
            print(f"| {k} | {v / 1e6:.2f} |")
        print(
            f"pages {z['pages_mb_per_1k_lines']} MB per 1k lines ({z['pages_x_source']}x source); site without "
            f"the fixed runtime {z['site_without_fixed_mb_per_1k_lines']} MB per 1k lines "
            f"({z['site_without_fixed_x_source']}x source); largest page {z['largest_page']} "
            f"{z['largest_page_kb']} kB; pages over 300 kB: {z['pages_over_300kb']}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--projects", nargs="+", default=["oya", "networkx==3.6.1"])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--reprint", action="store_true", help="print the last results again")
    args = parser.parse_args()
    if args.reprint:
        _print(json.loads(RESULT.read_text())["results"])
        return
    WORK.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("DAGSTER_HOME", str(WORK / "dagster_home"))
    Path(os.environ["DAGSTER_HOME"]).mkdir(parents=True, exist_ok=True)
    results = [run_project(p, args.reps) for p in args.projects]
    record = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": machine(),
        "loadavg_end": load_avg(),
        "results": results,
    }
    write_json(RESULT, record)
    print(f"{record['date']}, {os.cpu_count()} CPUs, load average at the end {record['loadavg_end']}")
    _print(results)


if __name__ == "__main__":
    main()

"""Measure the static site and its in-browser Ask panel: bytes shipped, cold start, query latency.

Theory of operation:

* Two sites are built with ``oya.site.build`` (``render_wiki_pages``, ``write_wiki_site``: what
  ``oya build --site`` writes): the
  sample repository (``data/sample_repo``) and a real project of >= 10k chunks (default: the
  ``django/`` package of the Django 5.2.19 sdist, fetched with ``pip download --no-deps
  --no-binary :all:`` into ``bench/.cache/site_bench/``, gitignored). Both use the real
  all-MiniLM-L6-v2 embedder; the embedding cache under ``bench/.cache/site_bench/embcache`` makes
  every run after the first skip the embedding (``--embedder hashing`` for a quick run: the site
  then ships no model and the semantic channel is reported unavailable). An existing index is
  reused unless ``--rebuild``.
* Sizes: every file of the site, raw and gzip -6, grouped as runtime (Pyodide, the core wheel,
  mermaid, transformers.js, static JS/CSS), model (the int8 ONNX model and onnxruntime's WASM),
  bundle (``bundle/``) and pages (HTML, ``manifest.json``).
* Browser: headless Debian Chromium (playwright), every non-loopback request aborted (and counted:
  the run fails if any happened). Cold start = a fresh profile opens a file page and asks through
  the panel: from pressing Enter to the rendered answer (Pyodide, wheel, bundle and model all
  load then). Warm start = the same page reloaded (HTTP cache warm, a new Pyodide). Query latency =
  ``oyaAsk.query`` (embed + JS vector scan + the core in Pyodide), >= 30 questions after one
  warm-up question, p50/p95 (nearest-rank, ``bench.common.percentile``; ``results/site_bench.json``
  of 2026-11-27 took p50 as the interpolated median and p95 at index round(0.95 (n - 1)): the same
  p95 for Django's 40 questions, the 30th value instead of the 31st for the sample's 32, and each
  p50 the mean of the two middle values, where nearest-rank takes the lower). The JS vector ranking is checked against the core's
  ``VectorIndex`` ranking in Pyodide on the first questions, and the pure-Python scan is timed too.
* Questions: for the sample, hand-written ones; for the large project, the first lines of its own
  function docstrings (>= 4 words), sampled with a fixed seed, plus a few hand-written ones.

Run: ``.venv/bin/python -m bench.site_bench [--embedder minilm|hashing] [--queries 40]
[--rebuild]``; results go to ``bench/results/site_bench.json``.
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from bench.browser_harness import OFFLINE_CHROMIUM_ARGS, load_test_hooks, route_test_hooks
from bench.common import CACHE_DIR, RESULTS, ROOT, load_avg, percentile, write_json
from bench.corpus import fetch_project
from oya.site.serve import make_server
from oya.system_deps import find_chromium, missing_chromium_message

WORK = CACHE_DIR / "site_bench"
RESULT = RESULTS / "site_bench.json"
CHROMIUM_ARGS = list(OFFLINE_CHROMIUM_ARGS)
TARGETS = {"warm_query_p95_ms_at_10k": 300.0, "bundle_gzip_mb_per_100k_lines": 15.0}

SAMPLE_QUESTIONS = [
    "How is stock removed when an order ships?",
    "What happens when more units are removed than are in stock?",
    "Where is the low stock report built?",
    "How are items saved to a JSON file?",
    "which class holds the business rules for the inventory",
    "How is money formatted in reports?",
    "Where is the command line parser defined?",
    "How do I restock an existing item?",
    "What does MemoryStorage keep items in?",
    "parse_quantity",
    "How is the total value of the inventory computed?",
    "What is an Entity?",
    "How does the JSON storage flush to disk?",
    "Where are quantities validated?",
    "How is a SKU turned into a slug?",
    "what does the CLI main function do",
    "How do I add a new item?",
    "Which storage backends exist?",
    "Where is OutOfStockError raised?",
    "How are items listed?",
    "what is the unit price of an item",
    "How does Item.take work?",
    "Why can quantities never become negative?",
    "How is the project organised?",
    "Where is the report threshold set?",
    "How does the service get an item that must exist?",
    "What does describe return for an entity?",
    "How do I install the inventory package?",
    "Where is the currency chosen for money?",
    "How are command line arguments parsed into a quantity?",
    "What does the storage interface look like?",
    "How does JsonStorage load existing items?",
]
LARGE_EXTRA = [
    "How does the ORM build a SQL query from a QuerySet?",
    "Where is the CSRF token checked?",
    "How are URL patterns resolved to views?",
    "How does the template engine render a variable?",
    "What happens when a database migration conflicts?",
    "How are passwords hashed?",
]


# -- corpus and sites -------------------------------------------------------------------------------
def fetch_django(spec: str) -> Path:
    """The package folder of the sdist, as its own small git work tree (the reader lists it)."""
    name, version = spec.split("==")
    repo = WORK / f"{name}_repo"
    if (repo / name).is_dir():
        return repo
    src = fetch_project(spec)  # the shared sdist cache (bench/corpus.py)
    repo.mkdir(exist_ok=True)
    shutil.copytree(src / name, repo / name)
    shutil.copyfile(src / "README.rst", repo / "README.rst")
    # bench/.cache is gitignored by Oya's own repo: make the corpus its own work tree
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    return repo


def build(repo: Path, name: str, embedder: str, rebuild: bool) -> tuple[Path, Path, dict[str, Any]]:
    index_dir = WORK / f"{name}-{embedder}-index"
    site_dir = WORK / f"{name}-{embedder}-site"
    return build_index_and_site(
        repo, index_dir, site_dir, rebuild, embedder=embedder, cache_dir=WORK / "embcache"
    )


def build_index_and_site(
    repo: Path, index_dir: Path, site_dir: Path, rebuild: bool, *, cache_dir: Path, embedder: str = "minilm"
) -> tuple[Path, Path, dict[str, Any]]:
    """The index (built once, again with ``rebuild``) and the site, rendered every time by the code
    measured; seconds of each and the build's counts."""
    from oya.site.build import render_wiki_pages, write_wiki_site
    from pipelines.build import run_build

    timings: dict[str, Any] = {}
    if rebuild or not (index_dir / "index.duckdb").is_file():
        t0 = time.perf_counter()
        run_build(repo, index_dir, embedder=embedder, cache_dir=cache_dir)
        timings["index_s"] = round(time.perf_counter() - t0, 1)
    t0 = time.perf_counter()
    # the two steps of the wiki_pages and wiki_site assets: unchanged pages taken from the old site
    report = write_wiki_site(render_wiki_pages(index_dir, site_dir), index_dir, site_dir)
    timings["site_s"] = round(time.perf_counter() - t0, 1)
    timings["counts"] = report.get("counts", {})
    return index_dir, site_dir, timings


GROUPS = ("runtime", "model", "bundle", "pages")


def group_of(rel: str) -> str:
    # folder names may carry the build's content hash (vendor/transformers.<hash>/, bundle.<hash>/)
    if rel.startswith("models/") or (rel.startswith("vendor/transformers") and "/ort-wasm" in rel):
        return "model"
    if rel.startswith(("vendor/", "static/")):
        return "runtime"
    if rel.startswith(("bundle/", "bundle.")):
        return "bundle"
    return "pages"


def site_sizes(site: Path) -> dict[str, dict[str, int]]:
    out = {g: {"bytes": 0, "gzip": 0, "files": 0} for g in (*GROUPS, "total")}
    for path in sorted(site.rglob("*")):
        if not path.is_file():
            continue
        if path.suffix in (".br", ".gz") and path.with_suffix("").is_file():
            continue  # the build's compressed copy of a file counted here
        data = path.read_bytes()
        gz = len(gzip.compress(data, compresslevel=6, mtime=0))
        for g in (group_of(path.relative_to(site).as_posix()), "total"):
            out[g]["bytes"] += len(data)
            out[g]["gzip"] += gz
            out[g]["files"] += 1
    return out


def large_questions(site: Path, n: int, seed: int) -> list[str]:
    """First lines of the project's function docstrings (>= 4 words, unique), sampled, from the
    site's shards (what the site holds of its index)."""
    from bench.big_site_bench import Shards, docstring_questions  # it imports this module

    _, graph = Shards.of(site).tables()
    return LARGE_EXTRA + docstring_questions(graph, max(n - len(LARGE_EXTRA), 0), seed)


# -- browser ----------------------------------------------------------------------------------------
@contextmanager
def serve(root: Path) -> Iterator[str]:
    httpd = make_server(root, port=0)  # what `oya serve` runs
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


def first_file_page(site: Path) -> str:
    """The page the browser opens: the file with the most chunks."""
    from bench.big_site_bench import Shards, first_page  # it imports this module

    return first_page(Shards.of(site).tables()[0])


def _route_offline(blocked: list[str], r: Any) -> None:
    host = urlsplit(r.request.url).hostname
    if host == "127.0.0.1" or r.request.url.startswith(("data:", "blob:")):
        r.continue_()
    else:
        blocked.append(r.request.url)
        r.abort()


def _first_answer(page: Any, url: str, question: str) -> dict[str, Any]:
    """Open ``url``, open the panel, ask ``question``; seconds from opening and from Enter, and marks."""
    page.goto(url)
    load_test_hooks(page)
    t_open = time.perf_counter()
    if page.locator("#ask-panel").is_hidden():
        page.click("#ask-toggle")
    before = page.locator(".ask-entry:not(.ask-pending)").count()
    page.fill("#ask-input", question)
    t0 = time.perf_counter()
    page.press("#ask-input", "Enter")
    page.wait_for_function(
        "n => document.querySelectorAll('.ask-entry:not(.ask-pending)').length > n", arg=before
    )
    t1 = time.perf_counter()
    progress = page.evaluate("oyaAsk.progress()")
    return {
        "first_answer_s": round(t1 - t0, 2),
        "from_panel_open_s": round(t1 - t_open, 2),
        "steps_ms": {k: round(v.get("ms", 0)) for k, v in progress.items()},
        "model": progress.get("model", {}).get("state"),
        # performance marks, ms since the warm-up started (static/ask/test_hooks.js: oyaAsk.marks())
        "marks_ms": dict(page.evaluate("oyaAsk.marks()")),
    }


def measure_browser(
    p: Any, site: Path, questions: list[str], profile: Path, cold_runs: int = 3
) -> dict[str, Any]:
    blocked: list[str] = []
    route = partial(_route_offline, blocked)
    page_url = first_file_page(site)
    out: dict[str, Any] = {"page": page_url}
    with serve(site) as base:
        colds = []
        for run in range(max(cold_runs, 1)):
            # a fresh profile each time: nothing cached, a new Chromium (cold as a first visit)
            shutil.rmtree(profile, ignore_errors=True)
            ctx = p.chromium.launch_persistent_context(  # sw.js would answer past the routing
                str(profile),
                executable_path=find_chromium(),
                headless=True,
                args=CHROMIUM_ARGS,
                service_workers="block",
            )
            try:
                ctx.route("**/*", route)
                route_test_hooks(ctx)  # built sites leave the panel's test hooks out
                page = ctx.pages[0] if ctx.pages else ctx.new_page()
                page.set_default_timeout(300_000)
                colds.append(_first_answer(page, base + page_url, questions[0]))
                if run < cold_runs - 1:
                    continue
                out["warm_start"] = _first_answer(page, base + page_url, questions[0])  # HTTP cache warm
                page.evaluate("q => oyaAsk.query(q)", "warm-up question about the code")
                runs = [page.evaluate("q => oyaAsk.query(q)", q) for q in questions]
                query = [r["result"]["browser_timings_ms"]["query"] for r in runs]
                parts = {
                    key: [r["result"]["browser_timings_ms"].get(key, 0.0) for r in runs]
                    for key in ("embed", "vectors", "python")
                }
                out["queries"] = len(runs)
                out["query_ms"] = {
                    "p50": round(percentile(query, 50), 1),
                    "p95": round(percentile(query, 95), 1),
                    "max": round(max(query), 1),
                    **{f"{k}_p50": round(percentile(v, 50), 1) for k, v in parts.items()},
                    **{f"{k}_p95": round(percentile(v, 95), 1) for k, v in parts.items()},
                }
                out["levels"] = {
                    lvl: sum(1 for r in runs if r["result"]["confidence"]["level"] == lvl)
                    for lvl in ("HIGH", "MEDIUM", "LOW")
                }
                vec_runs = [r for r in runs if r["vector"]][:5]
                if vec_runs:
                    parity = True
                    py_ms = []
                    for r in vec_runs:
                        t0 = time.perf_counter()
                        core = page.evaluate("v => oyaAsk.coreRank(v, 100)", r["vector"])
                        py_ms.append((time.perf_counter() - t0) * 1000)
                        parity &= [i for i, _ in core] == [i for i, _ in r["ranked"][:100]]
                    out["js_rank_equals_core_rank"] = parity
                    out["pure_python_vector_scan_ms_p50"] = round(percentile(py_ms[1:] or py_ms, 50), 1)
            finally:
                ctx.close()
        # the run with the median first answer stands for the cold start; all runs are kept
        ordered = sorted(colds, key=lambda c: c["first_answer_s"])
        out["cold_start"] = ordered[len(ordered) // 2]
        out["cold_runs_s"] = [c["first_answer_s"] for c in colds]
    out["blocked_requests"] = blocked
    return out


# -- report -----------------------------------------------------------------------------------------
def mb(n: int) -> str:
    return f"{n / 1e6:.1f}"


def print_table(results: dict[str, Any]) -> None:
    for name, r in results["sites"].items():
        s = r["sizes"]
        c = r["build"].get("counts", {})
        print(
            f"\n== {name}: {c.get('files', '?')} files, {c.get('lines', '?')} lines, {c.get('chunks', '?')} chunks"
        )
        print(f"{'part':<10}{'MB':>10}{'MB gzip':>10}{'files':>8}")
        for g in (*GROUPS, "total"):
            print(f"{g:<10}{mb(s[g]['bytes']):>10}{mb(s[g]['gzip']):>10}{s[g]['files']:>8}")
        b = r["browser"]
        q = b["query_ms"]
        cold = b["cold_start"]
        print(
            f"cold start to first answer: {cold['first_answer_s']} s median of {b.get('cold_runs_s')} "
            f"({cold.get('from_panel_open_s')} s from opening the panel; steps ms: {cold['steps_ms']})"
        )
        if cold.get("marks_ms"):
            print(f"  cold marks (ms since warm-up): {cold['marks_ms']}")
        print(f"reload to first answer:     {b['warm_start']['first_answer_s']} s")
        print(
            f"query latency over {b['queries']} questions: p50 {q['p50']} ms, p95 {q['p95']} ms, max {q['max']} ms "
            f"(embed p50 {q['embed_p50']}, JS vectors p50 {q['vectors_p50']}, Pyodide core p50 {q['python_p50']})"
        )
        if "js_rank_equals_core_rank" in b:
            print(
                f"JS vector ranking == core VectorIndex ranking: {b['js_rank_equals_core_rank']}; "
                f"pure-Python scan in Pyodide p50 {b['pure_python_vector_scan_ms_p50']} ms"
            )
        print(
            f"confidence levels: {b['levels']}; blocked non-loopback requests: {len(b['blocked_requests'])}"
        )
    print(f"\nload average (1, 5, 15 min) before/after: {results.get('loadavg')}")
    print(f"targets: {json.dumps(results['targets'])}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--embedder", choices=["minilm", "hashing"], default="minilm")
    ap.add_argument(
        "--project", default="django==5.2.19", help="sdist whose package folder is the large repo"
    )
    ap.add_argument("--queries", type=int, default=40)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rebuild", action="store_true", help="re-index even when an index exists")
    ap.add_argument("--skip-large", action="store_true")
    ap.add_argument("--cold-runs", type=int, default=3, help="fresh-profile cold starts per site (median)")
    args = ap.parse_args()
    if find_chromium() is None:
        print(f"site_bench: {missing_chromium_message()}", file=sys.stderr)
        return 1

    from playwright.sync_api import sync_playwright

    WORK.mkdir(parents=True, exist_ok=True)
    results: dict[str, Any] = {"embedder": args.embedder, "sites": {}, "targets": {}}
    load_before = load_avg()
    repos = [("sample", ROOT / "data" / "sample_repo")]
    if not args.skip_large:
        repos.append((args.project.split("==")[0], fetch_django(args.project)))
    with sync_playwright() as p:
        for name, repo in repos:
            print(f"building {name} …", flush=True)
            index_dir, site_dir, timings = build(repo, name, args.embedder, args.rebuild)
            questions = (
                SAMPLE_QUESTIONS[: max(args.queries, 30)]
                if name == "sample"
                else large_questions(site_dir, max(args.queries, 30), args.seed)
            )
            print(f"measuring {name} in Chromium ({len(questions)} questions) …", flush=True)
            browser = measure_browser(p, site_dir, questions, WORK / f"profile-{name}", args.cold_runs)
            results["sites"][name] = {
                "index": str(index_dir.relative_to(ROOT)),
                "site": str(site_dir.relative_to(ROOT)),
                "build": timings,
                "sizes": site_sizes(site_dir),
                "browser": browser,
            }
    results["loadavg"] = {"before": load_before, "after": load_avg()}
    # keep the other sites of an earlier run with the same embedder (e.g. after --skip-large)
    if RESULT.is_file():
        try:
            previous = json.loads(RESULT.read_text(encoding="utf-8"))
        except ValueError:
            previous = {}
        if previous.get("embedder") == args.embedder:
            for name, r in (previous.get("sites") or {}).items():
                results["sites"].setdefault(name, {**r, "from_earlier_run": True})
    large = [r for n, r in results["sites"].items() if n != "sample"]
    if large:
        r = large[0]
        lines = max(int(r["build"]["counts"].get("lines", 0)), 1)
        results["targets"] = {
            "warm_query_p95_ms": {
                "target": TARGETS["warm_query_p95_ms_at_10k"],
                "measured": r["browser"]["query_ms"]["p95"],
                "chunks": r["build"]["counts"].get("chunks"),
            },
            "bundle_gzip_mb_per_100k_lines": {
                "target": TARGETS["bundle_gzip_mb_per_100k_lines"],
                "measured": round(r["sizes"]["bundle"]["gzip"] / 1e6 * 100_000 / lines, 2),
            },
        }
    write_json(RESULT, results, sort_keys=True)
    print_table(results)
    print(f"\nresults: {RESULT.relative_to(ROOT)}")
    blocked = [u for r in results["sites"].values() for u in r["browser"]["blocked_requests"]]
    return 1 if blocked else 0


if __name__ == "__main__":
    raise SystemExit(main())

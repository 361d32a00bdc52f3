"""The wiki of a big repository as its readers meet it: networkx (~216k lines) and sympy (~890k).

Theory of operation:

* Corpora (``--corpus``): networkx 3.6.1's sdist (``bench/corpus.py``: ``bench/.cache/src/``),
  and sympy from the local snapshot ``$OYA_MIRRORS/sympy+sympy/repo`` (``git archive HEAD``, no
  network; the commit is recorded). Each is unpacked into ``bench/.cache/big_site[_sympy]/repo``
  and made a git work tree (the reader lists git's files), as ``full_build_bench.py`` does.
* Build (phase ``build``): the index with the real int8 MiniLM (``pipelines.build.run_build``),
  once, again with ``--rebuild``; then the site, rendered on every build phase by the checked-out
  code. Wall seconds and CPU seconds (this process and its children) of both are recorded: the
  acceptance of issue 26 asks that the big site's build stay within its time. The cache folder
  is ``bench/.cache/big_site_cache``: its ``embeddings/`` is ``$OYA_CACHE_DIR/embeddings`` when
  ``OYA_CACHE_DIR`` is set (the eval runs' cache: chunks they embedded are not embedded again, so
  the index time is a cached build's, the result says which cache), its npm runtime, exported
  query model and compressed runtime are the user's (``~/.cache/oya``: ``npm ci`` needs the
  network). Links, not copies.
* Sizes (phase ``cpython``, no browser): every file of the site, raw and gzip -6, per group
  (runtime, model, ``shards`` — the site's whole index, what the Ask panel's worker reads —, pages), per 1k lines;
  the largest page and the pages over 300 kB. What a reader downloads is measured in the browser,
  not summed from file lists.
* Same ranking (phase ``cpython``): for every question the CLI's ``Searcher`` (float32 vectors,
  DuckDB BM25) and the sharded bundle's core (``oya.core.shards.open_shards`` over the site's
  shard folder, ``folder_fetch``) retrieve with the same question vector; the bench counts
  questions whose hit lists and file lists are identical, the top-10 overlap, whether each
  question's source function (the docstring it came from) is in the top 10 of each, and the
  shard bytes the core read for the first question and for each later one. Then each request
  through ``ask_json`` under Pyodide in Node on the same shards (``pyodide_core_time.mjs``).
* Browser (phase ``browser``; ``bench/browser_harness.py``): headless Chromium under 20 Mbit/s /
  40 ms RTT, served by ``oya serve``'s server at ``/`` and by the standard library's plain static
  server (no compression, like ``python -m http.server``) with the site under ``/wiki/``; per
  server a fresh profile (cold, median of ``--cold-runs``) and the same profile again (warm).
  Bytes are counted by the server per request, page and workers alike: "first answer" = every
  response finished before the first answer showed (the ``.ask-partial`` one: the core without
  the semantic channel), with the downloads still in flight then listed (and an upper bound that
  counts them whole); "full answer" = every response begun before the semantic answer showed.
  Then ``--queries`` new questions on the warm page (``oya serve``; ``--plain-queries`` on the
  plain server): the panel's wall ms p50/p95 and, per question, the bytes (and shard bytes) the
  page fetched for it.
* Bars (issue 26): first answer <= 6 MB and <= 6 s, full <= 8 MB and <= 8 s on both servers; warm
  panel p95 <= 300 ms; no page over 300 kB; a repository 4x bigger costs at most 1.3x the
  first-answer bytes (``scaling``, when the other corpus's result is there).
* Phases write into one result file per corpus (a later phase keeps the earlier phases' parts), so
  the slow parts run as separate jobs: build in a normal CPU slot, the browser alone on the machine.
* Percentiles are nearest-rank (``bench.common.percentile``).
* Questions: a few hand-written ones, then the first lines of the project's own function
  docstrings (>= 4 words, unique), sampled with a fixed seed, from the sharded bundle's graph.

Run, from the project root (one command per corpus; ``--phase all`` runs every phase in one job)::

    OYA_CACHE_DIR=/work/evalcache/embed-cache OYA_MIRRORS=/work/.mirror PYTHONPATH=$PWD \\
      /work/notes/slot.sh .venv/bin/python -m bench.big_site_bench --corpus sympy --phase build,cpython
    PYTHONPATH=$PWD /work/notes/slot.sh --alone .venv/bin/python -m bench.big_site_bench --corpus sympy --phase browser

(``--corpus networkx`` the same). The index is reused once built (``--rebuild`` to time it again;
its record is ``bench/.cache/big_site[_sympy]/index_build.json``); the build phase renders the
site again, so after a change to the site's code run ``--phase build`` before ``browser``. Writes ``bench/results/big_site_bench.json`` (networkx) or
``bench/results/big_site_bench_sympy.json`` and prints a table with the bars.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.browser_harness import warm_line
from bench.common import BENCH_DIR, CACHE_DIR, RESULTS, ROOT, load_avg, machine, percentile, write_json
from bench.corpus import fetch_project
from bench.site_bench import group_of
from oya.core.results import page_url
from oya.core.shard_store import Fetch, ShardStore, folder_fetch
from oya.core.shards import open_shards
from oya.site.assets import site_file

SHARED_CACHE = CACHE_DIR / "big_site_cache"
PAGE_BUDGET = 300_000
GROUPS = ("runtime", "model", "shards", "pages")
BARS = {
    "first_answer_mb": 6.0,
    "first_answer_s": 6.0,
    "full_answer_mb": 8.0,
    "full_answer_s": 8.0,
    "warm_p95_ms": 300.0,
    "largest_page_kb": 300.0,
    "first_answer_growth_4x": 1.3,
}
# the browser configurations: (key, server, prefix)
SERVERS = (("oya", "oya", "/"), ("plain_subpath", "plain", "/wiki/"))


# -- corpora ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Corpus:
    name: str
    work: Path
    result: Path
    questions: tuple[str, ...]  # asked before the docstring-drawn ones; the first is the first answer
    unpack: Callable[[Path], str]  # fills the folder; returns what was unpacked (a spec, a commit)


def _sdist(spec: str) -> Callable[[Path], str]:
    def unpack(dest: Path) -> str:
        shutil.copytree(fetch_project(spec), dest)
        return spec

    return unpack


def _mirror(repo: str) -> Callable[[Path], str]:
    """``git archive HEAD`` of the snapshot ``$OYA_MIRRORS/<owner>+<name>/repo`` (bare or not)."""

    def unpack(dest: Path) -> str:
        mirrors = os.environ.get("OYA_MIRRORS", "")
        if not mirrors:
            raise SystemExit("big_site_bench: set OYA_MIRRORS to the folder holding <owner>+<name>/repo")
        src = Path(mirrors) / repo.replace("/", "+") / "repo"
        git = ["git", f"--git-dir={src / '.git' if (src / '.git').exists() else src}"]
        commit = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True)
        dest.mkdir(parents=True)
        archive = subprocess.Popen([*git, "archive", "--format=tar", "HEAD"], stdout=subprocess.PIPE)
        subprocess.run(["tar", "-x", "-C", str(dest)], stdin=archive.stdout, check=True)
        if archive.wait() != 0:
            raise RuntimeError(f"git archive of {src} failed")
        return f"{repo}@{commit.stdout.strip()}"

    return unpack


CORPORA = {
    "networkx": Corpus(
        "networkx",
        CACHE_DIR / "big_site",
        RESULTS / "big_site_bench.json",
        (
            "How is the shortest path between two nodes computed?",
            "Where is PageRank implemented?",
            "How does a graph read an edge list from a file?",
            "How are connected components found?",
        ),
        _sdist("networkx==3.6.1"),
    ),
    "sympy": Corpus(
        "sympy",
        CACHE_DIR / "big_site_sympy",
        RESULTS / "big_site_bench_sympy.json",
        (
            "How is the derivative of an expression computed?",
            "Where are expressions simplified?",
            "How does solve find the roots of a polynomial?",
            "How is the inverse of a matrix computed?",
        ),
        _mirror("sympy/sympy"),
    ),
}


def corpus_tree(c: Corpus) -> tuple[Path, str]:
    """The corpus unpacked and made a git work tree (once); (its folder, what it is)."""
    repo, stamp = c.work / "repo", c.work / "source.txt"
    if not (repo / ".git").is_dir() or not stamp.is_file():
        shutil.rmtree(repo, ignore_errors=True)
        repo.parent.mkdir(parents=True, exist_ok=True)
        stamp.write_text(c.unpack(repo), encoding="utf-8")
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
    return repo, stamp.read_text(encoding="utf-8")


# -- cache, build -------------------------------------------------------------------------------
def shared_cache() -> tuple[Path, str]:
    """The build's cache folder (see the module's docstring) and where its embeddings live."""
    SHARED_CACHE.mkdir(parents=True, exist_ok=True)
    user = Path.home() / ".cache" / "oya"
    env = os.environ.get("OYA_CACHE_DIR", "")
    links = {"npm": user / "npm", "models": user / "models", "compressed": user / "compressed"}
    if env and Path(env).resolve() != SHARED_CACHE.resolve():
        links["embeddings"] = Path(env) / "embeddings"
    for name, target in links.items():
        link = SHARED_CACHE / name
        if target.is_dir() and not link.exists():
            link.symlink_to(target.resolve(), target_is_directory=True)
    emb = SHARED_CACHE / "embeddings"
    return SHARED_CACHE, str(emb.resolve()) if emb.exists() else str(emb)


def _cpu_s() -> float:
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def build(c: Corpus, repo: Path, rebuild: bool) -> dict[str, Any]:
    """The index (built once, again with ``rebuild``) and the site (rendered every time): wall and
    CPU seconds of each, and the build's counts."""
    from oya.site.build import render_wiki_pages, write_wiki_site
    from pipelines.build import run_build

    cache, embeddings = shared_cache()
    os.environ["OYA_CACHE_DIR"] = str(cache)  # the site's runtime and query model (write_wiki_site)
    index_dir, record = c.work / "out", c.work / "index_build.json"
    if rebuild or not (index_dir / "index.duckdb").is_file():
        load, t0, cpu0 = load_avg(), time.perf_counter(), _cpu_s()
        summary = run_build(repo, index_dir, embedder="minilm", cache_dir=cache)
        index = {
            "wall_s": round(time.perf_counter() - t0, 1),
            "cpu_s": round(_cpu_s() - cpu0, 1),
            "embeddings_cache": embeddings,
            "loadavg_before": load,
            "loadavg_after": load_avg(),
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "assets": [[a, what, round(s, 1)] for a, what, s in summary.rows()],
        }
        write_json(record, index, indent=1)
    index = json.loads(record.read_text(encoding="utf-8")) if record.is_file() else {}
    load, t0, cpu0 = load_avg(), time.perf_counter(), _cpu_s()
    report = write_wiki_site(render_wiki_pages(index_dir, c.work / "site"), index_dir, c.work / "site")
    site = {"wall_s": round(time.perf_counter() - t0, 1), "cpu_s": round(_cpu_s() - cpu0, 1), "loadavg": load}
    return {"index": index, "site": site, "counts": report.get("counts", {})}


# -- the site's shards --------------------------------------------------------------------------
@dataclass(frozen=True)
class Shards:
    folder: Path
    manifest: str

    @classmethod
    def of(cls, site: Path) -> Shards:
        """The shard folder and manifest name the site's ``manifest.json`` lists (bundle -> shards)."""
        listed = json.loads((site / "manifest.json").read_text(encoding="utf-8"))["bundle"]["shards"]
        return cls(site_file(site, "bundle/") / listed["path"], listed["manifest"])

    def tables(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """The shard manifest, decoded, and the graph's nodes as columns (``id``, ``kind``,
        ``docstring``: the details every ``nodes-*`` shard holds, through the core's own reader)."""
        doc = ShardStore(folder_fetch(self.folder)).table(self.manifest)
        graph = open_shards(folder_fetch(self.folder), self.manifest).graph
        graph.load_details(list(graph.nodes))
        nodes = list(graph.nodes.values())
        columns = {
            "id": [n.id for n in nodes],
            "kind": [n.kind for n in nodes],
            "docstring": [n.docstring for n in nodes],
        }
        return doc, {"nodes": columns}


class CountingFetch:
    """``folder_fetch`` that adds up the bytes (as stored, gzipped) of every shard it reads, each
    once, as the page's store fetches it once (a chunk shard is read for its text and for the
    details of its nodes)."""

    def __init__(self, folder: Path) -> None:
        self._fetch: Fetch = folder_fetch(folder)
        self._seen: set[str] = set()
        self.bytes = 0

    def __call__(self, name: str) -> bytes:
        data = self._fetch(name)
        if name not in self._seen:
            self._seen.add(name)
            self.bytes += len(data)
        return data


def docstring_questions(graph: dict[str, Any], n: int, seed: int) -> list[str]:
    """First lines of the project's function docstrings (>= 4 words, unique), sampled."""
    nodes = graph["nodes"]
    seen: dict[str, int] = {}
    for kind, docstring in zip(nodes["kind"], nodes["docstring"], strict=True):
        if kind in ("function", "method") and docstring:
            first = docstring.strip().splitlines()[0].strip()
            if len(first.split()) >= 4 and len(first) >= 20:
                seen[first] = seen.get(first, 0) + 1
    unique = sorted(f for f, k in seen.items() if k == 1)
    random.Random(seed).shuffle(unique)
    return unique[:n]


def question_targets(graph: dict[str, Any]) -> dict[str, str]:
    """Docstring first line -> the node it came from (for questions drawn from docstrings)."""
    nodes = graph["nodes"]
    out: dict[str, str] = {}
    for nid, docstring in zip(nodes["id"], nodes["docstring"], strict=True):
        if docstring:
            out.setdefault(docstring.strip().splitlines()[0].strip(), nid)
    return out


def first_page(doc: dict[str, Any]) -> str:
    """The page the browser opens: the file with the most chunks (its page or its first part)."""
    counts: dict[int, int] = {}
    for p in doc["chunks"]["path"]:
        counts[p] = counts.get(p, 0) + 1
    return page_url(doc["paths"][max(counts, key=lambda p: (counts[p], -p))])  # the core's formula


# -- sizes --------------------------------------------------------------------------------------
def _group(rel: str, shards_rel: str) -> str:
    if rel.startswith(shards_rel):
        return "shards"
    g = group_of(rel)
    return "shards" if g == "bundle" else g  # the bundle folder holds only the shards


def sizes(site: Path, lines: int) -> dict[str, Any]:
    shards_rel = Shards.of(site).folder.relative_to(site).as_posix() + "/"
    groups = {g: {"bytes": 0, "gzip": 0, "files": 0} for g in (*GROUPS, "total")}
    pages: list[tuple[int, str]] = []
    for path in sorted(site.rglob("*")):
        if not path.is_file():
            continue
        rel = path.relative_to(site).as_posix()
        if path.suffix in (".br", ".gz") and path.with_suffix("").is_file():
            continue  # the build's compressed copy of a file counted here (oya.site.assets)
        data = path.read_bytes()
        gz = len(data) if rel.endswith(".gz") else len(gzip.compress(data, compresslevel=6, mtime=0))
        for g in (_group(rel, shards_rel), "total"):
            groups[g]["bytes"] += len(data)
            groups[g]["gzip"] += gz
            groups[g]["files"] += 1
        if rel.endswith(".html"):
            pages.append((len(data), rel))
    pages.sort(reverse=True)
    per_k = 1000 / max(lines, 1)
    listed = json.loads((site / "manifest.json").read_text(encoding="utf-8"))["bundle"]["shards"]
    return {
        "groups": groups,
        "shards": {k: v for k, v in listed.items() if k not in ("path", "graph", "vectors", "manifest")},
        "total_mb": round(groups["total"]["bytes"] / 1e6, 1),
        "total_mb_per_1k_lines": round(groups["total"]["bytes"] / 1e6 * per_k, 3),
        "without_runtime_mb_per_1k_lines": round(
            (groups["shards"]["bytes"] + groups["pages"]["bytes"]) / 1e6 * per_k, 3
        ),
        "largest_pages": [[rel, n] for n, rel in pages[:5]],
        "pages_over_budget": [rel for n, rel in pages if n > PAGE_BUDGET],
    }


# -- the CLI's ranking and the sharded bundle's ------------------------------------------------
def same_ranking(
    index_dir: Path,
    shards: Shards,
    questions: list[str],
    targets: dict[str, str],
    requests: list[dict[str, Any]],
) -> dict[str, Any]:
    """The CLI's retrieval against the sharded bundle's core, question by question, with one question
    vector. Appends to ``requests`` what the browser's worker would send the core for each question."""
    from oya.query.searcher import Searcher

    fetch = CountingFetch(shards.folder)
    bundle = open_shards(fetch, shards.manifest)
    opened = fetch.bytes
    same_hits = same_files = 0
    overlaps: list[float] = []
    found = {"cli": 0, "bundle": 0}
    core_cpu: list[float] = []
    read: list[int] = []  # shard bytes each question read (the vectors file is read once, by the first)
    with Searcher.open(index_dir) as searcher:
        for q in questions:
            cli = searcher.search(q)
            vector, _ = searcher.embed_query(q)
            before = fetch.bytes
            ranked = bundle.rank_vectors(vector, bundle.fetch_depth()) if vector else None
            t0 = time.process_time()  # CPU, not wall: the core's own work, whatever the machine's load
            web = bundle.retrieve(q, vector, ranked=ranked)
            core_cpu.append((time.process_time() - t0) * 1000)
            read.append(fetch.bytes - before)
            requests.append({"question": q, "vector": vector, "ranked": ranked})
            cli_ids = [h.chunk.id for h in cli.hits]
            web_ids = [h.chunk.id for h in web.hits]
            same_hits += cli_ids == web_ids
            same_files += [f.path for f in cli.files] == [f.path for f in web.files]
            overlaps.append(len(set(cli_ids[:10]) & set(web_ids[:10])) / max(len(cli_ids[:10]), 1))
            node = targets.get(q)
            if node:
                found["cli"] += node in {h.chunk.node_id for h in cli.hits[:10]}
                found["bundle"] += node in {h.chunk.node_id for h in web.hits[:10]}
    n_targets = sum(1 for q in questions if targets.get(q))
    later = read[1:] or [0]
    return {
        "questions": len(questions),
        "identical_hits": same_hits,
        "identical_files": same_files,
        "top10_overlap_mean": round(statistics.mean(overlaps), 4) if overlaps else None,
        "source_in_top10": {k: f"{v}/{n_targets}" for k, v in found.items()},
        # the core answering from a ranked vector list (the browser's path), CPU ms in CPython
        "core_cpu_ms": {"p50": round(percentile(core_cpu, 50), 1), "p95": round(percentile(core_cpu, 95), 1)},
        # gzipped shard bytes: opening (manifest + graph), the first question, each later one
        "shard_bytes": {
            "open": opened,
            "first_question": read[0] if read else 0,
            "later_question_p50": int(percentile(later, 50)),
            "later_question_max": max(later),
            "all_read": fetch.bytes,
        },
    }


def pyodide_core(shards: Shards, requests: list[dict[str, Any]]) -> dict[str, Any]:
    """Each request through ``ask_json`` under Pyodide in Node (``pyodide_core_time.mjs``) on the
    sharded bundle: CPU ms. The first request pays for its shards' decoding (and the vectors'), as
    the browser's first answer does; the rest are the warm questions."""
    from oya.site.vendor import ensure_vendor

    node = shutil.which("node")
    if node is None:
        return {"skipped": "no node on PATH"}
    modules = ensure_vendor(shared_cache()[0])
    path = CACHE_DIR / "big_site_pyodide_requests.json"
    path.write_text(json.dumps(requests), encoding="utf-8")
    cmd = [node, str(BENCH_DIR / "pyodide_core_time.mjs"), "--pyodide", str(modules / "pyodide")]
    cmd += ["--repo", str(ROOT), "--shards", str(shards.folder), "--manifest", shards.manifest]
    cmd += ["--requests", str(path)]
    out = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
    cpu, wall = out["cpu_ms"][1:], out["wall_ms"][1:]
    return {
        "load_ms": round(out["load_ms"]),
        "first_cpu_ms": round(out["cpu_ms"][0], 1),
        "warm_cpu_ms": {"p50": round(percentile(cpu, 50), 1), "p95": round(percentile(cpu, 95), 1)},
        "warm_wall_ms": {"p50": round(percentile(wall, 50), 1), "p95": round(percentile(wall, 95), 1)},
        "questions": len(cpu),
    }


# -- browser ------------------------------------------------------------------------------------
def browser(
    site: Path, page: str, questions: list[str], plain_queries: int, cold_runs: int
) -> dict[str, Any]:
    """Every server configuration of ``SERVERS``: cold and warm first answers, then warm questions
    (all of them on ``oya serve``, ``plain_queries`` on the plain server)."""
    from bench.browser_harness import Network, measure

    out: dict[str, Any] = {}
    for key, server, prefix in SERVERS:
        asked = questions if server == "oya" else questions[: plain_queries + 1]
        print(f"measuring in Chromium: {server} server under {prefix} ({len(asked)} questions) …", flush=True)
        out[key] = measure(
            site, asked, page=page, server=server, prefix=prefix, network=Network(), cold_runs=cold_runs
        )
    return out


def wait_for_load(below: float, limit_s: float = 600) -> None:
    """Wait until the 1-minute load average is below ``below`` (timings need the machine), at most
    ``limit_s``; the result records the load either way."""
    t0 = time.monotonic()
    while load_avg()[0] >= below and time.monotonic() - t0 < limit_s:
        print(f"load {load_avg()[0]} >= {below}: waiting …", flush=True)
        time.sleep(20)


# -- bars ---------------------------------------------------------------------------------------
def bars(r: dict[str, Any], other: dict[str, Any] | None) -> list[list[Any]]:
    """[bar, value, limit, met] for each of issue 26's bars this result measures."""
    rows: list[list[Any]] = []
    for key, b in r.get("browser", {}).items():
        cold = b["cold"]
        rows += [
            [f"{key}: first answer MB, cold", round(cold["bytes"] / 1e6, 2), BARS["first_answer_mb"]],
            [f"{key}: first answer s, cold", cold["seconds"], BARS["first_answer_s"]],
            [
                f"{key}: full answer MB, cold",
                round(cold["bytes_to_full_answer"] / 1e6, 2),
                BARS["full_answer_mb"],
            ],
            [f"{key}: full answer s, cold", cold["full_answer_seconds"], BARS["full_answer_s"]],
        ]
    wq = r.get("browser", {}).get("oya", {}).get("warm_questions")
    if wq:
        rows.append(["oya: warm question panel p95 ms", wq["panel_ms"]["p95"], BARS["warm_p95_ms"]])
    if "sizes" in r:
        rows.append(
            ["largest page kB", round(r["sizes"]["largest_pages"][0][1] / 1e3), BARS["largest_page_kb"]]
        )
    growth = scaling(r, other)
    if growth:
        rows.append(
            [
                "first answer bytes, 4x bigger repo (normalised)",
                growth["per_4x"],
                BARS["first_answer_growth_4x"],
            ]
        )
    return [[name, value, limit, value <= limit] for name, value, limit in rows]


def scaling(r: dict[str, Any], other: dict[str, Any] | None) -> dict[str, Any] | None:
    """The cold first answer's bytes of the bigger corpus over the smaller's (``oya serve``), and
    that growth for a 4x bigger repository (ratio ** log4(lines ratio))."""
    import math

    pair = [
        x
        for x in (r, other)
        if x and "oya" in x.get("browser", {}) and x.get("build", {}).get("counts", {}).get("lines")
    ]
    if len(pair) != 2:
        return None
    small, big = sorted(pair, key=lambda x: x["build"]["counts"]["lines"])
    lines = big["build"]["counts"]["lines"] / small["build"]["counts"]["lines"]
    ratio = big["browser"]["oya"]["cold"]["bytes"] / small["browser"]["oya"]["cold"]["bytes"]
    return {
        "corpora": [small["corpus"], big["corpus"]],
        "lines_ratio": round(lines, 2),
        "first_answer_bytes_ratio": round(ratio, 3),
        "per_4x": round(ratio ** (math.log(4) / math.log(lines)), 3) if lines > 1 else None,
    }


# -- report -------------------------------------------------------------------------------------
def print_table(r: dict[str, Any], other: dict[str, Any] | None) -> None:
    c = r["build"]["counts"]
    print(f"\n== {r['source']}: {c.get('files')} files, {c.get('lines'):,} lines, {c.get('chunks'):,} chunks")
    ix, st = r["build"].get("index", {}), r["build"]["site"]
    if ix:
        print(
            f"index build {ix['wall_s']} s wall, {ix['cpu_s']} s CPU (embeddings cache {ix['embeddings_cache']})"
        )
    print(f"site render {st['wall_s']} s wall, {st['cpu_s']} s CPU")
    s = r.get("sizes")
    if s:
        print(f"{'part':<14}{'MB':>9}{'MB gzip':>9}{'files':>8}")
        for g in (*GROUPS, "total"):
            v = s["groups"][g]
            print(f"{g:<14}{v['bytes'] / 1e6:>9.2f}{v['gzip'] / 1e6:>9.2f}{v['files']:>8}")
        print(f"shards: {s['shards']}")
        big = s["largest_pages"][0]
        print(
            f"largest page {big[0]} {big[1] / 1e3:.0f} kB; pages over 300 kB: {len(s['pages_over_budget'])}"
        )
    rk = r.get("same_ranking")
    if rk:
        print(
            f"CLI vs sharded bundle, {rk['questions']} questions: identical hits {rk['identical_hits']}, identical "
            f"files {rk['identical_files']}, top-10 overlap {rk['top10_overlap_mean']}, source in top 10 "
            f"{rk['source_in_top10']}; core CPU ms (CPython) {rk['core_cpu_ms']}; shard bytes {rk['shard_bytes']}"
        )
    py = r.get("pyodide_core", {})
    if "warm_cpu_ms" in py:
        print(
            f"the core under Pyodide (Node), {py['questions']} warm questions: CPU ms {py['warm_cpu_ms']}, "
            f"wall ms {py['warm_wall_ms']}; first question {py['first_cpu_ms']} ms; open {py['load_ms']} ms"
        )
    for key, b in r.get("browser", {}).items():
        print(f"-- {key}: {b['server']} server under {b['prefix']}")
        print(
            f"{'visit':<6}{'MB 1st':>8}{'(+flying)':>10}{'s 1st':>7}{'MB full':>9}{'s full':>8}{'MB visit':>10}"
        )
        for visit in ("cold", "warm"):
            v = b[visit]
            print(
                f"{visit:<6}{v['bytes'] / 1e6:>8.2f}{v['bytes_with_in_flight'] / 1e6:>10.2f}{v['seconds']:>7.2f}"
                f"{v['bytes_to_full_answer'] / 1e6:>9.2f}{v['full_answer_seconds']:>8.2f}{v['bytes_in_visit'] / 1e6:>10.2f}"
            )
        print(f"cold runs s: {b['cold']['runs_s']}; errors {b['cold']['errors']} {b['warm']['errors']}")
        for part in ("first_answer_by_kind", "full_answer_by_kind"):
            if part in b["cold"]:
                kinds = ", ".join(f"{k} {n / 1e6:.2f}" for k, n in b["cold"][part].items())
                print(f"cold, MB to the {part.split('_by')[0].replace('_', ' ')}: {kinds}")
        w = b.get("warm_questions")
        if w:
            print(warm_line(w))
            print(f"per new question, bytes fetched: {w['fetched']}")
        print(f"memory {b.get('memory')}; load {b['loadavg_before']} -> {b['loadavg_after']}")
    for name, value, limit, ok in r.get("bars", []):
        print(f"{'met    ' if ok else 'NOT MET'} {name}: {value} (bar {limit})")
    if r.get("scaling"):
        print(f"scaling: {r['scaling']}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", choices=sorted(CORPORA), default="networkx")
    ap.add_argument("--phase", default="all", help="comma-separated: build, cpython, browser (or all)")
    ap.add_argument("--queries", type=int, default=50, help="warm questions after the first (oya serve)")
    ap.add_argument("--plain-queries", type=int, default=10, help="warm questions on the plain server")
    ap.add_argument("--cold-runs", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rebuild", action="store_true", help="re-index even when an index exists")
    ap.add_argument(
        "--wait-load", type=float, default=2.0, help="before the browser, wait (<= 10 min) for a lower load"
    )
    ap.add_argument("--out", type=Path, help="where the JSON goes (default: the corpus's result file)")
    args = ap.parse_args()
    phases = {"build", "cpython", "browser"} if args.phase == "all" else set(args.phase.split(","))
    if not phases or phases - {"build", "cpython", "browser"}:
        raise SystemExit(f"big_site_bench: --phase takes build, cpython, browser or all; got {args.phase!r}")
    c = CORPORA[args.corpus]
    out = args.out or c.result
    # a later phase keeps the earlier phases' parts of the same corpus's result
    old = json.loads(out.read_text(encoding="utf-8")) if out.is_file() else {}
    result: dict[str, Any] = old if old.get("corpus") == c.name else {}
    load = load_avg()
    repo, source = corpus_tree(c)
    site = c.work / "site"
    if "build" in phases or not (site / "manifest.json").is_file() or "build" not in result:
        print(f"building {source} …", flush=True)
        result["build"] = build(c, repo, args.rebuild)
    shards = Shards.of(site)
    doc, graph = shards.tables()
    drawn = docstring_questions(graph, args.queries + 1, args.seed)
    questions = (list(c.questions) + drawn)[: args.queries + 1]
    result.update(
        corpus=c.name,
        source=source,
        machine=machine(),
        date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    )
    if "cpython" in phases:
        result["sizes"] = sizes(site, int(result["build"]["counts"].get("lines", 0)))
        print("comparing the CLI's rankings with the sharded bundle's …", flush=True)
        requests: list[dict[str, Any]] = []
        result["same_ranking"] = same_ranking(
            c.work / "out", shards, questions, question_targets(graph), requests
        )
        print("the core under Pyodide in Node …", flush=True)
        result["pyodide_core"] = pyodide_core(shards, requests)
    if "browser" in phases:
        wait_for_load(args.wait_load)
        result["browser"] = browser(site, first_page(doc), questions, args.plain_queries, args.cold_runs)
    result["loadavg"] = {"before": load, "after": load_avg()}
    others = [o.result for o in CORPORA.values() if o is not c and o.result.is_file()]
    other = json.loads(others[0].read_text(encoding="utf-8")) if others else None
    result["bars"] = bars(result, other)
    result["scaling"] = scaling(result, other)
    write_json(out, result, indent=1)
    print_table(result, other)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

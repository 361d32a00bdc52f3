"""What the sharded bundle costs a reader: bytes to open it, bytes and round trips per question.

Theory of operation:

* Input: built indexes (``--index DIR``, any number; e.g. ``bench/.cache/big_site/index`` after
  ``bench/big_site_bench.py``, or an eval cache's). Each is exported as the site exports it
  (``bundle_document`` -> ``export_shards``, default shard sizes) into ``bench/.cache/shard_bench``.
* Opening: the manifest and the graph shard (what ``open_shards`` reads), gzipped bytes, with the
  manifest's largest parts.
* A question: its bytes beyond opening (term buckets, chunk shards, node details) and its rounds
  as the browser's worker meets them (a fetcher that holds only what it fetched and asks for the
  rest: ``ShardsMissing``, fetched all at once, asked again), median and max over questions made
  from the index itself (symbol names, file stems, docstring words; as tests/site/test_shards.py),
  plus the core's own time per question in CPython with every shard held (a lower bound of
  the browser's, which runs it again after each round), and a page's one-off costs: opening the
  shards and the first question (the name index it builds), least of 3, in CPython.
* Every sharded answer is checked equal to the whole bundle's (``bench.variants.whole_bundle.decode_bundle``), as the tests do.

Run: ``PYTHONPATH=$PWD .venv/bin/python -m bench.shard_bench --index DIR [--index DIR ...]
[--questions 60]``; writes ``bench/results/shard_bench.json`` (rendered in docs/performance.md by
``bench/doc_tables.py``).
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import statistics
import time
from pathlib import Path
from typing import Any

from bench.common import CACHE_DIR, RESULTS, machine, write_json
from bench.variants.whole_bundle import decode_bundle
from oya.core.bundle import Bundle
from oya.core.shard_store import ShardsMissing, folder_fetch
from oya.core.shards import open_shards
from oya.site.bundle import bundle_document, gzip_deterministic
from oya.site.shards import export_shards
from oya.store.index import Index

RESULT = RESULTS / "shard_bench.json"
WORK = CACHE_DIR / "shard_bench"


class BrowserLikeFetch:
    """Holds what it fetched; raises ``ShardsMissing`` for the rest (the worker's view)."""

    def __init__(self, folder: Path) -> None:
        self._read = folder_fetch(folder)
        self.held: dict[str, bytes] = {}
        self.rounds = 0

    def __call__(self, name: str) -> bytes:
        if name not in self.held:
            raise ShardsMissing([name])
        return self.held[name]

    def until_done(self, call: Any) -> Any:
        while True:
            try:
                return call()
            except ShardsMissing as exc:
                self.rounds += 1
                self.held.update((n, self._read(n)) for n in exc.names)

    @property
    def bytes(self) -> int:
        return sum(len(b) for b in self.held.values())


def questions(bundle: Bundle, n: int) -> list[str]:
    """About ``n`` questions from the index: symbol names, file stems, docstring words."""
    nodes = sorted(bundle.graph.nodes.values(), key=lambda x: x.id)
    names = sorted({x.name for x in nodes if len(x.name) > 3})
    files = sorted(bundle.pages)
    words = sorted({w for x in nodes for w in re.findall(r"[a-z]{6,}", x.docstring.lower())})
    third = max(1, n // 3)
    out = [f"where is {name} defined and who calls it" for name in names[:: max(1, len(names) // third)]]
    out += [f"what does {Path(p).stem} do" for p in files[:: max(1, len(files) // third)]]
    out += [" ".join(words[i : i + 3]) for i in range(0, len(words), max(1, len(words) // third))]
    return out[:n]


def _parts(manifest: dict[str, Any]) -> dict[str, int]:
    """Gzipped bytes of the manifest's parts (per-chunk columns apart)."""
    parts = {f"chunks.{k}": v for k, v in manifest["chunks"].items()}
    parts.update({k: v for k, v in manifest.items() if k != "chunks"})
    return {
        k: len(gzip_deterministic(json.dumps(v, separators=(",", ":")).encode())) for k, v in parts.items()
    }


def _first_question_ms(folder: Path, manifest: str, question: str, runs: int = 3) -> tuple[float, float]:
    """CPython ms to open the shards and to answer a first question on the opened bundle (the
    indexes it builds once), every shard held; the least of ``runs``."""
    fetch = folder_fetch(folder)
    opening, first = [], []
    for _ in range(runs):
        t0 = time.perf_counter()
        bundle = open_shards(fetch, manifest)
        t1 = time.perf_counter()
        bundle.ask(question)
        opening.append((t1 - t0) * 1000)
        first.append((time.perf_counter() - t1) * 1000)
    return round(min(opening), 1), round(min(first), 1)


def measure(index_dir: Path, n_questions: int) -> dict[str, Any]:
    out_dir = WORK / index_dir.resolve().parent.name / index_dir.name
    with Index(index_dir) as index:
        doc, vec_bytes = bundle_document(index)
        lines = sum(n_lines for *_, n_lines in index.files())
    info = export_shards(doc, vec_bytes, out_dir / "shards")
    whole = decode_bundle(json.dumps(doc), vec_bytes or None)
    folder = out_dir / "shards"
    manifest = json.loads(gzip.decompress((folder / info["manifest"]).read_bytes()))
    per_q: list[dict[str, Any]] = []
    per_q_questions = questions(whole, n_questions)
    for q in per_q_questions:
        fetch = BrowserLikeFetch(folder)
        bundle = fetch.until_done(lambda f=fetch: open_shards(f, info["manifest"]))
        opened, rounds_open = fetch.bytes, fetch.rounds
        got = fetch.until_done(lambda q=q, b=bundle: b.ask(q))
        got.pop("timings_ms")
        expected = whole.ask(q)
        expected.pop("timings_ms")
        t0 = time.perf_counter()
        bundle.ask(q)  # every shard held now: the core's own time
        core_ms = (time.perf_counter() - t0) * 1000
        per_q.append(
            {
                "bytes": fetch.bytes - opened,
                "rounds": fetch.rounds - rounds_open,
                "core_ms": round(core_ms, 1),
                "same": got == expected,
            }
        )
    opening_ms, first_ms = _first_question_ms(folder, info["manifest"], per_q_questions[0])
    med = statistics.median
    return {
        "index": str(index_dir),
        "lines": lines,
        "chunks": len(whole),
        "nodes": len(whole.graph),
        "open_bytes": info["manifest_bytes"] + info["graph_bytes"],
        "manifest_bytes": info["manifest_bytes"],
        "graph_bytes": info["graph_bytes"],
        "manifest_parts": dict(sorted(_parts(manifest).items(), key=lambda kv: -kv[1])[:6]),
        "total_bytes": info["total_bytes"],
        "vectors_bytes": (folder / info["vectors"]).stat().st_size if info["vectors"] else 0,
        "questions": len(per_q),
        "same_as_whole": sum(p["same"] for p in per_q),
        "question_bytes": {"median": med([p["bytes"] for p in per_q]), "max": max(p["bytes"] for p in per_q)},
        "rounds": {"median": med([p["rounds"] for p in per_q]), "max": max(p["rounds"] for p in per_q)},
        "core_ms": {"median": med([p["core_ms"] for p in per_q]), "max": max(p["core_ms"] for p in per_q)},
        # a page's one-off costs, every shard held: opening, and the first question (its indexes)
        "opening_ms": opening_ms,
        "first_question_ms": first_ms,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--index", type=Path, action="append", required=True, help="a built index folder")
    ap.add_argument("--questions", type=int, default=60)
    args = ap.parse_args()
    rows = [measure(d, args.questions) for d in args.index]
    write_json(RESULT, {"machine": machine(), "indexes": rows})
    for r in rows:
        print(
            f"{r['index']}: {r['lines']:,} lines, {r['chunks']:,} chunks; open {r['open_bytes'] / 1e6:.2f} MB; "
            f"a question +{r['question_bytes']['median'] / 1e3:.0f} kB (max {r['question_bytes']['max'] / 1e3:.0f}), "
            f"rounds {r['rounds']['median']} (max {r['rounds']['max']}); same {r['same_as_whole']}/{r['questions']}"
        )
    return 0 if all(r["same_as_whole"] == r["questions"] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())

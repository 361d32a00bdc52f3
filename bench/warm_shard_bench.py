"""What a warm question costs the page in shard requests, per shard kind, under a layout of the shards.

Theory of operation:

* The questions are the browser bench's (``bench/big_site_bench.py``: the corpus's hand-written
  ones, then docstring first lines drawn with ``--seed``), asked in its order on one page: the
  first question twice (the partial answer without the semantic channel, then the full one), each
  later one once with its semantic ranking, as the worker sends them (``ranked``, no vector). The
  question vectors come from the CLI's embedder and the ranking from the core's own vector
  search, once, cached in ``bench/.cache/warm_shard_bench/<corpus>_requests.json`` (a ranking
  names chunks by id, so it holds under every layout).
* A layout (``--layout``, any number): the bundle document of the corpus's index
  (``bundle_document``) cut by ``export_shards`` with the layout's parameters into
  ``bench/.cache/warm_shard_bench/<corpus>/<layout>``. The page is a fetcher that holds what it
  fetched for the whole sequence and raises ``ShardsMissing`` for the rest (the worker's shard
  store); each round's names are counted by kind (terms, chunks, nodes) with their gzipped bytes.
* Modelled time of a question's shards: per round, ``ceil(requests / 6)`` round trips of 40 ms
  (HTTP/1.1, six connections) plus its bytes at 20 Mbit/s: the network the browser bench paces.
  First answer: the opening (manifest, graph) and the first question's partial answer.
* Every answer of a layout is checked equal to the whole bundle's (``decode_bundle``: every chunk's
  text at hand), the parity the tests hold.

Run: ``PYTHONPATH=$PWD .venv/bin/python -m bench.warm_shard_bench --corpus sympy
--layout default --layout terms=20000``; a layout is ``name`` or ``key=value,...`` over
``LAYOUT_KEYS``. Writes ``bench/results/warm_shard_bench.json``.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import time
from pathlib import Path
from typing import Any

from bench.big_site_bench import CORPORA, Shards, docstring_questions
from bench.common import CACHE_DIR, RESULTS, machine, percentile, write_json
from bench.variants.whole_bundle import decode_bundle
from oya.core.shard_store import ShardsMissing, folder_fetch
from oya.core.shards import CHUNK_SHARD_BYTES, NODE_SHARD_BYTES, TERM_SHARD_BYTES, open_shards

RESULT = RESULTS / "warm_shard_bench.json"
WORK = CACHE_DIR / "warm_shard_bench"
RTT_S, LINK_BPS, CONNECTIONS = 0.040, 20e6, 6
KINDS = ("terms", "chunks", "nodes", "graph", "manifest", "vectors")
# a layout's parameters: export_shards' keyword arguments, with the defaults the site uses
LAYOUT_KEYS = {"terms": "term_bytes", "chunks": "chunk_bytes", "nodes": "node_bytes"}
DEFAULTS = {"term_bytes": TERM_SHARD_BYTES, "chunk_bytes": CHUNK_SHARD_BYTES, "node_bytes": NODE_SHARD_BYTES}


def parse_layout(spec: str) -> dict[str, Any]:
    """``default`` or ``key=value,...`` (keys of ``LAYOUT_KEYS``) -> ``export_shards`` keywords."""
    if spec == "default":
        return {}
    out: dict[str, Any] = {}
    for part in spec.split(","):
        key, _, value = part.partition("=")
        if key not in LAYOUT_KEYS or not value:
            raise SystemExit(
                f"warm_shard_bench: a layout is key=value,... over {sorted(LAYOUT_KEYS)}; got {part!r}"
            )
        out[LAYOUT_KEYS[key]] = int(value)
    return out


class PageFetch:
    """The page's shard store: holds what it fetched for every question; ``ShardsMissing`` for the rest."""

    def __init__(self, folder: Path) -> None:
        self._read = folder_fetch(folder)
        self.held: dict[str, bytes] = {}
        self.log: list[list[str]] = []  # each round's names

    def __call__(self, name: str) -> bytes:
        if name not in self.held:
            raise ShardsMissing([name])
        return self.held[name]

    def until_done(self, call: Any) -> tuple[Any, list[list[str]]]:
        rounds: list[list[str]] = []
        while True:
            try:
                return call(), rounds
            except ShardsMissing as exc:
                names = sorted(set(exc.names))
                rounds.append(names)
                self.held.update((n, self._read(n)) for n in names)


def requests_for(corpus: str, n: int, seed: int) -> list[dict[str, Any]]:
    """The browser bench's questions with their semantic rankings (computed once, cached)."""
    path = WORK / f"{corpus}_requests_{n}_{seed}.json"
    if path.is_file():
        return json.loads(path.read_text(encoding="utf-8"))
    from oya.query.searcher import Searcher

    c = CORPORA[corpus]
    shards = Shards.of(c.work / "site")
    _, graph = shards.tables()
    questions = (list(c.questions) + docstring_questions(graph, n, seed))[:n]
    bundle = open_shards(folder_fetch(shards.folder), shards.manifest)
    out = []
    with Searcher.open(c.work / "out") as searcher:
        for q in questions:
            vector, _ = searcher.embed_query(q)
            ranked = bundle.rank_vectors(vector, bundle.fetch_depth()) if vector else None
            out.append({"question": q, "ranked": ranked})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out), encoding="utf-8")
    return out


def modelled_ms(rounds: list[list[int]]) -> float:
    """Rounds of request sizes -> ms on the paced link (round trips in waves of six, then bytes)."""
    return sum(math.ceil(len(r) / CONNECTIONS) * RTT_S + sum(r) * 8 / LINK_BPS for r in rounds if r) * 1000


def kind_of(name: str) -> str:
    return name.split("-", 1)[0]


def _asks(requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The page's asks: the first question's partial answer, then every question with its ranking."""
    first = {"ask": "partial", "question": requests[0]["question"], "semantic_reason": "partial"}
    return [first] + [{"ask": "full", "question": r["question"], "ranked": r["ranked"]} for r in requests]


def _ranked(req: dict[str, Any]) -> list[tuple[str, float]] | None:
    return [(str(i), float(s)) for i, s in req["ranked"]] if req.get("ranked") else None


def replay(folder: Path, manifest: str, requests: list[dict[str, Any]]) -> dict[str, Any]:
    """The sequence on one page: per question its rounds, requests by kind, bytes, modelled ms."""
    page = PageFetch(folder)
    bundle, opening = page.until_done(lambda: open_shards(page, manifest))
    size = {n: len(b) for n, b in page.held.items()}
    open_bytes = sum(size.values())
    per_q: list[dict[str, Any]] = []
    answers: list[Any] = []
    for req in _asks(requests):
        label, ranked = req["ask"], _ranked(req)
        t0 = time.process_time()
        got, rounds = page.until_done(
            lambda req=req, ranked=ranked: bundle.ask(
                req["question"], ranked=ranked, semantic_reason=req.get("semantic_reason")
            )
        )
        cpu_ms = (time.process_time() - t0) * 1000
        got.pop("timings_ms", None)
        answers.append(got)
        sizes = [[len(page.held[n]) for n in r] for r in rounds]
        by_kind = {k: 0 for k in ("terms", "chunks", "nodes")}
        for r in rounds:
            for n in r:
                by_kind[kind_of(n)] = by_kind.get(kind_of(n), 0) + 1
        per_q.append(
            {
                "ask": label,
                "rounds": len(rounds),
                "requests": sum(len(r) for r in rounds),
                "by_kind": by_kind,
                "bytes": sum(map(sum, sizes)),
                "modelled_ms": round(modelled_ms(sizes), 1),
                "cpu_ms": round(cpu_ms, 1),
            }
        )
    warm = per_q[2:]  # after the first question's partial and full answers

    def stat(values: list[float]) -> dict[str, float]:
        return {"p50": percentile(values, 50), "p95": percentile(values, 95), "max": max(values)}

    return {
        "open_bytes": open_bytes,
        "opening_rounds": len(opening),
        "first_answer_shard_bytes": open_bytes + per_q[0]["bytes"],
        "first_answer_requests": sum(map(len, opening)) + per_q[0]["requests"],
        "first_partial": per_q[0],
        "first_full": per_q[1],
        "warm": {
            "n": len(warm),
            "requests": stat([q["requests"] for q in warm]),
            **{
                f"{k}_requests": stat([q["by_kind"].get(k, 0) for q in warm])
                for k in ("terms", "chunks", "nodes")
            },
            "bytes": stat([q["bytes"] for q in warm]),
            "modelled_ms": stat([q["modelled_ms"] for q in warm]),
            "modelled_ms_mean": round(statistics.mean(q["modelled_ms"] for q in warm), 1),
            "rounds": stat([q["rounds"] for q in warm]),
        },
        "per_question": [[q["requests"], q["by_kind"], q["bytes"], q["modelled_ms"]] for q in per_q],
        "answers": answers,
    }


def whole_answers(doc: dict[str, Any], vec_bytes: bytes, requests: list[dict[str, Any]]) -> list[Any]:
    """The whole bundle's answers to the sequence (``replay``'s asks): the reference."""
    whole = decode_bundle(json.dumps(doc), vec_bytes or None)
    out = []
    for req in _asks(requests):
        got = whole.ask(req["question"], ranked=_ranked(req), semantic_reason=req.get("semantic_reason"))
        got.pop("timings_ms", None)
        out.append(got)
    return out


def measure(corpus: str, layouts: list[str], n: int, seed: int) -> dict[str, Any]:
    from oya.site.bundle import bundle_document
    from oya.site.shards import export_shards
    from oya.store.index import Index

    requests = requests_for(corpus, n, seed)
    with Index(CORPORA[corpus].work / "out") as index:
        doc, vec_bytes = bundle_document(index)
    reference = whole_answers(doc, vec_bytes, requests)
    rows: dict[str, Any] = {}
    for spec in layouts:
        params = parse_layout(spec)
        folder = WORK / corpus / spec.replace("=", "_").replace(",", "+")
        t0 = time.perf_counter()
        info = export_shards(doc, vec_bytes, folder, **params)
        export_s = time.perf_counter() - t0
        r = replay(folder, info["manifest"], requests)
        answers = r.pop("answers")
        r["same_answers"] = sum(a == b for a, b in zip(answers, reference, strict=True))
        r["asks"] = len(answers)
        r["params"] = {**DEFAULTS, **params}
        r["export_s"] = round(export_s, 1)
        r["shards"] = {
            k: info[k]
            for k in ("term_shards", "chunk_shards", "node_shards", "manifest_bytes", "graph_bytes")
        }
        rows[spec] = r
        w = r["warm"]
        print(
            f"{spec}: warm requests p50/p95 {w['requests']['p50']}/{w['requests']['p95']} "
            f"(terms {w['terms_requests']['p95']}, chunks {w['chunks_requests']['p95']}, nodes {w['nodes_requests']['p95']} p95), "
            f"bytes p50/p95 {w['bytes']['p50'] / 1e3:.0f}/{w['bytes']['p95'] / 1e3:.0f} kB, "
            f"modelled p50/p95 {w['modelled_ms']['p50']:.0f}/{w['modelled_ms']['p95']:.0f} ms; first answer shards "
            f"{r['first_answer_shard_bytes'] / 1e6:.3f} MB in {r['first_answer_requests']} requests; "
            f"same {r['same_answers']}/{r['asks']}",
            flush=True,
        )
    return {"corpus": corpus, "questions": n, "seed": seed, "layouts": rows}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", choices=sorted(CORPORA), default="sympy")
    ap.add_argument("--layout", action="append", help="default, or key=value,... (see LAYOUT_KEYS)")
    ap.add_argument("--questions", type=int, default=51, help="the browser bench's 1 + --queries")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=RESULT)
    args = ap.parse_args()
    result = measure(args.corpus, args.layout or ["default"], args.questions, args.seed)
    write_json(args.out, {"machine": machine(), **result})
    return 0 if all(r["same_answers"] == r["asks"] for r in result["layouts"].values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())

"""Write the browser bundle as content-hashed shards, all the site holds of it (format: ``oya.core.shards``).

Theory of operation: ``export_shards`` takes the bundle's document and vector bytes
(``oya.site.bundle.bundle_document``) and only cuts them up, so the shards hold the whole
document's data and answer as it does, read whole (tests/site/test_shards.py holds them together):

* term buckets: the bucket count is the gzipped size of all postings over ``TERM_SHARD_BYTES``
  (at least one), each term goes to ``term_bucket(term, count)``; terms stay sorted in a bucket;
* chunk runs: consecutive chunks in bundle order, a file kept whole in one shard unless it alone
  passes ``CHUNK_SHARD_BYTES`` of JSON (then it is cut between chunks);
* node details (lines, signature, docstring) in the chunk shard of the node's first chunk
  (``detail_homes``; the table's ``details``: node positions as differences and the columns), so
  the shards a question reads for the text of the nodes it shows bring their details too; the
  nodes without a chunk in runs of their own (``node_runs``, ``nodes-*``);
* one graph shard (``graph_table``: a node's id only where it is not the derived one, its qualified
  name as a scope), the vectors file whole, and the manifest, each named by its content hash.

Files are gzipped deterministically (``gzip_deterministic``), so the same index gives the same names
and bytes. Shard files of an earlier export left in the folder are removed (only names of the shard
form are touched).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from oya.core.bundle_format import CHUNK_COLUMNS
from oya.core.records import chunk_id
from oya.core.shard_graph import (
    EDGE_SHARD_COLUMNS,
    GRAPH_NODE_COLUMNS,
    NODE_DETAIL_COLUMNS,
    derived_node_id,
    node_scope,
)
from oya.core.shard_store import (
    deltas,
    file_deltas,
    is_shard_name,
    pack_ids,
    same_text,
    shard_name,
    term_bucket,
)
from oya.core.shards import (
    CHUNK_SHARD_BYTES,
    NODE_SHARD_BYTES,
    SHARDS_FORMAT,
    SHARDS_VERSION,
    TERM_HASH,
    TERM_SHARD_BYTES,
)
from oya.site.bundle import gzip_deterministic

SHARDS_DIR = "shards"  # the shards' folder inside the site's bundle folder


def _dumps(obj: Any) -> bytes:
    return json.dumps(
        obj, ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False
    ).encode()


def chunk_runs(chunks: dict[str, Any], target: int) -> list[tuple[int, int]]:
    """``[first, end)`` runs of chunk positions: whole files while they fit in ``target`` JSON
    bytes, a file over ``target`` on its own, cut between chunks."""
    paths, texts, titles = chunks["path"], chunks["text"], chunks["title"]
    sizes = [len(_dumps(t)) + len(_dumps(title)) + 32 for t, title in zip(texts, titles, strict=True)]
    runs: list[tuple[int, int]] = []
    start = acc = i = 0
    n = len(texts)
    while i < n:
        j = i
        while j < n and paths[j] == paths[i]:
            j += 1
        if acc and acc + sum(sizes[i:j]) > target:
            runs.append((start, i))
            start, acc = i, 0
        for k in range(i, j):  # only a file over the target is cut inside
            if acc and acc + sizes[k] > target:
                runs.append((start, k))
                start, acc = k, 0
            acc += sizes[k]
        i = j
    if start < n:
        runs.append((start, n))
    return runs


def node_runs(
    nodes: dict[str, Any], target: int, positions: list[int] | None = None
) -> list[tuple[int, int]]:
    """``[first, end)`` runs over ``positions`` (indexes into it; default every node position) of
    about ``target`` JSON bytes of details."""
    at = list(range(len(nodes[NODE_DETAIL_COLUMNS[0]]))) if positions is None else positions
    sizes = [len(_dumps([nodes[c][p] for c in NODE_DETAIL_COLUMNS])) for p in at]
    runs: list[tuple[int, int]] = []
    start = acc = 0
    for i, size in enumerate(sizes):
        if acc and acc + size > target:
            runs.append((start, i))
            start, acc = i, 0
        acc += size
    if start < len(sizes):
        runs.append((start, len(sizes)))
    return runs


def detail_homes(chunk_nodes: list[int], runs: list[tuple[int, int]]) -> dict[int, int]:
    """Node position -> the chunk run holding its first chunk: its details travel there, with the
    text a question reads for it (the hits' and the connected code's), not in a shard of their own."""
    homes: dict[int, int] = {}
    for r, (a, b) in enumerate(runs):
        for node in chunk_nodes[a:b]:
            if node >= 0:
                homes.setdefault(node, r)
    return homes


def _details(nodes: dict[str, Any], positions: list[int]) -> dict[str, list[Any]]:
    """The detail columns of the nodes at ``positions`` (sorted), which ``at`` lists as differences."""
    table: dict[str, list[Any]] = {"at": deltas(positions)}
    table.update({c: [nodes[c][p] for p in positions] for c in NODE_DETAIL_COLUMNS})
    return table


def graph_table(doc: dict[str, Any], paths: list[str]) -> dict[str, Any]:
    """The ``graph`` shard: what every question's graph channel and expansion read; a node's id
    only where it is not ``derived_node_id``'s."""
    nt = doc["nodes"]
    given: dict[str, list[Any]] = {"at": [], "id": []}
    quals: dict[str, list[Any]] = {"at": [], "qualname": []}
    scopes: list[str | None] = []
    for i, (nid, kind, name, qual, p) in enumerate(
        zip(nt["id"], nt["kind"], nt["name"], nt["qualname"], nt["path"], strict=True)
    ):
        try:
            scopes.append(node_scope(name, qual))
        except ValueError:
            scopes.append(None)
            quals["at"].append(i)
            quals["qualname"].append(qual)
        if nid != derived_node_id(kind, qual, paths[p]):
            given["at"].append(i)
            given["id"].append(nid)
    nodes: dict[str, Any] = {c: nt[c] for c in GRAPH_NODE_COLUMNS if c != "scope"}
    nodes.update(scope=scopes, ids=given, qualnames=quals)
    edges = {c: doc["edges"][c] for c in EDGE_SHARD_COLUMNS}
    edges["source"] = deltas(edges["source"])  # sorted by source
    return {"edges": edges, "nodes": nodes}


def _term_buckets(bm25: dict[str, Any], target: int) -> list[dict[str, list[Any]]]:
    terms: list[str] = bm25["terms"]
    total = len(gzip_deterministic(_dumps({"postings": bm25["postings"], "terms": terms})))
    count = max(1, math.ceil(total / target))
    buckets: list[dict[str, list[Any]]] = [{"postings": [], "terms": []} for _ in range(count)]
    for term, flat in zip(terms, bm25["postings"], strict=True):
        b = buckets[term_bucket(term, count)]
        b["terms"].append(term)
        b["postings"].append(flat)
    return buckets


def export_shards(
    doc: dict[str, Any],
    vec_bytes: bytes,
    out_dir: Path,
    *,
    term_bytes: int = TERM_SHARD_BYTES,
    chunk_bytes: int = CHUNK_SHARD_BYTES,
    node_bytes: int = NODE_SHARD_BYTES,
) -> dict[str, Any]:
    """Write the shards of the bundle ``doc`` (and ``vec_bytes``) into ``out_dir``; return the
    manifest's name and the shards' counts and sizes."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written: dict[str, int] = {}

    def put(kind: str, payload: bytes, ext: str = "json") -> str:
        packed = gzip_deterministic(payload)
        name = shard_name(kind, payload, ext)
        (out_dir / name).write_bytes(packed)
        written[name] = len(packed)
        return name

    ct = doc["chunks"]
    nt = doc["nodes"]
    runs = chunk_runs(ct, chunk_bytes)
    homes = detail_homes(ct["node"], runs)
    housed: list[list[int]] = [[] for _ in runs]
    for node, r in sorted(homes.items()):
        housed[r].append(node)
    chunk_names = [
        put("chunks", _dumps({**{c: ct[c][a:b] for c in CHUNK_COLUMNS}, "details": _details(nt, housed[r])}))
        for r, (a, b) in enumerate(runs)
    ]
    buckets = [put("terms", _dumps(b)) for b in _term_buckets(doc["bm25"], term_bytes)]
    paths: list[str] = doc["paths"]
    graph = put("graph", _dumps(graph_table(doc, paths)))
    # the nodes without a chunk (their details have no chunk shard to travel in): runs of them
    homeless = [p for p in range(len(nt[NODE_DETAIL_COLUMNS[0]])) if p not in homes]
    nruns = node_runs(nt, node_bytes, homeless)
    node_names = [put("nodes", _dumps(_details(nt, homeless[a:b]))) for a, b in nruns]
    vectors = None
    if doc.get("vectors") and vec_bytes:
        # rows (each vector's chunk position) as differences: nearly all 1
        vectors = {
            **doc["vectors"],
            "rows": deltas(doc["vectors"]["rows"]),
            "file": put("vectors", vec_bytes, "bin"),
        }
    manifest: dict[str, Any] = {
        "format": SHARDS_FORMAT,
        "version": SHARDS_VERSION,
        "meta": doc["meta"],
        "paths": paths,  # pages: page_url(path), the reader's formula as the document's writer's
        "chunks": {
            # ids shipped, not recomputed: BM25 breaks ties by id over every chunk it scores
            "id": pack_ids(
                [
                    chunk_id(paths[p], s, e, t)
                    for p, s, e, t in zip(
                        ct["path"], ct["start_line"], ct["end_line"], ct["text"], strict=True
                    )
                ]
            ),
            "path": ct["path"],
            "node": deltas(ct["node"]),  # positions as differences: a file's nodes are neighbours
            # what ranking reads before the text (ChunkRef): start lines (from the file's previous
            # chunk) and which chunks repeat an earlier one's text (dedup keeps one of each)
            "start": file_deltas(ct["path"], ct["start_line"]),
            "same": same_text(ct["text"]),
            # chunks whose title or text is not all ASCII: their postings are of a folded text, so
            # the reader does not take a posting as proof that a name occurs in them (names_in_text)
            "wide": deltas(
                [
                    i
                    for i, (t, h) in enumerate(zip(ct["text"], ct["title"], strict=True))
                    if not (t.isascii() and h.isascii())
                ]
            ),
            "shards": {"first": deltas([a for a, _ in runs]), "name": chunk_names},
        },
        "bm25": {"doc_lens": doc["bm25"]["doc_lens"], "hash": TERM_HASH, "buckets": buckets},
        "graph": graph,
        "nodes": {"first": deltas([homeless[a] for a, _ in nruns]), "name": node_names},
        "vectors": vectors,
    }
    if "origins" in doc:
        manifest["origins"] = doc["origins"]
    name = put("manifest", _dumps(manifest))
    for stale in out_dir.iterdir():
        if is_shard_name(stale.name) and stale.name not in written:
            stale.unlink()
    sizes = sorted(size for n, size in written.items() if n.startswith(("terms-", "chunks-", "nodes-")))
    return {
        "format": SHARDS_FORMAT,
        "version": SHARDS_VERSION,
        "manifest": name,
        # every question reads these: the browser fetches them with the manifest, in one round
        "graph": graph,
        "vectors": vectors["file"] if vectors else None,
        "manifest_bytes": written[name],
        "graph_bytes": written[graph],
        "term_shards": len(buckets),
        "chunk_shards": len(chunk_names),
        "node_shards": len(node_names),
        "shard_bytes_median": sizes[len(sizes) // 2] if sizes else 0,
        "shard_bytes_max": sizes[-1] if sizes else 0,
        "total_bytes": sum(written.values()),
    }

"""One evaluated project: its stripped tree, its index, its three query sets.

The index is built with the pipeline's own steps (``oya.build.steps``: scan, parse, chunk, embed,
write) without Dagster, into ``bench/.cache/eval/index/<project>-<embedder>/``, and reused while
its stamp (project, embedder, the blanked functions) is unchanged. Vectors come from the shared
embedding cache, so only chunks whose text the stripping changed are embedded again.
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bench.common import CACHE_DIR
from bench.corpus import fetch_project, parse_spec
from oya.build.steps import embed, make_chunks, parse_and_link, scan, write_search_index
from oya.core.channels import Channel
from oya.core.file_lexical import FileDocs, FileTerms
from oya.core.query import QueryPlan
from oya.embedding.embedder import Embedder
from oya.settings import CachePaths
from oya.store.index import Index
from oya.store.schema import SCHEMA_VERSION

from .code_queries import CodeQuery, collect_candidates, library_files, make_eval_tree, sample_queries
from .prose_queries import ProseQuery, collect_prose_queries

EVAL_DIR = CACHE_DIR / "eval"
MIN_EDGE_CONFIDENCE = 0.5  # callers/callees counted for "connected code": the expansion's own threshold


@dataclass(frozen=True)
class ConnectedQuery:
    query: str
    node_id: str
    connected: frozenset[str]  # callees and callers of the node


@dataclass
class Project:
    spec: str
    index: Index
    code: list[CodeQuery]
    prose: list[ProseQuery]
    connected: list[ConnectedQuery]
    stats: dict[str, int | float] = field(default_factory=dict)


def cache_path(model_id: str) -> Path:
    return CachePaths.resolve().embeddings(model_id)


def build_index(tree: Path, out: Path, embedder: Embedder, log: bool = True) -> dict[str, int | float]:
    t0 = time.perf_counter()
    scanned = scan(tree)
    graph = parse_and_link(scanned)
    chunks = make_chunks(scanned, graph)
    last = [0.0]

    def progress(done: int, total: int) -> None:
        if log and time.perf_counter() - last[0] > 20:
            last[0] = time.perf_counter()
            print(f"    embedding {done}/{total}", file=sys.stderr, flush=True)

    data = embed(chunks, embedder, cache_path(embedder.model_id), progress=progress)
    write_search_index(out, tree, scanned, graph, chunks, data)
    return {
        "chunks": len(chunks),
        "embedded": data.embedded,
        "cached": data.cached,
        "build_s": round(time.perf_counter() - t0, 1),
    }


def connected_queries(index: Index, root: Path, n: int, seed: int) -> list[ConnectedQuery]:
    graph = index.graph
    lib = {p.relative_to(root).as_posix() for p in library_files(root)}
    out = []
    for node in graph.nodes.values():
        if node.kind not in ("function", "method") or node.path not in lib:
            continue
        callees = {e.target for e in graph.callees(node.id) if e.confidence >= MIN_EDGE_CONFIDENCE}
        callees.discard(node.id)
        if len(callees) < 2:
            continue
        callers = {e.source for e in graph.callers(node.id) if e.confidence >= MIN_EDGE_CONFIDENCE}
        callers.discard(node.id)
        out.append(ConnectedQuery(f"How does {node.qualname} work?", node.id, frozenset(callees | callers)))
    out.sort(key=lambda q: q.node_id)
    if len(out) > n:
        out = sorted(random.Random(seed).sample(out, n), key=lambda q: q.node_id)
    return out


def load_project(
    spec: str, embedder: Embedder, *, n_code: int, n_prose: int, n_connected: int, seed: int
) -> Project:
    name, version = parse_spec(spec)
    src = fetch_project(spec)
    code = sample_queries(collect_candidates(src), n_code, seed)
    tree = EVAL_DIR / "src" / f"{name}-{version}"
    out = EVAL_DIR / "index" / f"{name}-{version}-{embedder.model_id.replace('/', '_')}"
    stamp = hashlib.sha256(
        json.dumps(
            [spec, embedder.model_id, SCHEMA_VERSION, [(q.node_id, q.doc_lines) for q in code]]
        ).encode()
    ).hexdigest()
    stamp_file = out / "eval_stamp.txt"
    stats: dict[str, int | float] = {}
    if not (stamp_file.exists() and stamp_file.read_text() == stamp and (out / "index.duckdb").exists()):
        print(f"  building the eval index of {spec} ...", file=sys.stderr, flush=True)
        make_eval_tree(src, tree, code)
        out.mkdir(parents=True, exist_ok=True)
        stats = build_index(tree, out, embedder)
        stamp_file.write_text(stamp)
    index = Index(out)
    graph = index.graph
    # keep the code queries whose function is a node, and check the blanking reached its chunk
    kept: list[CodeQuery] = []
    by_node = index.chunk_ids_for_nodes([q.node_id for q in code])
    for q in code:
        ids = by_node.get(q.node_id)
        if not ids or q.node_id not in graph.nodes:
            continue
        chunks = index.get_chunks(ids)
        if any(q.query in c.text for c in chunks.values()):
            raise RuntimeError(f"the docstring of {q.node_id} is still in its chunk")
        kept.append(q)
    prose = collect_prose_queries(src, graph, n_prose, seed)
    conn = connected_queries(index, tree, n_connected, seed)
    stats.update(
        {
            "chunks": index.stats().chunks,
            "code_queries": len(kept),
            "code_dropped": len(code) - len(kept),
            "prose_queries": len(prose),
            "connected_queries": len(conn),
        }
    )
    return Project(spec, index, kept, prose, conn, stats)


class MemoChannel:
    """A channel whose answers are remembered per query plan (quality runs of many configs).

    Channels are deterministic functions of the plan and the vector (the vector is a function of
    ``plan.text``), so the memo changes no ranking; latency is measured without it.
    """

    def __init__(self, inner: Channel) -> None:
        self.inner = inner
        self.name = inner.name
        self._memo: dict[tuple[object, ...], list[tuple[str, float]]] = {}

    def search(self, plan: QueryPlan, vector: Sequence[float] | None, k: int) -> list[tuple[str, float]]:
        key = (plan.text, plan.lexical_tokens, plan.identifiers, plan.paths, vector is None, k)
        if key not in self._memo:
            self._memo[key] = self.inner.search(plan, vector, k)
        return self._memo[key]


class MemoFileTermsChannel(MemoChannel):
    """A ``MemoChannel`` over a lexical channel that counts its terms per file (``FileTerms``),
    so the pipeline's whole-file BM25 stage runs through the memo too."""

    def __init__(self, inner: Channel) -> None:
        assert isinstance(inner, FileTerms)
        super().__init__(inner)
        self.files: FileTerms = inner

    def file_docs(self, paths: Mapping[str, str]) -> FileDocs:
        return self.files.file_docs(paths)

    def file_term_counts(self, terms: Sequence[str], paths: Mapping[str, str]) -> dict[str, dict[str, int]]:
        return self.files.file_term_counts(terms, paths)


def memo(channel: Channel) -> MemoChannel:
    """``channel`` behind a memo, keeping what the pipeline asks of it beyond ``search``."""
    return MemoFileTermsChannel(channel) if isinstance(channel, FileTerms) else MemoChannel(channel)

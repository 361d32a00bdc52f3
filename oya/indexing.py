"""The indexing steps the Dagster assets call, one function per asset.

Assets only orchestrate: each calls one function here and turns its counts into metadata.
The same functions serve ``oya build`` (through the asset job) and the tests.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from oya.chunking import chunk_file
from oya.core.records import Chunk, Edge, Node
from oya.embed import Embedder, EmbeddingCache, embed_chunks
from oya.graph_build import build_graph, graph_stats
from oya.models import ParsedFile, ScanResult
from oya.parsing import parser_for
from oya.reader import scan_repository
from oya.store import write_index


@dataclass(frozen=True)
class CodeGraphData:
    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]
    parsed: dict[str, ParsedFile]
    parse_errors: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def stats(self) -> dict[str, int | float]:
        return graph_stats(self.nodes, self.edges)


@dataclass(frozen=True)
class EmbeddingData:
    vectors: dict[str, bytes]
    model_id: str
    dim: int
    embedded: int
    cached: int


def scan(repo: Path, max_file_bytes: int = 1_000_000) -> ScanResult:
    return scan_repository(repo, max_file_bytes=max_file_bytes)


def parse_and_link(scan_result: ScanResult) -> CodeGraphData:
    parsed: dict[str, ParsedFile] = {}
    for f in scan_result.files:
        parser = parser_for(f.language)
        if parser is not None:
            parsed[f.path] = parser.parse(f)
    nodes, edges = build_graph(list(parsed.values()))
    errors = {p: pf.errors for p, pf in parsed.items() if pf.errors}
    return CodeGraphData(tuple(nodes), tuple(edges), parsed, errors)


def make_chunks(scan_result: ScanResult, graph: CodeGraphData) -> list[Chunk]:
    out: list[Chunk] = []
    for f in scan_result.files:
        out.extend(chunk_file(f, graph.parsed.get(f.path)))
    return out


def embed(
    chunks: Sequence[Chunk],
    embedder: Embedder,
    cache_path: Path,
    progress: Callable[[int, int], None] | None = None,
) -> EmbeddingData:
    cache = EmbeddingCache(cache_path)
    try:
        vectors, embedded, cached = embed_chunks(chunks, embedder, cache, progress=progress)
    finally:
        cache.close()
    return EmbeddingData(vectors, embedder.model_id, embedder.dim, embedded, cached)


def repo_commit(repo: Path) -> str:
    try:
        out = subprocess.run(
            ["git", "-C", str(repo), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return out.stdout.strip() if out.returncode == 0 else ""


def write_search_index(
    out_dir: Path,
    repo: Path,
    scan_result: ScanResult,
    graph: CodeGraphData,
    chunks: Sequence[Chunk],
    embeddings: EmbeddingData,
) -> Path:
    meta = {
        "repo_name": repo.resolve().name,
        "repo_commit": repo_commit(repo),
        "model_id": embeddings.model_id,
        "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "parse_errors": str(sum(len(v) for v in graph.parse_errors.values())),
    }
    return write_index(
        out_dir,
        files=scan_result.files,
        skipped=scan_result.skipped,
        chunks=chunks,
        embeddings=embeddings.vectors,
        nodes=graph.nodes,
        edges=graph.edges,
        meta=meta,
        dim=embeddings.dim,
    )

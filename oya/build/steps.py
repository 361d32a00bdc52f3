"""The indexing steps the Dagster assets call, one function per asset.

Assets only orchestrate: each calls one function here and turns its counts into metadata.
The same functions serve ``oya build`` (through the asset job) and the tests.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from oya.chunking.chunks import chunk_file
from oya.core.records import Chunk, Edge, Node
from oya.embedding.cache import EmbeddingCache
from oya.embedding.embedder import Embedder, embed_chunks
from oya.errors import ParseError
from oya.graph.build import build_graph, graph_stats
from oya.graph.parsing import parser_for
from oya.graph.reuse import decode_parse, encode_parse
from oya.models import ParsedFile, ScanResult, SourceFile
from oya.scanning.gitview import head_commit
from oya.scanning.reader import scan_repository
from oya.scanning.scan_cache import StatCache
from oya.store.previous import previous_chunks, previous_parses, previous_tokens, reuse_key
from oya.store.writer import write_index

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class CodeGraphData:
    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]
    parsed: dict[str, ParsedFile]
    parse_errors: dict[str, tuple[str, ...]] = field(default_factory=dict)
    encoded: dict[str, bytes] = field(default_factory=dict)  # what the index keeps for the next build
    reused: int = 0  # files whose parse came from the previous index
    # files a parser could not read (too broken, too long, generated): indexed as text, path -> why
    degraded: dict[str, str] = field(default_factory=dict)

    def stats(self) -> dict[str, int | float]:
        return graph_stats(self.nodes, self.edges)


@dataclass(frozen=True)
class EmbeddingData:
    vectors: dict[str, bytes]
    model_id: str
    dim: int
    embedded: int
    cached: int


def scan(
    repo: Path, max_file_bytes: int = 1_000_000, out_dir: Path | None = None, outputs: Sequence[Path] = ()
) -> ScanResult:
    """The repository's files; with ``out_dir``, files whose stat is unchanged since the build
    there are taken from its index instead of being read (``oya.scanning.scan_cache``). ``outputs`` (the
    build's own folders) are never read as input."""
    if out_dir is None:
        return scan_repository(repo, max_file_bytes=max_file_bytes, outputs=outputs)
    known = StatCache(repo, out_dir)
    result = scan_repository(repo, max_file_bytes=max_file_bytes, known=known, outputs=outputs)
    known.save()
    return result


def _unchanged(f: SourceFile, previous: tuple[str, str, object] | None) -> bool:
    return previous is not None and previous[0] == f.sha256 and previous[1] == f.language


def _taken(f: SourceFile, old: tuple[str, str, object] | None) -> tuple[ParsedFile, bytes] | None:
    """The previous index's parse of ``f`` when ``f`` is unchanged and the parse reads back."""
    if old is None or not _unchanged(f, old) or not isinstance(old[2], bytes):
        return None
    parse = decode_parse(old[2])
    return (parse, old[2]) if parse is not None else None


def parse_and_link(
    scan_result: ScanResult, out_dir: Path | None = None, progress: Progress | None = None
) -> CodeGraphData:
    """Parse every file (taking unchanged files' parses from the index in ``out_dir``) and link
    the graph across all of them."""
    previous = previous_parses(out_dir) if out_dir is not None else {}
    parsed: dict[str, ParsedFile] = {}
    encoded: dict[str, bytes] = {}
    degraded: dict[str, str] = {}
    reused = 0
    for i, f in enumerate(scan_result.files):
        if (taken := _taken(f, previous.get(f.path))) is not None:
            parsed[f.path], encoded[f.path] = taken
            reused += 1
        elif (parser := parser_for(f.language)) is not None:
            try:
                parsed[f.path] = parser.parse(f)
            except ParseError as err:  # the file stays in the index as text chunks
                degraded[f.path] = str(err)
            else:
                encoded[f.path] = encode_parse(parsed[f.path])
        if progress:
            progress(i + 1, len(scan_result.files))
    nodes, edges = build_graph(list(parsed.values()))
    errors = {p: pf.errors for p, pf in parsed.items() if pf.errors}
    return CodeGraphData(tuple(nodes), tuple(edges), parsed, errors, encoded, reused, degraded)


def make_chunks(
    scan_result: ScanResult,
    graph: CodeGraphData,
    out_dir: Path | None = None,
    progress: Progress | None = None,
) -> list[Chunk]:
    """Chunks of every file; an unchanged file's are taken from the index in ``out_dir``."""
    previous = previous_chunks(out_dir) if out_dir is not None else {}
    out: list[Chunk] = []
    for i, f in enumerate(scan_result.files):
        old = previous.get(f.path)
        if old is not None and _unchanged(f, old):
            out.extend(old[2])
        else:
            out.extend(chunk_file(f, graph.parsed.get(f.path)))
        if progress:
            progress(i + 1, len(scan_result.files))
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
    """The commit the repository's HEAD names, or "" (read from files: no git process runs)."""
    return head_commit(repo)


def write_search_index(
    out_dir: Path,
    repo: Path,
    scan_result: ScanResult,
    graph: CodeGraphData,
    chunks: Sequence[Chunk],
    embeddings: EmbeddingData,
    progress: Progress | None = None,
    report: dict[str, int] | None = None,
    stage: bool = False,
) -> Path:
    """Write the index into ``out_dir``, patched from or with the tokens of the live previous
    index; with ``stage`` it waits beside the live one until ``oya.store.writer.publish_index``.
    ``report`` hears whether the previous index was patched and how many rows changed."""
    meta = {
        "repo_name": repo.resolve().name,
        "repo_commit": repo_commit(repo),
        "model_id": embeddings.model_id,
        "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "parse_errors": str(sum(len(v) for v in graph.parse_errors.values())),
        "degraded_files": str(len(graph.degraded)),
        "reuse_key": reuse_key(),
    }
    return write_index(
        out_dir,
        files=scan_result.files,
        skipped=scan_result.skipped,
        origins=scan_result.origins,
        chunks=chunks,
        embeddings=embeddings.vectors,
        nodes=graph.nodes,
        edges=graph.edges,
        meta=meta,
        dim=embeddings.dim,
        parsed=graph.encoded,
        tokens=lambda written: previous_tokens(out_dir, written),
        progress=progress,
        report=report,
        stage=stage,
    )

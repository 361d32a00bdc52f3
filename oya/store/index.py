"""The index's one reader: an index opened read-only, its corpus, its files and its code graph.

An index of another schema version is refused with a line that says to rebuild it. Rows come back
sorted (chunks by path, start line and id; nodes by id), so every reader sees the corpus in one order.
The query backends over an open index (``oya.store.backends``) share its one connection.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from oya.core.graph import CodeGraph
from oya.core.records import Chunk, ChunkRef, Edge, Node
from oya.errors import IndexCorruptError, IndexMissingError
from oya.models import Provenance, SkippedFile
from oya.store.schema import INDEX_FILE, SCHEMA_VERSION


def chunk_from_row(row: tuple[object, ...]) -> Chunk:
    cid, path, kind, title, start, end, text, chash, ntok, node_id = row
    return Chunk(
        id=str(cid),
        path=str(path),
        kind=str(kind),
        title=str(title),
        start_line=int(start),  # type: ignore[call-overload]
        end_line=int(end),  # type: ignore[call-overload]
        text=str(text),
        content_hash=str(chash),
        n_tokens=int(ntok),  # type: ignore[call-overload]
        node_id=None if node_id is None else str(node_id),
    )


CHUNK_COLS = "id, path, kind, title, start_line, end_line, text, content_hash, n_tokens, node_id"


@dataclass
class IndexStats:
    files: int
    chunks: int
    nodes: int
    edges: int
    embeddings: int
    skipped: int


class Index:
    """A read-only open index: the DuckDB channels, the corpus and the code graph."""

    def __init__(self, path: Path) -> None:
        db = path / INDEX_FILE if path.is_dir() else path
        if not db.exists():
            raise IndexMissingError(f"no index at {db} (build one with: oya build REPO --out {path})")
        try:
            self.con = duckdb.connect(str(db), read_only=True)
            # queries here are small point lookups and aggregates: one thread answers them faster
            # than two that must be scheduled and merged (BM25 p50 27 -> 21 ms on networkx)
            self.con.execute("SET threads = 1")
            self.con.execute("SET enable_progress_bar = false")
            self.meta = dict(self.con.execute("SELECT key, value FROM meta").fetchall())
        except duckdb.Error as exc:
            raise IndexCorruptError(f"cannot read the index at {db}: {str(exc).splitlines()[0]}") from exc
        if self.meta.get("schema_version") != SCHEMA_VERSION:
            raise IndexCorruptError(
                f"the index at {db} has schema {self.meta.get('schema_version')!r}, expected {SCHEMA_VERSION}; "
                "rebuild it with oya build"
            )
        self.path = db
        self.dim = int(self.meta.get("dim", "0"))
        self._graph: CodeGraph | None = None
        self._paths: dict[str, str] | None = None
        self._by_node: dict[str, list[str]] | None = None
        self._origins: dict[str, Provenance] | None = None
        self.has_fts = bool(
            self.con.execute(
                "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'fts_main_chunks'"
            ).fetchone()[0]  # type: ignore[index]
        )

    def close(self) -> None:
        self.con.close()

    def __enter__(self) -> Index:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- corpus -----------------------------------------------------------------------
    def get_chunks(self, ids: Sequence[str]) -> dict[str, Chunk]:
        return {str(r[0]): chunk_from_row(r) for r in self._rows(CHUNK_COLS, ids)}

    def _rows(self, cols: str, ids: Sequence[str]) -> list[tuple[Any, ...]]:
        """``cols`` of the chunks whose id is in ``ids``."""
        if not ids:
            return []
        # ids travel as one space-joined string: a Python list parameter makes DuckDB probe for
        # pandas once per element (a failed import each time, ~8 ms per call without pandas)
        return self.con.execute(
            f"SELECT {cols} FROM chunks WHERE id IN (SELECT unnest(string_split(?, ' ')))", [" ".join(ids)]
        ).fetchall()

    def chunk_refs(self, ids: Sequence[str]) -> dict[str, ChunkRef]:
        """The pool's refs without its text (the bulk of a row): only the hits' text is read, later."""
        rows = self._rows("id, path, start_line, node_id, content_hash", ids)
        return {
            str(cid): ChunkRef(str(cid), str(path), int(start), None if node is None else str(node), str(key))
            for cid, path, start, node, key in rows
        }

    def names_in_text(self, ids: Sequence[str], names: Sequence[str]) -> set[str]:
        return set()  # a local read: the caller reads the text

    def chunk_ids_for_nodes(self, node_ids: Sequence[str]) -> dict[str, list[str]]:
        if self._by_node is None:
            by_node: dict[str, list[str]] = {}
            for cid, nid in self.con.execute(
                "SELECT id, node_id FROM chunks WHERE node_id IS NOT NULL ORDER BY path, start_line, id"
            ).fetchall():
                by_node.setdefault(nid, []).append(cid)
            self._by_node = by_node
        return {n: self._by_node[n] for n in node_ids if n in self._by_node}

    def chunk_paths(self) -> Mapping[str, str]:
        if self._paths is None:
            self._paths = dict(self.con.execute("SELECT id, path FROM chunks").fetchall())
        return self._paths

    def all_chunks(self) -> list[Chunk]:
        rows = self.con.execute(f"SELECT {CHUNK_COLS} FROM chunks ORDER BY path, start_line, id").fetchall()
        return [chunk_from_row(r) for r in rows]

    def chunk_token_lists(self) -> list[tuple[str, list[str]]]:
        rows = self.con.execute("SELECT id, tokens FROM chunks ORDER BY path, start_line, id").fetchall()
        return [(str(i), str(t).split()) for i, t in rows]

    def embedding_blobs(self) -> list[tuple[str, bytes]]:
        rows = self.con.execute("SELECT chunk_id, vec FROM embeddings ORDER BY chunk_id").fetchall()
        return [(str(i), bytes(v)) for i, v in rows]

    # -- graph ------------------------------------------------------------------------
    @property
    def graph(self) -> CodeGraph:
        if self._graph is None:
            nodes = [
                Node(
                    str(r[0]),
                    str(r[1]),
                    str(r[2]),
                    str(r[3]),
                    str(r[4]),
                    int(r[5]),
                    int(r[6]),
                    str(r[7] or ""),
                    str(r[8] or ""),
                    float(r[9]),
                )
                for r in self.con.execute(
                    "SELECT id, kind, name, qualname, path, start_line, end_line, signature, docstring, centrality "
                    "FROM nodes ORDER BY id"
                ).fetchall()
            ]
            edges = [
                Edge(str(s), str(t), str(k), float(c))
                for s, t, k, c in self.con.execute(
                    "SELECT source, target, kind, confidence FROM edges ORDER BY source, target, kind"
                ).fetchall()
            ]
            self._graph = CodeGraph(nodes, edges)
        return self._graph

    def files(self) -> list[tuple[str, str, int, int]]:
        return [
            (str(p), str(lang), int(size), int(n))
            for p, lang, size, n in self.con.execute(
                "SELECT path, language, size, n_lines FROM files ORDER BY path"
            ).fetchall()
        ]

    def file_texts(self) -> dict[str, str]:
        """Path -> text of every file that has one (one query: a query per file cost ~1 s on networkx)."""
        rows = self.con.execute("SELECT path, text FROM files").fetchall()
        return {str(p): str(t) for p, t in rows if t is not None}

    def skipped(self) -> list[SkippedFile]:
        return [
            SkippedFile(str(p), str(r), str(d or ""))
            for p, r, d in self.con.execute(
                "SELECT path, reason, detail FROM skipped ORDER BY path"
            ).fetchall()
        ]

    def origins(self) -> dict[str, Provenance]:
        """Path -> origin of every file that is not source (``oya.scanning.provenance``); empty
        for an index written before origins were kept."""
        if self._origins is None:
            try:
                rows = self.con.execute("SELECT path, origin, reason FROM origins").fetchall()
            except duckdb.CatalogException:
                rows = []
            self._origins = {str(p): Provenance(str(o), str(r)) for p, o, r in rows}
        return self._origins

    def file_origins(self) -> Mapping[str, str]:
        """Path -> origin (the corpus's view, ``oya.core.channels.Corpus``)."""
        return {p: v.origin for p, v in self.origins().items()}

    def stats(self) -> IndexStats:
        def count(table: str) -> int:
            return int(self.con.execute(f"SELECT count(*) FROM {table}").fetchone()[0])  # type: ignore[index]

        return IndexStats(
            count("files"),
            count("chunks"),
            count("nodes"),
            count("edges"),
            count("embeddings"),
            count("skipped"),
        )

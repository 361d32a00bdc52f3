"""A rebuild's index as the previous index patched, not written again from nothing.

Theory of operation:

* ``write_index`` copies the previous ``index.duckdb`` to its temporary file and hands it here;
  the result is swapped in as a full write's would be, so the old index stays valid until then.
* Only rows that differ are touched. Every table is compared row by row with what the build
  holds in memory — for the bulky ones by cheap columns only: a file's text is covered by its
  sha256, a chunk's text and tokens by its id (a hash of path, span and text) and title, its
  vector by the chunk's content hash and the model — and the rows that vanished or changed are
  deleted, the new ones inserted. PageRank moves every node's centrality a little with any
  edit, so a node whose only change is its centrality gets that one column updated. ``meta``
  ``skipped`` and ``origins`` are small and replaced whole. (Replacing ``nodes`` and ``edges`` whole cost
  networkx 1 s of a 1.5 s patch: 32k rows through JSON.)
* BM25's tables are patched too: removed chunks' documents and postings go, their terms' ``df``
  drop; new chunks get new docids after the largest one, new terms new termids after the
  largest one, and ``stats`` is computed again. Every number BM25 uses (``len``, ``df``, ``tf``,
  ``num_docs``, ``avgdl``) is then the one a full build computes; only the docid and termid
  labels differ (a full build numbers them in order), which no query shows. The new postings sit
  after the sorted ones, so a query term's zone-map pruning stays as good.
* Nothing is reused when the previous index cannot vouch for its rows: another schema, another
  embedding model or dimension, another ``reuse_key`` (code that tokenizes or chunks
  differently), no BM25 tables, or too much changed (then a full write is as fast and leaves a
  compact file). ``tests/pipelines/test_incremental.py`` compares a patched index with a full
  build's, table by table.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from oya.core.records import Chunk, Edge, Node
from oya.models import Provenance, SkippedFile, SourceFile
from oya.store.schema import LATER_TABLES

Insert = Callable[[duckdb.DuckDBPyConnection, str, Iterable[tuple[object, ...]], Path], None]

# beyond this share of changed chunks a full write is about as fast, and compacts the file
MAX_CHANGED_SHARE = 0.25
_MUST_MATCH = ("schema_version", "dim", "model_id", "reuse_key")


def usable(con: duckdb.DuckDBPyConnection, meta: Mapping[str, str]) -> bool:
    """Whether the index open on ``con`` was written by the same code for the same model."""
    try:
        old = dict(con.execute("SELECT key, value FROM meta").fetchall())
        has_bm25 = con.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'fts_main_chunks'"
        ).fetchone()
        tables = {
            str(t) for (t,) in con.execute("SELECT table_name FROM information_schema.tables").fetchall()
        }
    except duckdb.Error:
        return False
    return (
        bool(has_bm25 and has_bm25[0] == 3)
        and tables.issuperset(LATER_TABLES)
        and all(old.get(k) == meta.get(k) for k in _MUST_MATCH)
    )


def _changed_chunks(con: duckdb.DuckDBPyConnection, chunks: Sequence[Chunk]) -> tuple[list[str], list[Chunk]]:
    """(ids of the previous chunks to delete, new chunks to insert)."""
    old = {
        str(r[0]): tuple(r[1:])
        for r in con.execute(
            "SELECT id, path, kind, title, start_line, end_line, content_hash, n_tokens, node_id FROM chunks"
        ).fetchall()
    }
    new = {
        c.id: (c.path, c.kind, c.title, c.start_line, c.end_line, c.content_hash, c.n_tokens, c.node_id)
        for c in chunks
    }
    gone = sorted(i for i, row in old.items() if new.get(i) != row)
    added = [c for c in chunks if old.get(c.id) != new[c.id]]
    return gone, added


def _changed_files(
    con: duckdb.DuckDBPyConnection, files: Sequence[SourceFile]
) -> tuple[list[str], list[SourceFile]]:
    old = {
        str(r[0]): tuple(r[1:])
        for r in con.execute("SELECT path, language, size, sha256, n_lines FROM files").fetchall()
    }
    new = {f.path: (f.language, f.size, f.sha256, f.n_lines) for f in files}
    gone = sorted(p for p, row in old.items() if new.get(p) != row)
    return gone, [f for f in files if old.get(f.path) != new[f.path]]


def _changed_parses(
    con: duckdb.DuckDBPyConnection, parsed: Mapping[str, bytes]
) -> tuple[list[str], list[tuple[str, bytes]]]:
    old = {str(p): bytes(b) for p, b in con.execute("SELECT path, parsed FROM parsed_files").fetchall()}
    gone = sorted(p for p, b in old.items() if parsed.get(p) != b)
    return gone, sorted((p, b) for p, b in parsed.items() if old.get(p) != b)


def _sync_edges(con: duckdb.DuckDBPyConnection, edges: Sequence[Edge], insert: Insert, work_dir: Path) -> int:
    """Make ``edges`` hold exactly ``edges`` by deleting and inserting only the rows that differ."""
    old = Counter(con.execute("SELECT source, target, kind, confidence FROM edges").fetchall())
    new = Counter((e.source, e.target, e.kind, e.confidence) for e in edges)
    changed = sorted(((old - new) + (new - old)).keys())  # rows whose counts differ
    con.execute("CREATE TEMP TABLE changed_edges AS SELECT * FROM edges LIMIT 0")
    insert(con, "changed_edges", changed, work_dir)
    con.execute(
        "DELETE FROM edges USING changed_edges c WHERE edges.source = c.source AND edges.target = c.target "
        "AND edges.kind = c.kind AND edges.confidence = c.confidence"
    )
    insert(con, "edges", (row for row in changed for _ in range(new[row])), work_dir)
    con.execute("DROP TABLE changed_edges")
    return len(changed)


def _sync_nodes(
    con: duckdb.DuckDBPyConnection, nodes: Iterable[tuple[object, ...]], insert: Insert, work_dir: Path
) -> int:
    """Like ``_sync_edges`` for ``nodes`` (key: id), except that a node whose only change is its
    centrality (PageRank moves every node a little with any edit) gets just that column updated."""
    old = {str(r[0]): r for r in con.execute("SELECT * FROM nodes").fetchall()}
    new = {str(r[0]): r for r in nodes}
    replaced = sorted(
        i for i in old.keys() | new.keys() if i not in old or i not in new or old[i][:-1] != new[i][:-1]
    )
    moved = sorted(
        (i, new[i][-1])
        for i in new.keys() & old.keys()
        if old[i][:-1] == new[i][:-1] and old[i][-1] != new[i][-1]
    )
    _delete(con, "nodes", "id", replaced)
    insert(con, "nodes", (new[i] for i in replaced if i in new), work_dir)
    con.execute("CREATE TEMP TABLE moved_nodes AS SELECT id, centrality FROM nodes LIMIT 0")
    insert(con, "moved_nodes", moved, work_dir)
    con.execute("UPDATE nodes SET centrality = m.centrality FROM moved_nodes m WHERE nodes.id = m.id")
    con.execute("DROP TABLE moved_nodes")
    return len(replaced)


def _delete(con: duckdb.DuckDBPyConnection, table: str, column: str, keys: Sequence[str]) -> None:
    if keys:
        con.execute(
            f"DELETE FROM {table} WHERE {column} IN (SELECT unnest(string_split(?, '\x1f')))",
            ["\x1f".join(keys)],
        )


# Documents of the chunks in ``gone_chunks`` leave; ``new_chunks`` (rows already in ``chunks``) come
# in with docids after the largest; df follows both; new terms get termids after the largest.
_PATCH_BM25 = """
CREATE TEMP TABLE gone_docs AS
    SELECT docid FROM fts_main_chunks.docs WHERE name IN (SELECT id FROM gone_chunks);
CREATE TEMP TABLE gone_df AS
    SELECT termid, count(*)::BIGINT AS n FROM bm25_postings WHERE docid IN (SELECT docid FROM gone_docs)
    GROUP BY termid;
DELETE FROM bm25_postings WHERE docid IN (SELECT docid FROM gone_docs);
DELETE FROM fts_main_chunks.docs WHERE docid IN (SELECT docid FROM gone_docs);
UPDATE fts_main_chunks.dict SET df = dict.df - g.n FROM gone_df g WHERE dict.termid = g.termid;
CREATE TEMP TABLE new_docs AS
    SELECT (SELECT coalesce(max(docid), -1) FROM fts_main_chunks.docs)
               + row_number() OVER (ORDER BY c.path, c.start_line, c.id) AS docid,
           c.id AS name, c.tokens
    FROM chunks c WHERE c.id IN (SELECT id FROM new_chunks);
CREATE TEMP TABLE occurrences AS
    SELECT docid, term FROM (SELECT docid, unnest(string_split(tokens, ' ')) AS term FROM new_docs)
    WHERE term <> '';
INSERT INTO fts_main_chunks.docs
    SELECT n.docid, n.name, count(o.term)::BIGINT FROM new_docs n LEFT JOIN occurrences o USING (docid)
    GROUP BY ALL ORDER BY n.docid;
INSERT INTO fts_main_chunks.dict
    SELECT (SELECT coalesce(max(termid), -1) FROM fts_main_chunks.dict)
               + row_number() OVER (ORDER BY term), term, 0
    FROM (SELECT DISTINCT term FROM occurrences WHERE term NOT IN (SELECT term FROM fts_main_chunks.dict));
UPDATE fts_main_chunks.dict SET df = dict.df + a.n
    FROM (SELECT term, count(DISTINCT docid)::BIGINT AS n FROM occurrences GROUP BY term) a
    WHERE dict.term = a.term;
INSERT INTO bm25_postings
    SELECT d.termid, o.docid, count(*)::INTEGER AS tf
    FROM occurrences o JOIN fts_main_chunks.dict d USING (term) GROUP BY ALL ORDER BY termid, docid;
DELETE FROM fts_main_chunks.dict WHERE df = 0;
DELETE FROM fts_main_chunks.stats;
INSERT INTO fts_main_chunks.stats
    SELECT count(*)::BIGINT, avg(len)::DOUBLE FROM fts_main_chunks.docs;
"""


@dataclass(frozen=True)
class IndexRows:
    """Everything a new index holds, as the build has it in memory."""

    files: Sequence[SourceFile]
    skipped: Sequence[SkippedFile]
    chunks: Sequence[Chunk]
    embeddings: Mapping[str, bytes]  # chunk id -> little-endian float32 vector
    nodes: Sequence[Node]
    edges: Sequence[Edge]
    meta: Mapping[str, str]
    parsed: Mapping[str, bytes]  # path -> encoded parse (oya.graph.reuse)
    tokens: Callable[[Sequence[Chunk]], Mapping[str, str]]  # the known tokens of chunks to write
    origins: Mapping[str, Provenance] = field(default_factory=dict)  # files that are not source

    def origin_rows(self) -> Iterator[tuple[str, str, str]]:
        for path, p in sorted(self.origins.items()):
            yield path, p.origin, p.reason


def patch(
    con: duckdb.DuckDBPyConnection,
    work_dir: Path,
    insert: Insert,
    chunk_rows: Callable[[Sequence[Chunk]], Iterable[tuple[object, ...]]],
    node_row: Callable[[Node], tuple[object, ...]],
    new: IndexRows,
) -> dict[str, int] | None:
    """Turn the previous index open on ``con`` into the new one and count the rows it changed;
    None when a full write is the better way (``con`` may then be half patched: discard it)."""
    files, skipped, chunks, embeddings, meta = new.files, new.skipped, new.chunks, new.embeddings, new.meta
    gone_chunks, new_chunks = _changed_chunks(con, chunks)
    if len(gone_chunks) + len(new_chunks) > MAX_CHANGED_SHARE * max(len(chunks), 1):
        return None
    gone_files, new_files = _changed_files(con, files)
    gone_parses, new_parses = _changed_parses(con, new.parsed)
    # deletes first, committed, so re-inserting a key is never checked against its deleted row
    con.execute("BEGIN")
    _delete(con, "files", "path", gone_files)
    _delete(con, "chunks", "id", gone_chunks)
    _delete(con, "embeddings", "chunk_id", gone_chunks)
    _delete(con, "parsed_files", "path", gone_parses)
    for table in ("meta", "skipped", "origins"):
        con.execute(f"DELETE FROM {table}")
    con.execute("COMMIT")
    nodes_replaced = _sync_nodes(con, (node_row(n) for n in new.nodes), insert, work_dir)
    edges_changed = _sync_edges(con, new.edges, insert, work_dir)
    rows: list[tuple[str, Iterable[tuple[object, ...]]]] = [
        ("meta", sorted(meta.items())),
        ("files", ((f.path, f.language, f.size, f.sha256, f.n_lines, f.text) for f in new_files)),
        ("skipped", ((s.path, s.reason, s.detail) for s in sorted(skipped, key=lambda s: s.path))),
        ("origins", new.origin_rows()),
        ("chunks", chunk_rows(new_chunks)),
        ("embeddings", ((c.id, embeddings[c.id]) for c in new_chunks if c.id in embeddings)),
        ("parsed_files", new_parses),
    ]
    for table, table_rows in rows:
        insert(con, table, table_rows, work_dir)
    _patch_bm25(con, gone_chunks, [c.id for c in new_chunks])
    if not _complete(con, files, chunks, embeddings):
        return None
    return {
        "files_removed": len(gone_files),
        "files_added": len(new_files),
        "chunks_removed": len(gone_chunks),
        "chunks_added": len(new_chunks),
        "nodes_replaced": nodes_replaced,
        "edges_changed": edges_changed,
    }


def _patch_bm25(con: duckdb.DuckDBPyConnection, gone: Sequence[str], added: Sequence[str]) -> None:
    """BM25's tables after chunks ``gone`` left and ``added`` (rows already in ``chunks``) came."""
    for table, ids in (("gone_chunks", gone), ("new_chunks", added)):
        con.execute(f"CREATE TEMP TABLE {table} (id VARCHAR)")
        if ids:  # chunk ids are hex digests: a space never occurs in one
            con.execute(f"INSERT INTO {table} SELECT unnest(string_split(?, ' '))", [" ".join(ids)])
    con.execute(_PATCH_BM25)
    for table in ("gone_chunks", "new_chunks", "gone_docs", "gone_df", "new_docs", "occurrences"):
        con.execute(f"DROP TABLE {table}")


def _complete(
    con: duckdb.DuckDBPyConnection,
    files: Sequence[SourceFile],
    chunks: Sequence[Chunk],
    embeddings: Mapping[str, bytes],
) -> bool:
    """Whether the patched tables hold as many rows as a full write would (else one is made)."""
    expected = {
        "files": len(files),
        "chunks": len(chunks),
        "embeddings": sum(1 for c in chunks if c.id in embeddings),
        "fts_main_chunks.docs": len(chunks),
    }
    for table, n in expected.items():
        row = con.execute(f"SELECT count(*) FROM {table}").fetchone()
        if row is None or row[0] != n:
            return False
    return True


__all__ = ["MAX_CHANGED_SHARE", "IndexRows", "patch", "usable"]

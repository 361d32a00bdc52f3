"""The index: one DuckDB file per repository, and the DuckDB-backed retrieval channels.

Theory of operation:

* ``write_index`` writes a complete index into a temporary file beside the target and then
  renames it over the old one (``os.replace`` is atomic on one filesystem), so a failed build
  never destroys the index that was already there.
* Tables: ``meta``, ``files``, ``chunks`` (with ``tokens``: the core tokenizer's output,
  space-joined), ``embeddings`` (unit vectors as little-endian float32 BLOBs), ``nodes``, ``edges``,
  ``skipped``, ``parsed_files`` (each file's parse as compressed JSON, which the next build reuses for the
  files that did not change; see ``oya.graph.reuse``).
* BM25's statistics are plain SQL over ``chunks.tokens`` (split at spaces only, so the terms are
  exactly the core's tokens): ``fts_main_chunks.docs`` (docid = the chunk's rowid, name, len),
  ``.dict`` (termid, term, df) and ``.stats`` (num_docs, avgdl), the tables and columns DuckDB's
  ``fts`` extension makes, plus ``bm25_postings`` (termid, docid, tf) sorted by termid. The
  extension's ``create_fts_index`` built the same numbers three times slower (it also writes a
  row per token occurrence, a million for networkx); ``tests/adapters/test_store_parity.py``
  builds the extension's index over the same chunks and checks the two agree.
* Queries do not call ``match_bm25`` row by row; ``DuckBM25Channel`` evaluates the same
  formula as one aggregate over those tables, which is what ``oya.core.bm25`` computes too —
  the parity tests hold the rankings together. Reading needs no extension at all.
* The semantic channel loads the vector blobs once into a numpy matrix and ranks by one
  matrix-vector product (DuckDB cannot read a float32 BLOB as an array, and
  ``FLOAT[dim]`` columns made the build 20x slower to write); it ranks like
  ``oya.core.vectors`` (parity-tested too).
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import duckdb
import numpy as np

from oya.core.bm25 import K1, B, rarest
from oya.core.channels import ChannelUnavailable
from oya.core.file_lexical import FileDocs
from oya.core.graph import CodeGraph
from oya.core.query import QueryPlan
from oya.core.records import Chunk, Edge, Node
from oya.core.text import indexed_text
from oya.core.tokenize import tokenize
from oya.errors import IndexCorruptError, IndexMissingError, OyaError
from oya.models import SkippedFile, SourceFile
from oya.store import patch
from oya.store.patch import IndexRows

INDEX_FILE = "index.duckdb"
# The size of the index as last written whole, beside it. A patched copy keeps the blocks DuckDB
# freed (networkx: 44 MB written whole, 85 MB after one patch, 111 MB after nine), so past
# MAX_GROWTH times that size the next build writes the index whole again, which compacts it.
WHOLE_SIZE_FILE = "index.duckdb.whole-bytes"
STAGED_SUFFIX = ".staged"  # a build's new index, beside the live one until its checks pass
MAX_GROWTH = 3.0
SCHEMA_VERSION = "2"

_SCHEMA = """
CREATE TABLE meta (key VARCHAR PRIMARY KEY, value VARCHAR);
CREATE TABLE files (path VARCHAR PRIMARY KEY, language VARCHAR, size BIGINT, sha256 VARCHAR,
                    n_lines INTEGER, text VARCHAR);
CREATE TABLE skipped (path VARCHAR, reason VARCHAR, detail VARCHAR);
CREATE TABLE chunks (id VARCHAR PRIMARY KEY, path VARCHAR, kind VARCHAR, title VARCHAR,
                     start_line INTEGER, end_line INTEGER, text VARCHAR, content_hash VARCHAR,
                     n_tokens INTEGER, node_id VARCHAR, tokens VARCHAR);
CREATE TABLE nodes (id VARCHAR PRIMARY KEY, kind VARCHAR, name VARCHAR, qualname VARCHAR,
                    path VARCHAR, start_line INTEGER, end_line INTEGER, signature VARCHAR,
                    docstring VARCHAR, centrality DOUBLE);
CREATE TABLE edges (source VARCHAR, target VARCHAR, kind VARCHAR, confidence DOUBLE);
CREATE TABLE embeddings (chunk_id VARCHAR PRIMARY KEY, vec BLOB);
CREATE TABLE parsed_files (path VARCHAR PRIMARY KEY, parsed BLOB);
"""


def chunk_tokens(chunk: Chunk) -> list[str]:
    """What the lexical channels index for a chunk: its title (symbol name) and its text."""
    return tokenize(indexed_text(chunk))


# Every token occurrence once (empty token strings give no term), then the FTS layout from it.
_BM25_TABLES = """
CREATE SCHEMA fts_main_chunks;
CREATE TEMP TABLE occurrences AS
    SELECT docid, term FROM (SELECT rowid AS docid, unnest(string_split(tokens, ' ')) AS term FROM chunks)
    WHERE term <> '';
CREATE TABLE fts_main_chunks.docs AS
    SELECT c.rowid AS docid, c.id AS name, count(o.term)::BIGINT AS len
    FROM chunks c LEFT JOIN occurrences o ON o.docid = c.rowid GROUP BY ALL ORDER BY docid;
CREATE TABLE fts_main_chunks.dict AS
    SELECT (row_number() OVER (ORDER BY term) - 1)::BIGINT AS termid, term, count(DISTINCT docid)::BIGINT AS df
    FROM occurrences GROUP BY term ORDER BY termid;
CREATE TABLE fts_main_chunks.stats AS
    SELECT count(*)::BIGINT AS num_docs, avg(len)::DOUBLE AS avgdl FROM fts_main_chunks.docs;
CREATE TABLE bm25_postings AS
    SELECT d.termid, o.docid, count(*)::INTEGER AS tf
    FROM occurrences o JOIN fts_main_chunks.dict d USING (term) GROUP BY ALL ORDER BY termid, docid;
DROP TABLE occurrences;
"""


_WRITE_STEPS = 9  # what ``progress`` counts: the 8 tables, then the BM25 tables


def _write_bm25_tables(con: duckdb.DuckDBPyConnection) -> None:
    con.execute(_BM25_TABLES)


def write_index(
    out_dir: Path,
    *,
    files: Sequence[SourceFile],
    skipped: Sequence[SkippedFile],
    chunks: Sequence[Chunk],
    embeddings: Mapping[str, bytes],
    nodes: Sequence[Node],
    edges: Sequence[Edge],
    meta: Mapping[str, str],
    dim: int,
    parsed: Mapping[str, bytes] | None = None,
    tokens: Callable[[Sequence[Chunk]], Mapping[str, str]] | None = None,
    progress: Callable[[int, int], None] | None = None,
    report: dict[str, int] | None = None,
    stage: bool = False,
) -> Path:
    """Write the index to ``out_dir/index.duckdb`` atomically; returns its path. With ``stage``
    it goes to ``out_dir/.index.duckdb.<uuid>.staged`` instead and the live index stays until
    ``publish_index``.

    When the index already there was written by the same code for the same model and little
    changed, it is copied and patched (``oya.store.patch``) rather than written from nothing;
    ``report`` (when given) receives ``patched`` (0 or 1) and the rows the patch changed.

    ``embeddings`` maps chunk id to a little-endian float32 blob of ``dim`` floats; ``parsed`` maps
    a path to its encoded parse (``oya.graph.reuse``); ``tokens`` gives, for the chunks about to be written,
    the space-joined ``chunk_tokens`` of those whose tokens are already known (the rest are tokenized here). ``progress`` hears (tables written, of).
    Rows go in through newline-delimited JSON files read by ``read_json`` (DuckDB's
    ``executemany`` inserts row by row and is two orders of magnitude slower).
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    final = out_dir / INDEX_FILE
    tmp = out_dir / f".{INDEX_FILE}.{uuid.uuid4().hex}.tmp"
    # one name per build: two builds of one folder never check or publish each other's index
    target = tmp.with_suffix(STAGED_SUFFIX) if stage else final
    rows = IndexRows(
        files=files,
        skipped=skipped,
        chunks=chunks,
        embeddings=embeddings,
        nodes=nodes,
        edges=edges,
        meta={"schema_version": SCHEMA_VERSION, "dim": str(dim), **meta},
        parsed=parsed or {},
        tokens=tokens or _none_known,
    )
    try:
        changed = _patched(final, tmp, rows)
        if report is not None:
            report.update({"patched": int(changed is not None), **(changed or {})})
        if changed is None:
            _write_new(tmp, rows, progress)
        os.replace(tmp, target)
        if changed is None:
            (out_dir / WHOLE_SIZE_FILE).write_text(str(target.stat().st_size))
        if progress:
            progress(_WRITE_STEPS, _WRITE_STEPS)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        with contextlib.suppress(FileNotFoundError):
            Path(str(tmp) + ".wal").unlink()
    return target


def publish_index(staged: Path) -> Path:
    """Swap a staged index (``write_index(stage=True)``) in over the live one beside it; returns
    the live path. One ``os.replace``: readers see the old index or the new one, never neither."""
    final = staged.parent / INDEX_FILE
    try:
        os.replace(staged, final)
    except OSError as exc:
        raise OyaError(f"cannot publish the index at {final}: {exc.strerror or exc}") from exc
    return final


def is_oya_index(db: Path) -> bool:
    """Whether ``db`` is an index Oya wrote, of any schema version: a DuckDB file whose ``meta``
    table names its schema, model and dimension (``oya.build.ownership``: a build replaces no other)."""
    try:
        with open(db, "rb") as fh:
            if fh.read(12)[8:12] != b"DUCK":  # DuckDB's magic bytes: any other file is not opened
                return False
        con = duckdb.connect(str(db), read_only=True)
    except (OSError, duckdb.Error):
        return False
    try:
        keys = {str(k) for (k,) in con.execute("SELECT key FROM meta").fetchall()}
    except duckdb.Error:
        return False
    finally:
        con.close()
    return {"schema_version", "model_id", "dim"} <= keys


def _whole_size(out_dir: Path) -> float:
    """The index's size when last written whole; 0 when not known (so it is written whole)."""
    try:
        return float((out_dir / WHOLE_SIZE_FILE).read_text())
    except (OSError, ValueError):
        return 0.0


def _none_known(chunks: Sequence[Chunk]) -> Mapping[str, str]:
    return {}


def _chunk_rows(chunks: Sequence[Chunk], rows: IndexRows) -> Iterator[tuple[object, ...]]:
    known = rows.tokens(chunks)
    for c in chunks:
        yield _chunk_row(c, known)


def _chunk_row(c: Chunk, known: Mapping[str, str]) -> tuple[object, ...]:
    tokens = known[c.id] if c.id in known else " ".join(chunk_tokens(c))
    return (
        c.id,
        c.path,
        c.kind,
        c.title,
        c.start_line,
        c.end_line,
        c.text,
        c.content_hash,
        c.n_tokens,
        c.node_id,
        tokens,
    )


def _patched(final: Path, tmp: Path, rows: IndexRows) -> dict[str, int] | None:
    """Write the index into ``tmp`` as a patched copy of ``final`` (``oya.store.patch``) and count
    the rows that changed; None, with ``tmp`` removed, when the previous index cannot serve."""
    if not final.is_file() or Path(str(final) + ".wal").exists() or not rows.chunks:
        return None  # (a write-ahead log beside it: the file alone is not the whole index)
    if final.stat().st_size > MAX_GROWTH * _whole_size(final.parent):
        return None  # grown by patches (or its whole size is unknown): compacted by a whole write
    shutil.copyfile(final, tmp)
    changed: dict[str, int] | None = None
    try:
        con = duckdb.connect(str(tmp))
        try:
            con.execute("SET enable_progress_bar = false")
            if patch.usable(con, rows.meta):
                changed = patch.patch(
                    con, tmp.parent, _bulk_insert, lambda c: _chunk_rows(c, rows), node_row, rows
                )
            if changed is not None:
                con.execute("CHECKPOINT")
        finally:
            con.close()
    except duckdb.Error:
        changed = None  # a previous index DuckDB cannot patch: written whole instead
    if changed is None:
        for path in (tmp, Path(str(tmp) + ".wal")):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
    return changed


def _write_new(tmp: Path, rows: IndexRows, progress: Callable[[int, int], None] | None) -> None:
    con = duckdb.connect(str(tmp))
    try:
        con.execute("SET enable_progress_bar = false")
        con.execute(_SCHEMA)
        ordered = sorted(rows.chunks, key=lambda c: (c.path, c.start_line, c.id))
        files = sorted(rows.files, key=_path)
        edges = sorted(rows.edges, key=lambda e: (e.source, e.target, e.kind))
        tables: list[tuple[str, Iterable[tuple[object, ...]]]] = [
            ("meta", sorted(rows.meta.items())),
            ("files", ((f.path, f.language, f.size, f.sha256, f.n_lines, f.text) for f in files)),
            ("skipped", ((s.path, s.reason, s.detail) for s in sorted(rows.skipped, key=_path))),
            ("chunks", _chunk_rows(ordered, rows)),
            ("nodes", (node_row(n) for n in sorted(rows.nodes, key=lambda n: n.id))),
            ("edges", ((e.source, e.target, e.kind, e.confidence) for e in edges)),
            ("embeddings", ((c.id, rows.embeddings[c.id]) for c in ordered if c.id in rows.embeddings)),
            ("parsed_files", sorted(rows.parsed.items())),
        ]
        steps = _WRITE_STEPS  # the tables, then the BM25 tables
        for done, (table, table_rows) in enumerate(tables):
            if progress:
                progress(done, steps)
            _bulk_insert(con, table, table_rows, tmp.parent)
        if progress:
            progress(len(tables), steps)
        if ordered:
            _write_bm25_tables(con)
        con.execute("CHECKPOINT")
    finally:
        con.close()


def node_row(n: Node) -> tuple[str, str, str, str, str, int, int, str, str, float]:
    """A node as the ``nodes`` table's columns, in order."""
    return (
        n.id,
        n.kind,
        n.name,
        n.qualname,
        n.path,
        n.start_line,
        n.end_line,
        n.signature,
        n.docstring,
        n.centrality,
    )


def _path(item: SourceFile | SkippedFile) -> str:
    return item.path


def _bulk_insert(
    con: duckdb.DuckDBPyConnection, table: str, rows: Iterable[tuple[object, ...]], work_dir: Path
) -> None:
    """Insert rows through a temporary NDJSON file; BLOB columns travel as base64."""
    cols = con.execute(
        "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = ? ORDER BY ordinal_position",
        [table],
    ).fetchall()
    blob = [t == "BLOB" for _, t in cols]
    names = [f"c{i}" for i in range(len(cols))]
    fd, name = tempfile.mkstemp(prefix=f".{table}.", suffix=".ndjson", dir=work_dir)
    n = 0
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            for row in rows:
                values = [
                    base64.b64encode(v).decode() if is_blob and v is not None else v  # type: ignore[arg-type]
                    for v, is_blob in zip(row, blob, strict=True)
                ]
                fh.write(json.dumps(dict(zip(names, values, strict=True)), ensure_ascii=False))
                fh.write("\n")
                n += 1
        if not n:
            return
        spec = ", ".join(
            f"{c}: '{'VARCHAR' if b else t}'" for c, (_, t), b in zip(names, cols, blob, strict=True)
        )
        exprs = ", ".join(f"from_base64({c})" if b else c for c, b in zip(names, blob, strict=True))
        con.execute(
            f"INSERT INTO {table} SELECT {exprs} FROM read_json(?, columns={{{spec}}}, "
            "format='newline_delimited', maximum_object_size=1073741824)",
            [name],
        )
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name)


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
        if not ids:
            return {}
        # ids travel as one space-joined string: a Python list parameter makes DuckDB probe for
        # pandas once per element (a failed import each time, ~8 ms per call without pandas)
        rows = self.con.execute(
            f"SELECT {CHUNK_COLS} FROM chunks WHERE id IN (SELECT unnest(string_split(?, ' ')))",
            [" ".join(ids)],
        ).fetchall()
        return {str(r[0]): chunk_from_row(r) for r in rows}

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


class DuckBM25Channel:
    """BM25 evaluated by DuckDB over the FTS tables; ranks exactly like ``oya.core.bm25``, and
    sums its term counts per file as ``oya.core.file_lexical.MemoryFileTerms`` does (``FileTerms``)."""

    name = "lexical"

    def __init__(self, index: Index, k1: float = K1, b: float = B) -> None:
        self.index = index
        self.k1 = k1
        self.b = b
        self._docs: FileDocs | None = None

    def file_docs(self, paths: Mapping[str, str]) -> FileDocs:
        """Each file's length in tokens (its chunks' summed), read once."""
        if self._docs is None:
            rows = (
                self.index.con.execute(
                    "SELECT c.path, sum(d.len) FROM fts_main_chunks.docs d JOIN chunks c ON c.id = d.name "
                    "GROUP BY c.path"
                ).fetchall()
                if self.index.has_fts
                else []
            )
            self._docs = FileDocs({str(p): int(n) for p, n in rows}, k1=self.k1, b=self.b)
        return self._docs

    def file_term_counts(self, terms: Sequence[str], paths: Mapping[str, str]) -> dict[str, dict[str, int]]:
        """Per term the chunk BM25 searches (its rarest): file -> its count summed over the file's chunks."""
        terms = list(dict.fromkeys(terms))
        if not terms or not self.index.has_fts:
            return {}
        con = self.index.con
        found = con.execute(
            f"SELECT termid, term, df FROM fts_main_chunks.dict WHERE term IN ({_sql_strings(terms)})"
        ).fetchall()
        df = {str(t): int(n) for _, t, n in found}
        keep = set(rarest(terms, lambda t: df.get(t, 0)))
        term_of = {int(tid): str(t) for tid, t, _ in found if t in keep}
        if not term_of:
            return {}
        ids = ", ".join(str(t) for t in sorted(term_of))  # inlined: the zone maps prune (bm25_sql)
        rows = con.execute(
            "SELECT p.termid, c.path, sum(p.tf)::BIGINT FROM bm25_postings p JOIN fts_main_chunks.docs d "
            f"USING (docid) JOIN chunks c ON c.id = d.name WHERE p.termid IN ({ids}) GROUP BY ALL"
        ).fetchall()
        out: dict[str, dict[str, int]] = {}
        for tid, path, tf in rows:
            out.setdefault(term_of[int(tid)], {})[str(path)] = int(tf)
        return out

    def search(self, plan: QueryPlan, vector: Sequence[float] | None, k: int) -> list[tuple[str, float]]:
        if not self.index.has_fts:
            raise ChannelUnavailable("the index has no full-text index")
        terms = list(dict.fromkeys(plan.lexical_tokens))
        if not terms:
            return []
        return bm25_sql(self.index.con, terms, k, self.k1, self.b)


def bm25_sql(
    con: duckdb.DuckDBPyConnection, terms: list[str], k: int | None, k1: float = K1, b: float = B
) -> list[tuple[str, float]]:
    """The BM25 of ``oya.core.bm25`` as one DuckDB aggregate over the fts tables."""
    # Bit-for-bit the core's arithmetic, so exact ties stay ties and break by id the same way:
    # the same operation order per term, and the terms summed left to right in query order
    # (a plain sum() adds in whatever order the parallel aggregate meets them).
    terms = list(dict.fromkeys(terms))
    # 1. the query's terms, inlined as SQL string literals: DuckDB's Python client converts each
    #    bound parameter on its own (a list parameter probes pandas per element), which cost
    #    80 ms for a 10 kB report's ~650 terms against 5 ms inlined (bench/long_query_bench.py)
    found = con.execute(
        f"SELECT term, termid, df FROM fts_main_chunks.dict WHERE term IN ({_sql_strings(terms)})"
    ).fetchall()
    df = {str(t): int(n) for t, _, n in found}
    keep = set(rarest(terms, lambda t: df.get(t, 0)))  # a long question's rarest, as the core
    found = [(t, tid) for t, tid, _ in found if t in keep]
    if not found:
        return []
    pos = {t: i for i, t in enumerate(terms)}
    qt = sorted((pos[str(t)], int(tid)) for t, tid in found)
    # 2. their postings from ``bm25_postings`` (term frequencies per document, sorted by termid
    #    at build time, so DuckDB's zone maps skip every row group without a query term; the
    #    termids are inlined as integers for that pruning to apply, and the (termid, position)
    #    pairs too: they are ints made here)
    values = ", ".join(f"({tid}, {i})" for i, tid in qt)
    ids = ", ".join(str(tid) for _, tid in qt)
    rows = con.execute(
        f"""
        WITH qt AS (SELECT * FROM (VALUES {values}) AS v(termid, pos)),
        st AS (SELECT num_docs, avgdl FROM fts_main_chunks.stats),
        qi AS (SELECT qt.termid, qt.pos, ln((st.num_docs - d.df + 0.5) / (d.df + 0.5) + 1.0) AS idf
               FROM qt JOIN fts_main_chunks.dict d ON d.termid = qt.termid, st),
        tf AS (SELECT docid, termid, tf FROM bm25_postings WHERE termid IN ({ids}))
        SELECT docs.name,
               list_reduce(
                   list(qi.idf * (tf.tf * (? + 1)) / (tf.tf + ? * ((1 - ?) + ? * (docs.len / st.avgdl)))
                        ORDER BY qi.pos),
                   lambda a, b: a + b
               ) AS score
        FROM tf JOIN qi USING (termid) JOIN fts_main_chunks.docs docs USING (docid), st
        GROUP BY docs.name
        ORDER BY score DESC, docs.name
        LIMIT ?
        """,
        [k1, k1, b, b, k if k is not None else 2**31 - 1],
    ).fetchall()
    return [(str(n), float(s)) for n, s in rows]


def _sql_strings(terms: list[str]) -> str:
    """``terms`` as a list of SQL string literals (quotes doubled; the tokenizer's terms are
    ``[A-Za-z0-9_]+``, the doubling keeps anything else a literal too)."""
    return ", ".join("'" + t.replace("'", "''") + "'" for t in terms)


class MatrixVectorChannel:
    """Cosine over the index's unit vectors as one numpy matrix-vector product."""

    name = "semantic"

    def __init__(self, index: Index) -> None:
        self.index = index
        self._ids: list[str] | None = None
        self._matrix: np.ndarray | None = None
        self._pos: dict[str, int] | None = None
        self._matrix64: np.ndarray | None = None

    def _load(self) -> None:
        rows = self.index.embedding_blobs()
        self._ids = [i for i, _ in rows]
        dim = self.index.dim
        buf = b"".join(b for _, b in rows)
        self._matrix = (
            np.frombuffer(buf, dtype="<f4").reshape(len(rows), dim) if rows else np.zeros((0, dim), "<f4")
        )

    def vectors_for(self, ids: Sequence[str]) -> dict[str, Sequence[float]]:
        """Stored vectors of ``ids`` as Python floats (the float32 values, as the core reads them)."""
        if self._matrix is None:
            self._load()
        assert self._matrix is not None and self._ids is not None
        if self._pos is None:
            self._pos = {cid: i for i, cid in enumerate(self._ids)}
        pos = self._pos
        return {cid: self._matrix[pos[cid]].tolist() for cid in ids if cid in pos}

    def search(self, plan: QueryPlan, vector: Sequence[float] | None, k: int) -> list[tuple[str, float]]:
        if self._matrix is None:
            self._load()
        assert self._matrix is not None and self._ids is not None
        if not len(self._ids):
            raise ChannelUnavailable("the index has no embeddings")
        if vector is None:
            raise ChannelUnavailable("no embedding for the question")
        if len(vector) != self.index.dim:
            raise ChannelUnavailable(f"question vector has dimension {len(vector)}, index {self.index.dim}")
        # float64 accumulation, as the core's sumprod does, so near-ties break the same way
        if self._matrix64 is None:  # converted once, not per question (28 MB for 10k x 384)
            self._matrix64 = self._matrix.astype(np.float64)
        sims = self._matrix64 @ np.asarray(vector, dtype=np.float32).astype(np.float64)
        k = min(k, len(self._ids))
        if k <= 0:
            return []
        if k < len(self._ids):
            # every row tied with the k-th best comes along, so ties at the cut break by id
            # (argpartition alone picks an arbitrary member of a tie)
            kth = np.partition(sims, len(sims) - k)[len(sims) - k]
            top = np.flatnonzero(sims >= kth)
        else:
            top = np.arange(len(self._ids))
        ranked = sorted(((self._ids[i], float(sims[i])) for i in top), key=lambda item: (-item[1], item[0]))
        return ranked[:k]

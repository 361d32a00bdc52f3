"""The index's one writer: one DuckDB file per repository, written whole or patched, then swapped in.

Theory of operation:

* ``write_index`` writes a complete index into a temporary file beside the target and then
  renames it over the old one (``os.replace`` is atomic on one filesystem), so a failed build
  never destroys the index that was already there.
* Tables: ``meta``, ``files``, ``chunks`` (with ``tokens``: the core tokenizer's output,
  space-joined), ``embeddings`` (unit vectors as little-endian float32 BLOBs), ``nodes``, ``edges``,
  ``skipped``, ``origins`` (the files that are not source: generated, vendored, copies; see
  ``oya.scanning.provenance``), ``parsed_files`` (each file's parse as compressed JSON, which the next build reuses for the
  files that did not change; see ``oya.graph.reuse``).
* BM25's statistics are plain SQL over ``chunks.tokens`` (split at spaces only, so the terms are
  exactly the core's tokens): ``fts_main_chunks.docs`` (docid = the chunk's rowid, name, len),
  ``.dict`` (termid, term, df) and ``.stats`` (num_docs, avgdl), the tables and columns DuckDB's
  ``fts`` extension makes, plus ``bm25_postings`` (termid, docid, tf) sorted by termid. The
  extension's ``create_fts_index`` built the same numbers three times slower (it also writes a
  row per token occurrence, a million for networkx); ``tests/adapters/test_store_parity.py``
  builds the extension's index over the same chunks and checks the two agree. The query side
  (``oya.store.backends``) reads them with no extension at all.
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
from pathlib import Path

import duckdb

from oya.core.records import Chunk, Edge, Node
from oya.core.text import indexed_text
from oya.core.tokenize import tokenize
from oya.errors import OyaError
from oya.models import Provenance, SkippedFile, SourceFile
from oya.store import patch
from oya.store.patch import IndexRows
from oya.store.schema import INDEX_FILE, SCHEMA_VERSION, STAGED_SUFFIX, WHOLE_SIZE_FILE

# past this many times its size when last written whole, the index is written whole again
# (``oya.store.schema.WHOLE_SIZE_FILE``)
MAX_GROWTH = 3.0

_SCHEMA = """
CREATE TABLE meta (key VARCHAR PRIMARY KEY, value VARCHAR);
CREATE TABLE files (path VARCHAR PRIMARY KEY, language VARCHAR, size BIGINT, sha256 VARCHAR,
                    n_lines INTEGER, text VARCHAR);
CREATE TABLE skipped (path VARCHAR, reason VARCHAR, detail VARCHAR);
CREATE TABLE origins (path VARCHAR PRIMARY KEY, origin VARCHAR, reason VARCHAR);
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


_WRITE_STEPS = 10  # what ``progress`` counts: the 9 tables, then the BM25 tables


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
    origins: Mapping[str, Provenance] | None = None,
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
        origins=origins or {},
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
            ("origins", rows.origin_rows()),
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

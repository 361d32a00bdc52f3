"""Reading the index a rebuild replaces: what ``oya.reuse`` may take over from it.

Part of the store (only ``oya.store`` and its ``store_*`` modules run SQL): the previous index is
opened read-only, and nothing of it is used when it was written with another schema or by code
whose per-file results differ (``oya.reuse.reuse_key``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from pathlib import Path

import duckdb

from oya import reuse
from oya.core.records import Chunk
from oya.store import CHUNK_COLS, INDEX_FILE, SCHEMA_VERSION, chunk_from_row


# -- reading the previous index ------------------------------------------------------------------
@contextlib.contextmanager
def _previous(out_dir: Path) -> Iterator[duckdb.DuckDBPyConnection | None]:
    """The index a rebuild replaces, opened read-only, or None when nothing in it may be reused:
    no index, unreadable, another schema, or written by code whose per-file results differ."""
    db = out_dir / INDEX_FILE
    con = None
    try:
        if db.is_file():
            con = duckdb.connect(str(db), read_only=True)
            con.execute("SET enable_progress_bar = false")
            meta = dict(con.execute("SELECT key, value FROM meta").fetchall())
            if meta.get("schema_version") != SCHEMA_VERSION or meta.get("reuse_key") != reuse.reuse_key():
                con.close()
                con = None
    except duckdb.Error:
        if con is not None:
            con.close()
        con = None
    try:
        yield con
    finally:
        if con is not None:
            con.close()


def previous_parses(out_dir: Path) -> dict[str, tuple[str, str, object]]:
    """Path -> (sha256, language, encoded parse) of every parsed file in the previous index."""
    with _previous(out_dir) as con:
        if con is None:
            return {}
        with contextlib.suppress(duckdb.Error):
            rows = con.execute(
                "SELECT p.path, f.sha256, f.language, p.parsed FROM parsed_files p JOIN files f USING (path)"
            ).fetchall()
            return {str(p): (str(h), str(lang), b) for p, h, lang, b in rows}
    return {}


def previous_chunks(out_dir: Path) -> dict[str, tuple[str, str, list[Chunk]]]:
    """Path -> (sha256, language, its chunks in order) of every file in the previous index."""
    out: dict[str, tuple[str, str, list[Chunk]]] = {}
    with _previous(out_dir) as con:
        if con is None:
            return {}
        try:
            files = con.execute("SELECT path, sha256, language FROM files").fetchall()
            rows = con.execute(f"SELECT {CHUNK_COLS} FROM chunks ORDER BY path, start_line, id").fetchall()
        except duckdb.Error:
            return {}
        for path, sha, lang in files:
            out[str(path)] = (str(sha), str(lang), [])
        for row in rows:
            if str(row[1]) in out:
                out[str(row[1])][2].append(chunk_from_row(row))
    return out


def previous_tokens(out_dir: Path, chunks: Sequence[Chunk]) -> dict[str, str]:
    """Chunk id -> its indexed tokens, for those of ``chunks`` the previous index holds with the
    same id and title (asked for only the chunks a build writes: a patch writes a handful)."""
    if not chunks:
        return {}
    with _previous(out_dir) as con:
        if con is None:
            return {}
        with contextlib.suppress(duckdb.Error):
            rows = con.execute(
                "SELECT id, title, tokens FROM chunks WHERE id IN (SELECT unnest(string_split(?, ' ')))",
                [" ".join(c.id for c in chunks)],  # ids are hex digests: no spaces
            ).fetchall()
            titles = {c.id: c.title for c in chunks}
            return {str(i): str(tok) for i, t, tok in rows if titles.get(str(i)) == t}
    return {}


def previous_texts(out_dir: Path) -> dict[str, tuple[str, str, int, str]]:
    """Path -> (sha256, language, lines, text) of every file in the previous index."""
    with _previous(out_dir) as con:
        if con is None:
            return {}
        with contextlib.suppress(duckdb.Error):
            rows = con.execute("SELECT path, sha256, language, n_lines, text FROM files").fetchall()
            return {str(p): (str(h), str(lang), int(n), str(t)) for p, h, lang, n, t in rows}
    return {}

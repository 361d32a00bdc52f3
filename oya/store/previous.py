"""Reading the index a rebuild replaces: what a rebuild may take over from it (parses,
chunks, tokens, file texts), and the key that says whether it may take anything.

Theory of operation:

* Reuse is all or nothing per index: the index records ``reuse_key``, a hash of the source of
  every module that decides a file's parse, chunks or tokens, or the rows a patched index keeps
  (``oya.store.patch``), and of the parser packages' versions. An index written by other code
  (an upgrade, a local edit) is not reused at all; what is reused per file is told in
  ``oya.graph.reuse``.
* Part of the store (only the modules of ``oya.store`` run SQL): the previous index is opened
  read-only, and nothing of it is used when it was written with another schema or another
  ``reuse_key``.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Iterator, Sequence
from importlib import import_module
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import duckdb

from oya.core.records import Chunk
from oya.store.index import CHUNK_COLS, chunk_from_row
from oya.store.schema import INDEX_FILE, SCHEMA_VERSION

# -- the key ------------------------------------------------------------------------------------
# Modules whose code decides a file's parse, chunks or tokens, or the rows a patched index keeps
# (a file's text is compared by its sha256, which the reader takes of the raw bytes); and the
# parsers' packages.
_MODULES = (
    "oya.scanning.reader",
    "oya.scanning.languages",
    "oya.scanning.ignores",
    "oya.scanning.redact",
    "oya.graph.reuse",
    "oya.store.previous",
    "oya.models",
    "oya.core.records",
    "oya.core.tokenize",
    "oya.graph.parsing",
    "oya.graph.parsing.python",
    "oya.graph.parsing.common",
    "oya.graph.parsing.tags",
    "oya.graph.parsing.languages",
    "oya.chunking.chunks",
    "oya.store.schema",
    "oya.store.writer",
    "oya.store.index",
    "oya.store.patch",
)
_PACKAGES = (
    "tree-sitter",
    "tree-sitter-python",
    *(f"tree-sitter-{name}" for name in ("javascript", "typescript", "go", "java", "kotlin", "c-sharp")),
    *(f"tree-sitter-{name}" for name in ("rust", "c", "cpp", "ruby", "php")),
)


def _key_of_loaded_code() -> str:
    digest = hashlib.sha256()
    for name in _MODULES:
        digest.update(Path(str(import_module(name).__file__)).read_bytes())
    queries = Path(str(import_module("oya.graph.parsing").__file__)).parent / "queries"
    for query in sorted(queries.glob("*.scm")):
        digest.update(query.read_bytes())  # the tags queries decide parses as much as the code
    for package in _PACKAGES:
        with contextlib.suppress(PackageNotFoundError):
            digest.update(f"{package}=={version(package)}".encode())
    return digest.hexdigest()[:32]


# Taken when Oya is imported, so it describes the code that runs: source edited while a build
# runs must not make that build's index look as if the new code had written it.
_REUSE_KEY = _key_of_loaded_code()


def reuse_key() -> str:
    return _REUSE_KEY


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
            if meta.get("schema_version") != SCHEMA_VERSION or meta.get("reuse_key") != reuse_key():
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

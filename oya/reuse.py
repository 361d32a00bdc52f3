"""What a rebuild takes over from the index it replaces, so a one-file change costs one file.

Theory of operation:

* Parsing, chunking and tokenizing a file depend on that file alone (its path, language and
  text) and on Oya's own code. The index keeps each file's sha256 and language, its chunks with
  their tokens, and (table ``parsed_files``) its parse as compressed JSON. A rebuild reuses a file's parse
  and chunks when path, sha256 and language are the same, and a chunk's tokens when its id (a
  hash of path, span and text) and title are the same; everything else is computed afresh.
* Reuse is all or nothing per index: the index records ``reuse_key``, a hash of the source of
  every module that decides those per-file results and of the parser packages' versions. An
  index written by other code (an upgrade, a local edit) is not reused at all.
* What is linked across files (the graph's edges and PageRank) and the index file itself are
  always rebuilt from the complete set, so a rebuild equals a full build
  (``tests/pipelines/test_incremental.py`` compares them table by table).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import zlib
from collections.abc import Iterator
from importlib import import_module
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import duckdb

from oya.core.records import Chunk, Node
from oya.models import ParsedFile, Reference
from oya.store import CHUNK_COLS, INDEX_FILE, SCHEMA_VERSION, chunk_from_row, node_row

# Modules whose code decides a file's parse, chunks or tokens; and the parsers' packages.
_MODULES = (
    "oya.reuse",
    "oya.models",
    "oya.core.records",
    "oya.core.tokenize",
    "oya.parsing",
    "oya.parsing.python",
    "oya.parsing.common",
    "oya.parsing.tags",
    "oya.parsing.languages",
    "oya.chunking",
    "oya.store",
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
    for query in sorted((Path(str(import_module("oya.parsing").__file__)).parent / "queries").glob("*.scm")):
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


# -- a parse as compressed JSON -----------------------------------------------------------------------
def encode_parse(p: ParsedFile) -> bytes:
    """A parse as zlib-compressed JSON (a tenth of the JSON's size: less for the index to write)."""
    text = json.dumps(
        {
            "path": p.path,
            "module": p.module,
            "symbols": [node_row(n) for n in p.symbols],
            "references": [[r.source, r.kind, r.target, r.line] for r in p.references],
            "imports": p.imports,
            "errors": list(p.errors),
        },
        ensure_ascii=False,
    )
    return zlib.compress(text.encode("utf-8"), 1)


def decode_parse(blob: object) -> ParsedFile | None:
    """The parse ``encode_parse`` wrote, or None when ``blob`` is not one (the file is parsed again)."""
    try:
        d = json.loads(zlib.decompress(blob))  # type: ignore[arg-type]
        return ParsedFile(
            path=d["path"],
            module=d["module"],
            symbols=tuple(Node(*row) for row in d["symbols"]),
            references=tuple(Reference(*row) for row in d["references"]),
            imports=dict(d["imports"]),
            errors=tuple(d["errors"]),
        )
    except (zlib.error, ValueError, TypeError, KeyError):
        return None


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


def previous_tokens(out_dir: Path) -> dict[tuple[str, str], str]:
    """(chunk id, title) -> the chunk's indexed tokens, from the previous index."""
    with _previous(out_dir) as con:
        if con is None:
            return {}
        with contextlib.suppress(duckdb.Error):
            rows = con.execute("SELECT id, title, tokens FROM chunks").fetchall()
            return {(str(i), str(t)): str(tok) for i, t, tok in rows}
    return {}

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
* What is linked across files (the graph's edges and PageRank) is always computed from the
  complete set; the index file is the previous one patched where its rows differ
  (``oya.store_patch``), so a rebuild equals a full build
  (``tests/pipelines/test_incremental.py`` compares them table by table).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import zlib
from importlib import import_module
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from oya.core.records import Node
from oya.models import ParsedFile, Reference
from oya.store import node_row

# Modules whose code decides a file's parse, chunks or tokens, or the rows a patched index keeps
# (a file's text is compared by its sha256, which the reader takes of the raw bytes); and the
# parsers' packages.
_MODULES = (
    "oya.reader",
    "oya.redact",
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
    "oya.store_patch",
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

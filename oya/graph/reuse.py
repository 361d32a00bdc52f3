"""What a rebuild takes over from the index it replaces, so a one-file change costs one file.

Theory of operation:

* Parsing, chunking and tokenizing a file depend on that file alone (its path, language and
  text) and on Oya's own code. The index keeps each file's sha256 and language, its chunks with
  their tokens, and (table ``parsed_files``) its parse as compressed JSON. A rebuild reuses a file's parse
  and chunks when path, sha256 and language are the same, and a chunk's tokens when its id (a
  hash of path, span and text) and title are the same; everything else is computed afresh.
* Reuse is all or nothing per index: the index records ``reuse_key``
  (``oya.store.previous``), a hash of the source of every module that decides those per-file
  results and of the parser packages' versions. An index written by other code (an upgrade, a
  local edit) is not reused at all.
* What is linked across files (the graph's edges and PageRank) is always computed from the
  complete set; the index file is the previous one patched where its rows differ
  (``oya.store.patch``), so a rebuild equals a full build
  (``tests/pipelines/test_incremental.py`` compares them table by table).
"""

from __future__ import annotations

import json
import zlib

from oya.core.records import Node
from oya.models import ParsedFile, Reference
from oya.store.writer import node_row


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

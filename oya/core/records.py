"""Frozen records shared by every runtime: the pipeline, the CLI and the browser.

Theory of operation: a record validates itself in its constructor, so an invalid one
cannot exist. Ids are deterministic strings:

* a node id is the repository-relative POSIX path for a module (``oya/core/bm25.py``)
  and ``path::Qualified.name`` for a class, function or method;
* a chunk id is a short content-derived hash made by the chunker.

Only the standard library is imported here (this module runs under Pyodide).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

NODE_KINDS = ("module", "class", "function", "method")
EDGE_KINDS = ("contains", "imports", "calls", "inherits")
CHUNK_KINDS = ("code", "doc")


def _check_choice(field: str, value: str, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise ValueError(f"{field} must be one of {', '.join(choices)}; got {value!r}")


def _check_span(start_line: int, end_line: int) -> None:
    if start_line < 1 or end_line < start_line:
        raise ValueError(f"bad line span {start_line}-{end_line}")


@dataclass(frozen=True, slots=True)
class Node:
    """A symbol of the code graph."""

    id: str
    kind: str
    name: str
    qualname: str
    path: str
    start_line: int
    end_line: int
    signature: str = ""
    docstring: str = ""
    centrality: float = 0.0

    def __post_init__(self) -> None:
        _check_choice("node kind", self.kind, NODE_KINDS)
        _check_span(self.start_line, self.end_line)
        if not self.id or not self.path:
            raise ValueError("a node needs an id and a path")


@dataclass(frozen=True, slots=True)
class Edge:
    """A directed edge; confidence in [0, 1] says how sure the resolution is."""

    source: str
    target: str
    kind: str
    confidence: float

    def __post_init__(self) -> None:
        _check_choice("edge kind", self.kind, EDGE_KINDS)
        if not 0.0 <= self.confidence <= 1.0:
            raise ValueError(f"edge confidence must be in [0, 1]; got {self.confidence}")


def chunk_id(path: str, start_line: int, end_line: int, text: str) -> str:
    """Deterministic chunk id: 16 hex digits of sha256 over path, span and text."""
    digest = hashlib.sha256(f"{path}\x00{start_line}\x00{end_line}\x00{text}".encode())
    return digest.hexdigest()[:16]


def content_hash(text: str) -> str:
    """A chunk's content hash (sha256 of its text): equal texts, equal hashes."""
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class ChunkRef:
    """What ranking reads of a chunk before its text: where it is, its symbol, and a key equal for
    chunks of equal text (``content_hash``, or a sharded bundle's duplicate table)."""

    id: str
    path: str
    start_line: int
    node_id: str | None
    content_key: str


@dataclass(frozen=True, slots=True)
class Chunk:
    """A retrievable piece of a file: one symbol, module-level code, or a docs section."""

    id: str
    path: str
    kind: str
    title: str
    start_line: int
    end_line: int
    text: str
    content_hash: str
    n_tokens: int
    node_id: str | None = None

    def __post_init__(self) -> None:
        _check_choice("chunk kind", self.kind, CHUNK_KINDS)
        _check_span(self.start_line, self.end_line)
        if self.n_tokens < 0:
            raise ValueError("n_tokens cannot be negative")

    def ref(self) -> ChunkRef:
        return ChunkRef(self.id, self.path, self.start_line, self.node_id, self.content_hash)

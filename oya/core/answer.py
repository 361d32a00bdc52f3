"""Answers built from a retrieval: the extractive one (no model) and the answerer port.

Theory of operation: the extractive answer needs no model. It names the best matches with
one line each — the symbol's signature and the first sentence of its docstring when there
is one — and lists the connected code the graph expansion found. Every statement points
at a retrieved source, so every citation is valid by construction. A model-backed
answerer (``oya.query.llm``) checks its citations with ``validate_citations`` against what
was retrieved.

An answer carries structured ``items`` (``AnswerItem``, one per citation): the CLI, the
browser and the model prompt render from them; ``text`` is one plain rendering of the same
items, kept for consumers that print prose.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from oya.core.records import Node
from oya.core.results import Citation, RetrievalResult
from oya.core.text import split_lines

_SENTENCE = re.compile(r"(.+?[.!?])(\s|$)", re.S)
ITEM_KINDS = ("match", "connected")
# the reason a channel gives for a match, as the answer's items name it
CHANNEL_REASONS = {"lexical": "bm25", "semantic": "vector", "graph": "name"}
NO_MATCH = "No code in the index matches this question. Try other words, a symbol name or a file path."


@dataclass(frozen=True, slots=True)
class AnswerItem:
    """One cited piece of code: what it is, where it is, and why it is in the answer."""

    n: int  # the citation number, 1-based
    kind: str  # one of ITEM_KINDS
    symbol: str  # the qualified name, "" for a chunk without a symbol
    symbol_kind: str  # a node kind, or "chunk"
    title: str
    path: str
    span: tuple[int, int]
    url: str
    signature: str
    summary: str  # the docstring's first sentence, else the first code line
    snippet: str  # the text the context shows (possibly cut)
    reason: str  # "vector", "bm25+name", "graph:calls", ...

    def __post_init__(self) -> None:
        if self.kind not in ITEM_KINDS:
            raise ValueError(f"answer item kind must be one of {', '.join(ITEM_KINDS)}; got {self.kind!r}")

    def to_dict(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "kind": self.kind,
            "symbol": self.symbol,
            "symbol_kind": self.symbol_kind,
            "title": self.title,
            "path": self.path,
            "span": list(self.span),
            "url": self.url,
            "signature": self.signature,
            "summary": self.summary,
            "snippet": self.snippet,
            "reason": self.reason,
        }

    def line(self) -> str:
        """The item as one line of plain text (``Answer.text``)."""
        head = f"[{self.n}] {self.title} ({self.path}:{self.span[0]}-{self.span[1]})"
        if self.kind == "connected":
            return head
        if self.signature:
            described = f"`{self.signature}`" + (f" — {self.summary}" if self.summary else "")
        else:
            described = self.summary or self.title
        return f"{head}: {described}"


@dataclass(frozen=True, slots=True)
class Answer:
    text: str
    citations: tuple[Citation, ...]
    method: str  # "extractive" or the answerer's name
    note: str = ""  # e.g. why a model answer fell back to the extractive one
    items: tuple[AnswerItem, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The JSON form the CLI (``--json``) and the browser's Ask panel both render from."""
        return {
            "method": self.method,
            "note": self.note,
            "text": self.text,
            "items": [item.to_dict() for item in self.items],
            "citations": [
                {
                    "n": i,
                    "path": c.path,
                    "title": c.title,
                    "start_line": c.start_line,
                    "end_line": c.end_line,
                    "url": c.url,
                }
                for i, c in enumerate(self.citations, 1)
            ],
        }


def first_sentence(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    m = _SENTENCE.match(text)
    s = m.group(1) if m else text
    return s if len(s) <= limit else s[: limit - 1].rstrip() + "…"


def first_code_line(text: str) -> str:
    """The first line that is neither blank nor a ``#`` comment, stripped."""
    return next((ln.strip() for ln in split_lines(text) if ln.strip() and not ln.strip().startswith("#")), "")


def _symbol(result: RetrievalResult, citation: Citation) -> Node | None:
    if citation.node_id is None:
        return None
    return result.symbols.get(citation.node_id) or next(
        (n for n in result.subgraph.nodes if n.id == citation.node_id), None
    )


def _connection(result: RetrievalResult, node_id: str | None) -> str:
    """``graph:<edge kind>`` of the edge that brought ``node_id`` into the expansion."""
    sub = result.subgraph
    if node_id is None:
        return "graph"
    here = sub.distance.get(node_id, 0)
    for e in sub.edges:
        other = e.target if e.source == node_id else e.source if e.target == node_id else None
        if other is not None and sub.distance.get(other, here) < here:
            return f"graph:{e.kind}"
    return "graph"


def make_item(result: RetrievalResult, citation: Citation, n: int, kind: str) -> AnswerItem:
    """The structured answer item for one of ``result``'s citations."""
    node = _symbol(result, citation)
    snippet = next((s for s in result.context.snippets if s.citation.chunk_id == citation.chunk_id), None)
    hit = next((h for h in result.hits if h.chunk.id == citation.chunk_id), None)
    text = snippet.text if snippet else hit.chunk.text if hit else ""
    described = node is not None and node.kind != "module"
    signature = (node.signature or node.qualname) if node is not None and described else ""
    doc = first_sentence(node.docstring) if node is not None and described and node.docstring else ""
    code = first_code_line(hit.chunk.text if hit else text)
    if kind == "match":
        reason = "+".join(CHANNEL_REASONS.get(c, c) for c in (hit.channels if hit else ()))
    else:
        reason = _connection(result, citation.node_id)
    return AnswerItem(
        n=n,
        kind=kind,
        symbol=node.qualname if node is not None else "",
        symbol_kind=node.kind if node is not None else "chunk",
        title=citation.title,
        path=citation.path,
        span=(citation.start_line, citation.end_line),
        url=citation.url,
        signature=signature,
        summary=doc if signature else (first_sentence(code) if code else ""),
        snippet=text,
        reason=reason or "fused",
    )


def answer_items(result: RetrievalResult, citations: Sequence[Citation]) -> tuple[AnswerItem, ...]:
    """Items for ``citations`` in order: a hit is a ``match``, anything else ``connected``."""
    hit_ids = {h.chunk.id for h in result.hits}
    return tuple(
        make_item(result, c, i, "match" if c.chunk_id in hit_ids else "connected")
        for i, c in enumerate(citations, 1)
    )


def render_text(items: Sequence[AnswerItem]) -> str:
    """The plain-text rendering of an extractive answer's items."""
    if not items:
        return NO_MATCH
    lines = ["The most relevant code:"]
    lines.extend(item.line() for item in items if item.kind == "match")
    connected = [item.line() for item in items if item.kind == "connected"]
    if connected:
        lines.append("Connected code (through the code graph):")
        lines.extend(connected)
    return "\n".join(lines)


def extractive_answer(result: RetrievalResult, max_items: int = 5) -> Answer:
    hit_ids = {h.chunk.id for h in result.hits}
    matches = [c for c in result.citations if c.chunk_id in hit_ids][:max_items]
    connected = [c for c in result.citations if c.chunk_id not in hit_ids][:max_items]
    used = tuple(matches + connected)
    items = answer_items(result, used)
    return Answer(render_text(items), used, "extractive", items=items)


def validate_citations(
    proposed: Sequence[tuple[str, int | None]], result: RetrievalResult
) -> tuple[tuple[Citation, ...], int]:
    """Keep proposed ``(path, line)`` citations that point inside a retrieved snippet.

    Returns the kept citations (deduplicated, in order) and how many were rejected.
    """
    kept: list[Citation] = []
    rejected = 0
    for path, line in proposed:
        match = next(
            (
                c
                for c in result.citations
                if c.path == path and (line is None or c.start_line <= line <= c.end_line)
            ),
            None,
        )
        if match is None:
            rejected += 1
        elif match not in kept:
            kept.append(match)
    return tuple(kept), rejected

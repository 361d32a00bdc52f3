"""Answers built from a retrieval: the extractive one (no model) and the answerer port.

Theory of operation: the extractive answer needs no model. It names the best matches with
one line each — the symbol's signature and the first sentence of its docstring when there
is one — and lists the connected code the graph expansion found. Every statement points
at a retrieved source, so every citation is valid by construction. A model-backed
answerer (llama.cpp, later) implements ``Answerer``; its citations are checked with
``validate_citations`` against what was retrieved.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from oya.core.results import Citation, RetrievalResult

_SENTENCE = re.compile(r"(.+?[.!?])(\s|$)", re.S)


@dataclass(frozen=True, slots=True)
class Answer:
    text: str
    citations: tuple[Citation, ...]
    method: str  # "extractive" or the answerer's name
    note: str = ""  # e.g. why a model answer fell back to the extractive one

    def to_dict(self) -> dict[str, Any]:
        """The JSON form the CLI (``--json``) and the browser's Ask panel both print."""
        return {
            "text": self.text,
            "method": self.method,
            "note": self.note,
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


class Answerer(Protocol):
    name: str

    def answer(self, question: str, result: RetrievalResult) -> Answer: ...


def first_sentence(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    m = _SENTENCE.match(text)
    s = m.group(1) if m else text
    return s if len(s) <= limit else s[: limit - 1].rstrip() + "…"


def _describe(result: RetrievalResult, citation: Citation) -> str:
    node = next((n for n in result.subgraph.nodes if n.id == citation.node_id), None)
    if node and node.kind != "module":
        doc = first_sentence(node.docstring) if node.docstring else ""
        sig = node.signature or node.qualname
        return f"`{sig}`" + (f" — {doc}" if doc else "")
    hit = next((h for h in result.hits if h.chunk.id == citation.chunk_id), None)
    text = hit.chunk.text if hit else ""
    body = next((ln.strip() for ln in text.splitlines() if ln.strip() and not ln.strip().startswith("#")), "")
    return first_sentence(body) if body else citation.title


def extractive_answer(result: RetrievalResult, max_items: int = 5) -> Answer:
    if not result.citations:
        return Answer(
            "No code in the index matches this question. Try other words, a symbol name or a file path.",
            (),
            "extractive",
        )
    lines = ["The most relevant code:"]
    used: list[Citation] = []
    hit_ids = {h.chunk.id for h in result.hits}
    for i, c in enumerate(c for c in result.citations if c.chunk_id in hit_ids):
        if i >= max_items:
            break
        used.append(c)
        lines.append(
            f"[{len(used)}] {c.title} ({c.path}:{c.start_line}-{c.end_line}): {_describe(result, c)}"
        )
    connected = [c for c in result.citations if c.chunk_id not in hit_ids]
    if connected:
        lines.append("Connected code (through the code graph):")
        for c in connected[:max_items]:
            used.append(c)
            lines.append(f"[{len(used)}] {c.title} ({c.path}:{c.start_line}-{c.end_line})")
    return Answer("\n".join(lines), tuple(used), "extractive")


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

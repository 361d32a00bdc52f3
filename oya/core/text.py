"""One owner for two facts about text: what a line is, and what text of a chunk is indexed.

* A line ends only at ``\\n`` — as tree-sitter counts rows and as chunk spans are numbered.
  ``str.splitlines`` also breaks at ``\\r``, form feeds, U+2028 and more, so a snippet split
  with it would number lines differently from its citation span. Every line count over
  chunk or snippet text goes through ``split_lines``.
* A chunk is indexed (BM25 tokens, embedding, confidence's term check) as its title, a
  newline, then its text: ``indexed_text``.
"""

from __future__ import annotations

from oya.core.records import Chunk


def split_lines(text: str) -> list[str]:
    """The lines of ``text``, split at ``\\n`` only; the inverse of ``"\\n".join(lines)``."""
    return text.split("\n")


def indexed_text(chunk: Chunk) -> str:
    """The text a chunk is searched by: its title, a newline, its text."""
    return f"{chunk.title}\n{chunk.text}"

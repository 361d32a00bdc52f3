"""What a local model reads: the first-ranked snippets, whole where they fit, without line numbers.

Theory of operation:

1. On a CPU, reading the prompt is most of a local model's wait, so its context is a few
   hundred tokens (``oya.query.llm_speed.context_for_speed`` sizes it; the retrieval's own
   context was packed for that budget). ``fit_context`` repacks it from the retrieval's hits,
   in rank order, each from its chunk's whole text, then the connected code the context held.
   The core's packer gives every snippet at most a quarter of the budget, which in 300 tokens
   cut most functions after a few lines: the part that answered was often the part cut away
   (bench/results/llm_survey_verdicts.json). Here a snippet may take up to half the budget
   (``SHARE``), so in a small context the first two functions come whole, and only a longer
   one is cut (at a line boundary, ``oya.core.context.cut_snippet``).
2. A chunk whose lines overlap one already taken (the same file) is skipped: no token is
   read twice.
3. ``render_compact`` writes one header line per snippet (path, lines, title) and the code
   as it is. The core's rendering numbers every line so that a model can cite one; a local
   model's citations are chosen from the snippets' first lines by its JSON schema
   (``oya.query.llm.answer_schema``), and the numbers cost Qwen2.5's tokenizer, which writes
   each digit as a token, 56 % more tokens on code (1.50 against 0.96 per core token on 95k
   core tokens of oya, click and gin): seconds of reading for nothing.
"""

from __future__ import annotations

from dataclasses import replace

from oya.core.context import HEADER_TOKENS, MIN_SNIPPET_ROOM, citation_for, cut_snippet
from oya.core.results import Citation, Context, RetrievalResult, Snippet
from oya.core.text import split_lines
from oya.core.tokenize import count_tokens

SHARE = 2  # a snippet takes at most 1/SHARE of the budget


def _overlaps(c: Citation, taken: list[Citation]) -> bool:
    return any(t.path == c.path and t.start_line <= c.end_line and c.start_line <= t.end_line for t in taken)


def fit_context(result: RetrievalResult, budget: int) -> RetrievalResult:
    """``result`` with its context and citations repacked for a local model within ``budget``."""
    hit_ids = {h.chunk.id for h in result.hits}
    candidates = [(citation_for(h.chunk), h.chunk.text) for h in result.hits]
    candidates += [
        (s.citation, s.text) for s in result.context.snippets if s.citation.chunk_id not in hit_ids
    ]
    share = max(MIN_SNIPPET_ROOM, budget // SHARE)
    snippets: list[Snippet] = []
    taken: list[Citation] = []
    used = 0
    for whole, text in candidates:
        room = budget - used
        if room < MIN_SNIPPET_ROOM:
            break
        if _overlaps(whole, taken):
            continue
        cut, truncated = cut_snippet(text, min(share, room) - HEADER_TOKENS)
        cit = replace(whole, end_line=whole.start_line + len(split_lines(cut)) - 1)
        snippets.append(Snippet(cit, cut, truncated or whole.end_line != cit.end_line))
        taken.append(whole)
        used += count_tokens(cut) + HEADER_TOKENS
    context = Context(mermaid="", snippets=tuple(snippets), tokens=used, budget=budget)
    return replace(result, context=context, citations=tuple(s.citation for s in snippets))


def render_compact(result: RetrievalResult) -> str:
    """The context for a local model: each snippet under a ``--- PATH lines START-END (TITLE)`` line."""
    parts: list[str] = []
    for s in result.context.snippets:
        c = s.citation
        parts.append(f"--- {c.path} lines {c.start_line}-{c.end_line} ({c.title})")
        parts.append(s.text)
    return "\n".join(parts)

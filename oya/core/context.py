"""The context an answer is made from: a Mermaid diagram, then snippets, within a token budget.

The diagram (``oya.core.answer_diagram``) comes first, within its own budget (its least
important nodes dropped until it fits); then each hit and
each connected chunk as a snippet cut at line boundaries (``oya.core.text.split_lines``).
Citations are made only from what entered the context, with the span the snippet covers.
"""

from __future__ import annotations

from collections.abc import Sequence

from oya.core.answer_diagram import DiagramPlan, render_plan
from oya.core.records import Chunk
from oya.core.results import Citation, Context, Hit, Snippet, page_url
from oya.core.text import split_lines
from oya.core.tokenize import count_tokens, truncate_to_tokens

MIN_SNIPPET_ROOM = 40  # tokens: below this, no further snippet starts
MIN_SNIPPET_SHARE = 120  # tokens a snippet may always use (else a quarter of what is left)
HEADER_TOKENS = 8  # a snippet's header line in Context.render


def cut_snippet(text: str, budget: int) -> tuple[str, bool]:
    """The longest prefix of whole lines within ``budget`` tokens (a line costs its tokens + 1).

    A first line longer than the whole budget (minified code) is itself cut after
    ``budget - 1`` tokens, so the snippet never exceeds its budget.
    """
    kept: list[str] = []
    used = 0
    for line in split_lines(text):
        cost = count_tokens(line) + 1
        if used + cost > budget:
            if not kept:
                return truncate_to_tokens(line, budget - 1), True
            return "\n".join(kept), True
        kept.append(line)
        used += cost
    return "\n".join(kept), False


def citation_for(chunk: Chunk, end_line: int | None = None) -> Citation:
    return Citation(
        path=chunk.path,
        title=chunk.title,
        start_line=chunk.start_line,
        end_line=end_line or chunk.end_line,
        node_id=chunk.node_id,
        url=page_url(chunk.path, chunk.start_line),
        chunk_id=chunk.id,
    )


def fit_diagram(plan: DiagramPlan, cap: int, max_chars: int) -> str:
    """The plan's Mermaid diagram within ``cap`` tokens and ``max_chars`` characters: its least
    important nodes dropped until it fits ("" if none)."""
    for n_nodes in range(len(plan.nodes), 0, -1):
        mermaid = render_plan(plan.trimmed(n_nodes))
        if count_tokens(mermaid) <= cap and len(mermaid) <= max_chars:
            return mermaid
    return ""


def build_context(
    hits: Sequence[Hit], extra: Sequence[Hit], plan: DiagramPlan, budget: int, diagram_budget: int
) -> Context:
    mermaid = fit_diagram(plan, min(diagram_budget, budget), diagram_budget * 4)
    used = count_tokens(mermaid) if mermaid else 0
    snippets: list[Snippet] = []
    per_snippet = max(MIN_SNIPPET_SHARE, (budget - used) // 4)
    for h in list(hits) + list(extra):
        room = budget - used
        if room < MIN_SNIPPET_ROOM:
            break
        text, truncated = cut_snippet(h.chunk.text, min(per_snippet, room - HEADER_TOKENS))
        cit = citation_for(h.chunk, h.chunk.start_line + len(split_lines(text)) - 1)
        snippets.append(Snippet(cit, text, truncated))
        used += count_tokens(text) + HEADER_TOKENS
    return Context(mermaid=mermaid, snippets=tuple(snippets), tokens=used, budget=budget)

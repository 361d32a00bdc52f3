"""The context an answer is made from: a Mermaid diagram, then snippets, within a token budget.

The diagram comes first, within its own budget (fewer nodes until it fits); then each hit and
each connected chunk as a snippet cut at line boundaries (``oya.core.text.split_lines``).
Citations are made only from what entered the context, with the span the snippet covers.
"""

from __future__ import annotations

from collections.abc import Sequence

from oya.core.diagram import render_mermaid
from oya.core.graph import Subgraph
from oya.core.records import Chunk
from oya.core.results import Citation, Context, Hit, Snippet, page_url
from oya.core.text import split_lines
from oya.core.tokenize import count_tokens, truncate_to_tokens

MAX_DIAGRAM_NODES = 30
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


def fit_diagram(subgraph: Subgraph, cap: int, max_chars: int) -> str:
    """The subgraph's Mermaid diagram within ``cap`` tokens: fewer nodes until it fits ("" if none)."""
    n_nodes = min(len(subgraph.nodes), MAX_DIAGRAM_NODES)
    while n_nodes > 0:
        mermaid = render_mermaid(
            subgraph.nodes, subgraph.edges, highlight=subgraph.seeds, max_nodes=n_nodes, max_chars=max_chars
        )
        if count_tokens(mermaid) <= cap:
            return mermaid
        n_nodes = n_nodes * 3 // 4
    return ""


def build_context(
    hits: Sequence[Hit], extra: Sequence[Hit], subgraph: Subgraph, budget: int, diagram_budget: int
) -> Context:
    mermaid = fit_diagram(subgraph, min(diagram_budget, budget), diagram_budget * 4)
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

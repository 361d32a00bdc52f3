"""Mermaid diagrams of code subgraphs, safe for untrusted names.

Theory of operation: everything in a diagram comes from the indexed repository, so it is
untrusted. Node ids are generated (``n0``, ``n1``...), never taken from the code. Labels keep
only a conservative character set (letters, digits, space and ``_ . / : ( ) , -``) and are
wrapped in double quotes; every other character becomes a space, so no label can close its
node, open a link, inject a directive (``%%{init}``), a ``click`` callback, or HTML.
The diagram is also capped in node count and characters so it fits its token budget.

A node may link to its wiki page (``click nX href "..."``): the URL must be a relative site path
as ``oya.core.sitepaths`` makes them (letters, digits, ``_ . ~ / % -`` and an optional ``#L<n>``),
else the link is left out. Mermaid's strict security level keeps such links and drops callbacks.

Containment (a module's functions, a class's methods) is drawn as nesting: a container with
members in the diagram becomes a ``subgraph`` around them, and its ``contains`` edges are not
drawn. A flat diagram with one ``contains`` arrow per member buried the calls that matter.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence

from oya.core.records import EDGE_KINDS, Edge, Node

_UNSAFE = re.compile(r"[^A-Za-z0-9 _./:(),-]")
_SPACES = re.compile(r"\s+")
_SAFE_URL = re.compile(r"[A-Za-z0-9_.~%-][A-Za-z0-9_.~/%-]*(#L[0-9]+)?")
_EDGE_ARROWS = {"calls": "-->", "inherits": "-.->", "imports": "-.->", "contains": "---"}
_CLASS_FOR_KIND = {"module": "mod", "class": "cls", "function": "fn", "method": "fn"}


def sanitize_label(text: str, max_len: int = 48) -> str:
    """A label that cannot break out of ``id["..."]`` in Mermaid, nor carry markup."""
    clean = _SPACES.sub(" ", _UNSAFE.sub(" ", text)).strip()
    if len(clean) > max_len:
        clean = clean[: max_len - 3].rstrip() + "..."
    return clean or "unnamed"


def node_label(node: Node) -> str:
    if node.kind == "module":
        return node.path
    if node.kind == "method":
        return node.qualname.rsplit(".", 2)[-2] + "." + node.name if "." in node.qualname else node.name
    return node.name


def _containment(edges: Iterable[Edge], ids: Mapping[str, str]) -> dict[str, str]:
    """Each shown node's container among the shown nodes (first ``contains`` edge wins, no cycles)."""
    parent: dict[str, str] = {}
    for e in edges:
        if e.kind != "contains" or e.source not in ids or e.target not in ids or e.target in parent:
            continue
        up: str | None = e.source
        while up is not None and up != e.target:  # the container must not sit inside the member
            up = parent.get(up)
        if up is None:
            parent[e.target] = e.source
    return parent


_CLASS_DEFS = (
    "  classDef seed fill:#fde68a,stroke:#b45309,color:#111",
    "  classDef mod fill:#e0e7ff,stroke:#4338ca,color:#111",
    "  classDef cls fill:#dcfce7,stroke:#15803d,color:#111",
    "  classDef fn fill:#f3f4f6,stroke:#6b7280,color:#111",
)


def safe_link(url: str) -> bool:
    """A relative site URL with nothing Mermaid or a browser could read as code or another origin."""
    return bool(_SAFE_URL.fullmatch(url)) and ":" not in url and not url.startswith("/")


def _edge_lines(
    edges: Sequence[Edge], ids: Mapping[str, str], parent: Mapping[str, str], labelled: Collection[str]
) -> list[str]:
    """One arrow per (source, target) among the drawn nodes; containment is drawn as nesting.
    Only edges of the ``labelled`` kinds carry their kind as a label."""

    def inside(node_id: str, container: str) -> bool:
        up = parent.get(node_id)
        while up is not None and up != container:
            up = parent.get(up)
        return up is not None

    out: list[str] = []
    seen: set[tuple[str, str]] = set()
    for e in edges:
        if e.source in ids and e.target in ids and (e.source, e.target) not in seen:
            # Mermaid's layout rejects any other edge between a subgraph and a node inside it
            # (a method calling its own class, say)
            if inside(e.target, e.source) or inside(e.source, e.target):
                continue
            seen.add((e.source, e.target))
            arrow = _EDGE_ARROWS.get(e.kind, "-->")
            label = f"|{e.kind}|" if e.kind in labelled else ""
            out.append(f"  {ids[e.source]} {arrow}{label} {ids[e.target]}")
    return out


def render_mermaid(
    nodes: Iterable[Node],
    edges: Iterable[Edge],
    *,
    highlight: Iterable[str] = (),
    max_nodes: int = 30,
    max_chars: int = 4000,
    direction: str = "LR",
    labels: Mapping[str, str] | None = None,
    links: Mapping[str, str] | None = None,
    edge_labels: Collection[str] = EDGE_KINDS,
    label_chars: int = 48,
) -> str:
    """A ``flowchart`` of the given nodes (first ``max_nodes``) and the edges among them.

    ``labels`` replace node labels, ``links`` give nodes a page (unsafe URLs are left out), only
    edges of the ``edge_labels`` kinds are labelled, and no label is longer than ``label_chars``.
    """
    if direction not in ("LR", "TD", "TB", "RL", "BT"):
        raise ValueError("direction must be one of LR, TD, TB, RL, BT")
    chosen = list(nodes)[:max_nodes]
    edges = list(edges)
    hl = set(highlight)
    ids = {n.id: f"n{i}" for i, n in enumerate(chosen)}
    parent = _containment(edges, ids)
    lines = [f"flowchart {direction}"]
    lines.extend(_node_lines(chosen, ids, parent, hl, labels or {}, label_chars))
    lines.extend(_edge_lines(edges, ids, parent, edge_labels))
    lines.extend(
        f'  click {ids[n.id]} href "{url}"'
        for n in chosen
        if links and (url := links.get(n.id)) is not None and safe_link(url)
    )
    lines.extend(_CLASS_DEFS)
    out = "\n".join(lines)
    if len(out) > max_chars and len(chosen) > 1:  # drop a quarter of the nodes and retry
        return render_mermaid(
            chosen[: max(1, len(chosen) * 3 // 4)],
            edges,
            highlight=hl,
            max_nodes=max_nodes,
            max_chars=max_chars,
            direction=direction,
            labels=labels,
            links=links,
            edge_labels=edge_labels,
            label_chars=label_chars,
        )
    return out


def _node_lines(
    chosen: Sequence[Node],
    ids: Mapping[str, str],
    parent: Mapping[str, str],
    hl: Collection[str],
    labels: Mapping[str, str],
    label_chars: int,
) -> list[str]:
    """Each node as a box, or as a ``subgraph`` around its members when it contains some."""
    members: dict[str, list[Node]] = {}
    for n in chosen:
        if n.id in parent:
            members.setdefault(parent[n.id], []).append(n)
    lines: list[str] = []

    def emit(n: Node) -> None:
        text = sanitize_label(labels.get(n.id, node_label(n)), label_chars)
        css = "seed" if n.id in hl else _CLASS_FOR_KIND.get(n.kind, "fn")
        if n.id not in members:
            lines.append(f'  {ids[n.id]}["{text}"]:::{css}')
            return
        lines.append(f'  subgraph {ids[n.id]}["{text}"]')
        for m in members[n.id]:
            emit(m)
        lines.append("  end")
        lines.append(f"  class {ids[n.id]} {css}")

    for n in chosen:
        if n.id not in parent:
            emit(n)
    return lines

"""A repository file's wiki page, and the continuation pages of a long file.

Theory of operation:

* The page shows the file's symbols (signature, docstring summary, callers, callees, bases,
  subclasses), its imports both ways, a neighbourhood diagram, and the source: Markdown and reST
  rendered (``oya.site.markup``; each block's anchor carries its line range, so a citation
  ``#L<n>`` lands on the block holding line n and no raw copy of the text is kept), everything else as numbered, anchored lines
  (``oya.site.codeview``). The full docstrings are in the source below, so the symbol list only
  shows each docstring's first paragraph.
* A long file's source is cut into parts of about ``PAGE_CODE_BYTES`` of HTML
  (``SiteData.part_starts``): part 1 stays on the file page with everything else, parts 2, 3, ...
  are pages of their own under ``parts/`` (``oya.core.sitepaths.part_page_path``) showing their
  lines and the symbols that start on them (the cut weighs both, so a file of many small, much
  called functions is split too). Every page of the file lists the parts; links the site makes to a line point at the part
  that holds it (``SiteData.line_url``), and site.js forwards a citation ``#L<n>`` that reaches the
  file page (the browser's citations only know the file) to the right part.
* A file holding characters that hide or reorder text (``oya.core.hidden``) says so on each of
  its pages (``hidden``: how many), above the source that shows them as stand-ins.
* Source lines are not highlighted here: a page carries a ``CodeSlice`` and the build renders it
  only when the page has to be written (``oya.site.build``).
"""

from __future__ import annotations

import posixpath
from typing import Any

from oya.core.diagram import render_mermaid
from oya.core.records import Node
from oya.core.results import page_url
from oya.core.sitepaths import file_page_path, part_page_path, site_url
from oya.site.codeview import CodeSlice
from oya.site.markup import render_document
from oya.site.pages import (
    MAX_LINKS,
    NEIGHBOURHOOD_NODES,
    FileEntry,
    Page,
    SiteData,
    crumbs,
    dir_url,
    link,
)

DOCSTRING_SUMMARY_CHARS = 400  # of a symbol's docstring in the list (the source shows all of it)


def docstring_summary(text: str) -> str:
    """The first paragraph of a docstring, cut at a word near ``DOCSTRING_SUMMARY_CHARS``."""
    para = text.strip().split("\n\n", 1)[0].strip()
    if len(para) <= DOCSTRING_SUMMARY_CHARS:
        return para + (" …" if len(para) < len(text.strip()) else "")
    return para[:DOCSTRING_SUMMARY_CHARS].rsplit(" ", 1)[0] + " …"


def _relations(data: SiteData, node: Node) -> dict[str, Any]:
    g = data.graph

    def links(ends: list[tuple[str, float]]) -> dict[str, Any]:
        # strongest first (an edge's confidence), then a stable order: this file, then by path and line
        best: dict[str, float] = {}
        for i, confidence in ends:
            best[i] = max(confidence, best.get(i, 0.0))
        uniq = sorted(
            best,
            key=lambda i: (
                -best[i],
                g.nodes[i].path != node.path,
                g.nodes[i].path,
                g.nodes[i].start_line,
                i,
            ),
        )
        items = []
        for i in uniq[:MAX_LINKS]:
            other = g.nodes[i]
            label = other.qualname if other.kind != "module" else other.path
            if other.path != node.path and other.kind != "module":
                label = f"{label} ({posixpath.basename(other.path)})"
            items.append(link(data, other, label))
        return {"items": items, "more": max(len(uniq) - MAX_LINKS, 0)}

    inherits = [e for _, e in g.neighbors(node.id) if e.kind == "inherits"]
    return {
        "callers": links([(e.source, e.confidence) for e in g.callers(node.id)]),
        "callees": links([(e.target, e.confidence) for e in g.callees(node.id)]),
        "bases": links([(e.target, e.confidence) for e in inherits if e.source == node.id]),
        "subclasses": links([(e.source, e.confidence) for e in inherits if e.target == node.id]),
    }


def _neighbourhood(data: SiteData, path: str) -> tuple[str, int, int]:
    """Mermaid of the file's symbols and what they connect to; (diagram, shown, candidates).

    Only edges with an end in this file are drawn (not ``contains``: the nesting is already in
    the symbol list), so the picture answers "what does this file use, and who uses it".
    """
    g = data.graph
    own = {n.id for n in data.symbols.get(path, [])}
    module = data.modules.get(path)
    if module is not None:
        own.add(module.id)
    edges = sorted(
        (
            e
            for nid in own
            for _, e in g.neighbors(nid, 0.5)
            if e.kind != "contains" and (e.source in own or e.target in own) and e.source != e.target
        ),
        key=lambda e: (e.source, e.target, e.kind),
    )
    edges = list(dict.fromkeys(edges))
    touched = {e.source for e in edges} | {e.target for e in edges}
    if not edges:
        return "", 0, 0
    inside = sorted((g.nodes[i] for i in touched if i in own), key=lambda n: (-n.centrality, n.start_line))
    outside = sorted((g.nodes[i] for i in touched if i not in own), key=lambda n: (-n.centrality, n.id))
    room_inside = min(len(inside), max(NEIGHBOURHOOD_NODES // 2, NEIGHBOURHOOD_NODES - len(outside)))
    chosen = inside[:room_inside]
    chosen += outside[: NEIGHBOURHOOD_NODES - len(chosen)]
    keep = {n.id for n in chosen}
    chosen.sort(key=lambda n: (n.id not in own, n.path, n.start_line))
    labels = {}
    for n in chosen:
        if n.path != path:
            base = posixpath.basename(n.path)
            labels[n.id] = base if n.kind == "module" else f"{n.name} ({base})"
        elif n.kind == "module":
            labels[n.id] = posixpath.basename(n.path)
    shown_edges = [e for e in edges if e.source in keep and e.target in keep]
    diagram = render_mermaid(
        chosen,
        shown_edges,
        highlight=[module.id] if module else [],
        max_nodes=NEIGHBOURHOOD_NODES,
        max_chars=8000,
        labels=labels,
    )
    return diagram, len(chosen), len(touched)


def _signature_parts(n: Node) -> tuple[str, str, str]:
    """The signature split around the symbol's name, so the template can emphasise it."""
    sig = " ".join(n.signature.split()) or n.name
    at = sig.find(n.name)
    if at < 0:
        return ("", sig, "")
    return (sig[:at], n.name, sig[at + len(n.name) :])


def _parts_nav(data: SiteData, f: FileEntry, current: int) -> list[dict[str, Any]]:
    """One entry per part of a split file (empty for a file on one page)."""
    starts = data.part_starts(f.path)
    if len(starts) < 2:
        return []
    ends = [s - 1 for s in starts[1:]] + [f.n_lines]
    return [
        {
            "url": page_url(f.path) if k == 0 else site_url(part_page_path(f.path, k + 1)),
            "first": first,
            "last": last,
            "current": k == current,
        }
        for k, (first, last) in enumerate(zip(starts, ends, strict=True))
    ]


def _symbols(data: SiteData, f: FileEntry, first: int, last: int) -> list[dict[str, Any]]:
    """The file's symbols that start on lines ``first``..``last`` (the lines this page shows)."""
    return [
        {
            "node": n,
            "sig": _signature_parts(n),
            "depth": min(n.qualname.count("."), 4),
            "summary": docstring_summary(n.docstring) if n.docstring else "",
            # the signature links the symbol's lines (highlighted); the range beside it is plain text
            "range": f"#L{n.start_line}-L{min(n.end_line, last)}",
            **_relations(data, n),
        }
        for n in data.symbols.get(f.path, [])
        if first <= n.start_line <= last
    ]


def _capped(items: list[dict[str, str]]) -> dict[str, Any]:
    uniq = sorted({i["url"]: i for i in items}.values(), key=lambda i: i["label"])
    return {"items": uniq[:MAX_LINKS], "more": max(len(uniq) - MAX_LINKS, 0)}


def file_page(data: SiteData, f: FileEntry) -> Page:
    page = Page(
        file_page_path(f.path),
        page_url(f.path),
        "file.html",
        f.path,
        crumbs=crumbs(f.path, is_dir=False),
        current=f"file:{f.path}",
    )
    text = data.text(f.path)
    module = data.modules.get(f.path)
    starts = data.part_starts(f.path)
    last_on_page = (starts[1] - 1) if len(starts) > 1 else f.n_lines
    imports: list[dict[str, str]] = []
    imported_by: list[dict[str, str]] = []
    if module is not None:
        for other, e in data.graph.neighbors(module.id):
            if e.kind != "imports" or other == module.id:
                continue
            target = data.graph.nodes[other]
            (imports if e.source == module.id else imported_by).append(link(data, target, target.path))
    diagram, shown, total = _neighbourhood(data, f.path)
    page.has_diagram = bool(diagram)
    is_doc = data.renders_as_document(f)
    if not is_doc:
        page.code = CodeSlice(text, f.language, 1, last_on_page)
    page.context = {
        "file": f,
        "hidden": data.hidden_count(f.path),
        "origin": data.origin(f.path),
        "part": None,
        "parts": _parts_nav(data, f, 0),
        "docstring": module.docstring if module else "",
        "symbols": _symbols(data, f, 1, last_on_page),
        "n_symbols": len(data.symbols.get(f.path, [])),
        "imports": _capped(imports),
        "imported_by": _capped(imported_by),
        "diagram": diagram,
        "diagram_note": f"{shown} of {total}+ related symbols shown" if total > shown else "",
        "doc_html": render_document(text, f.language, data.resolver(f.path, page.root)) if is_doc else None,
        "dir_url": dir_url(posixpath.dirname(f.path)),
    }
    return page


def part_pages(data: SiteData, f: FileEntry) -> list[Page]:
    """Pages 2, 3, ... of a long file's source (none for a file that fits on its page)."""
    starts = data.part_starts(f.path)
    if len(starts) < 2:
        return []
    text = data.text(f.path)
    ends = [s - 1 for s in starts[1:]] + [f.n_lines]
    pages = []
    for k in range(1, len(starts)):
        path = part_page_path(f.path, k + 1)
        page = Page(
            path,
            site_url(path),
            "file.html",
            f"{f.path} (lines {starts[k]:,}–{ends[k]:,})",
            crumbs=crumbs(f.path, is_dir=False),
            current=f"file:{f.path}",
            nav_url=page_url(f.path),
            code=CodeSlice(text, f.language, starts[k], ends[k]),
        )
        page.context = {
            "file": f,
            "hidden": data.hidden_count(f.path),
            "origin": data.origin(f.path),
            "part": k + 1,
            "parts": _parts_nav(data, f, k),
            "symbols": _symbols(data, f, starts[k], ends[k]),
            "n_symbols": len(data.symbols.get(f.path, [])),
            "docstring": "",
            "doc_html": None,
        }
        pages.append(page)
    return pages

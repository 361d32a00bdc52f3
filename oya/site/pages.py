"""The wiki's pages as plain data, computed from an index alone (no language model).

Theory of operation:

* ``SiteData`` reads the index once: files, the code graph, per-file symbols and the
  directory tree. Each ``*_page`` function returns a ``Page``: where it is written, its
  template, and a context the Jinja2 template renders with autoescaping on.
* URLs in contexts are relative to the site root (``files/a.py.html#L3``) and templates
  prefix them with ``root`` (``""`` or ``"../../"``), so the site works from any folder or
  sub-path. File pages follow ``oya.core.results.page_url`` exactly (the browser's
  citations point there); directory pages are ``dirs/<dir>/index.html``.
* Text from the repository is only ever escaped: either by the template, or by
  ``markupsafe.escape`` in the few places that build HTML here (markup.py, codeview.py and
  the navigation). Diagrams come from ``render_mermaid``, whose labels are sanitised.
"""

from __future__ import annotations

import posixpath
import re
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, unquote, urlsplit

from markupsafe import Markup, escape

from oya.core.diagram import render_mermaid
from oya.core.records import Node
from oya.core.results import page_url
from oya.site.architecture import module_map
from oya.site.codeview import render_code
from oya.site.entry_points import EntryPoint, find_entry_points
from oya.site.markup import parse_document, render_blocks, render_document
from oya.store import Index

DOC_LANGUAGES = ("markdown", "rst")
FULL_NAV_MAX_FILES = 400  # above this the left nav only unfolds the current page's ancestors
NEIGHBOURHOOD_NODES = 24
MAX_LINKS = 20  # callers/callees listed per symbol before "and N more"
_README = re.compile(r"^readme(\.(md|markdown|rst|txt))?$", re.IGNORECASE)


@dataclass(frozen=True)
class FileEntry:
    path: str
    language: str
    size: int
    n_lines: int
    summary: str

    @property
    def name(self) -> str:
        return posixpath.basename(self.path)


@dataclass
class Page:
    path: str  # output file, relative to the site root, unquoted
    url: str  # the same as a URL (quoted), relative to the site root
    template: str
    title: str
    context: dict[str, Any] = field(default_factory=dict)
    crumbs: tuple[tuple[str, str | None], ...] = ()
    current: str = ""  # nav key: "file:<path>", "dir:<path>" or a top-level page name
    has_diagram: bool = False

    @property
    def root(self) -> str:
        return "../" * self.path.count("/")


def dir_url(d: str) -> str:
    return "dirs/index.html" if not d else "dirs/" + quote(d, safe="/") + "/index.html"


def first_sentence(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    m = re.search(r"(?<=[.!?])\s", text)
    if m and m.start() <= limit:
        return text[: m.start()]
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _link(node: Node, label: str | None = None) -> dict[str, str]:
    return {
        "label": label or node.qualname or node.name,
        "url": page_url(node.path, node.start_line),
        "where": f"{node.path}:{node.start_line}",
        "kind": node.kind,
    }


class SiteData:
    """Everything the pages need, read from the index once."""

    def __init__(self, index: Index) -> None:
        self.index = index
        self.meta = dict(index.meta)
        self.graph = index.graph
        self.symbols: dict[str, list[Node]] = defaultdict(list)
        self.modules: dict[str, Node] = {}
        for n in self.graph.nodes.values():
            if n.kind == "module":
                self.modules[n.path] = n
            else:
                self.symbols[n.path].append(n)
        for syms in self.symbols.values():
            syms.sort(key=lambda n: (n.start_line, n.qualname))
        self.files: list[FileEntry] = []
        for path, lang, size, n_lines in index.files():
            module = self.modules.get(path)
            summary = first_sentence(module.docstring) if module and module.docstring else ""
            self.files.append(FileEntry(path, lang, size, n_lines, summary))
        self.by_path = {f.path: f for f in self.files}
        self.children: dict[str, tuple[list[str], list[FileEntry]]] = {}
        for f in self.files:
            parent = posixpath.dirname(f.path)
            self._ensure_dir(parent)[1].append(f)
        for subdirs, _ in self.children.values():
            subdirs.sort()
        self.repo_name = self.meta.get("repo_name") or "repository"
        self.entry_points: list[EntryPoint] = find_entry_points(self)

    def _ensure_dir(self, d: str) -> tuple[list[str], list[FileEntry]]:
        if d not in self.children:
            self.children[d] = ([], [])
            if d:
                self._ensure_dir(posixpath.dirname(d))[0].append(d)
        return self.children[d]

    def text(self, path: str) -> str:
        row = self.index.con.execute("SELECT text FROM files WHERE path = ?", [path]).fetchone()
        return str(row[0]) if row and row[0] is not None else ""

    def file_count(self, d: str) -> int:
        subdirs, files = self.children.get(d, ([], []))
        return len(files) + sum(self.file_count(s) for s in subdirs)

    def resolver(self, from_path: str, root: str) -> Any:
        """Resolve a document's link target: http(s) kept, relative paths to wiki pages, else None."""

        def resolve(target: str) -> str | None:
            parts = urlsplit(target)
            if parts.scheme in ("http", "https") and parts.netloc:
                return target
            if parts.scheme or parts.netloc or not parts.path:
                return None  # javascript:, data:, mailto:, //host, bare #anchors
            rel = posixpath.normpath(posixpath.join(posixpath.dirname(from_path), unquote(parts.path)))
            rel = rel.lstrip("/") if parts.path.startswith("/") else rel
            if rel in self.by_path:
                return root + page_url(rel)
            if rel in self.children:
                return root + dir_url(rel)
            return None

        return resolve


# -- navigation -------------------------------------------------------------------------------
def render_nav(data: SiteData, current: str, root: str) -> Markup:
    """The directory tree as nested <details>; the current page's ancestors are open."""
    full = len(data.files) <= FULL_NAV_MAX_FILES
    kind, _, cur = current.partition(":")
    cur_dir = cur if kind == "dir" else posixpath.dirname(cur) if kind == "file" else None
    ancestors: set[str] = set()
    d = cur_dir
    while d is not None:
        ancestors.add(d)
        d = posixpath.dirname(d) if d else None

    def walk(d: str) -> Iterator[str]:
        subdirs, files = data.children.get(d, ([], []))
        for s in subdirs:
            name = escape(posixpath.basename(s))
            here = ' aria-current="page"' if kind == "dir" and s == cur else ""
            link = f'<a href="{root}{dir_url(s)}"{here}>{name}</a>'
            if full or s in ancestors:
                opened = " open" if s in ancestors else ""
                yield f'<li class="dir"><details{opened}><summary>{link}</summary><ul>'
                yield from walk(s)
                yield "</ul></details></li>"
            else:
                yield f'<li class="dir closed">{link}</li>'
        for f in files:
            here = ' aria-current="page"' if kind == "file" and f.path == cur else ""
            yield f'<li class="file"><a href="{root}{page_url(f.path)}"{here}>{escape(f.name)}</a></li>'

    return Markup('<ul class="tree">' + "".join(walk("")) + "</ul>")


def _crumbs(path: str, *, is_dir: bool) -> tuple[tuple[str, str | None], ...]:
    parts = path.split("/") if path else []
    out: list[tuple[str, str | None]] = [("Files", dir_url(""))]
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        sub = "/".join(parts[: i + 1])
        out.append((part, None if last else dir_url(sub)))
    return tuple(out)


# -- pages ------------------------------------------------------------------------------------
def overview_page(data: SiteData) -> Page:
    page = Page("index.html", "index.html", "overview.html", data.repo_name, current="overview")
    readme = next((f for f in data.files if "/" not in f.path and _README.match(f.name)), None)
    readme_html = None
    if readme is not None:
        text = data.text(readme.path)
        lang = readme.language if readme.language in DOC_LANGUAGES else "markdown"
        blocks = parse_document(text, lang)[:14]
        readme_html = render_blocks(blocks, data.resolver(readme.path, page.root), rst=lang == "rst")
    languages: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for f in data.files:
        languages[f.language][0] += 1
        languages[f.language][1] += f.n_lines
    n_symbols = sum(len(v) for v in data.symbols.values())
    dependency_edges = sum(1 for e in data.graph.edges if e.kind != "contains")
    central_modules = sorted(data.modules.values(), key=lambda n: (-n.centrality, n.path))[:10]
    central_symbols = sorted(
        (n for syms in data.symbols.values() for n in syms if not n.name.startswith("_")),
        key=lambda n: (-n.centrality, n.id),
    )[:15]
    top_dirs = [
        {"label": s + "/", "url": dir_url(s), "count": data.file_count(s)}
        for s in data.children.get("", ([], []))[0]
    ]
    page.context = {
        "readme": readme_html,
        "readme_url": page_url(readme.path) if readme else None,
        "readme_name": readme.path if readme else None,
        "languages": sorted(
            ({"name": k, "files": v[0], "lines": v[1]} for k, v in languages.items()),
            key=lambda r: (-r["files"], r["name"]),
        ),
        "size": {
            "files": len(data.files),
            "lines": sum(f.n_lines for f in data.files),
            "symbols": n_symbols,
            "modules": len(data.modules),
            "edges": dependency_edges,
            "skipped": len(data.index.skipped()),
        },
        "entry_points": data.entry_points,
        "central_modules": [
            {**_link(n, n.path), "summary": data.by_path[n.path].summary if n.path in data.by_path else ""}
            for n in central_modules
        ],
        "central_symbols": [_link(n) for n in central_symbols],
        "top_dirs": top_dirs,
        "top_files": [{"label": f.name, "url": page_url(f.path)} for f in data.children.get("", ([], []))[1]],
    }
    return page


def architecture_page(data: SiteData) -> Page:
    mm = module_map(data.graph)
    page = Page(
        "architecture.html", "architecture.html", "architecture.html", "Architecture", current="architecture"
    )
    page.has_diagram = bool(mm.mermaid)
    units = []
    for u in sorted(mm.units + mm.left_out, key=lambda u: u.key):
        units.append(
            {
                "label": (u.key or "(root)") + ("/" if mm.collapsed and u.key else ""),
                "url": dir_url(u.key) if mm.collapsed else page_url(u.key),
                "drawn": u in mm.units,
                "modules": [
                    {
                        "label": m,
                        "url": page_url(m),
                        "summary": data.by_path[m].summary if m in data.by_path else "",
                    }
                    for m in u.modules
                ],
            }
        )
    page.context = {
        "map": mm,
        "units": units,
        "dependencies": [
            {
                "source": d.source or "(root)",
                "target": d.target or "(root)",
                "kinds": d.kinds,
                "weight": d.weight,
            }
            for d in mm.dependencies[:40]
        ],
        "more_dependencies": max(len(mm.dependencies) - 40, 0),
        "left_out": [u.key or "(root)" for u in mm.left_out],
    }
    return page


def dir_page(data: SiteData, d: str) -> Page:
    out = "dirs/" + (d + "/" if d else "") + "index.html"
    title = (d or data.repo_name) + "/"
    page = Page(out, dir_url(d), "dir.html", title, crumbs=_crumbs(d, is_dir=True), current=f"dir:{d}")
    subdirs, files = data.children.get(d, ([], []))
    page.context = {
        "dir": d,
        "subdirs": [
            {"label": posixpath.basename(s) + "/", "url": dir_url(s), "count": data.file_count(s)}
            for s in subdirs
        ],
        "files": [
            {
                "label": f.name,
                "url": page_url(f.path),
                "language": f.language,
                "lines": f.n_lines,
                "summary": f.summary,
                "symbols": len(data.symbols.get(f.path, ())),
            }
            for f in files
        ],
    }
    return page


def _relations(data: SiteData, node: Node) -> dict[str, Any]:
    g = data.graph

    def links(ids: list[str]) -> dict[str, Any]:
        uniq = sorted(
            set(ids), key=lambda i: (g.nodes[i].path != node.path, g.nodes[i].path, g.nodes[i].start_line)
        )
        items = []
        for i in uniq[:MAX_LINKS]:
            other = g.nodes[i]
            label = other.qualname if other.kind != "module" else other.path
            if other.path != node.path and other.kind != "module":
                label = f"{label} ({posixpath.basename(other.path)})"
            items.append(_link(other, label))
        return {"items": items, "more": max(len(uniq) - MAX_LINKS, 0)}

    return {
        "callers": links([e.source for e in g.callers(node.id)]),
        "callees": links([e.target for e in g.callees(node.id)]),
        "bases": links(
            [e.target for _, e in g.neighbors(node.id) if e.kind == "inherits" and e.source == node.id]
        ),
        "subclasses": links(
            [e.source for _, e in g.neighbors(node.id) if e.kind == "inherits" and e.target == node.id]
        ),
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


def file_page(data: SiteData, f: FileEntry) -> Page:
    page = Page(
        "files/" + f.path + ".html",
        page_url(f.path),
        "file.html",
        f.path,
        crumbs=_crumbs(f.path, is_dir=False),
        current=f"file:{f.path}",
    )
    text = data.text(f.path)
    module = data.modules.get(f.path)
    symbols = []
    for n in data.symbols.get(f.path, []):
        symbols.append(
            {
                "node": n,
                "sig": _signature_parts(n),
                "depth": min(n.qualname.count("."), 4),
                "url": page_url(f.path, n.start_line),
                **_relations(data, n),
            }
        )
    imports: list[dict[str, str]] = []
    imported_by: list[dict[str, str]] = []
    if module is not None:
        for other, e in data.graph.neighbors(module.id):
            if e.kind != "imports" or other == module.id:
                continue
            target = data.graph.nodes[other]
            (imports if e.source == module.id else imported_by).append(_link(target, target.path))
    diagram, shown, total = _neighbourhood(data, f.path)
    page.has_diagram = bool(diagram)
    is_doc = f.language in DOC_LANGUAGES
    page.context = {
        "file": f,
        "docstring": module.docstring if module else "",
        "symbols": symbols,
        "imports": sorted({i["url"]: i for i in imports}.values(), key=lambda i: i["label"]),
        "imported_by": sorted({i["url"]: i for i in imported_by}.values(), key=lambda i: i["label"]),
        "diagram": diagram,
        "diagram_note": f"{shown} of {total}+ related symbols shown" if total > shown else "",
        "doc_html": render_document(text, f.language, data.resolver(f.path, page.root)) if is_doc else None,
        "code_html": None if is_doc else render_code(text, f.language),
        "raw_text": text if is_doc else None,
        "dir_url": dir_url(posixpath.dirname(f.path)),
    }
    return page


def search_page(data: SiteData) -> Page:
    page = Page("search.html", "search.html", "search.html", "Search", current="search")
    entries = sorted(
        (n for syms in data.symbols.values() for n in syms),
        key=lambda n: (n.name.lower(), n.qualname, n.path, n.start_line),
    )
    groups: list[dict[str, Any]] = []
    for n in entries:
        first = n.name[:1].upper()
        letter = first if first.isalpha() else "#"
        if not groups or groups[-1]["letter"] != letter:
            groups.append({"letter": letter, "id": f"idx-{len(groups)}", "items": []})
        groups[-1]["items"].append(_link(n))
    page.context = {"groups": groups, "count": len(entries)}
    return page


def all_pages(data: SiteData) -> Iterator[Page]:
    yield overview_page(data)
    yield architecture_page(data)
    yield search_page(data)
    for d in sorted(data.children):
        yield dir_page(data, d)
    for f in data.files:
        yield file_page(data, f)


__all__ = ["Page", "SiteData", "all_pages", "dir_url", "render_nav"]

"""The wiki's pages as plain data, computed from an index alone (no language model).

Theory of operation:

* ``SiteData`` reads the index once: files, the code graph, per-file symbols and the
  directory tree. Each ``*_page`` function returns a ``Page``: where it is written, its
  template, and a context the Jinja2 template renders with autoescaping on (file pages:
  ``oya.site.filepage``; the symbol index: ``oya.site.symbolindex``).
* Where a page lives comes from ``oya.core.sitepaths``, an injective map, so no repository
  layout makes two pages collide (``files/<path>.html``, ``dirs/<dir>/index.html``, long files'
  parts under ``parts/``). The browser's citations use the same map (``page_url``); links the
  site makes to a line use ``SiteData.line_url``, which knows which part of a long file holds it.
* URLs in contexts are relative to the site root (``files/a.py.html#L3``) and templates
  prefix them with ``root`` (``""`` or ``"../../"``), so the site works from any folder or
  sub-path.
* Text from the repository is only ever escaped: either by the template, or by
  ``markupsafe.escape`` in the few places that build HTML here (markup.py, codeview.py and
  the navigation). Diagrams come from ``render_mermaid``, whose labels are sanitised. Characters
  that hide or reorder text are shown as stand-ins everywhere (``oya.site.hidden``), and a page's
  size estimates count them.
"""

from __future__ import annotations

import posixpath
import re
from bisect import bisect_right
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urlsplit

from markupsafe import escape

from oya.core.hidden import count_hidden
from oya.core.records import Node
from oya.core.results import page_url
from oya.core.sitepaths import dir_page_path, dir_part_page_path, part_page_path, site_url
from oya.site.architecture import module_map
from oya.site.codeview import PAGE_CODE_BYTES, CodeSlice, split_parts
from oya.site.entry_points import EntryPoint, find_entry_points
from oya.site.hidden import HIDDEN_BYTES
from oya.site.markup import parse_document, render_blocks
from oya.store.index import Index

DOC_LANGUAGES = ("markdown", "rst")
DOC_RENDER_MAX_BYTES = 100_000  # longer documents are shown as (split) source, not rendered
NEIGHBOURHOOD_NODES = 24
LISTING_BYTES = 150_000  # estimated HTML of one folder page's rows: a big folder is split into pages
LISTED_ON_OVERVIEW = 60  # top-level folders and files the overview lists before "all files"
MODULES_PER_UNIT = 12  # modules the architecture page lists per package before "N more"
MAX_LINKS = 5  # callers/callees listed per symbol, strongest first, before "+N more"
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


# how a file page names a file that is not source (oya.scanning.provenance)
ORIGIN_LABELS = {
    "generated": "Generated code",
    "vendored": "Vendored code",
    "amalgamated": "A single-file build of other files",
    "copy": "A copy",
    "declaration": "Type declarations",
    "tooling": "The project's tooling",
}


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
    nav_url: str = ""  # the page the side bar marks as current, when not this one (a file's parts)
    code: CodeSlice | None = None  # source lines this page shows, highlighted when it is rendered

    @property
    def root(self) -> str:
        return "../" * self.path.count("/")


def dir_url(d: str) -> str:
    return site_url(dir_page_path(d))


def first_sentence(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    m = re.search(r"(?<=[.!?])\s", text)
    if m and m.start() <= limit:
        return text[: m.start()]
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def link(data: SiteData, node: Node, label: str | None = None) -> dict[str, str]:
    return {
        "label": label or node.qualname or node.name,
        "url": data.line_url(node.path, node.start_line),
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
        self._parts: dict[str, tuple[int, ...]] = {}
        self._urls: dict[tuple[str, int], str] = {}  # (path, part) -> its page's URL
        self._texts: dict[str, str] | None = None
        self._hidden: dict[str, int] = {}
        self._origins = index.origins()
        self.entry_points: list[EntryPoint] = find_entry_points(self)

    def _ensure_dir(self, d: str) -> tuple[list[str], list[FileEntry]]:
        if d not in self.children:
            self.children[d] = ([], [])
            if d:
                self._ensure_dir(posixpath.dirname(d))[0].append(d)
        return self.children[d]

    def text(self, path: str) -> str:
        if self._texts is None:
            self._texts = self.index.file_texts()
        return self._texts.get(path, "")

    def origin(self, path: str) -> dict[str, str] | None:
        """What the file is when it is not source (generated, vendored, a copy...), for its page."""
        found = self._origins.get(path)
        if found is None:
            return None
        return {"label": ORIGIN_LABELS[found.origin], "reason": found.reason}

    def hidden_count(self, path: str) -> int:
        """How many characters that hide or reorder text the file holds (``oya.core.hidden``)."""
        if path not in self._hidden:
            self._hidden[path] = count_hidden(self.text(path))
        return self._hidden[path]

    def _shown_size(self, f: FileEntry) -> int:
        """The file's size with its hidden characters' stand-ins (each is a few dozen bytes)."""
        return f.size + HIDDEN_BYTES * self.hidden_count(f.path)

    def renders_as_document(self, f: FileEntry) -> bool:
        """Markdown and reST are shown rendered, unless too long for one page (then as source)."""
        return f.language in DOC_LANGUAGES and self._shown_size(f) <= DOC_RENDER_MAX_BYTES

    def part_starts(self, path: str) -> tuple[int, ...]:
        """First line of each page a file's source is shown on: ``(1,)`` for all but long files."""
        if path not in self._parts:
            f = self.by_path.get(path)
            syms = self.symbols.get(path, [])
            small = f is not None and self._shown_size(f) <= PAGE_CODE_BYTES // 4 and len(syms) <= 60
            if f is None or small or self.renders_as_document(f):
                self._parts[path] = (1,)
            else:
                weights: dict[int, int] = defaultdict(int)
                for n in syms:
                    weights[n.start_line] += self._symbol_bytes(n)
                self._parts[path] = split_parts(self.text(path), weights)
        return self._parts[path]

    def _symbol_bytes(self, n: Node) -> int:
        """Estimated HTML of a symbol's entry in a file page's list: head, summary and links."""
        links = min(len(self.graph.neighbors(n.id)), 4 * MAX_LINKS)
        return 300 + min(len(n.docstring), 420) + len(n.signature) + 110 * links

    def line_url(self, path: str, line: int) -> str:
        """URL of ``line`` of ``path``: its file page, or the part of a long file that holds it."""
        k = max(bisect_right(self.part_starts(path), line) - 1, 0)
        url = self._urls.get((path, k))
        if url is None:  # quoting a path is most of a link's cost, and links repeat (25k for networkx)
            url = self._urls[path, k] = page_url(path) if k == 0 else site_url(part_page_path(path, k + 1))
        return url + (f"#L{line}" if line or k else "")

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


def crumbs(path: str, *, is_dir: bool) -> tuple[tuple[str, str | None], ...]:
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
    root_dirs, root_files = data.children.get("", ([], []))
    # the overview lists the first top-level entries; the root folder's pages list them all
    shown_dirs = root_dirs[:LISTED_ON_OVERVIEW]
    shown_files = root_files[: max(LISTED_ON_OVERVIEW - len(shown_dirs), 0)]
    top_dirs = [{"label": s + "/", "url": dir_url(s), "count": data.file_count(s)} for s in shown_dirs]
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
            {
                **link(data, n, n.path),
                "summary": data.by_path[n.path].summary if n.path in data.by_path else "",
            }
            for n in central_modules
        ],
        "central_symbols": [link(data, n) for n in central_symbols],
        "top_dirs": top_dirs,
        "top_files": [{"label": f.name, "url": page_url(f.path)} for f in shown_files],
        "top_total": len(root_dirs) + len(root_files),
        "more_top": len(root_dirs) + len(root_files) - len(shown_dirs) - len(shown_files),
        "all_files_url": dir_url(""),
    }
    return page


def _unit_modules(data: SiteData, modules: tuple[str, ...], folder_url: str) -> list[dict[str, str]]:
    """A package's modules for the architecture page: the first ``MODULES_PER_UNIT``, then one
    "N more" entry to the package's folder page (a package of thousands made a 0.8 MB page)."""
    limit = MODULES_PER_UNIT if folder_url and len(modules) > MODULES_PER_UNIT + 1 else len(modules)
    out = [
        {"label": m, "url": page_url(m), "summary": data.by_path[m].summary if m in data.by_path else ""}
        for m in modules[:limit]
    ]
    if limit < len(modules):
        out.append({"label": f"… {len(modules) - limit:,} more", "url": folder_url, "summary": ""})
    return out


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
                "modules": _unit_modules(data, u.modules, dir_url(u.key) if mm.collapsed else ""),
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


def _row_bytes(label: str, url: str, summary: str) -> int:
    """Estimated HTML of one row of a folder listing (escaped label and summary, link, tags)."""
    return 110 + len(url) + len(escape(label)) + len(escape(summary))


def _listing_pages(rows: list[dict[str, Any]], budget: int = LISTING_BYTES) -> list[list[dict[str, Any]]]:
    """``rows`` cut into consecutive pages of at most ``budget`` estimated bytes (at least one row each)."""
    pages: list[list[dict[str, Any]]] = [[]]
    used = 0
    for row in rows:
        cost = _row_bytes(row["label"], row["url"], row.get("summary", ""))
        if pages[-1] and used + cost > budget:
            pages.append([])
            used = 0
        pages[-1].append(row)
        used += cost
    return pages


def dir_pages(data: SiteData, d: str) -> list[Page]:
    """A folder's listing: one page, or consecutive pages for a folder of thousands of entries."""
    title = (d or data.repo_name) + "/"
    subdirs, files = data.children.get(d, ([], []))
    rows: list[dict[str, Any]] = [
        {"label": posixpath.basename(s) + "/", "url": dir_url(s), "count": data.file_count(s), "dir": True}
        for s in subdirs
    ]
    rows += [
        {
            "label": f.name,
            "url": page_url(f.path),
            "language": f.language,
            "lines": f.n_lines,
            "summary": f.summary,
            "symbols": len(data.symbols.get(f.path, ())),
            "dir": False,
        }
        for f in files
    ]
    groups = _listing_pages(rows)
    paths = [dir_page_path(d)] + [dir_part_page_path(d, k) for k in range(2, len(groups) + 1)]
    first_row = 1
    listing = []
    for path, group in zip(paths, groups, strict=True):
        listing.append({"url": site_url(path), "first": first_row, "last": first_row + len(group) - 1})
        first_row += len(group)
    pages = []
    for k, (path, group) in enumerate(zip(paths, groups, strict=True)):
        url = site_url(path)
        page = Page(path, url, "dir.html", title, crumbs=crumbs(d, is_dir=True), current=f"dir:{d}")
        page.nav_url = dir_url(d) if k else ""
        page.context = {
            "dir": d,
            "rows": group,
            "entries": len(rows),
            "listing": [{**p, "current": p["url"] == url} for p in listing] if len(groups) > 1 else [],
        }
        pages.append(page)
    return pages


__all__ = ["FileEntry", "Page", "SiteData", "dir_pages", "dir_url", "first_sentence", "link"]

"""Render the wiki's pages: only those whose inputs changed, on every core.

Theory of operation:

* ``plan`` reads the index once (``SiteData``) and lists every page with its full template
  context, except the one expensive piece: a file's source lines (``Page.code``, a ``CodeSlice``)
  are highlighted only when the page is rendered.
* Each page has a key: sha256 of the renderer (template and ``oya/site`` sources, Pygments' and
  Jinja2's versions), the page's path and context as canonical JSON, and its code slice (text,
  language, line range). Same key, same bytes: the page is a pure function of those inputs.
* The tree script's hashed name is left out of keys and patched into each page afterwards
  (``name_tree``), so a file added or removed does not change every page's key.
* A site records its keys in ``pages.json``. When the previous site holds a page with the same
  key, the page is not rendered again: the writer links (or copies) the previous file into the
  new site. Pages that no longer exist are simply not written: the new site is built aside from
  scratch and swapped in, so a deleted or renamed file leaves nothing stale.
* The rest is rendered in a pool of worker processes when there is enough work to pay for their
  start (``PARALLEL_MIN_BYTES`` of source to highlight), else in this process. Workers get the
  template name, context and code slice of each page and return HTML; output does not depend on
  which process rendered a page.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import posixpath
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cache, lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape
from markupsafe import Markup

from oya.errors import SiteError
from oya.site.codeview import CodeSlice, escape_marked
from oya.site.csp import CSP
from oya.site.filepage import file_page, part_pages
from oya.site.hidden import finalize
from oya.site.markup import render_docstring
from oya.site.nav import NAV_DIR, tree_script
from oya.site.package_data import TEMPLATE_DIR
from oya.site.pages import Page, SiteData, architecture_page, dir_pages, overview_page
from oya.site.symbolindex import symbol_pages
from oya.store.index import Index

PAGE_KEYS_FILE = "pages.json"
KEYS_VERSION = 1
TREE_PLACEHOLDER = "nav/tree.js"
Progress = Callable[[int, int], None]


@dataclass
class WikiPages:
    pages: dict[str, str]  # relative path (unquoted) -> text, for pages rendered in this run
    counts: dict[str, int]
    meta: dict[str, str] = field(default_factory=dict)
    keys: dict[str, str] = field(default_factory=dict)  # every page -> its input key
    reused: tuple[str, ...] = ()  # pages to take unchanged from ``previous``
    previous: str = ""  # the site the reused pages come from
    assets: dict[str, str] = field(default_factory=dict)  # shared files pages load (the tree script)
    tree: str = ""  # site path of the tree script the pages name
    previous_tree: str = ""  # the one the previous site's pages name


@dataclass(frozen=True)
class _Job:
    path: str
    template: str
    context: dict[str, Any]
    code: CodeSlice | None


def template_environment(template_dir: Path = TEMPLATE_DIR) -> Environment:
    env = Environment(
        loader=FileSystemLoader(str(template_dir)),
        autoescape=select_autoescape(["html"], default=True, default_for_string=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        finalize=finalize,  # every printed string: hidden characters as visible stand-ins
    )
    env.filters["docstring"] = render_docstring
    env.filters["rel"] = relative_url
    # element content needs only & < > escaped: not quotes, which autoescaping spells &#34; / &#39;
    env.filters["text"] = lambda text: Markup(escape_marked(text))
    return env


def relative_url(url: str, page_url: str) -> str:
    """``url`` (relative to the site root) as a link from ``page_url``: a link to a page in the same
    folder is its bare name instead of ``../`` up to the root and back down (networkx: 0.35 MB)."""
    target, mark, fragment = url.partition("#")
    if not target:
        return url
    return posixpath.relpath(target, posixpath.dirname(page_url) or ".") + mark + fragment


def all_pages(data: SiteData) -> Iterator[Page]:
    yield overview_page(data)
    yield architecture_page(data)
    yield from symbol_pages(data)
    for d in sorted(data.children):
        yield from dir_pages(data, d)
    for f in data.files:
        yield file_page(data, f)
        yield from part_pages(data, f)


def _context(data: SiteData, page: Page, tree_path: str) -> dict[str, Any]:
    root = page.root
    overview = page.current == "overview"
    return {
        **page.context,
        "root": root,
        "page_url": page.url,
        "nav_url": page.nav_url,
        "csp": Markup(CSP),  # a constant: its quotes need no escaping
        "title": page.title,
        "repo_name": data.repo_name,
        # only the overview names the commit and build time: on every page they would make a
        # one-file change rewrite the whole site
        "commit": data.meta.get("repo_commit", "") if overview else "",
        "built_at": data.meta.get("built_at", "") if overview else "",
        "tree_js": root + TREE_PLACEHOLDER,  # the hashed name is patched in: see ``name_tree``
        "crumbs": page.crumbs,
        "current": page.current,
        "has_diagram": page.has_diagram,
    }


# -- keys -----------------------------------------------------------------------------------------
# modules of oya/site that write other parts of the site, or check, serve or publish a written
# one: never a page (any other module counts)
_NOT_PAGE_CODE = frozenset(
    {"build", "bundle", "browser", "core_wheel", "reuse", "vendor", "checks", "serve", "publish"}
)


@cache
def renderer_digest() -> str:
    """What else decides a page's bytes: templates, the rendering code, library versions."""
    h = hashlib.sha256()
    site_code = Path(__file__).resolve().parent
    core = site_code.parent / "core"
    code = [p for p in sorted(site_code.glob("*.py")) if p.stem not in _NOT_PAGE_CODE]
    sources = [*sorted(TEMPLATE_DIR.glob("*.html")), *code, core / "sitepaths.py", core / "hidden.py"]
    for src in sources:
        h.update(src.name.encode() + b"\0" + src.read_bytes() + b"\0")
    for dist in ("jinja2", "markupsafe", "pygments"):
        h.update(f"{dist}={metadata.version(dist)}\0".encode())
    return h.hexdigest()


# Record fields no template shows. A node's centrality changes all over the graph with any edit;
# pages only use it to order things, and the ordered result is in their context already.
_UNSHOWN_FIELDS = frozenset({"centrality"})


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = dataclasses.fields(value)
        return {f.name: getattr(value, f.name) for f in fields if f.name not in _UNSHOWN_FIELDS}
    if isinstance(value, set | frozenset):
        return sorted(value, key=repr)
    return repr(value)  # unknown types: a changing repr only costs a re-render, never a stale page


@lru_cache(maxsize=64)
def _text_digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def page_key(job: _Job) -> str:
    code = None
    if job.code is not None:
        c = job.code
        code = [_text_digest(c.text), c.language, c.first, c.last]
    payload = json.dumps(
        [renderer_digest(), job.path, job.template, job.context, code],
        sort_keys=True,
        default=_plain,
        ensure_ascii=False,
    )
    return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()


def previous_keys(site: Path | None) -> tuple[dict[str, str], str]:
    """The page keys and tree script a previous site recorded (empty when none or unreadable)."""
    if site is None:
        return {}, ""
    try:
        data = json.loads((Path(site) / PAGE_KEYS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}, ""
    pages = data.get("pages") if isinstance(data, dict) else None
    if not isinstance(pages, dict) or data.get("version") != KEYS_VERSION:
        return {}, ""
    return {str(k): str(v) for k, v in pages.items()}, str(data.get("tree", ""))


def name_tree(html: str, page_path: str, tree_path: str) -> str:
    """``html`` with its tree script pointing at ``tree_path``.

    Pages are keyed and rendered without the tree's hash, so adding a file (a new tree) does not
    make every page render again: a reused page only gets this one attribute rewritten. The tag
    sits in ``<head>`` before any repository text, and repository text is always escaped, so
    the first ``<script src="<root>nav/`` is ours.
    """
    head = f'<script src="{"../" * page_path.count("/")}{NAV_DIR}/'
    at = html.find(head)
    if at < 0:
        raise SiteError(f"{page_path}: no file-tree script tag to point at {tree_path}")
    start = at + len(head)
    end = html.index('"', start)
    return html[:start] + tree_path[len(NAV_DIR) + 1 :] + html[end:]


# -- rendering ------------------------------------------------------------------------------------
_ENV: Environment | None = None


def _render_job(job: _Job) -> tuple[str, str]:
    global _ENV
    if _ENV is None:
        _ENV = template_environment()
    context = dict(job.context)
    if job.code is not None:
        context["code_html"] = job.code.html()
        context["code_first"] = job.code.first
        context["code_last"] = job.code.last
    return job.path, _ENV.get_template(job.template).render(context)


def render_jobs(jobs: list[_Job], progress: Progress | None = None) -> Iterator[tuple[str, str]]:
    """(path, html) for every job."""
    for done, job in enumerate(jobs, 1):
        yield _render_job(job)
        if progress is not None and (done % 25 == 0 or done == len(jobs)):
            progress(done, len(jobs))


def render_wiki_pages(
    index_dir: Path, previous_site: Path | None = None, progress: Progress | None = None
) -> WikiPages:
    """Every page of the wiki: rendered, or (same key in ``previous_site``) marked for reuse."""
    old, old_tree = previous_keys(previous_site)
    with Index(Path(index_dir)) as index:
        data = SiteData(index)
        tree_path, tree_text = tree_script(data)
        pages: dict[str, str] = {}
        keys: dict[str, str] = {}
        counts = {"file_pages": 0, "part_pages": 0, "dir_pages": 0, "diagrams": 0}
        todo: list[_Job] = []
        reused: list[str] = []
        for page in all_pages(data):
            if page.path in keys:  # cannot happen: oya.core.sitepaths is injective
                raise SiteError(f"two wiki pages would be written to {page.path}")
            job = _Job(page.path, page.template, _context(data, page, tree_path), page.code)
            keys[page.path] = key = page_key(job)
            if (
                old.get(page.path) == key
                and previous_site is not None
                and (previous_site / page.path).is_file()
            ):
                reused.append(page.path)
            else:
                todo.append(job)
            counts["file_pages"] += page.template == "file.html" and not page.nav_url
            counts["part_pages"] += page.template == "file.html" and bool(page.nav_url)
            counts["dir_pages"] += page.template == "dir.html"
            counts["diagrams"] += page.has_diagram
        for path, html in render_jobs(todo, progress):
            pages[path] = name_tree(html, path, tree_path)
        stats = index.stats()
        counts.update(
            {
                "pages": len(keys),
                "rendered": len(todo),
                "reused": len(reused),
                "files": stats.files,
                "lines": sum(f.n_lines for f in data.files),
                "symbols": sum(len(v) for v in data.symbols.values()),
                "chunks": stats.chunks,
                "nodes": stats.nodes,
                "edges": stats.edges,
                "skipped": stats.skipped,
            }
        )
        previous = str(previous_site) if reused and previous_site is not None else ""
        assets = {tree_path: tree_text}
        return WikiPages(
            pages, counts, dict(index.meta), keys, tuple(reused), previous, assets, tree_path, old_tree
        )


__all__ = [
    "KEYS_VERSION",
    "PAGE_KEYS_FILE",
    "name_tree",
    "WikiPages",
    "all_pages",
    "render_wiki_pages",
    "template_environment",
]

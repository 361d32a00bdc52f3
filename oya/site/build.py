"""Build the static wiki: render every page from the index, add the browser runtime, swap it in.

Theory of operation:

* ``render_wiki_pages`` is pure computation over the index: it returns the HTML of every
  page in memory (relative path -> text) and counts. Jinja2 autoescapes everything; the
  only pre-built HTML comes from ``oya.site.markup``/``codeview``/``pages.render_nav``, which
  escape all repository text themselves.
* ``write_wiki_site`` writes the pages, the static files, the runtime (Pyodide, mermaid,
  transformers.js), the query model, the core wheel, the bundle and ``manifest.json`` into a
  temporary sibling folder, then swaps it in: the old site is renamed aside, the new one
  renamed into place, and only then is the old one deleted. A failed build removes its
  temporary folder and leaves the existing site as it was.
* ``manifest.json`` is how the Ask panel finds things: the wheel's file name, the model
  folder (or null when the index was not embedded with the model the browser can run), the
  bundle's file names, and the index's embedding model id.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

from oya.errors import SiteError
from oya.site.csp import CSP
from oya.site.markup import render_docstring
from oya.site.pages import Page, SiteData, all_pages, render_nav
from oya.store import Index

TEMPLATE_DIR = Path(__file__).resolve().parents[2] / "site_template"
STATIC_DIR = TEMPLATE_DIR / "static"
BROWSER_MODEL = "all-MiniLM-L6-v2"  # the only embedder the browser can run (oya.site.model_export)
MANIFEST_VERSION = 1


@dataclass
class WikiPages:
    pages: dict[str, str]  # relative path (unquoted) -> HTML
    counts: dict[str, int]
    meta: dict[str, str] = field(default_factory=dict)


def template_environment(template_dir: Path = TEMPLATE_DIR) -> Environment:
    env = Environment(
        loader=FileSystemLoader(str(template_dir)),
        autoescape=select_autoescape(["html"], default=True, default_for_string=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["docstring"] = render_docstring
    return env


def _render(env: Environment, data: SiteData, page: Page) -> str:
    root = page.root
    context = {
        **page.context,
        "root": root,
        "page_url": page.url,
        "csp": CSP,
        "title": page.title,
        "repo_name": data.repo_name,
        "commit": data.meta.get("repo_commit", ""),
        "built_at": data.meta.get("built_at", ""),
        "nav": render_nav(data, page.current, root),
        "crumbs": page.crumbs,
        "current": page.current,
        "has_diagram": page.has_diagram,
    }
    return env.get_template(page.template).render(context)


def render_wiki_pages(index_dir: Path) -> WikiPages:
    """Every page of the wiki, in memory. No language model is involved."""
    env = template_environment()
    with Index(Path(index_dir)) as index:
        data = SiteData(index)
        pages: dict[str, str] = {}
        counts = {"file_pages": 0, "dir_pages": 0, "diagrams": 0}
        for page in all_pages(data):
            if page.path in pages:  # e.g. a file "a" and a directory "a.html" (never both in one page tree)
                raise SiteError(f"two wiki pages would be written to {page.path}")
            pages[page.path] = _render(env, data, page)
            counts["file_pages"] += page.template == "file.html"
            counts["dir_pages"] += page.template == "dir.html"
            counts["diagrams"] += page.has_diagram
        stats = index.stats()
        counts.update(
            {
                "pages": len(pages),
                "files": stats.files,
                "lines": sum(f.n_lines for f in data.files),
                "symbols": sum(len(v) for v in data.symbols.values()),
                "chunks": stats.chunks,
                "nodes": stats.nodes,
                "edges": stats.edges,
                "skipped": stats.skipped,
            }
        )
        return WikiPages(pages, counts, dict(index.meta))


def _tree_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.exists() else 0


def _bundle_exporter() -> Any:
    try:
        from oya.site.bundle import export_bundle
    except ModuleNotFoundError as exc:
        if exc.name != "oya.site.bundle":
            raise
        return None
    return export_bundle


def _say(console: Any, text: str) -> None:
    if console is not None:
        console.print(text, highlight=False, markup=False)


def _write_into(
    tmp: Path,
    pages: WikiPages,
    index_dir: Path,
    *,
    with_runtime: bool,
    with_bundle: bool,
    console: Any,
) -> dict[str, Any]:
    sizes = {"pages": 0, "static": 0, "runtime": 0, "model": 0, "bundle": 0}
    for rel, html in sorted(pages.pages.items()):
        dest = tmp / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        data = html.encode("utf-8")
        dest.write_bytes(data)
        sizes["pages"] += len(data)
    shutil.copytree(STATIC_DIR, tmp / "static", ignore=shutil.ignore_patterns(".*", "__pycache__"))
    sizes["static"] = _tree_bytes(tmp / "static")
    manifest: dict[str, Any] = {
        "version": MANIFEST_VERSION,
        "repo": pages.meta.get("repo_name", ""),
        "commit": pages.meta.get("repo_commit", ""),
        "index_built_at": pages.meta.get("built_at", ""),
        "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "embedding_model": pages.meta.get("model_id", ""),
        "dim": int(pages.meta.get("dim", "0") or 0),
        "counts": pages.counts,
        "wheel": None,
        "model": None,
        "bundle": None,
    }
    if with_runtime:
        from oya.site.core_wheel import build_core_wheel
        from oya.site.vendor import copy_runtime, ensure_vendor

        _say(console, "site: copying the browser runtime (Pyodide, mermaid, transformers.js)")
        runtime = copy_runtime(ensure_vendor(), tmp)
        sizes["runtime"] += runtime["runtime"] + runtime["js"]
        sizes["model"] += runtime["model"]
        wheel = build_core_wheel(tmp / "vendor")
        sizes["runtime"] += wheel.stat().st_size
        manifest["wheel"] = "vendor/" + wheel.name
        if BROWSER_MODEL in manifest["embedding_model"]:
            from oya.site.model_export import copy_model, export_query_model

            _say(console, "site: exporting the query model for the browser")
            model_dir = export_query_model()
            sizes["model"] += copy_model(model_dir, tmp)
            manifest["model"] = "models/" + model_dir.name
        else:
            _say(
                console, f"site: index embedded with {manifest['embedding_model']!r}: no query model shipped"
            )
    if with_bundle:
        export_bundle = _bundle_exporter()
        if export_bundle is None:
            _say(console, "site: warning: oya.site.bundle is not available; the Ask panel will have no index")
        else:
            with Index(Path(index_dir)) as index:
                info = export_bundle(index, tmp / "bundle")
            manifest["bundle"] = {"path": "bundle/", **info}
            sizes["bundle"] = _tree_bytes(tmp / "bundle")
    (tmp / "manifest.json").write_text(
        json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8"
    )
    return {"manifest": manifest, "bytes": sizes}


def write_wiki_site(
    pages: WikiPages,
    index_dir: Path,
    site_dir: Path,
    *,
    with_runtime: bool = True,
    with_bundle: bool | None = None,
    console: Any = None,
) -> dict[str, Any]:
    """Write the site into ``site_dir`` (replacing it only once complete); return a report.

    ``with_bundle`` defaults to ``with_runtime`` (the bundle is only useful with the runtime).
    """
    site_dir = Path(site_dir)
    if site_dir.exists() and not site_dir.is_dir():
        raise SiteError(f"{site_dir} exists and is not a folder")
    if site_dir.exists() and any(site_dir.iterdir()) and not (site_dir / "manifest.json").is_file():
        raise SiteError(f"{site_dir} is a non-empty folder that is not an Oya site; choose another --out")
    site_dir.parent.mkdir(parents=True, exist_ok=True)
    token = uuid.uuid4().hex[:12]
    tmp = site_dir.parent / f".{site_dir.name}.new-{token}"
    old = site_dir.parent / f".{site_dir.name}.old-{token}"
    tmp.mkdir()
    try:
        report = _write_into(
            tmp,
            pages,
            Path(index_dir),
            with_runtime=with_runtime,
            with_bundle=with_runtime if with_bundle is None else with_bundle,
            console=console,
        )
        if site_dir.exists():
            site_dir.rename(old)
        try:
            tmp.rename(site_dir)
        except OSError:
            if old.exists():
                old.rename(site_dir)
            raise
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    with contextlib.suppress(OSError):
        shutil.rmtree(old)
    report.update({"site": str(site_dir), "pages": len(pages.pages), "counts": pages.counts})
    report["bytes"]["total"] = sum(report["bytes"].values())
    _say(console, f"site: {len(pages.pages)} pages, {report['bytes']['total'] / 1e6:.1f} MB in {site_dir}")
    return report


def build_site(
    index_dir: Path, site_dir: Path, *, console: Any = None, with_runtime: bool = True
) -> dict[str, Any]:
    """Render the wiki from the index in ``index_dir`` and write it to ``site_dir``."""
    pages = render_wiki_pages(Path(index_dir))
    return write_wiki_site(pages, Path(index_dir), Path(site_dir), with_runtime=with_runtime, console=console)

"""Build the static wiki: render every page from the index, add the browser runtime, swap it in.

Theory of operation:

* ``render_wiki_pages`` (``oya.site.render``) is pure computation over the index: it returns
  the HTML of every page whose inputs changed, in memory, and which pages the previous site
  already holds. Jinja2 autoescapes everything; the only pre-built HTML comes from
  ``oya.site.markup``/``codeview``/``nav``, which escape all repository text themselves.
* ``write_wiki_site`` writes the pages, the static files, the runtime (Pyodide, mermaid,
  transformers.js), the query model, the core wheel, the bundle and ``manifest.json`` into a
  temporary sibling folder (unchanged pages and runtime files are hard-linked from the previous
  site, not copied), then swaps it in: the old site is renamed aside, the new one
  renamed into place, and only then is the old one deleted. A failed build removes its
  temporary folder and leaves the existing site as it was. Only a folder Oya wrote is ever
  replaced (its ``.oya-site`` marker, ``oya.build.ownership``); any other is refused in one line.
* Last, ``oya.site.assets.finish_assets`` gives the runtime, model and bundle folders
  content-hashed names and writes ``.br``/``.gz`` copies of every compressible file (whatever
  files the steps above wrote), recording the renames in the manifest (``assets``). Then
  ``sw.js``, the service worker that keeps visited pages and the Ask panel working offline, is
  written at the site's root with the build's id and hashed names (``oya.site.offline``).
* ``manifest.json`` is how the Ask panel finds things: the wheel's file name, the model
  folder (or null when the index was not embedded with the model the browser can run), the
  bundle's file names (and its shards' manifest, ``oya.core.shards``: written beside the whole
  bundle from the same data, not yet read by the Ask panel), and the index's embedding model id.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from oya.build.ownership import check_site, mark_site
from oya.errors import SiteError
from oya.settings import CachePaths
from oya.site.offline import write_service_worker
from oya.site.render import (
    KEYS_VERSION,
    PAGE_KEYS_FILE,
    TEMPLATE_DIR,
    WikiPages,
    name_tree,
    render_wiki_pages,
)
from oya.site.reuse import link_or_copy
from oya.store.index import Index

STATIC_DIR = TEMPLATE_DIR / "static"
BROWSER_MODEL = "all-MiniLM-L6-v2"  # the only embedder the browser can run (oya.embedding.model_export)
MANIFEST_VERSION = 1
PATH_MAX_BYTES = 4095  # Linux's PATH_MAX less its NUL; macOS allows less (1,023), so this errs long
# what the longest page path gains on the way: ".br" (oya.site.assets) and a temporary sibling name
_PATH_SLACK = 64


def _tree_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.exists() else 0


@contextlib.contextmanager
def _timed(steps: dict[str, float], name: str) -> Iterator[None]:
    """Add the block's wall seconds to ``steps[name]`` (the site's breakdown in the build summary)."""
    t0 = time.perf_counter()
    try:
        yield
    finally:
        steps[name] = round(steps.get(name, 0.0) + time.perf_counter() - t0, 3)


def _say(console: Any, text: str) -> None:
    if console is not None:
        console.print(text, highlight=False, markup=False)


# what a site never ships: dot files and caches
STATIC_LEFT_OUT = (".*", "__pycache__")


def _write_pages(tmp: Path, pages: WikiPages) -> int:
    """Write the rendered pages, link the reused ones, record every page's key; return bytes."""
    total = 0
    for rel, html in sorted({**pages.pages, **pages.assets}.items()):
        dest = tmp / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        data = html.encode("utf-8")
        dest.write_bytes(data)
        total += len(data)
    previous = Path(pages.previous)
    for rel in pages.reused:
        src = previous / rel
        if not src.is_file():
            raise SiteError(f"{src} disappeared while the site was being built; build again")
        if pages.previous_tree == pages.tree:
            link_or_copy(src, tmp / rel)
        else:  # same page, but it must name the new tree script
            html = name_tree(src.read_text(encoding="utf-8"), rel, pages.tree)
            (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
            (tmp / rel).write_text(html, encoding="utf-8")
        total += (tmp / rel).stat().st_size
    keys = {"version": KEYS_VERSION, "tree": pages.tree, "pages": dict(sorted(pages.keys.items()))}
    (tmp / PAGE_KEYS_FILE).write_text(json.dumps(keys, indent=0) + "\n", encoding="utf-8")
    return total


def _check_path_room(site_dir: Path, pages: WikiPages) -> None:
    """Refuse, in one line, a site folder so deep that its longest page could not be written.

    The reader keeps repository paths under ``oya.scanning.reader.MAX_PATH_BYTES``; this catches the rest:
    a ``--out`` nested thousands of bytes deep, which would otherwise stop the build half-way on
    a system error naming a 4,000-byte path."""
    longest = max((*pages.pages, *pages.assets, *pages.reused), key=lambda r: len(r.encode()), default="")
    need = len(os.fsencode(site_dir)) + 1 + len(longest.encode()) + _PATH_SLACK
    if need > PATH_MAX_BYTES:
        raise SiteError(
            f"the site folder is too deep for this repository's pages: the longest needs a path of "
            f"about {need:,} bytes, over the system's {PATH_MAX_BYTES:,}; choose a shorter --out"
        )


def _write_into(
    tmp: Path,
    pages: WikiPages,
    index_dir: Path,
    *,
    with_runtime: bool,
    with_bundle: bool,
    console: Any,
    previous: Path | None,
    cache: CachePaths,
) -> dict[str, Any]:
    sizes = {"pages": 0, "static": 0, "runtime": 0, "model": 0, "bundle": 0}
    # seconds per part: the one-off preparations (npm install, model export, the runtime's slow
    # compression) are paid once per cache folder and show here on a first build
    steps: dict[str, float] = {}
    mark_site(tmp)  # what proves, at the next build, that this folder may be replaced
    with _timed(steps, "pages"):
        sizes["pages"] = _write_pages(tmp, pages)
        shutil.copytree(STATIC_DIR, tmp / "static", ignore=shutil.ignore_patterns(*STATIC_LEFT_OUT))
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
        from oya.site.core_wheel import build_core_wheel, core_sources
        from oya.site.prepare import wait_for_preparation
        from oya.site.vendor import copy_model, copy_runtime, core_bytecode, ensure_vendor

        # the child that prepares the runtime in the cache (oya.site.prepare), if one still runs
        steps["waited_for_preparation"] = round(wait_for_preparation(cache.root), 3)
        _say(console, "site: copying the browser runtime (Pyodide, mermaid, transformers.js)")
        with _timed(steps, "npm_install"):
            vendor = ensure_vendor(cache.root)
        with _timed(steps, "runtime_copy"):
            runtime = copy_runtime(vendor, tmp, previous)
        sizes["runtime"] += runtime["runtime"] + runtime["js"]
        sizes["model"] += runtime["model"]
        with _timed(steps, "core_wheel"):  # bytecode by the runtime's own Pyodide (cached)
            wheel = build_core_wheel(
                tmp / "vendor", bytecode=core_bytecode(vendor, core_sources(), cache.root)
            )
        sizes["runtime"] += wheel.stat().st_size
        manifest["wheel"] = "vendor/" + wheel.name
        if BROWSER_MODEL in manifest["embedding_model"]:
            from oya.embedding.model_export import export_query_model

            _say(console, "site: exporting the query model for the browser")
            with _timed(steps, "model_export"):
                model_dir = export_query_model(cache.root)
            with _timed(steps, "runtime_copy"):
                sizes["model"] += copy_model(model_dir, tmp, previous)
            manifest["model"] = "models/" + model_dir.name
        else:
            _say(
                console, f"site: index embedded with {manifest['embedding_model']!r}: no query model shipped"
            )
    if with_bundle:
        from oya.site.bundle import bundle_counts, bundle_document
        from oya.site.shards import SHARDS_DIR, export_shards

        with _timed(steps, "bundle"):
            with Index(Path(index_dir)) as index:
                doc, vec_bytes = bundle_document(index)
            # content-hashed shards a question fetches on demand (oya.core.shards): all the site holds
            # of the index; the whole document stays in memory (a reader would never fetch it)
            shards = export_shards(doc, vec_bytes, tmp / "bundle" / SHARDS_DIR)
        manifest["bundle"] = {
            "path": "bundle/",
            **bundle_counts(doc),
            "shards": {"path": SHARDS_DIR + "/", **shards},
        }
        sizes["bundle"] = _tree_bytes(tmp / "bundle")
    # last: content-hashed names and .br/.gz copies of whatever files were written (oya.site.assets)
    from oya.site.assets import finish_assets, write_copies

    with _timed(steps, "hash_and_compress"):
        compressed = finish_assets(tmp, manifest, cache.root / "compressed", previous, steps)
    write_service_worker(tmp, manifest)  # it names the hashed files: after them (oya.site.offline)
    (tmp / "manifest.json").write_text(
        json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8"
    )
    # its Content-Encoding tells the Ask panel how the host sends files (oya.site.assets)
    write_copies(tmp / "manifest.json")
    return {"manifest": manifest, "bytes": sizes, "compressed": compressed, "steps": steps}


def write_wiki_site(
    pages: WikiPages,
    index_dir: Path,
    site_dir: Path,
    *,
    with_runtime: bool = True,
    with_bundle: bool | None = None,
    console: Any = None,
    cache: CachePaths | None = None,
    swap: bool = True,
) -> dict[str, Any]:
    """Write the site into ``site_dir`` (replacing it only once complete); return a report.

    ``with_bundle`` defaults to ``with_runtime`` (the bundle is only useful with the runtime);
    ``cache`` holds the npm runtime and the exported query model (default: ``CachePaths.resolve()``).
    ``swap=False`` leaves the complete site in its staged folder (``report["staged"]``) for checks;
    ``swap_site`` then puts it in place.
    """
    site_dir = Path(site_dir)
    check_site(site_dir)  # a folder Oya did not write is never replaced (oya.build.ownership)
    _check_path_room(site_dir, pages)
    site_dir.parent.mkdir(parents=True, exist_ok=True)
    token = uuid.uuid4().hex[:12]
    tmp = site_dir.parent / f".{site_dir.name}.new-{token}"
    tmp.mkdir()
    try:
        report = _write_into(
            tmp,
            pages,
            Path(index_dir),
            with_runtime=with_runtime,
            with_bundle=with_runtime if with_bundle is None else with_bundle,
            console=console,
            previous=site_dir if site_dir.is_dir() else None,
            cache=cache or CachePaths.resolve(),
        )
        if swap:
            swap_site(tmp, site_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    n_pages = len(pages.keys) or len(pages.pages)
    report.update({"site": str(site_dir), "staged": "" if swap else str(tmp), "pages": n_pages})
    report["counts"] = pages.counts
    report["bytes"]["total"] = sum(report["bytes"].values())
    _say(console, f"site: {n_pages} pages, {report['bytes']['total'] / 1e6:.1f} MB in {site_dir}")
    return report


def swap_site(staged: Path, site_dir: Path) -> None:
    """Put a complete staged site in place of ``site_dir``: the old one renamed aside, the new one
    renamed in, the old one deleted. A failed rename puts the old one back. A ``site_dir`` Oya did
    not write is refused (checked again here: the build took minutes since ``write_wiki_site``)."""
    check_site(site_dir)
    old = site_dir.parent / f".{site_dir.name}.old-{uuid.uuid4().hex[:12]}"
    if site_dir.exists():
        site_dir.rename(old)
    try:
        staged.rename(site_dir)
    except OSError:
        if old.exists():
            old.rename(site_dir)
        raise
    with contextlib.suppress(OSError):
        shutil.rmtree(old)


__all__ = ["WikiPages", "render_wiki_pages", "swap_site", "write_wiki_site"]

"""The site's service worker: ``<site>/sw.js``, written from ``site_template/sw.js`` with this build's facts.

Theory of operation: the worker (its own comment says how it answers) must know two things of the
build it belongs to, and the build writes them into its one ``BUILD`` line:

* ``id``: a digest of what a reader can fetch: every page's key (``pages.json``: its inputs and the
  renderer, ``oya.site.render.page_key``), the ``static/`` files and the hashed names. The browser
  compares ``sw.js`` byte for byte on navigation: a build whose pages, scripts or bundle changed
  installs a new worker, whose caches are named by this id and which deletes its scope's older
  ones; the same site built again (another build time) is the same file, byte for byte, and keeps
  the readers' caches.
* ``hashed``: the content-hashed names the manifest lists (``assets``, ``oya.site.assets``): what the
  worker may answer from its cache without asking the server, and keep across builds while shipped.

The file goes to the site's root, not ``static/``: a service worker controls at most its own folder,
and the site's root is the scope it needs (a host's ``Service-Worker-Allowed`` header could widen it,
but a plain static host sends none). Nothing in it comes from the repository: the hashed names are the
build's own (npm runtime folders, the model's folder, ``bundle``), written as JSON.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from oya.errors import SiteError
from oya.site.package_data import TEMPLATE_DIR
from oya.site.render import PAGE_KEYS_FILE

SW_TEMPLATE = TEMPLATE_DIR / "sw.js"
SW_NAME = "sw.js"  # at the site's root (site.js registers <root>sw.js)
BUILD_LINE = 'const BUILD = { id: "dev", hashed: [] };'
ID_CHARS = 12


def build_facts(site: Path, manifest: dict[str, Any]) -> dict[str, Any]:
    """The worker's ``BUILD`` for the site in ``site``: the build's id and its content-hashed names."""
    hashed = sorted({str(name) for name in (manifest.get("assets") or {}).values()})
    h = hashlib.sha256(json.dumps(hashed).encode("utf-8") + b"\0")
    pages = Path(site) / PAGE_KEYS_FILE
    h.update(pages.read_bytes() if pages.is_file() else b"")
    static = Path(site) / "static"
    for path in sorted(p for p in static.rglob("*") if p.is_file()) if static.is_dir() else ():
        h.update(b"\0" + path.relative_to(static).as_posix().encode("utf-8") + b"\0")
        h.update(hashlib.sha256(path.read_bytes()).digest())
    return {"id": h.hexdigest()[:ID_CHARS], "hashed": hashed}


def write_service_worker(site: Path, manifest: dict[str, Any]) -> Path:
    """Write ``<site>/sw.js`` for the site written in ``site`` (its pages, static files and hashed
    names: call it last, with the manifest's hashed names resolved)."""
    template = SW_TEMPLATE.read_text(encoding="utf-8")
    if template.count(BUILD_LINE) != 1:
        raise SiteError(f"{SW_TEMPLATE} must hold the line {BUILD_LINE!r} once (the build fills it in)")
    line = f"const BUILD = {json.dumps(build_facts(site, manifest), sort_keys=True)};"
    out = Path(site) / SW_NAME
    out.write_text(template.replace(BUILD_LINE, line), encoding="utf-8")
    return out


__all__ = ["SW_NAME", "build_facts", "write_service_worker"]

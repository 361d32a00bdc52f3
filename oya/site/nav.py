"""The left navigation's file tree: one shared, content-hashed script instead of HTML in every page.

Theory of operation:

* Inlining the whole tree in every page made the site grow as pages x files (a 127-file repository
  spent most of its page bytes on it). Instead the tree is written once as ``nav/tree.<hash>.js``,
  a script that only assigns data (``window.oyaTree = ...``): no inline script is needed (the CSP
  forbids them), it loads from ``file://`` as well as over HTTP (``fetch`` of JSON would not), and
  the hash in its name lets a browser cache it for good.
* ``site.js`` draws the tree from that data as nested ``<details>``/``<summary>`` lists (native
  keyboard and screen-reader behaviour), opens the current page's ancestors, marks the current
  page with ``aria-current`` and fills other folders only when they are first opened, so a big
  repository costs no more DOM than the path being read.
* Data: a folder is ``[name, [folders], [files], segment?]``, a file is ``name`` or
  ``[name, segment]``. The segment is the folder's or page's site path segment, percent-quoted
  (``oya.core.sitepaths``), given only where it differs from the name (``name + ".html"`` for a
  file), so the script never re-implements the path mapping. A name holding characters that hide
  or reorder text is shown with stand-ins (``oya.core.hidden.visible``), its segment then given.
* Without JavaScript the side bar is one "Browse files" link to the root folder page (listing the
  top level there cost every page about 1 kB); every page keeps its breadcrumbs and folder pages
  list their own entries.
"""

from __future__ import annotations

import hashlib
import json
import posixpath
from typing import Any

from oya.core.hidden import visible
from oya.core.sitepaths import dir_segment, file_segment, site_url
from oya.site.pages import SiteData

NAV_DIR = "nav"


def _file_entry(name: str) -> Any:
    seg = site_url(file_segment(name))
    label = visible(name)
    return label if seg == label + ".html" else [label, seg]


def _dir_entry(data: SiteData, d: str) -> list[Any]:
    subdirs, files = data.children.get(d, ([], []))
    name = posixpath.basename(d)
    label = visible(name)
    entry: list[Any] = [label, [_dir_entry(data, s) for s in subdirs], [_file_entry(f.name) for f in files]]
    seg = site_url(dir_segment(name))
    if seg != label:
        entry.append(seg)
    return entry


def tree_script(data: SiteData) -> tuple[str, str]:
    """(site path of the tree script, its text); the path holds a hash of the text."""
    root = _dir_entry(data, "")
    payload = json.dumps(root[1:3], ensure_ascii=False, separators=(",", ":"))
    # "</" cannot end a script, but keep the file valid if someone inlines it
    text = "window.oyaTree = " + payload.replace("</", "<\\/") + ";\n"
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
    return f"{NAV_DIR}/tree.{digest}.js", text


__all__ = ["NAV_DIR", "tree_script"]

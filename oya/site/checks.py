"""What the blocking checks ask of a staged site before it is published: its links resolve, it
holds no secret, and its bundle answers like the index it was made from.

Theory of operation:

* **Links.** Every ``href``/``src`` attribute of every HTML page, resolved against the page's
  own URL; one that stays inside the site must name a file of the staged site (a folder means
  its ``index.html``). External URLs (a scheme or ``//``), ``data:``/``mailto:``/``javascript:``
  and fragment-only links are not the site's to resolve. Attributes are found with a regular
  expression, not an HTML parser: pages are Jinja-rendered with double-quoted attributes, and a
  repository's text inside a page is escaped (``"`` is ``&quot;``), so its text cannot make an
  attribute. Every page is read at every build: a page reused from the previous site can still
  link to a file the new build deleted.
* **Secrets.** Every file of the staged site, text or gzip, is scanned with
  ``oya.scanning.redact.find_credentials`` (the language-free rules), except files hard-linked from the
  live site (same inode: the bytes that passed this check when that site was published, which is
  how unchanged pages and the runtime are reused) and binary files (a NUL byte: the model's
  weights, WebAssembly). So a one-file rebuild scans its re-rendered pages and the bundle.
* **Golden queries.** A few of the repository's own symbol names (the most central functions and
  classes) are asked of the staged index through the DuckDB channels (what ``oya ask`` runs) and of
  the staged bundle through the pure core (what the Ask panel runs). Both without a question
  vector (lexical and graph channels; the bundle's vectors are int8, the index's float32, so a
  semantic tie could order differently): the top hit and the top three files must agree. The
  bundle is read as the browser reads it: its shards, opened with ``open_shards`` (the site holds
  no whole bundle; tests/site/test_shards.py holds the shards to the whole document's answers).
"""

from __future__ import annotations

import gzip
import os
import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

from oya.core.bundle import Bundle
from oya.core.bundle_format import BundleError
from oya.core.options import RetrievalOptions
from oya.core.pipeline import retrieve
from oya.core.results import RetrievalResult
from oya.core.shard_store import folder_fetch
from oya.core.shards import open_shards
from oya.query.searcher import index_channels
from oya.scanning.redact import find_credentials
from oya.site.shards import SHARDS_DIR
from oya.store.index import Index

_LINK = re.compile(r'\b(?:href|src)="([^"]*)"')
# only inside real tags: a code page shows `href="{url}"` as text (its "<" escaped, quotes not)
_TAG = re.compile(r"<[a-zA-Z][^<>]*>")
_NOT_OURS = ("data:", "mailto:", "javascript:", "blob:", "tel:")
GOLDEN_QUERIES = 5
_NO_VECTOR = "a golden query compares the lexical and graph channels only"


def _files(site: Path) -> list[Path]:
    return sorted(p for p in site.rglob("*") if p.is_file())


def broken_links(site: Path) -> list[str]:
    """``page -> link`` for every internal link of ``site``'s pages that names no file of it."""
    broken: list[str] = []
    for page in (p for p in _files(site) if p.suffix == ".html"):
        rel = page.relative_to(site).as_posix()
        html = page.read_text(encoding="utf-8", errors="replace")
        for link in (m for tag in _TAG.findall(html) for m in _LINK.findall(tag)):
            target = _target(rel, link)
            if target is not None and not _exists(site, target):
                broken.append(f"{rel} -> {link}")
    return broken


def _target(page: str, link: str) -> str | None:
    """The site-relative path a link names, or None when it leaves the site or names no file."""
    link = link.strip().replace("&amp;", "&")
    parts = urlsplit(link)
    if not link or link.startswith(("#", "//")) or parts.scheme or link.lower().startswith(_NOT_OURS):
        return None
    path = unquote(parts.path)
    if not path:  # "?x=1": the page itself
        return None
    joined = os.path.normpath(os.path.join(os.path.dirname(page), path)) if not path.startswith("/") else path
    return joined.lstrip("/") + ("/" if path.endswith("/") else "")


def _exists(site: Path, target: str) -> bool:
    if target.startswith(".."):  # above the site's root: nothing a static host serves
        return False
    path = site / target
    return path.is_file() or (path.is_dir() and (path / "index.html").is_file())


def files_with_secrets(staged: Path, live: Path) -> tuple[list[str], int]:
    """Site-relative paths of the staged site's files holding a secret-looking string, and how many
    files were scanned (those not hard-linked from ``live``, not binary)."""
    found: list[str] = []
    scanned = 0
    for path in _files(staged):
        rel = path.relative_to(staged).as_posix()
        if _same_file(path, live / rel):
            continue
        data = path.read_bytes()
        if path.suffix == ".gz":
            data = gzip.decompress(data)
        if b"\0" in data:
            continue
        scanned += 1
        if find_credentials(data.decode("utf-8", errors="replace")):
            found.append(rel)
    return found, scanned


def _same_file(a: Path, b: Path) -> bool:
    try:
        sa, sb = a.stat(), b.stat()
    except OSError:
        return False
    return (sa.st_ino, sa.st_dev) == (sb.st_ino, sb.st_dev)


def golden_questions(index: Index, n: int = GOLDEN_QUERIES) -> list[str]:
    """The names of the ``n`` most central functions and classes, distinct, at least 4 letters."""
    rows = index.con.execute(
        "SELECT name FROM nodes WHERE kind IN ('function', 'class', 'method') AND length(name) >= 4 "
        "GROUP BY name ORDER BY max(centrality) DESC, name LIMIT ?",
        [n],
    ).fetchall()
    return [str(r[0]) for r in rows]


def _sharded(bundle_dir: Path) -> Bundle | None:
    """The bundle's shards (``oya.site.shards``) opened as the browser would, or None without them."""
    manifests = sorted((bundle_dir / SHARDS_DIR).glob("manifest-*.json.gz"))
    if len(manifests) != 1:
        return None
    return open_shards(folder_fetch(manifests[0].parent), manifests[0].name)


def golden_mismatches(index_path: Path, bundle_dir: Path) -> tuple[list[str], list[str]]:
    """The golden questions, and for each on which index and bundle disagree: what each answered.
    ``bundle_dir``: the site's bundle folder (its shards in ``SHARDS_DIR``)."""
    mismatches: list[str] = []
    with Index(index_path) as index:
        questions = golden_questions(index)
        try:  # a shard that cannot be read (bytes unlike its name, a broken table) fails the check
            bundle = _sharded(bundle_dir)
            if bundle is None:
                return questions, [f"{bundle_dir.name}/{SHARDS_DIR}: no single shard manifest"]
            channels = index_channels(index, _NO_VECTOR)  # built once, as a Searcher's are
            for q in questions:
                ours = retrieve(
                    q,
                    channels=channels,
                    graph=index.graph,
                    corpus=index,
                    vector=None,
                    options=RetrievalOptions(),
                )
                theirs = bundle.retrieve(q, None, semantic_reason=_NO_VECTOR)
                a, b = _top(ours), _top(theirs)
                if a != b:
                    mismatches.append(f"{q!r}: index {a} / bundle {b}")
        except BundleError as err:
            return questions, [f"the bundle's shards cannot be read: {err}"]
    return questions, mismatches


def _top(result: RetrievalResult) -> tuple[str, tuple[str, ...]]:
    """The top hit's chunk and the top three files: what an answer leads with."""
    first = result.hits[0].chunk.id if result.hits else ""
    return first, tuple(f.path for f in result.files[:3])

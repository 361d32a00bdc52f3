"""Where a repository path's wiki page lives: an injective map from repository paths to site paths.

Theory of operation (the rules every page path follows, so no two pages can ever collide):

* File pages live under ``files/``, directory pages under ``dirs/``, continuation pages of long
  files under ``parts/``; the site's own pages and folders sit beside them, so a repository path
  can only clash with another repository path.
* A file's page is its name plus ``.html``; a directory keeps its name, except that a directory
  name ending in ``.html`` (any case, then any number of ``~``) gets one more ``~``. So a directory
  segment never ends in ``.html`` while a page name always does: a file ``docs/README`` beside a
  folder ``docs/README.html/`` become ``README.html`` and ``README.html~/``, and a folder named
  ``index.html`` cannot shadow ``dirs/index.html``. Adding one ``~`` to names of that one form is
  reversible (strip one ``~`` where the pattern matches), hence injective.
* The ``.html`` test ignores case and names are otherwise kept as they are, so the map creates no
  new collision on a case-insensitive or Unicode-normalising file system: two paths collide there
  only if the repository's own paths already do.
* A name longer than 236 UTF-8 bytes (a part page adds up to ``.9999.html``, file systems allow
  255) becomes its first <=191 bytes (cut between characters, so 188-191), ``~`` and 48 hex digits
  of its sha256: 237-240 bytes, so it can equal no name that was kept (<=236 bytes) and differs
  from other shortened names unless sha256 collides.
* URLs are the same paths percent-quoted (``/`` and ``~`` kept): the browser's citations and the
  site's own links agree because both come from here.
"""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache
from urllib.parse import quote

PAGE_SUFFIX = ".html"
_DIR_NEEDS_ESCAPE = re.compile(r"\.html~*$", re.IGNORECASE)
_MAX_NAME_BYTES = 236
_PREFIX_BYTES = 191
_HASH_HEX = 48


def _fit(name: str, original: str) -> str:
    """``name`` if short enough for a file system, else a prefix and a hash of ``original``."""
    raw = name.encode("utf-8", "surrogatepass")
    if len(raw) <= _MAX_NAME_BYTES:
        return name
    prefix = raw[:_PREFIX_BYTES].decode("utf-8", "ignore")  # never cut a character in half
    digest = hashlib.sha256(original.encode("utf-8", "surrogatepass")).hexdigest()[:_HASH_HEX]
    return f"{prefix}~{digest}"


def dir_segment(name: str) -> str:
    """A directory name as it appears in site paths: never ending in ``.html``."""
    escaped = name + "~" if _DIR_NEEDS_ESCAPE.search(name) else name
    return _fit(escaped, name)


def file_segment(name: str) -> str:
    """A file's page name: the name (shortened if very long) plus ``.html``."""
    return _fit(name, name) + PAGE_SUFFIX


def _dirs(d: str) -> str:
    return "".join(dir_segment(s) + "/" for s in d.split("/")) if d else ""


@lru_cache(maxsize=1 << 14)  # a site build asks for each file's page tens of times
def file_page_path(path: str) -> str:
    """The page of repository file ``path``, relative to the site root, unquoted."""
    head, _, name = path.rpartition("/")
    return "files/" + _dirs(head) + file_segment(name)


def part_page_path(path: str, part: int) -> str:
    """Continuation page ``part`` (2, 3, ...) of a long file: ``parts/<dirs>/<name>.<part>.html``.

    The part number is the last dot-separated field before ``.html`` and holds no dot, so the pair
    (name, part) can be read back from the page name: injective, and apart from ``files/``.
    """
    if part < 2:
        raise ValueError(f"continuation parts start at 2, got {part}")
    head, _, name = path.rpartition("/")
    return "parts/" + _dirs(head) + _fit(name, name) + f".{part}" + PAGE_SUFFIX


def dir_page_path(d: str) -> str:
    """The listing page of repository directory ``d`` (``""`` is the root)."""
    return "dirs/" + _dirs(d) + "index.html"


def dir_part_page_path(d: str, part: int) -> str:
    """Continuation page ``part`` (2, 3, ...) of a big directory's listing: ``dirs/<d>/index.<part>.html``.

    No directory segment ends in ``.html`` and nothing else under ``dirs/`` is named ``index.*``,
    so these pages collide with no folder and no other listing.
    """
    if part < 2:
        raise ValueError(f"continuation parts start at 2, got {part}")
    return "dirs/" + _dirs(d) + f"index.{part}" + PAGE_SUFFIX


def site_url(site_path: str) -> str:
    """A site path as a relative URL."""
    return quote(site_path, safe="/~")


def page_url(path: str, line: int | None = None) -> str:
    """The wiki page of a repository file (relative to the site root), at a line anchor."""
    return site_url(file_page_path(path)) + (f"#L{line}" if line else "")


__all__ = [
    "dir_page_path",
    "dir_part_page_path",
    "dir_segment",
    "file_page_path",
    "file_segment",
    "page_url",
    "part_page_path",
]

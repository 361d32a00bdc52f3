"""The symbol index: every class, function and method A to Z, the site's search without scripts.

Theory of operation: ``search.html`` holds the search form. When every symbol fits on one page
(``SYMBOLS_PER_PAGE``) the index is on that page too; otherwise ``search.html`` links to one page
per initial letter under ``symbols/`` (``a.html``, ``a-2.html`` when a letter needs more than one
page, ``other.html`` for names that do not start with an ASCII letter), so no page grows with the
repository. Entries are sorted by initial (other names first), name, qualified name, path and line.

An entry is terse, a link on the qualified name (its target holds the path); only a name that
occurs more than once says which file it is in. Writing each entry's kind and ``path:line`` as
text tripled the index (networkx: 2.1 MB of it).
"""

from __future__ import annotations

import posixpath
from collections import Counter
from typing import Any

from oya.core.records import Node
from oya.site.pages import Page, SiteData, link

SYMBOLS_PER_PAGE = 800  # about 110 bytes of HTML each (long test names): far under 300 kB
SYMBOLS_DIR = "symbols"


def _letter(n: Node) -> str:
    first = n.name[:1].upper()
    return first if "A" <= first <= "Z" else "#"


def _groups(data: SiteData, entries: list[Node]) -> list[dict[str, Any]]:
    seen = Counter(n.qualname for n in entries)
    groups: list[dict[str, Any]] = []
    for n in entries:
        letter = _letter(n)
        if not groups or groups[-1]["letter"] != letter:
            groups.append({"letter": letter, "id": f"idx-{len(groups)}", "items": []})
        item = {**link(data, n), "file": posixpath.basename(n.path) if seen[n.qualname] > 1 else ""}
        groups[-1]["items"].append(item)
    return groups


def symbol_pages(data: SiteData) -> list[Page]:
    """``search.html`` and, for a big repository, the per-letter index pages."""
    # by initial first, so every name outside A-Z ("_private", "2d", "été") is in one group:
    # sorting by name alone put "_" and digits before "a" and accents after "z", two groups
    # that both wanted symbols/other.html (pylint's site failed to build)
    entries = sorted(
        (n for syms in data.symbols.values() for n in syms),
        key=lambda n: (_letter(n), n.name.lower(), n.qualname, n.path, n.start_line),
    )
    search = Page("search.html", "search.html", "search.html", "Search", current="search")
    groups = _groups(data, entries)
    if len(entries) <= SYMBOLS_PER_PAGE:
        search.context = {"groups": groups, "count": len(entries), "letter_pages": []}
        return [search]
    pages: list[Page] = []
    letter_pages: list[dict[str, str]] = []
    for g in groups:
        slug = g["letter"].lower() if g["letter"] != "#" else "other"
        items = g["items"]
        chunks = [items[i : i + SYMBOLS_PER_PAGE] for i in range(0, len(items), SYMBOLS_PER_PAGE)]
        for k, chunk in enumerate(chunks, 1):
            name = f"{slug}.html" if k == 1 else f"{slug}-{k}.html"
            label = g["letter"] if len(chunks) == 1 else f"{g['letter']} {k}"
            path = f"{SYMBOLS_DIR}/{name}"
            page = Page(path, path, "search.html", f"Symbols: {label}", current="search")
            group = {"letter": label, "id": f"idx-{slug}", "items": chunk}
            page.context = {"groups": [group], "count": len(chunk), "letter_pages": letter_pages}
            pages.append(page)
            letter_pages.append({"label": label, "url": path})
    search.context = {"groups": [], "count": len(entries), "letter_pages": letter_pages}
    return [search, *pages]


__all__ = ["SYMBOLS_PER_PAGE", "symbol_pages"]

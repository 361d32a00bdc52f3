"""Put a file into the new site without copying its bytes when the previous site already has them.

A site is rebuilt aside and swapped in (``oya.site.build``), so an unchanged page or runtime file
would otherwise be written again on every build: about 60 MB of Pyodide, model and scripts for a
one-line change. ``place_file`` hard-links the previous site's copy into the new site when the two
are the same bytes, and copies otherwise (or when the file system cannot link). The previous
site is deleted after the swap, so the new site ends up the only owner of those files.
"""

from __future__ import annotations

import filecmp
import os
import shutil
from pathlib import Path


def link_or_copy(src: Path, dest: Path) -> None:
    """Hard-link ``src`` to ``dest``, or copy it where a link is impossible (another device)."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(src, dest)
    except OSError:
        shutil.copyfile(src, dest)


def place_file(src: Path, dest: Path, previous: Path | None = None) -> bool:
    """Make ``dest`` hold ``src``'s bytes; link ``previous`` if it has them. True when linked."""
    if previous is not None and previous.is_file() and filecmp.cmp(src, previous, shallow=False):
        link_or_copy(previous, dest)
        return True
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dest)
    return False


__all__ = ["link_or_copy", "place_file"]

"""Put a file into the new site without copying its bytes when the previous site already has them.

A site is rebuilt aside and swapped in (``oya.site.build``), so an unchanged page or runtime file
would otherwise be written again on every build: about 60 MB of Pyodide, model and scripts for a
one-line change. ``place_file`` hard-links the previous site's copy into the new site when the two
are the same bytes (same size and modification time, or compared byte for byte), and copies
otherwise (or when the file system cannot link). The previous
site is deleted after the swap, so the new site ends up the only owner of those files.
"""

from __future__ import annotations

import contextlib
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
    if previous is not None and previous.is_file() and _same_bytes(src, previous):
        link_or_copy(previous, dest)
        return True
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(src, dest)  # with ``src``'s modification time: see ``_same_bytes``
    return False


def _same_bytes(src: Path, previous: Path) -> bool:
    """Whether ``previous`` holds ``src``'s bytes.

    A copy made here keeps ``src``'s modification time, and a file found equal byte for byte is
    given it, so the next build knows from size and time alone (the rule make and rsync use)
    instead of reading the ~60 MB of runtime and model twice on every build; the runtime cache's
    files are written once and never edited in place.
    """
    a, b = src.stat(), previous.stat()
    if a.st_size != b.st_size:
        return False
    if a.st_mtime_ns == b.st_mtime_ns:
        return True
    if not filecmp.cmp(src, previous, shallow=False):
        return False
    with contextlib.suppress(OSError):  # only a saving: the next build compares again
        os.utime(previous, ns=(b.st_atime_ns, a.st_mtime_ns))
    return True


__all__ = ["link_or_copy", "place_file"]

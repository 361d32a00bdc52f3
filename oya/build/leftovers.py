"""Remove what killed builds left behind: Oya's own temporary files and folders, nothing else.

Theory of operation:

* Both writers write aside and swap: the index goes to ``.index.duckdb.<uuid>.tmp`` (DuckDB adds
  ``.wal``) with its rows staged in ``.<table>.<random>.ndjson``, then waits as ``.index.duckdb.<uuid>.staged``
  until the checks pass and the publish step swaps it in (a failed check leaves it there too); the site goes to
  ``.<site>.new-<token>`` and the old site waits in ``.<site>.old-<token>`` until the new one is in
  place. A build that finishes or fails removes its own; a build that is killed (SIGKILL, power
  loss) cannot, so the next build in the same folder does.
* Only names that match these patterns exactly are touched, and only when everything in them
  is older than the build that cleans up: a concurrent build's fresh files stay. A folder's age
  is its newest entry's, so a site still being copied is never taken for a leftover.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterable
from pathlib import Path

# The writers' temporary names (oya.store.writer.write_index, oya.site.build.write_wiki_site).
INDEX_TEMP = re.compile(r"\.index\.duckdb\.[0-9a-f]{32}\.(tmp|staged)(\.wal)?")
# the small JSON records beside the index (oya.scanning.scan_cache, oya.chunking.clean), written by
# oya.scanning.scan_cache.write_record
SCAN_TEMP = re.compile(r"\.[a-z_]+\.json\.[0-9a-f]{32}\.tmp")
ROWS_TEMP = re.compile(r"\.(meta|files|skipped|chunks|nodes|edges|embeddings)\.[a-z0-9_]{8}\.ndjson")


def site_temp(site_name: str) -> re.Pattern[str]:
    """The site writer's temporary folders for a site folder called ``site_name``."""
    return re.compile(rf"\.{re.escape(site_name)}\.(new|old)-[0-9a-f]{{12}}")


def _newest_mtime(path: Path) -> float:
    newest = path.lstat().st_mtime
    if path.is_dir() and not path.is_symlink():
        for root, dirs, files in os.walk(path):
            for name in dirs + files:
                try:
                    newest = max(newest, os.lstat(os.path.join(root, name)).st_mtime)
                except OSError:
                    continue
    return newest


def remove_leftovers(folder: Path, patterns: Iterable[re.Pattern[str]], older_than: float) -> list[str]:
    """Remove entries of ``folder`` whose whole name matches one of ``patterns`` and whose newest
    modification is before ``older_than`` (a ``time.time()`` value); return their names."""
    try:
        entries = sorted(folder.iterdir())
    except OSError:  # no folder yet (first build) or unreadable: nothing of ours to remove
        return []
    patterns = tuple(patterns)
    removed: list[str] = []
    for entry in entries:
        if not any(p.fullmatch(entry.name) for p in patterns):
            continue
        try:
            if _newest_mtime(entry) >= older_than:
                continue
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()
        except OSError:  # vanished meanwhile, or not ours to remove: leave it
            continue
        removed.append(entry.name)
    return removed


def remove_build_leftovers(out_dir: Path, site_dir: Path, older_than: float) -> list[str]:
    """Leftovers of killed builds in the index folder and beside the site folder."""
    removed = remove_leftovers(
        out_dir, (INDEX_TEMP, SCAN_TEMP, ROWS_TEMP, site_temp(site_dir.name)), older_than
    )
    if site_dir.parent != out_dir:
        removed += remove_leftovers(site_dir.parent, (site_temp(site_dir.name),), older_than)
    return removed

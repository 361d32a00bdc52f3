"""What a build may replace or delete: only what it can prove Oya wrote.

Theory of operation:

* A build writes two folders: the output folder (``--out``: the index, the records beside it,
  ``build.log``) and the site folder (``<out>/site`` unless configured). It never deletes either
  folder. In the output folder it replaces files of its own names (``OUTPUT_FILES``); the site
  it swaps whole (the old one renamed aside, the new one in, the old one deleted:
  ``oya.site.build.swap_site``), so everything in an old site folder is lost.
* The proof is a marker, a small JSON file naming Oya: ``.oya-output`` in an output folder,
  ``.oya-site`` in a site. Every site Oya writes carries its marker; an output folder gets its
  marker when a build first claims it (``claim_output``).
* Folders written before the markers existed are recognised by what only Oya writes: a site by a
  ``manifest.json`` with exactly the keys Oya's has (``SITE_MANIFEST_KEYS``; a web app's or a
  browser extension's ``manifest.json`` has ``name``, ``icons``, ``start_url``...), an output
  folder by an index ``oya.store.writer.is_oya_index`` recognises or by the build lock ``.oya.lock``.
  The next build writes the marker.
* A site folder that exists, holds anything, and is not proven Oya's is never replaced: the build
  refuses in one line before it does any work (``check_site``), and the swap checks again.
* An output folder of the user's (``--out`` at the repository itself, say) may be written into:
  Oya's files go beside the user's. It is refused only when one of Oya's file names there is
  taken by a file Oya cannot prove it wrote (a ``build.log`` of the user's would be overwritten).
* A repository's own files are untrusted, and one could carry a marker; a marker only ever lets
  Oya replace the folder it is in, which is then that repository's own folder.
"""

from __future__ import annotations

import contextlib
import json
import os
import uuid
from pathlib import Path

from oya.chunking.clean import CACHE_FILE as CLEAN_CHUNKS_FILE
from oya.errors import OutputNotOursError, OyaError, RepositoryError, SiteError
from oya.scanning.reader import OUTPUT_MARKER, SITE_MARKER
from oya.scanning.scan_cache import CACHE_FILE as SCAN_FILE
from oya.store.schema import INDEX_FILE, WHOLE_SIZE_FILE
from oya.store.writer import is_oya_index

LOG_FILE = "build.log"  # the build's log, in the output folder (pipelines.build)
LOCK_FILE = ".oya.lock"  # oya.build.lock's; only a build's output folder holds one
# every file a build replaces in the output folder (its temporary files have names no one else
# uses: oya.build.leftovers)
OUTPUT_FILES = (INDEX_FILE, WHOLE_SIZE_FILE, SCAN_FILE, CLEAN_CHUNKS_FILE, LOG_FILE)
# the keys of the manifest.json of every site Oya wrote before the marker (oya.site.build; "assets"
# since oya.site.assets)
SITE_MANIFEST_KEYS = frozenset(
    {
        "version",
        "repo",
        "commit",
        "index_built_at",
        "built_at",
        "embedding_model",
        "dim",
        "counts",
        "wheel",
        "model",
        "bundle",
    }
)
_HINT = "choose another --out or remove it"


def marker_text(kind: str) -> str:
    """The marker's content: which of Oya's folders this is, and what the marker allows."""
    body = {"written_by": "oya", "kind": kind, "means": "Oya may replace this folder's files"}
    return json.dumps(body, sort_keys=True) + "\n"


def _has_marker(folder: Path, name: str, kind: str) -> bool:
    try:
        data = json.loads((folder / name).read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return False
    return isinstance(data, dict) and data.get("written_by") == "oya" and data.get("kind") == kind


def _has_oya_manifest(site: Path) -> bool:
    """An unmarked site's ``manifest.json`` has exactly Oya's keys (and ``assets`` at most)."""
    try:
        data = json.loads((site / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return False
    if not isinstance(data, dict) or data.get("version") != 1:
        return False
    keys = set(data)
    return SITE_MANIFEST_KEYS <= keys <= SITE_MANIFEST_KEYS | {"assets"}


def is_oya_site(site: Path) -> bool:
    """Whether the folder ``site`` is a site Oya wrote (its marker, or an older site's manifest)."""
    return _has_marker(site, SITE_MARKER, "site") or _has_oya_manifest(site)


def _empty(folder: Path) -> bool:
    with os.scandir(folder) as entries:
        return next(entries, None) is None


def check_site(site: Path) -> None:
    """Raise unless a build may put a new site in place of ``site``: nothing there, an empty
    folder, or a site Oya wrote."""
    if not site.exists() and not site.is_symlink():
        return
    if site.is_symlink() or not site.is_dir():
        raise SiteError(f"{site} exists and is not a folder; {_HINT}")
    if _empty(site) or is_oya_site(site):
        return
    raise OutputNotOursError(
        f"refusing to replace {site}: it was not written by Oya (no {SITE_MARKER} marker); {_HINT}"
    )


def is_oya_output(out: Path) -> bool:
    """Whether ``out`` is a folder a build claimed (its marker), or an older build's output."""
    return (
        _has_marker(out, OUTPUT_MARKER, "output")
        or (out / LOCK_FILE).is_file()
        or is_oya_index(out / INDEX_FILE)
    )


def check_apart(repo: Path, *folders: Path) -> None:
    """Refuse an output folder that is the repository or holds it: the build writes and replaces
    files there, and what it writes must never become its own input (the reader skips output
    folders inside the repository, never the repository itself)."""
    top = os.path.realpath(repo)
    for folder in folders:
        real = os.path.realpath(folder)
        if real == top or top.startswith(real.rstrip(os.sep) + os.sep):
            raise RepositoryError(
                f"output folder {folder} is the repository or holds it: choose a folder inside "
                f"the repository (such as {Path(repo) / '.oya'}) or outside it"
            )


def claim_output(out: Path, site: Path | None = None, *, repo: Path | None = None) -> None:
    """Before a build writes anything: raise unless it may write into ``out`` (and replace ``site``,
    when given), neither of them being ``repo`` or holding it; then create ``out`` and mark it as
    a build's output folder."""
    if repo is not None:
        check_apart(repo, out, *([site] if site is not None else []))
    if site is not None:
        check_site(site)
    if out.exists() and not out.is_dir():
        raise OutputNotOursError(f"{out} exists and is not a folder; {_HINT}")
    if out.is_dir() and not is_oya_output(out):
        taken = [name for name in OUTPUT_FILES if os.path.lexists(out / name)]
        if taken:
            raise OutputNotOursError(
                f"refusing to write into {out}: its {taken[0]} was not written by Oya "
                f"(no {OUTPUT_MARKER} marker); {_HINT}"
            )
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OyaError(f"cannot create the index folder {out}: {exc.strerror or exc}") from exc
    try:
        if not _has_marker(out, OUTPUT_MARKER, "output"):
            _write_marker(out / OUTPUT_MARKER, marker_text("output"))
    except OSError as exc:
        raise OyaError(f"cannot write into the index folder {out}: {exc.strerror or exc}") from exc


def _write_marker(path: Path, text: str) -> None:
    tmp = path.parent / f".{path.name}.{uuid.uuid4().hex}.tmp"
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()


def mark_site(folder: Path) -> None:
    """Write the site marker into a site being built (its staged folder)."""
    (folder / SITE_MARKER).write_text(marker_text("site"), encoding="utf-8")

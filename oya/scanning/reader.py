"""Read a repository into text files worth indexing, and say why every other file was left out.

Theory of operation:

* Listing. Inside a git work tree (and with git on PATH) the files are what git would
  commit: ``git ls-files --cached --others --exclude-standard`` run from ``root``, plus
  one more call listing what .gitignore hides, so ignored directories can be reported.
  Anywhere else the tree is walked with ``os.scandir`` and every ``.gitignore`` is
  honoured relative to its own directory, the deepest matching rule winning, as in git
  (``oya.scanning.ignores``).
* Pruning. Built-in ignores (``.git``, ``node_modules``, ``.venv``, ``build``, lock files,
  minified bundles ...: ``oya.scanning.ignores``), gitignored directories and directories
  deeper than ``max_depth`` are reported once, as the directory, and never descended into.
* Paths. A path longer than ``MAX_PATH_BYTES`` (UTF-8) is skipped as ``too-long-path``, a
  folder once, as the folder: every page of the wiki lives at ``<site>/files/<path>.html`` (or
  ``dirs/``, ``parts/``), and the system limits a whole path to 4,095 bytes, so a path Git
  accepts near that limit could never be written as a page (the site build would stop on it).
  The limit leaves about 3,000 bytes for where the site itself lives.
* Safety. Symlinks are never followed (so loops and escapes cannot happen); only regular
  files are opened; the size is checked from ``stat`` before any byte is read, so a huge
  file costs one system call. Secret-looking files (.env, keys, credentials) are skipped by
  name before reading. In every other file each secret value is replaced by a marker
  (``oya.scanning.redact``) right after decoding, so nothing downstream (hash, graph, chunks,
  index, pages) ever sees it; a file that is mostly secrets is skipped whole. A skip's
  detail names the rule, never the secret. A path holding a token (a file or folder named
  ``ghp_...``) is a secret itself: that file is never read, and every skip under such a path
  is recorded as ``secret`` under the path with the token masked (``oya.scanning.redact.redact_path``).
* Reading. Each accepted file is read once: the raw bytes give the size and the sha256
  (of the redacted text when something was redacted), the strict UTF-8 decode (BOM
  stripped) gives the text, newlines are normalised to ``\\n``; the file's name gives its
  language (``oya.scanning.languages``).
* Determinism. Files and skips are sorted by repository-relative POSIX path, and each
  path appears at most once.

The first rule that applies decides a file's reason, in this order: ignored, symlink,
too-deep (directories), too-long-path, secret (name), binary (extension), too-large, unreadable,
binary (NUL byte), not-utf8, empty, unsupported, secret (mostly secrets).
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
import re
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import Protocol

from oya.errors import RepositoryError
from oya.models import ScanResult, SkippedFile, SourceFile
from oya.scanning.gitview import find_work_tree, git_ls_files, ignored_by_enclosing_tree
from oya.scanning.ignores import Specs, builtin_ignore, gitignored, load_gitignore
from oya.scanning.languages import BINARY_EXTS, detect_language, split_ext
from oya.scanning.redact import redact, redact_path

__all__ = ["scan_repository"]

_NUL_WINDOW = 8192
_OUTPUT_DETAIL = "Oya's own output folder"
# the markers Oya writes into its output and site folders (oya.build.ownership): a folder holding one is
# an earlier build's output, never input
OUTPUT_MARKER = ".oya-output"
SITE_MARKER = ".oya-site"
MAX_PATH_BYTES = 1024  # a repository-relative path, UTF-8 (see "Paths" above)

# --- secrets by name --------------------------------------------------------------------

_SECRET_NAME_GLOBS = (
    ".env",
    ".env.*",
    "*.env",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "*.jks",
    "*.keystore",
    "*.ppk",
    "id_rsa",
    "id_dsa",
    "id_ecdsa",
    "id_ed25519",
    ".netrc",
    ".pypirc",
    ".npmrc",
    ".htpasswd",
    ".git-credentials",
    "credentials*.json",
    "*secret*.json",
    "*secret*.yaml",
    "*secret*.yml",
    "service-account*.json",
)
_SECRET_NAME_RE = re.compile("|".join(fnmatch.translate(g) for g in _SECRET_NAME_GLOBS))


# --- secrets by content ---------------------------------------------------------------

# A file whose non-blank lines hold secrets at least this often is a credentials file: it is
# skipped whole (its few other lines would only say where the secrets were).
_MOSTLY_SECRET = 0.5
_MOSTLY_SECRET_MIN_LINES = 3


def _redacted(rel: str, raw: bytes, text: str, language: str) -> SourceFile | SkippedFile:
    """The file with every secret value replaced (oya.scanning.redact), or a skip if it is mostly secrets."""
    red = redact(text, language)
    n_lines = text.count("\n") + (0 if text.endswith("\n") else 1)
    if not red.counts:
        digest = hashlib.sha256(raw).hexdigest()
        return SourceFile(rel, language, len(raw), digest, n_lines, text)
    rules = ", ".join(red.counts)
    non_blank = sum(1 for line in text.split("\n") if line.strip())
    if red.lines >= _MOSTLY_SECRET_MIN_LINES and red.lines >= _MOSTLY_SECRET * non_blank:
        return SkippedFile(rel, "secret", f"{red.lines} of {non_blank} lines hold secrets ({rules})")
    # The hash is of the redacted text: a hash of the original would let anyone test guesses
    # of a short password against it.
    digest = hashlib.sha256(red.text.encode()).hexdigest()
    return SourceFile(rel, language, len(raw), digest, n_lines, red.text, tuple(red.counts.items()))


# --- reading one file -------------------------------------------------------------------


class KnownFiles(Protocol):
    """What an earlier scan learnt (``oya.scanning.scan_cache``): a file whose ``stat`` says it is unchanged
    is not read again; every file read is reported with the ``stat`` taken before reading it."""

    def get(self, rel: str, st: os.stat_result) -> SourceFile | None: ...

    def put(self, rel: str, st: os.stat_result, file: SourceFile) -> None: ...


def _read_file(
    abs_path: str, rel: str, st: os.stat_result, max_file_bytes: int, known: KnownFiles | None
) -> SourceFile | SkippedFile:
    if redact_path(rel).counts:  # the path is a secret: never read nor cached (_Collector.add masks it)
        return SkippedFile(rel, "secret")
    if known is None:
        return _read_new(abs_path, rel, st.st_size, max_file_bytes)
    found = None if _checked_by_name_and_size(rel, st.st_size, max_file_bytes) else known.get(rel, st)
    if found is not None:
        return found
    result = _read_new(abs_path, rel, st.st_size, max_file_bytes)
    if isinstance(result, SourceFile):
        known.put(rel, st, result)
    return result


def _checked_by_name_and_size(rel: str, size: int, max_file_bytes: int) -> bool:
    """Whether the verdicts given before any byte is read (name, extension, size) skip the file."""
    name = rel.rsplit("/", 1)[-1]
    return (
        bool(_SECRET_NAME_RE.match(name.lower())) or split_ext(name) in BINARY_EXTS or size > max_file_bytes
    )


def _read_regular(abs_path: str, limit: int) -> bytes | None:
    """Up to ``limit`` bytes of the regular file at ``abs_path``; None if it is not one by the time
    it is opened. Never through a symlink, and never blocking on a FIFO swapped in after ``lstat``."""
    fd = os.open(abs_path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        chunks = []
        while limit > 0:
            chunk = os.read(fd, min(limit, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            limit -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _read_new(abs_path: str, rel: str, size: int, max_file_bytes: int) -> SourceFile | SkippedFile:
    name = rel.rsplit("/", 1)[-1]
    if _SECRET_NAME_RE.match(name.lower()):
        return SkippedFile(rel, "secret", "file name looks like a secret")
    ext = split_ext(name)
    if ext in BINARY_EXTS:
        return SkippedFile(rel, "binary", f"binary extension .{ext}")
    if size > max_file_bytes:
        return SkippedFile(rel, "too-large", f"{size} bytes, over the {max_file_bytes}-byte limit")
    try:
        raw = _read_regular(abs_path, max_file_bytes + 1)
    except OSError as e:
        return SkippedFile(rel, "unreadable", e.strerror or type(e).__name__)
    if raw is None:
        return SkippedFile(rel, "unreadable", "not a regular file")
    if len(raw) > max_file_bytes:  # it grew between stat and read
        return SkippedFile(rel, "too-large", f"over the {max_file_bytes}-byte limit")
    if b"\x00" in raw[:_NUL_WINDOW]:
        return SkippedFile(rel, "binary", "NUL byte in the first 8 KiB")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        return SkippedFile(rel, "not-utf8", f"invalid UTF-8 at byte {e.start}")
    if not text or text.isspace():
        return SkippedFile(rel, "empty", "no bytes" if not raw else "whitespace only")
    language = detect_language(rel)
    if language is None:
        return SkippedFile(rel, "unsupported", f"no indexed language for .{ext}" if ext else "no extension")
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _redacted(rel, raw, text, language)


def _safe_rel(rel: str) -> str | None:
    """``rel`` if it can be stored as UTF-8 text, else None (undecodable file name)."""
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        return None
    return rel


class _Collector:
    """Accumulates results; the first verdict recorded for a path wins."""

    def __init__(self) -> None:
        self.files: dict[str, SourceFile] = {}
        self.skipped: dict[str, SkippedFile] = {}

    def add(self, item: SourceFile | SkippedFile) -> None:
        if (masked := redact_path(item.path)).counts:  # a token in the path: only its masked form is kept
            item = SkippedFile(masked.text, "secret", f"path holds a secret ({', '.join(masked.counts)})")
        if item.path in self.files or item.path in self.skipped:
            return
        if isinstance(item, SourceFile):
            self.files[item.path] = item
        else:
            self.skipped[item.path] = item

    def skip(self, rel: str, reason: str, detail: str = "") -> None:
        safe = _safe_rel(rel)
        if safe is None:
            safe = rel.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
            reason, detail = "not-utf8", "file name is not valid UTF-8"
        self.add(SkippedFile(safe, reason, detail))

    def result(self) -> ScanResult:
        return ScanResult(
            files=tuple(self.files[p] for p in sorted(self.files)),
            skipped=tuple(self.skipped[p] for p in sorted(self.skipped)),
        )


# --- git mode ---------------------------------------------------------------------------


def _too_long(rel: str) -> str | None:
    """The skip detail when ``rel`` is longer than ``MAX_PATH_BYTES``, else None."""
    size = len(rel.encode("utf-8", "surrogateescape"))
    if size <= MAX_PATH_BYTES:
        return None
    return f"the path is {size:,} bytes, over the {MAX_PATH_BYTES:,}-byte limit"


def _pruned_dir(parts: list[str], max_depth: int, outputs: _Outputs) -> tuple[str, str, str] | None:
    """The first directory on a path that the walk would not enter: (path, reason, detail)."""
    for i, part in enumerate(parts[:-1]):
        if outputs.holds("/".join(parts[: i + 1])):
            return "/".join(parts[: i + 1]), "ignored", _OUTPUT_DETAIL
        if builtin_ignore(part, is_dir=True):
            return "/".join(parts[: i + 1]), "ignored", f"built-in ignore {part}"
        if i + 1 > max_depth:
            return "/".join(parts[: i + 1]), "too-deep", f"deeper than {max_depth} directories"
        long = _too_long("/".join(parts[: i + 1]))
        if long is not None:
            return "/".join(parts[: i + 1]), "too-long-path", long
    return None


class _RealFolders:
    """Which folders under the root are real folders, not symlinks: every folder on a file's
    path is checked (once), so no file is read through a link that leaves the repository."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.known: dict[str, bool] = {}

    def first_link(self, folders: list[str]) -> str | None:
        """The first of the path's ``folders`` that is not a real folder, or None."""
        for i in range(1, len(folders) + 1):
            rel = "/".join(folders[:i])
            real = self.known.get(rel)
            if real is None:
                try:
                    real = stat.S_ISDIR(os.lstat(os.path.join(self.root, *folders[:i])).st_mode)
                except OSError:
                    real = True  # missing: the file's own lstat reports it
                self.known[rel] = real
            if not real:
                return rel
        return None


def _scan_git(
    root: Path,
    listed: list[str],
    ignored: list[str],
    max_file_bytes: int,
    max_depth: int,
    known: KnownFiles | None,
    outputs: _Outputs,
) -> ScanResult:
    out = _Collector()
    ignored_dirs: set[str] = set()
    for entry in sorted(set(ignored)):
        parts = entry.rstrip("/").split("/")
        if any("/".join(parts[:i]) in ignored_dirs for i in range(1, len(parts))):
            continue  # git also lists the contents of a directory holding its own .gitignore
        if entry.endswith("/"):
            ignored_dirs.add("/".join(parts))
        pruned = _pruned_dir(parts, max_depth, outputs)
        if pruned is not None:
            out.skip(*pruned)
        elif builtin_ignore(parts[-1], is_dir=entry.endswith("/")):
            out.skip("/".join(parts), "ignored", f"built-in ignore {parts[-1]}")
        else:
            out.skip("/".join(parts), "ignored", ".gitignore")
    root_str = os.fspath(root)
    folders = _RealFolders(root_str)
    for rel in sorted(set(listed)):
        parts = rel.rstrip("/").split("/")
        if any(part in ("", ".", "..") for part in parts):  # a crafted index can hold any path
            out.skip(rel, "unreadable", "not a path inside the repository")
            continue
        pruned = _pruned_dir(parts, max_depth, outputs)
        if pruned is not None:
            out.skip(*pruned)
            continue
        if rel.endswith("/"):  # git lists an untracked nested repository as "dir/"
            out.skip(rel.rstrip("/"), "ignored", "nested git repository")
            continue
        if builtin_ignore(parts[-1], is_dir=False):
            out.skip(rel, "ignored", f"built-in ignore {parts[-1]}")
            continue
        long = _too_long(rel)
        if long is not None:
            out.skip(rel, "too-long-path", long)
            continue
        linked = folders.first_link(parts[:-1])
        if linked is not None:  # git's index names a file, but a folder on its way is now a link
            out.skip(linked, "symlink", "a folder that is a symlink; symlinks are not followed")
            continue
        abs_path = os.path.join(root_str, *parts)
        try:
            st = os.lstat(abs_path)
        except OSError as e:
            out.skip(
                rel,
                "unreadable",
                "listed by git but missing on disk" if isinstance(e, FileNotFoundError) else e.strerror or "",
            )
            continue
        if stat.S_ISLNK(st.st_mode):
            out.skip(rel, "symlink", "symlinks are not followed")
        elif stat.S_ISDIR(st.st_mode):
            out.skip(rel, "ignored", "git submodule")
        elif not stat.S_ISREG(st.st_mode):
            out.skip(rel, "unreadable", "not a regular file")
        elif _safe_rel(rel) is None:
            out.skip(rel, "not-utf8")
        else:
            out.add(_read_file(abs_path, rel, st, max_file_bytes, known))
    return out.result()


# --- walk mode --------------------------------------------------------------------------
def _scan_walk(
    root: Path, max_file_bytes: int, max_depth: int, known: KnownFiles | None, outputs: _Outputs
) -> ScanResult:
    out = _Collector()
    stack: list[tuple[str, str, int, Specs]] = [(os.fspath(root), "", 0, ())]
    while stack:
        dir_abs, prefix, depth, specs = stack.pop()
        try:
            with os.scandir(dir_abs) as it:
                entries = list(it)
        except OSError as err:
            if not prefix:
                raise RepositoryError(f"cannot read repository {root}: {err.strerror}") from err
            out.skip(prefix.rstrip("/"), "unreadable", err.strerror or "")
            continue
        for entry in entries:
            if entry.name == ".gitignore" and entry.is_file(follow_symlinks=False):
                spec = load_gitignore(entry.path)
                if spec is not None:
                    specs = (*specs, (prefix, spec))
        for entry in entries:
            rel = prefix + entry.name
            is_dir = entry.is_dir(follow_symlinks=False)
            long = _too_long(rel)
            if is_dir and outputs.holds(rel):
                out.skip(rel, "ignored", _OUTPUT_DETAIL)
            elif builtin_ignore(entry.name, is_dir):
                out.skip(rel, "ignored", f"built-in ignore {entry.name}")
            elif specs and gitignored(specs, rel, is_dir):
                out.skip(rel, "ignored", ".gitignore")
            elif entry.is_symlink():
                out.skip(rel, "symlink", "symlinks are not followed")
            elif is_dir:
                if depth + 1 > max_depth:
                    out.skip(rel, "too-deep", f"deeper than {max_depth} directories")
                elif long is not None:
                    out.skip(rel, "too-long-path", long)
                else:
                    stack.append((entry.path, rel + "/", depth + 1, specs))
            elif not entry.is_file(follow_symlinks=False):
                out.skip(rel, "unreadable", "not a regular file")
            elif long is not None:
                out.skip(rel, "too-long-path", long)
            elif _safe_rel(rel) is None:
                out.skip(rel, "not-utf8")
            else:
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError as err:
                    out.skip(rel, "unreadable", err.strerror or "")
                    continue
                out.add(_read_file(entry.path, rel, st, max_file_bytes, known))
    return out.result()


# --- entry point ------------------------------------------------------------------------


class _Outputs:
    """Oya's output folders inside the repository: the ones this build writes to, and any folder
    an earlier build marked as its output or site (``OUTPUT_MARKER``, ``SITE_MARKER``), whatever
    ``--out`` it had. Each folder is looked at once."""

    def __init__(self, root: Path, explicit: Iterable[Path]) -> None:
        self.root = os.path.realpath(root)
        self.known: dict[str, bool] = {}
        for folder in explicit:
            rel = os.path.relpath(os.path.realpath(folder), self.root)
            if rel != "." and rel != ".." and not rel.startswith(".." + os.sep):
                self.known[rel.replace(os.sep, "/")] = True

    def holds(self, rel: str) -> bool:
        found = self.known.get(rel)
        if found is None:
            folder = os.path.join(self.root, *rel.split("/"))
            found = any(_is_regular(os.path.join(folder, m)) for m in (OUTPUT_MARKER, SITE_MARKER))
            self.known[rel] = found
        return found


def _is_regular(path: str) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def scan_repository(
    root: Path,
    *,
    max_file_bytes: int = 1_000_000,
    max_depth: int = 40,
    known: KnownFiles | None = None,
    outputs: Iterable[Path] = (),
) -> ScanResult:
    """Every file under ``root`` as a SourceFile or a SkippedFile with its reason; files ``known``
    vouches for are taken from it instead of being read. ``outputs`` are the folders this build
    writes to (the index, the site): inside ``root`` they are never read, so no build indexes
    an earlier build's output."""
    root = Path(root)
    if not root.exists():
        raise RepositoryError(f"repository not found: {root}")
    if not root.is_dir():
        raise RepositoryError(f"repository is not a directory: {root}")
    skip = _Outputs(root, outputs)
    tree = find_work_tree(root)
    if tree is not None and not ignored_by_enclosing_tree(root, tree):
        listing = git_ls_files(root, tree)
        if listing is not None:
            return _scan_git(root, *listing, max_file_bytes, max_depth, known, skip)
    return _scan_walk(root, max_file_bytes, max_depth, known, skip)

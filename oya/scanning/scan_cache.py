"""Files unchanged since the previous build, known by their ``stat``: not read, hashed and
redacted again (networkx: the scan's ~0.3 s of reading drops to ~0.06 s of reading the index).

Theory of operation:

* A scan records, for each file it accepted, the ``stat`` taken before reading it (size,
  mtime and ctime in ns, inode) with the sha256 and redaction counts it found, in
  ``scan_stat.json`` beside the index (written aside, then swapped in), with the scan's start time.
* The next scan takes a file from the previous index instead of reading it when all four stat
  fields are equal, the previous index holds the path with that sha256 (its text is then the
  text that hash was taken of: reader and redaction code are the same, ``oya.store.previous.reuse_key``,
  and so are the secret rules, ``oya.scanning.secret_rules``, which that key does not cover: a file's
  sha256 records what redaction did, but a file not read again is not redacted again),
  and the file is not "racy": a file changed less than ``RACY_NS`` before the previous scan
  started may have been changed again within the same timestamp tick, so it is read (git's rule).
* ctime cannot be set by a user (``touch -d``, ``cp -p`` and ``tar`` keep an old mtime, never an
  old ctime), so an edit that keeps size and mtime still shows.
* Anything unusable (no file, another repository, other code, unreadable JSON) means every file
  is read, as in a first build.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
import uuid
from functools import cached_property
from pathlib import Path
from typing import Any

from oya.models import SourceFile
from oya.scanning import secret_rules
from oya.store.previous import previous_texts, reuse_key

CACHE_FILE = "scan_stat.json"
RACY_NS = 2_000_000_000
_VERSION = 1


def code_key(rules_source: bytes) -> str:
    """What decides a file's accepted text: the reader and redaction code, and the secret rules."""
    return hashlib.sha256(reuse_key().encode() + b"\0" + rules_source).hexdigest()


CODE_KEY = code_key(Path(str(secret_rules.__file__)).read_bytes())  # the code that runs, as reuse_key


def write_record(path: Path, data: object) -> None:
    """Write ``data`` as JSON to ``path`` aside, then swap it in. A record beside the index only
    saves work (the next build redoes what it would skip), so failing to write it is not an error."""
    tmp = path.parent / f".{path.name}.{uuid.uuid4().hex}.tmp"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps(data, separators=(",", ":")), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()


def _stat_key(st: os.stat_result) -> list[int]:
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]


class StatCache:
    """``oya.scanning.reader.KnownFiles`` over the previous build's stats and index."""

    def __init__(self, repo: Path, out_dir: Path) -> None:
        self.repo = str(Path(repo).resolve())
        self.out_dir = Path(out_dir)
        self.started = time.time_ns()
        self.hits = 0
        self.entries: dict[str, list[Any]] = {}
        self.previous, self.scanned_at = self._load()

    def _load(self) -> tuple[dict[str, list[Any]], int]:
        try:
            data = json.loads((self.out_dir / CACHE_FILE).read_text(encoding="utf-8"))
            ok = (data["version"], data["repo"], data["code_key"]) == (_VERSION, self.repo, CODE_KEY)
            return (dict(data["files"]), int(data["scanned_at"])) if ok else ({}, 0)
        except (OSError, ValueError, KeyError, TypeError):
            return {}, 0

    @cached_property
    def _texts(self) -> dict[str, tuple[str, str, int, str]]:
        return previous_texts(self.out_dir)  # read once, at the first file the stats vouch for

    def get(self, rel: str, st: os.stat_result) -> SourceFile | None:
        old = self.previous.get(rel)
        if old is None or old[:4] != _stat_key(st):
            return None
        if max(st.st_mtime_ns, st.st_ctime_ns) > self.scanned_at - RACY_NS:
            return None  # racy: changed too close to the scan that recorded it
        known = self._texts.get(rel)
        if known is None or known[0] != old[4]:
            return None
        sha256, language, n_lines, text = known
        self.hits += 1
        self.entries[rel] = old
        redactions = tuple((str(rule), int(n)) for rule, n in old[5])
        return SourceFile(rel, language, st.st_size, sha256, n_lines, text, redactions)

    def put(self, rel: str, st: os.stat_result, file: SourceFile) -> None:
        self.entries[rel] = [*_stat_key(st), file.sha256, [list(r) for r in file.redactions]]

    def save(self) -> None:
        """Record this scan for the next build (aside, then swapped in; best effort)."""
        data = {
            "version": _VERSION,
            "repo": self.repo,
            "code_key": CODE_KEY,
            "scanned_at": self.started,
            "files": dict(sorted(self.entries.items())),
        }
        write_record(self.out_dir / CACHE_FILE, data)  # without it the next build reads every file

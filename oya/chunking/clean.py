"""Which chunks hold a secret-looking string: each distinct chunk text is scanned once across
builds, not every chunk at every build (networkx: 10.5k chunks, ~0.25 s a build).

Theory of operation:

* ``chunks_with_secrets`` answers what the build's check asks: the paths of chunks in which
  ``oya.scanning.redact.find_secrets`` finds something. Its answer for a chunk depends only on the
  chunk's text, its language and the code (reader, redaction, secret rules: ``oya.scanning.scan_cache``'s
  ``CODE_KEY``), so a chunk found clean is remembered by sha256 of its language and text in
  ``clean_chunks.json`` beside the index (written aside, then swapped in) and not scanned again
  while the code is the same. Only clean chunks are remembered: one with findings is scanned at
  every build. The record holds the current chunks' keys only, so it does not grow.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

from oya.core.records import Chunk
from oya.scanning.languages import detect_language
from oya.scanning.redact import find_secrets, redact_path
from oya.scanning.scan_cache import CODE_KEY, write_record

CACHE_FILE = "clean_chunks.json"


def _key(language: str, text: str) -> str:
    return hashlib.sha256(f"{language}\0{text}".encode("utf-8", "surrogatepass")).hexdigest()


def _load(out_dir: Path) -> set[str]:
    try:
        data = json.loads((out_dir / CACHE_FILE).read_text(encoding="utf-8"))
        return set(data["clean"]) if data["code_key"] == CODE_KEY else set()
    except (OSError, ValueError, KeyError, TypeError):
        return set()


def _save(out_dir: Path, clean: set[str]) -> None:
    # without the record the next build scans every chunk: slower, never wrong
    write_record(out_dir / CACHE_FILE, {"code_key": CODE_KEY, "clean": sorted(clean)})


def chunks_with_secrets(chunks: Sequence[Chunk], out_dir: Path | None = None) -> list[str]:
    """Paths of the chunks holding a secret-looking string in their text or their path (texts known
    clean are not scanned again; a path is cheap to scan every time)."""
    known = _load(out_dir) if out_dir is not None else set()
    clean: set[str] = set()
    bad: list[str] = []
    for c in chunks:
        language = detect_language(c.path)
        key = _key(language or "", c.text)
        if redact_path(c.path).counts:
            bad.append(c.path)
        elif key in known or not find_secrets(c.text, language):
            clean.add(key)
        else:
            bad.append(c.path)
    if out_dir is not None and out_dir.is_dir():
        _save(out_dir, clean)
    return bad

"""The last step of a site build: content-hashed names and precompressed copies of its files.

Theory of operation:

* Hashed names. Each *unit* gets a name derived from its content: every child of ``vendor/`` and
  ``models/`` (a folder such as ``vendor/pyodide``, or a file such as the core wheel) and the
  ``bundle/`` folder. A folder is one unit because its files name each other (Pyodide finds
  ``pyodide.asm.wasm`` beside ``pyodide.mjs``, transformers.js the model's files under its folder):
  ``vendor/pyodide/`` becomes ``vendor/pyodide.<hash>/``; a file ``a/name.ext`` becomes
  ``a/name.<hash>.ext``. ``manifest.json`` maps each old name to its new one (``assets``) and the
  Ask panel's loader resolves every URL through it, so a URL names one content forever and may be
  cached for good (``oya serve`` says so: ``Cache-Control: immutable``), and a second visit fetches
  nothing large. transformers.js keeps the model in the Cache API keyed by URL: without the hash a
  rebuilt site with another model at the same URL would be answered from the stale copy.
  ``KEPT_NAMES`` stay put: pages load them by a fixed URL (mermaid, from ask/diagram.js).
* Precompressed copies. Every compressible file of the site gets ``<file>.br`` (Brotli) and
  ``<file>.gz`` beside it when that saves at least ``MIN_SAVING``; ``oya serve`` sends them with
  ``Content-Encoding`` to a browser that accepts them, and so does any static host that honours
  precompressed files (nginx ``gzip_static``, Caddy ``precompressed``, …). Both: many hosts read
  only ``.gz``; Brotli is 20–35% smaller on the WASM runtimes. Brotli at quality 11 takes minutes
  on the large runtime files (10 where the data is near-random: ``brotli_quality``), so the
  runtime's and model's copies (``vendor/``, ``models/``: the
  same on every build) are cached by content digest under the Oya cache folder; pages and the
  bundle, new on every build, get a fast level (Brotli 6, gzip 6). On a first build a child
  process fills that cache while the index is built (``oya.site.prepare``), so here they are found.
* ``manifest.json`` always gets both copies (``write_copies``), whatever they save: the Ask panel
  reads its ``Content-Encoding`` to learn whether the host sends the Brotli copies (``oya serve``
  does) or files as they are, and then fetches the runtime's ``.gz`` copies and inflates them
  itself (site_template/static/ask/decoded.js).
* Generic: it walks whatever files the build wrote, so a bundle format with other or more files
  (shards, quantized vectors) is hashed and compressed the same way.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import time
import zlib
from pathlib import Path
from typing import Any

import brotli

from oya.site.reuse import link_or_copy

HASHED_PARENTS = ("vendor", "models")
HASHED_FOLDERS = ("bundle",)
KEPT_NAMES = frozenset({"vendor/mermaid"})
HASH_CHARS = 10
MIN_SAVING = 0.1  # keep a compressed copy only if it is at least 10% smaller
MIN_BYTES = 512
COMPRESSIBLE = frozenset(
    {
        ".html",
        ".js",
        ".mjs",
        ".css",
        ".json",
        ".wasm",
        ".onnx",
        ".bin",
        ".zip",
        ".svg",
        ".txt",
        ".map",
    }
)
ENCODINGS = (("br", ".br"), ("gzip", ".gz"))
NEAR_RANDOM = 0.7  # zlib -1 keeps more than this share: Brotli 10 (see brotli_quality)
CACHE_RECIPE = "2"  # in the cached copies' names: bump when the runtime's settings change


def _digest_tree(path: Path) -> str:
    h = hashlib.sha256()
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    for f in files:
        h.update(f.relative_to(path).as_posix().encode() + b"\0" if f != path else b"\0")
        h.update(hashlib.sha256(f.read_bytes()).digest())
    return h.hexdigest()[:HASH_CHARS]


def _hashed_name(path: Path, digest: str) -> str:
    if path.is_dir():
        return f"{path.name}.{digest}"
    return f"{path.stem}.{digest}{path.suffix}"


def hash_units(site: Path) -> dict[str, str]:
    """Rename every unit to its content-hashed name; return {old rel: new rel} (folders end in "/")."""
    units = [site / name for name in HASHED_FOLDERS if (site / name).is_dir()]
    for parent in HASHED_PARENTS:
        if (site / parent).is_dir():
            units += sorted(p for p in (site / parent).iterdir() if not p.name.startswith("."))
    renamed: dict[str, str] = {}
    for unit in units:
        rel = unit.relative_to(site).as_posix()
        if rel in KEPT_NAMES:
            continue
        new = unit.with_name(_hashed_name(unit, _digest_tree(unit)))
        unit.rename(new)
        slash = "/" if new.is_dir() else ""
        renamed[rel + slash] = new.relative_to(site).as_posix() + slash
    return renamed


def resolve(assets: dict[str, str], rel: str) -> str:
    """Where ``rel`` (a path under the site before hashing) is now: the longest renamed prefix applies."""
    best = max(
        (old for old in assets if rel == old or (old.endswith("/") and rel.startswith(old))),
        key=len,
        default="",
    )
    return assets[best] + rel[len(best) :] if best else rel


def site_file(site: Path, rel: str) -> Path:
    """The file a built site holds for ``rel`` (a name before hashing), read through its manifest."""
    try:
        assets = json.loads((site / "manifest.json").read_text(encoding="utf-8")).get("assets") or {}
    except (OSError, ValueError):
        assets = {}
    return site / resolve(assets, rel)


def brotli_quality(data: bytes, best: bool) -> int:
    """6 for pages; for the runtime 11, or 10 where the data is near-random (zlib at level 1 keeps
    more than ``NEAR_RANDOM`` of it): there quality 11's deeper search finds nothing more — on the
    23 MB int8 model 49 bytes more at 10, in 37 CPU s against 49 (docs/DECISIONS.md)."""
    if not best:
        return 6
    near_random = len(zlib.compress(data, 1)) > NEAR_RANDOM * len(data)
    return 10 if near_random else 11


def _compress(data: bytes, encoding: str, best: bool) -> bytes:
    if encoding == "br":
        return bytes(brotli.compress(data, quality=brotli_quality(data, best), lgwin=24))
    return gzip.compress(data, compresslevel=9 if best else 6, mtime=0)


def _packed(data: bytes, encoding: str, cache: Path | None, runtime: bool) -> bytes:
    """The runtime's files (the same on every build) at the best, slow level, cached by digest;
    pages and the bundle (new on every build) at a fast one: Brotli 11 took 35 s on a 4 MB bundle."""
    if not runtime or cache is None:
        return _compress(data, encoding, runtime)
    path = cache / f"{hashlib.sha256(data).hexdigest()}.{CACHE_RECIPE}.{encoding}"
    if path.is_file():
        return path.read_bytes()
    out = _compress(data, encoding, True)
    cache.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    tmp.write_bytes(out)
    tmp.replace(path)
    return out


def needs_compressing(path: Path) -> bool:
    """Whether ``precompress`` writes compressed copies of a file like this one (by name and size)."""
    return path.suffix in COMPRESSIBLE and path.stat().st_size >= MIN_BYTES


def precompress_runtime_file(data: bytes, cache: Path) -> None:
    """Put a runtime file's compressed copies into ``cache`` (``oya.site.prepare``, ahead of the site)."""
    for encoding, _ in ENCODINGS:
        _packed(data, encoding, cache, runtime=True)


def write_copies(path: Path) -> None:
    """Write ``<file>.br`` and ``<file>.gz`` beside ``path`` at the fast level, whatever they save."""
    data = path.read_bytes()
    for encoding, suffix in ENCODINGS:
        path.with_name(path.name + suffix).write_bytes(_compress(data, encoding, best=False))


def precompress(
    site: Path,
    cache: Path | None = None,
    previous: Path | None = None,
    seconds: dict[str, float] | None = None,
) -> dict[str, int]:
    """Write ``.br``/``.gz`` beside every compressible file; return raw and compressed byte totals.

    A file the ``previous`` site holds with the same bytes takes its compressed copies from there
    (hard links), so an incremental build compresses only what changed. ``seconds`` receives the
    wall seconds spent on the runtime's files (``compress_runtime``) and on the rest (``compress_site``).
    """
    totals = {"files": 0, "raw": 0, "br": 0, "gzip": 0}
    spent = {"compress_runtime": 0.0, "compress_site": 0.0}
    for path in sorted(site.rglob("*")):
        if not path.is_file() or not needs_compressing(path):
            continue
        t0 = time.perf_counter()
        data = path.read_bytes()
        runtime = path.relative_to(site).parts[0] in HASHED_PARENTS
        totals["files"] += 1
        totals["raw"] += len(data)
        for encoding, suffix in ENCODINGS:
            out = path.with_name(path.name + suffix)
            if _reuse(path, out, previous, site, data):
                totals[encoding] += out.stat().st_size
                continue
            packed = _packed(data, encoding, cache, runtime)
            if len(packed) <= len(data) * (1 - MIN_SAVING):
                out.write_bytes(packed)
                totals[encoding] += len(packed)
            else:
                totals[encoding] += len(data)
        spent["compress_runtime" if runtime else "compress_site"] += time.perf_counter() - t0
    if seconds is not None:
        for name, value in spent.items():
            seconds[name] = round(seconds.get(name, 0.0) + value, 3)
    return totals


def _reuse(path: Path, out: Path, previous: Path | None, site: Path, data: bytes) -> bool:
    if previous is None:
        return False
    old = previous / path.relative_to(site)
    old_out = previous / out.relative_to(site)
    if not old_out.is_file() or not old.is_file() or old.stat().st_size != len(data):
        return False
    if not old.samefile(path) and old.read_bytes() != data:  # reused pages are hard links
        return False
    link_or_copy(old_out, out)
    return True


def finish_assets(
    site: Path,
    manifest: dict[str, Any],
    cache: Path | None,
    previous: Path | None,
    seconds: dict[str, float] | None = None,
) -> dict[str, int]:
    """Hash the units, point ``manifest`` at the new names (``assets`` and the named files), precompress
    (its seconds into ``seconds``, as ``precompress`` says)."""
    assets = hash_units(site)
    manifest["assets"] = assets
    if manifest.get("wheel"):
        manifest["wheel"] = resolve(assets, manifest["wheel"])
    if manifest.get("model"):
        manifest["model"] = resolve(assets, manifest["model"].rstrip("/") + "/").rstrip("/")
    if manifest.get("bundle"):
        manifest["bundle"]["path"] = resolve(assets, manifest["bundle"].get("path", "bundle/"))
    return precompress(site, cache, previous, seconds)

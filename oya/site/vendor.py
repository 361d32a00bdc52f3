"""Browser runtimes the static site ships, installed from npm and copied into the site.

Theory of operation:

* ``site_template/vendor/package.json`` and its ``package-lock.json`` pin every npm package exactly
  (pyodide, mermaid, @huggingface/transformers, brotli-dec-wasm). ``ensure_vendor`` copies both into
  ``<cache>/npm`` and runs ``npm ci --ignore-scripts`` there once; a stamp holding the lock file's hash
  makes later calls free. ``--ignore-scripts`` matters: transformers' dependencies would otherwise try
  to download binaries at install time, which fails offline.
* ``copy_runtime`` copies only the files the browser loads (a few MB of the ~700 MB install) into
  ``<site>/vendor/``, and reports bytes per group for the size report. Pyodide's standard library
  goes as bytecode (``precompile_stdlib.mjs``, once per install) trimmed to the modules the engine
  worker imports (``oya.site.stdlib_trim``). Nothing is fetched from a CDN
  at run time: the pages point Pyodide and transformers.js at these copies. ``copy_model`` does the
  same for the query model ``oya.embedding.model_export`` exported.
* The cache folder is passed in (``oya.settings.CachePaths``); alone, it is ``$OYA_CACHE_DIR`` or
  ``~/.cache/oya``.
"""

from __future__ import annotations

import fcntl
import hashlib
import shutil
import subprocess
import zipfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from oya.embedding.model_export import QUANTIZED
from oya.errors import ModelError, SiteError
from oya.settings import default_cache_dir
from oya.site.assets import site_file
from oya.site.package_data import VENDOR_PINS_DIR
from oya.site.reuse import place_file
from oya.site.stdlib_trim import trimmed_stdlib

_STAMP = ".oya-vendor-stamp-2"  # bump when what ensure_vendor produces changes
PRECOMPILED_STDLIB = "python_stdlib_pyc.zip"
CORE_OPTIMIZE = 2  # the core's bytecode without docstrings (it reads none, asserts nothing): 165 kB, not 200

# (source under node_modules, destination under site/vendor, size-report group)
RUNTIME_FILES: tuple[tuple[str, str, str], ...] = (
    ("pyodide/pyodide.mjs", "pyodide/pyodide.mjs", "runtime"),
    ("pyodide/pyodide.asm.mjs", "pyodide/pyodide.asm.mjs", "runtime"),
    ("pyodide/pyodide.asm.wasm", "pyodide/pyodide.asm.wasm", "runtime"),
    ("pyodide/python_stdlib.zip", "pyodide/python_stdlib.zip", "runtime"),
    # a Brotli decoder (Rust's brotli-decompressor in WASM, 208 kB, 99 kB gzipped): on a plain host
    # the worker fetches the runtime's .br copies and decodes them with it (static/ask/brotli.js)
    ("brotli-dec-wasm/pkg/brotli_dec_wasm.js", "brotli/brotli_dec_wasm.js", "runtime"),
    ("brotli-dec-wasm/pkg/brotli_dec_wasm_bg.wasm", "brotli/brotli_dec_wasm_bg.wasm", "runtime"),
    ("mermaid/dist/mermaid.min.js", "mermaid/mermaid.min.js", "js"),
    ("@huggingface/transformers/dist/transformers.min.js", "transformers/transformers.min.js", "js"),
    ("onnxruntime-web/dist/ort-wasm-simd-threaded.mjs", "transformers/ort-wasm-simd-threaded.mjs", "model"),
    ("onnxruntime-web/dist/ort-wasm-simd-threaded.wasm", "transformers/ort-wasm-simd-threaded.wasm", "model"),
)


def _lock_digest(template_dir: Path) -> str:
    h = hashlib.sha256()
    for name in ("package.json", "package-lock.json"):
        h.update(name.encode() + b"\0" + (template_dir / name).read_bytes() + b"\0")
    return h.hexdigest()


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Serialise installs between processes (pytest-xdist workers, parallel builds)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def ensure_vendor(cache_dir: Path | None = None, template_dir: Path = VENDOR_PINS_DIR) -> Path:
    """Install the pinned npm packages into ``cache_dir/npm`` once; return its ``node_modules``."""
    cache_dir = default_cache_dir() if cache_dir is None else Path(cache_dir)
    npm_dir = cache_dir / "npm"
    modules = npm_dir / "node_modules"
    digest = _lock_digest(template_dir)
    stamp = npm_dir / _STAMP
    with _locked(cache_dir / ".npm.lock"):
        if stamp.is_file() and stamp.read_text().strip() == digest and modules.is_dir():
            return modules
        npm = shutil.which("npm")
        if npm is None:
            raise SiteError(
                "npm is not installed; it is needed to fetch Pyodide, mermaid and transformers.js"
            )
        npm_dir.mkdir(parents=True, exist_ok=True)
        stamp.unlink(missing_ok=True)
        for name in ("package.json", "package-lock.json"):
            shutil.copyfile(template_dir / name, npm_dir / name)
        cmd = [npm, "ci", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error"]
        proc = subprocess.run(cmd, cwd=npm_dir, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-5:]
            raise SiteError(f"npm ci failed in {npm_dir} (exit {proc.returncode}): " + " | ".join(tail))
        missing = [src for src, _, _ in RUNTIME_FILES if not (modules / src).is_file()]
        if missing:
            raise SiteError(f"npm install in {npm_dir} lacks expected files: {', '.join(missing)}")
        _precompile_stdlib(modules)
        stamp.write_text(digest + "\n")
    return modules


def _precompile_stdlib(modules: Path) -> None:
    """Write ``pyodide/python_stdlib_pyc.zip`` (bytecode) beside the source zip.

    Best effort: without Node or on failure the site ships the source zip, which works, only slower.
    """
    node = shutil.which("node")
    pyodide_dir = modules / "pyodide"
    out = pyodide_dir / PRECOMPILED_STDLIB
    out.unlink(missing_ok=True)
    if node is None:
        return
    tmp = out.with_suffix(".tmp")
    proc = subprocess.run(
        [node, str(Path(__file__).with_name("precompile_stdlib.mjs")), str(pyodide_dir), str(tmp)],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    if proc.returncode == 0 and tmp.is_file():
        tmp.rename(out)
    else:
        tmp.unlink(missing_ok=True)


def core_bytecode(
    modules: Path, sources: Sequence[tuple[str, bytes]], cache_dir: Path
) -> dict[str, bytes] | None:
    """The core's modules compiled by the site's own Pyodide (``precompile_stdlib.mjs``): archive
    name of each ``.py`` -> its unchecked-hash ``.pyc``, or None when Node cannot (the wheel then
    ships sources, which work, only slower: Pyodide compiled them at every page load, ~0.25 s of
    the first answer under Node). Cached by the sources' and the runtime's digest."""
    pyodide_dir = modules / "pyodide"
    h = hashlib.sha256((pyodide_dir / "pyodide.asm.wasm").read_bytes())  # the runtime's own bytes
    h.update(f"optimize={CORE_OPTIMIZE}".encode())
    for name, data in sources:
        h.update(name.encode() + b"\0" + hashlib.sha256(data).digest())
    cached = cache_dir / "core-bytecode" / f"{h.hexdigest()[:24]}.zip"
    node = shutil.which("node")
    if not cached.is_file():
        if node is None:
            return None
        cached.parent.mkdir(parents=True, exist_ok=True)
        src, tmp = cached.with_suffix(".src.tmp"), cached.with_suffix(".tmp")
        with zipfile.ZipFile(src, "w") as zf:
            for name, data in sources:
                if name.endswith(".py"):
                    zf.writestr(name, data)
        script = str(Path(__file__).with_name("precompile_stdlib.mjs"))
        cmd = [node, script, str(pyodide_dir), str(tmp), str(src), str(CORE_OPTIMIZE)]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=600)
        src.unlink(missing_ok=True)
        if proc.returncode != 0 or not tmp.is_file():
            tmp.unlink(missing_ok=True)
            return None
        tmp.rename(cached)
    with zipfile.ZipFile(cached) as zf:
        compiled = {n[:-1]: zf.read(n) for n in zf.namelist() if n.endswith(".pyc")}
    wanted = {name for name, _ in sources if name.endswith(".py")}
    return compiled if set(compiled) == wanted else None


def stdlib_source(pyodide_dir: Path) -> Path:
    """The standard library zip the site's is trimmed from: the bytecode one when it was made."""
    precompiled = pyodide_dir / PRECOMPILED_STDLIB
    return precompiled if precompiled.is_file() else pyodide_dir / "python_stdlib.zip"


def runtime_files(vendor_dir: Path) -> Iterator[tuple[Path, str, str]]:
    """(source, destination under ``site/vendor``, group) of each runtime file the site ships."""
    for src_rel, dest_rel, group in RUNTIME_FILES:
        src = vendor_dir / src_rel
        if src_rel == "pyodide/python_stdlib.zip" and src.is_file():
            # bytecode (a faster cold start), only the modules the worker imports (a lighter one)
            src = trimmed_stdlib(stdlib_source(src.parent))
        yield src, dest_rel, group


MODEL_FILES = ("config.json", "tokenizer.json", "tokenizer_config.json", QUANTIZED)


def copy_runtime(vendor_dir: Path, site_dir: Path, previous: Path | None = None) -> dict[str, int]:
    """Copy the browser runtime files into ``site_dir/vendor/``; return bytes per group.

    Groups: ``runtime`` (Pyodide), ``model`` (onnxruntime-web's WASM), ``js`` (transformers.js, mermaid).
    Files the ``previous`` site already holds unchanged are hard-linked from it instead of copied.
    """
    sizes = {"runtime": 0, "model": 0, "js": 0}
    for src, dest_rel, group in runtime_files(vendor_dir):
        if not src.is_file():
            raise SiteError(f"vendor file missing: {src} (run ensure_vendor first)")
        rel = Path("vendor") / dest_rel
        place_file(src, site_dir / rel, site_file(previous, rel.as_posix()) if previous is not None else None)
        sizes[group] += src.stat().st_size
    return sizes


def copy_model(model_dir: Path, site_dir: Path, previous: Path | None = None) -> int:
    """Copy the exported model into ``site_dir/models/<name>/``; return the bytes copied.

    The site points transformers.js' ``env.localModelPath`` at ``<base>/models/``. Files the
    ``previous`` site already holds unchanged are hard-linked from it instead of copied.
    """
    dest_rel = Path("models") / model_dir.name
    total = 0
    for rel in MODEL_FILES:
        src = model_dir / rel
        if not src.is_file():
            raise ModelError(f"exported model is missing {rel} in {model_dir}")
        before = site_file(previous, (dest_rel / rel).as_posix()) if previous is not None else None
        place_file(src, site_dir / dest_rel / rel, before)
        total += src.stat().st_size
    return total

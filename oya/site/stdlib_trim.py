"""The Python standard library the site ships to Pyodide: only the modules the engine worker imports.

Theory of operation:

* Pyodide boots from ``python_stdlib.zip`` (``loadPyodide`` fetches it from ``indexURL``, or from
  ``stdLibURL``), on the first answer's path. The whole library as bytecode is 614 files: 10.6 MB
  stored, 4.05 MB gzipped, 2.85 MB in Brotli. The Ask panel's worker imports a quarter of the
  modules: Pyodide's own bootstrap (``_pyodide``, ``pyodide``, ``asyncio``, the importlib
  machinery), what ``pyodide.unpackArchive`` needs to install the core wheel (``zipfile``,
  ``shutil``), and what ``oya.core`` imports (``json``, ``re``, ``gzip``, ``dataclasses``,
  ``urllib.parse``, ...). The site ships a zip of those only, under the same name, so Pyodide loads
  it without being told: 151 files, 3.7 MB stored, 1.48 MB gzipped, 1.07 MB in Brotli (Pyodide
  314.0.7). The worker installs the wheel without ``sysconfig`` and ``importlib.invalidate_caches``
  (``pyodide_boot.js``), which would pull in ~175 kB more (``importlib.metadata``, ``email``).
* ``STDLIB_MODULES`` was found by running the real Pyodide in Node with the core answering questions
  as the worker does (``tests/core_pyodide/answer_in_node.mjs``: boot, unpack the wheel, open the
  shards and the whole bundle, ask with and without a question vector, condense a long report, rank
  vectors) and recording every ``sys.modules`` entry loaded from the zip; the margin below it holds
  modules a path not run there may import. tests/site/test_stdlib_trim.py runs the same with the
  full library and fails, naming them, when the core starts importing a module the list lacks; it
  then answers from the trimmed zip exactly as CPython does.
* A module ``a.b`` keeps the zip's ``a/b.py[c]`` (or ``a/b/__init__``), and its packages'
  ``__init__``; a package listed with ``.*`` keeps everything under it. The zip is written stored:
  each member deflated on its own, the whole library was 4.5 MB; stored, the site's Brotli copy
  (``oya.site.assets``) was 2.9 MB, since it sees across the modules (hosts that compress nothing
  send the stored bytes). Members are sorted with fixed timestamps, so the same library and list
  give the same bytes and the same content-hashed folder.
"""

from __future__ import annotations

import hashlib
import os
import zipfile
from collections.abc import Iterable
from pathlib import Path

# Recorded with Pyodide 314.0.7 (Python 3.14), see the docstring; sorted.
RECORDED: tuple[str, ...] = tuple(
    """
__future__ _collections_abc _colorize _frozen_importlib _frozen_importlib_external _opcode_metadata
_py_warnings _pyodide _pyodide._base _pyodide._core_docs _pyodide._future_helper
_pyodide._importhook _pyodide.docs_argspec _pyodide.docstring _pyodide.jsbind _sitebuiltins _ssl
_weakrefset abc annotationlib ast asyncio asyncio.base_events asyncio.base_futures
asyncio.base_subprocess asyncio.base_tasks asyncio.constants asyncio.coroutines asyncio.events
asyncio.exceptions asyncio.format_helpers asyncio.futures asyncio.graph asyncio.locks asyncio.log
asyncio.mixins asyncio.protocols asyncio.queues asyncio.runners asyncio.selector_events
asyncio.sslproto asyncio.staggered asyncio.streams asyncio.subprocess asyncio.taskgroups
asyncio.tasks asyncio.threads asyncio.timeouts asyncio.transports asyncio.trsock asyncio.unix_events
base64 bisect bz2 codecs codeop collections collections.abc compression compression._common
compression._common._streams compression.zstd compression.zstd._zstdfile concurrent
concurrent.futures concurrent.futures._base contextlib contextvars copy copyreg dataclasses dis
encodings encodings.aliases encodings.cp437 encodings.utf_8 enum fnmatch functools genericpath glob
gzip hashlib heapq importlib importlib._abc importlib._bootstrap importlib._bootstrap_external
importlib.abc importlib.machinery importlib.util inspect io ipaddress json json.decoder json.encoder
json.scanner keyword linecache locale logging lzma ntpath opcode operator os os.path pathlib
pathlib._os posixpath pyodide pyodide._package_loader pyodide._state pyodide.code pyodide.common
pyodide.ffi pyodide.webloop random re re._casefix re._compiler re._constants re._parser reprlib
selectors shutil signal site socket ssl stat string struct subprocess tempfile textwrap threading
token tokenize traceback types typing urllib urllib.parse warnings weakref zipfile zipfile._path
zipfile._path.glob zipimport
""".split()
)

# Not seen in the recording, kept so a path it did not take still imports: the codecs Python falls
# back on for bytes and text, and the rest of Pyodide's FFI package.
MARGIN: tuple[str, ...] = ("encodings.ascii", "encodings.latin_1", "encodings.utf_8_sig", "pyodide.ffi.*")

STDLIB_MODULES: frozenset[str] = frozenset(RECORDED + MARGIN)

_EPOCH = (1980, 1, 1, 0, 0, 0)


def member_module(name: str) -> str | None:
    """The module a zip member holds (``json/decoder.pyc`` -> ``json.decoder``, a package's
    ``__init__`` -> the package), or None for a folder entry or a data file."""
    stem, dot, ext = name.rpartition(".")
    if not dot or ext not in ("py", "pyc") or name.endswith("/"):
        return None
    parts = stem.split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts) or None


def keeps(module: str, modules: Iterable[str]) -> bool:
    """``module`` is listed, or lies under a package listed as ``pkg.*``."""
    listed = set(modules)
    if module in listed:
        return True
    parts = module.split(".")
    return any(".".join(parts[:i]) + ".*" in listed for i in range(1, len(parts) + 1))


def trim_stdlib(src: Path, dest: Path, modules: Iterable[str] = STDLIB_MODULES) -> dict[str, int]:
    """Write to ``dest`` the members of the stdlib zip ``src`` that hold ``modules``; return counts."""
    listed = frozenset(modules)
    kept = 0
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}")
    with zipfile.ZipFile(src) as packed, zipfile.ZipFile(tmp, "w", zipfile.ZIP_STORED) as out:
        infos = sorted(packed.infolist(), key=lambda i: i.filename)
        for info in infos:
            module = member_module(info.filename)
            if module is None or not keeps(module, listed):
                continue
            entry = zipfile.ZipInfo(info.filename, date_time=_EPOCH)
            entry.compress_type = zipfile.ZIP_STORED
            entry.external_attr = 0o644 << 16
            out.writestr(entry, packed.read(info))
            kept += 1
    tmp.replace(dest)
    return {"members": len(infos), "kept": kept, "bytes": dest.stat().st_size}


def trimmed_stdlib(src: Path, modules: Iterable[str] = STDLIB_MODULES) -> Path:
    """The trimmed zip of ``src`` (made once beside it, named for the list it keeps)."""
    listed = sorted(frozenset(modules))
    key = hashlib.sha256("\n".join(listed).encode()).hexdigest()[:12]
    out = src.with_name(f"{src.stem}_oya-{key}.zip")
    if not out.is_file() or out.stat().st_mtime < src.stat().st_mtime:
        trim_stdlib(src, out, listed)
    return out

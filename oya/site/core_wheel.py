"""Build the pure-Python wheel of ``oya.core`` that the browser installs into Pyodide.

Theory of operation:

* The wheel holds ONLY ``oya/__init__.py``, ``oya/py.typed`` and ``oya/core/**.py``: the core is
  standard-library Python (an import-linter contract keeps it so), and nothing else of Oya can run in
  Pyodide. It is distribution ``oya-core`` so it never shadows the full ``oya`` in a CPython env.
* The site's wheel holds the modules as bytecode compiled by the site's own Pyodide, docstrings
  left out (``oya.site.vendor.core_bytecode``; Pyodide compiling the sources took ~0.25 s of
  every first answer under Node, ~0.45 s in Chromium).
* It is written directly with ``zipfile`` (no build backend, no network, well under a second).
  Entries are sorted, timestamps fixed at 1980-01-01 and permissions fixed, so the same sources give a
  byte-identical wheel, and the dist-info (METADATA, WHEEL, RECORD with sha256 digests) is what pip
  and Pyodide's ``unpackArchive``/``loadPackage`` expect.
"""

from __future__ import annotations

import base64
import hashlib
import zipfile
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path

DIST_NAME = "oya_core"
_PACKAGE_ROOT = Path(__file__).resolve().parents[1]  # .../oya
_EPOCH = (1980, 1, 1, 0, 0, 0)


def _version() -> str:
    try:
        return metadata.version("oya")
    except metadata.PackageNotFoundError:
        return "0.0.0"


def core_sources(package_root: Path = _PACKAGE_ROOT) -> list[tuple[str, bytes]]:
    """(archive name, bytes) for every file the wheel carries, sorted by name."""
    files = [package_root / "__init__.py", package_root / "py.typed"]
    files += [p for p in (package_root / "core").rglob("*.py") if "__pycache__" not in p.parts]
    out = []
    for path in files:
        if path.is_file():
            name = "oya/" + path.relative_to(package_root).as_posix()
            out.append((name, path.read_bytes()))
    return sorted(out)


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def _entry(zf: zipfile.ZipFile, name: str, data: bytes) -> None:
    info = zipfile.ZipInfo(name, date_time=_EPOCH)
    # deflated, not stored for the host to compress: a host may send a .whl as it is
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = 0o644 << 16
    zf.writestr(info, data)


def build_core_wheel(
    out_dir: Path, package_root: Path = _PACKAGE_ROOT, *, bytecode: Mapping[str, bytes] | None = None
) -> Path:
    """Write ``oya_core-<version>-py3-none-any.whl`` into ``out_dir``; return its path.

    ``bytecode`` (``oya.site.vendor.core_bytecode``: archive name of a ``.py`` -> its ``.pyc``)
    puts each module in as bytecode instead of source, which Pyodide then need not compile."""
    version = _version()
    dist_info = f"{DIST_NAME}-{version}.dist-info"
    sources = [
        (n + "c", bytecode[n]) if bytecode and n in bytecode else (n, d)
        for n, d in core_sources(package_root)
    ]
    meta = [
        (
            f"{dist_info}/METADATA",
            (
                "Metadata-Version: 2.1\n"
                f"Name: {DIST_NAME.replace('_', '-')}\n"
                f"Version: {version}\n"
                "Summary: Oya's pure-Python retrieval core (standard library only), for Pyodide.\n"
                "Requires-Python: >=3.11\n"
            ).encode(),
        ),
        (
            f"{dist_info}/WHEEL",
            b"Wheel-Version: 1.0\nGenerator: oya.site.core_wheel\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        ),
        (f"{dist_info}/top_level.txt", b"oya\n"),
    ]
    record = [_record_line(n, d) for n, d in sources + meta] + [f"{dist_info}/RECORD,,"]
    out_dir.mkdir(parents=True, exist_ok=True)
    wheel = out_dir / f"{DIST_NAME}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        for name, data in sources + meta:
            _entry(zf, name, data)
        _entry(zf, f"{dist_info}/RECORD", ("\n".join(record) + "\n").encode())
    return wheel

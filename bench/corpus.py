"""Real source trees for benchmarks: a PyPI source distribution, downloaded and unpacked once.

``fetch_project("networkx==3.6.1")`` runs ``pip download --no-deps --no-binary :all:`` into
``bench/.cache/sdists`` and unpacks the archive into ``bench/.cache/src/<name>-<version>``
(both gitignored). A second call finds the unpacked tree and touches neither pip nor the
network. Unpacking refuses members that would land outside the target folder and skips
links, so a hostile archive cannot write anywhere else.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

from bench.common import CACHE_DIR

SDIST_DIR = CACHE_DIR / "sdists"
SRC_DIR = CACHE_DIR / "src"
_ARCHIVES = (".tar.gz", ".tgz", ".tar.bz2", ".tar.xz", ".zip")


def parse_spec(spec: str) -> tuple[str, str]:
    """``"networkx==3.6.1"`` -> ``("networkx", "3.6.1")``; an exact pin keeps runs comparable."""
    name, sep, version = spec.partition("==")
    if not sep or not name.strip() or not version.strip():
        raise ValueError(f"give an exact pin like networkx==3.6.1; got {spec!r}")
    return name.strip(), version.strip()


def _normalise(name: str) -> str:
    return name.lower().replace("-", "_").replace(".", "_")


def _find_sdist(name: str, version: str) -> Path | None:
    if not SDIST_DIR.is_dir():
        return None
    want = f"{_normalise(name)}-{version}"
    for path in sorted(SDIST_DIR.iterdir()):
        if path.name.endswith(_ARCHIVES) and _normalise(path.name).startswith(_normalise(want)):
            return path
    return None


def _download(spec: str) -> None:
    SDIST_DIR.mkdir(parents=True, exist_ok=True)
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--no-binary",
        ":all:",
        spec,
        "-d",
        str(SDIST_DIR),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:]
        raise RuntimeError(f"pip download {spec} failed: {tail[0] if tail else 'no output'}")


def _inside(root: Path, member: str) -> bool:
    target = (root / member).resolve()
    return target == root or root in target.parents


def _unpack(archive: Path, dest: Path) -> None:
    """Unpack into a temporary folder, then rename, so a half-unpacked tree is never used."""
    tmp = dest.with_name(dest.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    root = tmp.resolve()
    if archive.name.endswith(".zip"):
        with zipfile.ZipFile(archive) as zf:
            for info in zf.infolist():
                if _inside(root, info.filename):
                    zf.extract(info, tmp)
    else:
        with tarfile.open(archive) as tf:
            members = [m for m in tf.getmembers() if (m.isfile() or m.isdir()) and _inside(root, m.name)]
            tf.extractall(tmp, members=members)  # noqa: S202 - members filtered above
    entries = list(tmp.iterdir())
    top = entries[0] if len(entries) == 1 and entries[0].is_dir() else tmp
    shutil.rmtree(dest, ignore_errors=True)
    top.rename(dest)
    shutil.rmtree(tmp, ignore_errors=True)


def fetch_project(spec: str) -> Path:
    """The unpacked source tree of ``spec`` (``name==version``), downloading it the first time."""
    name, version = parse_spec(spec)
    dest = SRC_DIR / f"{_normalise(name)}-{version}"
    if dest.is_dir() and any(dest.iterdir()):
        return dest
    archive = _find_sdist(name, version)
    if archive is None:
        _download(f"{name}=={version}")
        archive = _find_sdist(name, version)
    if archive is None:
        raise RuntimeError(f"pip reported success but no source archive for {spec} is in {SDIST_DIR}")
    SRC_DIR.mkdir(parents=True, exist_ok=True)
    _unpack(archive, dest)
    return dest


if __name__ == "__main__":
    for arg in sys.argv[1:] or ["networkx==3.6.1"]:
        print(fetch_project(arg))

"""A wheel built from the project, installed into an empty virtualenv, builds a site.

Offline: the wheel is built without build isolation (the shared venv's setuptools and wheel), the
new virtualenv has no pip and gets only the wheel; its third-party dependencies come from the
shared venv's site-packages through a ``.pth`` line (added after the venv's own site-packages, so
the installed ``oya`` wins, and the editable install's finder is not loaded: a path line in a
``.pth`` file does not run the ``.pth`` files of the folder it adds). The build runs from a
temporary folder, so nothing is found through the source tree: the templates and static files
must come from the wheel's package data.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

from oya.settings import default_cache_dir
from oya.site.vendor import ensure_vendor

REPO = Path(__file__).resolve().parents[2]
# what the wheel is built from (copied, so no stale build/ folder of the work tree leaks into it)
WHEEL_SOURCES = ("pyproject.toml", "setup.py", "README.md", "oya", "pipelines", "site_template")


def _run(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, f"{' '.join(args)}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc.stdout


def build_wheel(dest: Path) -> Path:
    src = dest / "src"
    src.mkdir(parents=True)
    for name in WHEEL_SOURCES:
        path = REPO / name
        if path.is_dir():
            ignore = shutil.ignore_patterns("__pycache__", "node_modules", "*.egg-info")
            shutil.copytree(path, src / name, ignore=ignore)
        else:
            shutil.copy(path, src / name)
    pip = [sys.executable, "-m", "pip"]
    _run([*pip, "wheel", str(src), "--no-deps", "--no-build-isolation", "-q", "-w", str(dest)], dest)
    (wheel,) = dest.glob("oya-*.whl")
    return wheel


def install_into_empty_venv(wheel: Path, where: Path) -> Path:
    venv.EnvBuilder(with_pip=False).create(where)
    python = where / "bin" / "python"
    own = Path(
        _run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], where).strip()
    )
    pip = [sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "-q", "--target", str(own)]
    _run([*pip, str(wheel)], where)
    (own / "shared_deps.pth").write_text(sysconfig.get_path("purelib") + "\n", encoding="utf-8")
    return python


def _tiny_repo(root: Path) -> Path:
    (root / "pkg").mkdir(parents=True)
    (root / "README.md").write_text("# Tiny\n\nA repository of two modules.\n", encoding="utf-8")
    (root / "pkg" / "__init__.py").write_text('"""The tiny package."""\n', encoding="utf-8")
    (root / "pkg" / "greet.py").write_text(
        '"""Greetings."""\n\n\ndef greet(name: str) -> str:\n    """Say hello."""\n'
        '    return f"hello {name}"\n\n\nif __name__ == "__main__":\n    print(greet("you"))\n',
        encoding="utf-8",
    )
    return root


@pytest.mark.slow
def test_installed_wheel_builds_a_site(tmp_path: Path) -> None:
    wheel = build_wheel(tmp_path / "dist")
    python = install_into_empty_venv(wheel, tmp_path / "venv")
    # the browser runtime comes from the machine's cache (versioned, filled once, as tests/site/conftest.py
    # does); the rest of the cache is this test's own (the hashing embedder needs no query model)
    shared = default_cache_dir()
    ensure_vendor(shared)
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "npm").symlink_to(shared / "npm", target_is_directory=True)

    work = tmp_path / "work"
    repo = _tiny_repo(work / "tiny")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "OYA_CACHE_DIR", "VIRTUAL_ENV")}
    where = _run([str(python), "-c", "import oya.cli; print(oya.cli.__file__)"], work, env)
    assert where.startswith(str(tmp_path / "venv")), where  # the wheel's oya, not the source tree's
    out = work / "out"
    args = ["-m", "oya", "build", str(repo), "--out", str(out), "--embedder", "hashing"]
    _run([str(python), *args, "--site", "--cache-dir", str(cache), "-q"], work, env)

    site = out / "site"
    for page in ("index.html", "architecture.html", "manifest.json", "sw.js"):  # sw.js: package data too
        assert (site / page).is_file(), page
    assert list(site.rglob("greet.py*.html")), sorted(p.name for p in site.rglob("*.html"))
    for asset in ("ask.js", "site.js", "site.css", "ask.css"):
        assert (site / "static" / asset).is_file(), asset
    manifest = json.loads((site / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["bundle"] and manifest["wheel"], manifest  # the Ask runtime (no model: hashing)
    index = (site / "index.html").read_text(encoding="utf-8")
    assert "Tiny" in index and "static/site.css" in index

"""tests/core under real Pyodide (Python 3.14, emscripten) in Node: the interpreter the browser runs.

Pyodide comes from the pinned npm install (oya.site.vendor); pytest and hypothesis are installed for
Python 3.14 as pure-Python wheels into a versioned cache folder. hypothesis is pinned to 6.155.7 here,
the last release with a pure-Python wheel (later ones ship compiled abi3 wheels only).
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from oya.settings import default_cache_dir
from oya.site.vendor import ensure_vendor

pytestmark = pytest.mark.slow

REPO_ROOT = Path(__file__).resolve().parents[2]
RUNNER = Path(__file__).with_name("run_in_node.mjs")
PYODIDE_PYTHON = "3.14"
DEPS = ("pytest==9.2.0", "hypothesis==6.155.7")


def _pyodide_deps(cache: Path) -> Path:
    key = hashlib.sha256(" ".join((PYODIDE_PYTHON, *DEPS)).encode()).hexdigest()[:16]
    target = cache / "pyodide-test-deps" / key
    if (target / ".complete").is_file():
        return target
    if target.exists():
        shutil.rmtree(target)
    cmd = [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    cmd += ["--target", str(target), "--python-version", PYODIDE_PYTHON, "--implementation", "py"]
    cmd += ["--platform", "any", "--only-binary=:all:", *DEPS]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, f"pip could not install {DEPS} for Pyodide:\n{proc.stderr[-2000:]}"
    (target / ".complete").write_text("ok\n")
    return target


def test_core_suite_passes_under_pyodide() -> None:
    node = shutil.which("node")
    assert node is not None, (
        "node is missing: running tests/core under Pyodide needs Node.js (apt-get install nodejs)"
    )
    cache = default_cache_dir()
    pyodide_dir = ensure_vendor(cache) / "pyodide"
    deps = _pyodide_deps(cache)
    cmd = [node, str(RUNNER), "--pyodide", str(pyodide_dir), "--repo", str(REPO_ROOT), "--deps", str(deps)]
    cmd += ["--", "-q", "tests/core", "tests/core_pyodide/check_platform.py"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900, check=False)
    output = proc.stdout[-6000:] + proc.stderr[-3000:]
    assert proc.returncode == 0, f"tests/core failed under Pyodide (exit {proc.returncode}):\n{output}"
    assert "passed" in proc.stdout, output

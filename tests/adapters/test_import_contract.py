"""The tools that hold the core's promises: the import-linter contract and mypy strict."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def tool(name: str) -> str:
    path = BIN / name
    found = str(path) if path.exists() else shutil.which(name)
    assert found, f"{name} is not installed (pip install -e '.[dev]')"
    return found


def run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=300, check=False)


def test_import_contract_is_kept() -> None:
    proc = run([tool("lint-imports"), "--no-cache"], REPO)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "1 kept, 0 broken" in proc.stdout


def test_import_contract_catches_a_violation(tmp_path: Path) -> None:
    """The contract is not vacuous: a core module importing numpy or an adapter breaks it."""
    shutil.copytree(REPO / "oya", tmp_path / "oya", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    (tmp_path / "oya" / "core" / "leak.py").write_text("import numpy\nfrom oya import errors\n")
    proc = run([tool("lint-imports"), "--no-cache"], tmp_path)
    assert proc.returncode != 0, proc.stdout
    assert "oya.core.leak -> numpy" in proc.stdout
    assert "oya.core.leak -> oya.errors" in proc.stdout


def test_mypy_strict_on_core() -> None:
    proc = run([tool("mypy"), "--no-incremental"], REPO)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "Success" in proc.stdout

"""The tools that hold the core's promises and the layers: the import-linter contracts and mypy strict."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

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
    assert "5 kept, 0 broken" in proc.stdout


def copy_tree(dest: Path) -> Path:
    for package in ("oya", "pipelines"):
        shutil.copytree(REPO / package, dest / package, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", dest / "pyproject.toml")
    return dest


def test_import_contract_catches_a_violation(tmp_path: Path) -> None:
    """The contract is not vacuous: a core module importing numpy or an adapter breaks it."""
    copy_tree(tmp_path)
    (tmp_path / "oya" / "core" / "leak.py").write_text("import numpy\nfrom oya import errors\n")
    proc = run([tool("lint-imports"), "--no-cache"], tmp_path)
    assert proc.returncode != 0, proc.stdout
    assert "oya.core.leak -> numpy" in proc.stdout
    assert "oya.core.leak -> oya.errors" in proc.stdout


# (file to append to, the line appended, what the broken contract reports)
LAYER_VIOLATIONS = {
    "oya imports pipelines": (
        "oya/query/searcher.py",
        "import pipelines.assets",
        ["oya.query.searcher -> pipelines.assets"],
    ),
    "the indexing side imports the site": (
        "oya/graph/keys.py",
        "from oya.site import render",
        ["oya.graph is not allowed to import oya.site", "oya.graph.keys -> oya.site.render"],
    ),
    "SQL outside the store": ("oya/site/nav.py", "import duckdb", ["oya.site.nav -> duckdb"]),
    "an import cycle": (
        "oya/site/entry_points.py",
        "from oya.site.pages import SiteData as _Pages",
        ["No cycles are allowed in oya.site", "entry_points"],
    ),
}

# The site imports oya.build (what a build may write) and the build's steps import every package of
# the indexing side, so an indexing package importing the site also closes a cycle of packages.
BROKEN = {"the indexing side imports the site": "3 kept, 2 broken"}


@pytest.mark.parametrize("rule", sorted(LAYER_VIOLATIONS))
def test_each_layer_rule_catches_its_violation(rule: str, tmp_path: Path) -> None:
    """Each layer contract fails once its rule is broken in a copy of the tree (and only that one, but
    for a violation that also closes a cycle: ``BROKEN``)."""
    target, line, expected = LAYER_VIOLATIONS[rule]
    path = copy_tree(tmp_path) / target
    path.write_text(path.read_text(encoding="utf-8") + f"\n{line}\n", encoding="utf-8")
    proc = run([tool("lint-imports"), "--no-cache"], tmp_path)
    assert proc.returncode != 0, proc.stdout
    assert BROKEN.get(rule, "4 kept, 1 broken") in proc.stdout, proc.stdout[-3000:]
    for text in expected:
        assert text in proc.stdout, proc.stdout[-3000:]


def test_mypy_strict_on_core() -> None:
    proc = run([tool("mypy"), "--no-incremental"], REPO)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "Success" in proc.stdout

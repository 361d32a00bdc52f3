"""Every module of oya.core imports only the standard library or oya.core itself.

Read with ``ast`` (nothing is imported), so the check also runs under Pyodide. It covers
imports anywhere in a module — inside functions and ``TYPE_CHECKING`` blocks too.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

CORE = Path(__file__).resolve().parents[2] / "oya" / "core"
MODULES = sorted(CORE.rglob("*.py"))


def imported_modules(source: str) -> list[tuple[int, str]]:
    """Absolute dotted names a module imports, with line numbers; relative imports as ``.name``."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            found.append((node.lineno, "." * node.level + (node.module or "")))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name | ast.Attribute)
            and (node.func.id if isinstance(node.func, ast.Name) else node.func.attr)
            in ("__import__", "import_module")
        ):
            found.append((node.lineno, "<dynamic import>"))
    return found


def allowed(name: str) -> bool:
    if name.startswith("."):  # relative: stays inside oya.core (a package of one level)
        return not name.startswith("..")
    top = name.split(".")[0]
    return top in sys.stdlib_module_names or name == "oya.core" or name.startswith("oya.core.")


def test_core_modules_are_found() -> None:
    names = {p.name for p in MODULES}
    assert {"tokenize.py", "bm25.py", "pipeline.py", "graph.py", "__init__.py"} <= names


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_module_imports_only_stdlib_and_core(path: Path) -> None:
    bad = [
        f"{path.name}:{line} imports {name}"
        for line, name in imported_modules(path.read_text(encoding="utf-8"))
        if not allowed(name)
    ]
    assert not bad, "oya.core must stay pure standard-library Python:\n" + "\n".join(bad)


@pytest.mark.parametrize(
    ("source", "ok"),
    [
        ("import math\nfrom collections.abc import Mapping", True),
        ("from oya.core.bm25 import BM25Index\nfrom . import fusion", True),
        ("import numpy", False),
        ("from oya.store.index import Index", False),
        ("from oya import errors", False),
        ("from .. import store", False),
        ("def f():\n    import duckdb", False),
        ("import importlib\nimportlib.import_module('torch')", False),
    ],
)
def test_the_checker_itself(source: str, ok: bool) -> None:
    assert all(allowed(name) for _, name in imported_modules(source)) is ok

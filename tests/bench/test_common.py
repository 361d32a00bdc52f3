"""bench/common.py: the one percentile formula, loading code from a folder without sys.path, and
the rule that bench/ and tests/ import by package name instead of editing sys.path."""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

import pytest

from bench.common import ROOT, import_from, percentile, write_json


def test_percentile_is_nearest_rank() -> None:
    hundred = [float(v) for v in range(100, 0, -1)]  # any order
    assert percentile(hundred, 95) == 95.0  # the 95th smallest
    assert percentile(hundred, 50) == 50.0
    assert percentile(hundred, 100) == 100.0
    assert percentile(hundred, 0) == 1.0
    twenty = [float(v) for v in range(1, 21)]
    assert percentile(twenty, 95) == 19.0  # rank ceil(19.0): not the largest
    assert percentile([1.0, 2.0, 3.0, 4.0], 50) == 2.0  # a measured value, never the mean of two
    assert percentile([7.0], 95) == 7.0


def test_percentile_of_nothing_is_nan() -> None:
    assert percentile([], 50) != percentile([], 50)


def test_import_from_loads_a_package_without_touching_sys_path(tmp_path: Path) -> None:
    pkg = tmp_path / "oya_probe_pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from .inner import VALUE\n")
    (pkg / "inner.py").write_text("VALUE = 42\n")
    before = list(sys.path)
    try:
        module = import_from(tmp_path, "oya_probe_pkg")
        assert module.VALUE == 42
        assert sys.path == before
        assert import_from(tmp_path, "oya_probe_pkg") is module  # imported once
    finally:
        sys.modules.pop("oya_probe_pkg", None)
        sys.modules.pop("oya_probe_pkg.inner", None)


def test_import_from_names_the_folder_when_the_module_is_missing(tmp_path: Path) -> None:
    with pytest.raises(ModuleNotFoundError, match="oya_probe_missing"):
        import_from(tmp_path, "oya_probe_missing")
    assert "oya_probe_missing" not in sys.modules


def test_write_json_writes_the_whole_file_with_a_final_newline(tmp_path: Path) -> None:
    out = tmp_path / "deeper" / "result.json"
    write_json(out, {"b": 1, "a": [1.5]}, sort_keys=True)
    text = out.read_text(encoding="utf-8")
    assert text.endswith("}\n") and json.loads(text) == {"a": [1.5], "b": 1}
    assert sorted(p.name for p in out.parent.iterdir()) == ["result.json"]  # no temporary left


def _edits_sys_path(path: Path) -> list[int]:
    """Line numbers of ``sys.path`` used in ``path``'s code (strings and comments do not count)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and node.attr == "path"
        and isinstance(node.value, ast.Name)
        and node.value.id == "sys"
    ]


def test_bench_and_tests_never_edit_sys_path() -> None:
    """bench is a package and tests import it (and each other's helpers) by package name; code that
    is not in a package is loaded with ``bench.common.import_from``. (Inside Pyodide, the .mjs
    runners set up their own interpreter's path: not Python files, not checked here.)"""
    found = {
        str(path.relative_to(ROOT)): lines
        for folder in ("bench", "tests")
        for path in sorted((ROOT / folder).rglob("*.py"))
        if ".cache" not in path.parts and (lines := _edits_sys_path(path))
    }
    # this test reads sys.path itself, to compare it before and after import_from
    assert found == {"tests/bench/test_common.py": found.get("tests/bench/test_common.py", [])}
    assert len(found["tests/bench/test_common.py"]) == 2

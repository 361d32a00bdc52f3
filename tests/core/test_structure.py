"""The core stays readable: no module over ~350 lines, no function over ~60 (parsed with ast)."""

from __future__ import annotations

import ast
from pathlib import Path

CORE = Path(__file__).resolve().parents[2] / "oya" / "core"
MAX_MODULE_LINES = 350
MAX_FUNCTION_LINES = 60


def oversized(source: str, name: str) -> list[str]:
    """What in one module breaks a limit: the module's lines, each function's lines (decorators on)."""
    out: list[str] = []
    n_lines = len(source.splitlines())
    if n_lines > MAX_MODULE_LINES:
        out.append(f"{name}: {n_lines} lines (limit {MAX_MODULE_LINES})")
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            length = (node.end_lineno or node.lineno) - start + 1
            if length > MAX_FUNCTION_LINES:
                out.append(f"{name}:{node.lineno} {node.name}: {length} lines (limit {MAX_FUNCTION_LINES})")
    return out


def test_core_modules_and_functions_stay_small() -> None:
    problems = [p for path in sorted(CORE.glob("*.py")) for p in oversized(path.read_text(), path.name)]
    assert problems == []


def test_the_check_fails_on_a_long_function_and_a_long_module() -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    assert oversized(f"def f() -> None:\n{body}\n", "m.py") == [
        f"m.py:1 f: {MAX_FUNCTION_LINES + 1} lines (limit {MAX_FUNCTION_LINES})"
    ]
    assert oversized("x = 1\n" * (MAX_MODULE_LINES + 1), "m.py") == [
        f"m.py: {MAX_MODULE_LINES + 1} lines (limit {MAX_MODULE_LINES})"
    ]
    assert oversized("def g() -> None:\n    pass\n", "m.py") == []


def _optimized_away(source: str) -> list[str]:
    """What ``compile(..., optimize=2)`` would drop or change that code could rely on."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Assert):
            found.append(f"assert at line {node.lineno}")
        elif isinstance(node, ast.Name) and node.id == "__debug__":
            found.append(f"__debug__ at line {node.lineno}")
        elif isinstance(node, ast.Attribute) and node.attr == "__doc__":
            found.append(f"__doc__ at line {node.lineno}")
    return found


def test_the_core_runs_alike_without_docstrings_and_asserts() -> None:
    """The site ships the core as bytecode compiled with optimize=2 (oya.site.vendor.CORE_OPTIMIZE)."""
    bad = {p.name: f for p in sorted(CORE.glob("*.py")) if (f := _optimized_away(p.read_text()))}
    assert not bad, bad
    assert _optimized_away("assert x\nprint(f.__doc__, __debug__)\n") == [
        "assert at line 1",
        "__doc__ at line 2",
        "__debug__ at line 2",
    ]

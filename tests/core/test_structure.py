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

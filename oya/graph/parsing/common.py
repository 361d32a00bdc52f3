"""Tree-sitter helpers every parser shares: node text, spans, ownership and syntax errors."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import PurePosixPath

from tree_sitter import Node

from oya.core.records import Node as Symbol
from oya.models import ParsedFile, Reference


def node_text(node: Node | None) -> str:
    if node is None or node.text is None:
        return ""
    return node.text.decode("utf-8", errors="replace")


def end_line(node: Node) -> int:
    """1-based last line of ``node``; a node that ends at column 0 ends on the previous line."""
    end = node.end_point
    last = end.row if end.column > 0 or end.row == node.start_point.row else end.row - 1
    return last + 1


def owners(ranges: list[tuple[int, int, str]], positions: list[int], default: str) -> list[str]:
    """Owner of each sorted position: the innermost range holding it (ranges nest, sorted by start)."""
    found: list[str] = []
    stack: list[tuple[int, int, str]] = []
    i = 0
    for pos in positions:
        while i < len(ranges) and ranges[i][0] <= pos:
            while stack and stack[-1][1] <= ranges[i][0]:
                stack.pop()
            stack.append(ranges[i])
            i += 1
        while stack and stack[-1][1] <= pos:
            stack.pop()
        found.append(stack[-1][2] if stack else default)
    return found


def syntax_errors(root: Node) -> list[tuple[int, str]]:
    """Recovered errors as (line, message), found by walking only the subtrees that have errors."""
    found: list[tuple[int, str]] = []
    stack = [root]
    while stack:
        node = stack.pop()
        line = node.start_point.row + 1
        if node.is_missing:
            found.append((line, f"line {line}: missing {node.type!r}"))
        elif node.is_error:
            snippet = node_text(node).strip().split("\n", 1)[0][:40]
            found.append((line, f"line {line}: syntax error near {snippet!r}"))
        else:
            stack.extend(child for child in node.children if child.has_error)
    return found


def split_lines(text: str) -> list[str]:
    """Lines as tree-sitter counts rows (only ``\\n`` ends a line)."""
    lines = text.split("\n")
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()
    return lines


def parsed_file(
    path: str,
    module: str,
    name: str,
    n_lines: int,
    docstring: str,
    symbols: Iterable[Symbol],
    references: Iterable[Reference],
    imports: dict[str, str],
    errors: Iterable[tuple[int, str]],
) -> ParsedFile:
    """A parser's result in its canonical order: the module node first, then symbols by position."""
    stem = PurePosixPath(path).stem
    module_node = Symbol(
        id=path,
        kind="module",
        name=name or stem,
        qualname=module or stem,
        path=path,
        start_line=1,
        end_line=max(1, n_lines),
        docstring=docstring,
    )
    return ParsedFile(
        path=path,
        module=module,
        symbols=(module_node, *sorted(symbols, key=lambda s: (s.start_line, s.id))),
        references=tuple(sorted(references, key=lambda r: (r.line, r.source, r.kind, r.target))),
        imports=dict(sorted(imports.items())),
        errors=tuple(message for _, message in sorted(set(errors))),
    )

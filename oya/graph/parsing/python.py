"""Python parser on tree-sitter: symbols, imports, calls and base classes of one file.

Theory of operation:

* One tree-sitter ``Parser``, ``Language`` and ``Query`` are built per ``PythonParser`` and
  reused for every file. A single query finds definitions, callees and import statements
  in C; Python code only looks at those nodes, never at every node of the tree.
* Symbols are classes, and functions whose enclosing definitions are all classes (so
  ``C.m`` is a method and ``C.Inner.m`` too). A function nested in a function is not a
  symbol: its calls count as calls of the outer function. When a qualified name is
  defined twice (``@property`` then ``@x.setter``, or ``if``/``else`` variants) the first
  definition is the symbol and the later ones add their references to it.
* A symbol's span starts at its first decorator and ends at its last line (1-based,
  inclusive); its signature is the ``def``/``class`` header up to the colon, decorators
  and comments left out, whitespace normalised.
* Calls, imports and inheritance are recorded as written (``Reference``); resolving them
  across files is ``oya.graph.build``'s job. Relative imports are made absolute here,
  because only the parser knows which package the file is in.
* Error recovery: tree-sitter recovers from most syntax errors locally, but an unclosed
  bracket or a broken class header can swallow every definition after it. When the tree
  has errors, the file is cut into segments at column-0 ``def``/``class`` lines (with
  their decorators); top-level statements without errors are kept from the full parse,
  and every segment touched by an error is parsed again on its own (padded with newlines
  so rows stay true). An error therefore costs at most the definitions in its own segment.
  Recovered errors are reported in ``ParsedFile.errors`` as ``"line N: ..."``.
"""

from __future__ import annotations

import ast
import inspect
import re
from bisect import bisect_right
from dataclasses import dataclass, field
from pathlib import PurePosixPath

import tree_sitter_python
from tree_sitter import Language, Node, Query, QueryCursor
from tree_sitter import Parser as TreeSitterParser

from oya.core.records import Node as Symbol
from oya.graph.parsing.common import end_line as _end_line
from oya.graph.parsing.common import node_text as _text
from oya.graph.parsing.common import owners as _owners
from oya.graph.parsing.common import parsed_file
from oya.graph.parsing.common import split_lines as _split_lines
from oya.graph.parsing.common import syntax_errors as _syntax_errors
from oya.models import ParsedFile, Reference, SourceFile

_QUERY = """
(function_definition) @def
(class_definition) @def
(call function: (_) @callee)
(import_statement) @import
(import_from_statement) @import
"""
_BOUNDARY = re.compile(r"(?:async[ \t]+def|def|class)[ \t]")
_SIGNATURE_MAX = 200
_MAX_CHAIN = 32


def module_name(path: str) -> str:
    """Dotted module name of a repository path: ``src/pkg/a.py`` -> ``pkg.a``, ``pkg/__init__.py`` -> ``pkg``."""
    parts = list(PurePosixPath(path).parts)
    if len(parts) > 1 and parts[0] == "src":
        parts = parts[1:]
    if not parts:
        return ""
    last = parts[-1]
    for suffix in (".py", ".pyi", ".pyw"):
        if last.endswith(suffix):
            last = last[: -len(suffix)]
            break
    parts[-1] = last
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def resolve_relative(module: str, is_package: bool, dots: int, rest: str) -> str | None:
    """Absolute target of ``from <dots><rest> import``, or None when it climbs above the top."""
    package = module if is_package else module.rpartition(".")[0]
    parts = package.split(".") if package else []
    up = dots - 1
    if up > len(parts):
        return None
    parts = parts[: len(parts) - up]
    if rest:
        parts.append(rest)
    return ".".join(parts)


def _callee_text(node: Node) -> str | None:
    """``foo``, ``self.bar``, ``mod.func``, ``Cls().m``; None for subscripts, literals and the like."""
    suffix: list[str] = []
    current: Node | None = node
    for _ in range(_MAX_CHAIN):
        if current is None:
            return None
        kind = current.type
        if kind == "identifier":
            suffix.append(_text(current))
            return "".join(reversed(suffix))
        if kind == "attribute":
            attr = current.child_by_field_name("attribute")
            if attr is None:
                return None
            suffix.append("." + _text(attr))
            current = current.child_by_field_name("object")
        elif kind == "call":
            suffix.append("()")
            current = current.child_by_field_name("function")
        else:
            return None
    return None


def _string_value(node: Node) -> str:
    try:
        value = ast.literal_eval(_text(node))
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return ""
    return inspect.cleandoc(value) if isinstance(value, str) else ""


def _docstring(body: Node | None) -> str:
    if body is None:
        return ""
    for child in body.children:
        if child.type == "comment":
            continue
        if child.type == "expression_statement" and child.named_child_count == 1:
            only = child.named_children[0]
            if only.type == "string":
                return _string_value(only)
        return ""
    return ""


def _signature(definition: Node, source: bytes) -> str:
    body = definition.child_by_field_name("body")
    end = definition.end_byte
    if body is not None:
        before = body.prev_sibling
        end = before.start_byte if before is not None and before.type == ":" else body.start_byte
    start = definition.start_byte
    # comments inside a multi-line header are cut out by their byte ranges
    cuts: list[tuple[int, int]] = []
    params = definition.child_by_field_name("parameters") or definition.child_by_field_name("superclasses")
    for holder in (definition, params):
        if holder is None:
            continue
        cuts.extend((c.start_byte, c.end_byte) for c in holder.children if c.type == "comment")
    pieces: list[bytes] = []
    pos = start
    for cut_start, cut_end in sorted(cuts):
        if start <= cut_start and cut_end <= end:
            pieces.append(source[pos:cut_start])
            pos = cut_end
    pieces.append(source[pos:end])
    header = b"".join(pieces).decode("utf-8", errors="replace")
    if definition.has_error:  # a broken header may run into the body: keep its first line
        header = header.split("\n", 1)[0]
    text = " ".join(header.split()).rstrip(":").rstrip()
    text = re.sub(r"([(\[]) ", r"\1", text)
    text = re.sub(r",? ([)\]])", r"\1", text)
    if len(text) > _SIGNATURE_MAX:
        text = text[: _SIGNATURE_MAX - 3].rstrip() + "..."
    return text


def _damaged_segments(root: Node, lines: list[str]) -> list[tuple[int, int]]:
    """Row ranges (0-based, inclusive) of the segments that must be re-parsed on their own."""
    starts = {0}
    for row, line in enumerate(lines):
        if _BOUNDARY.match(line):
            while row > 0 and lines[row - 1].startswith("@"):
                row -= 1
            starts.add(row)
    seg_starts = sorted(starts)
    last_row = len(lines) - 1

    def covered(node: Node) -> range:
        first = bisect_right(seg_starts, node.start_point.row) - 1
        final = bisect_right(seg_starts, max(node.end_point.row, node.start_point.row)) - 1
        return range(first, final + 1)

    children = [(covered(child), child.has_error) for child in root.children]
    damaged: set[int] = set()
    changed = True
    while changed:
        changed = False
        for segs, has_error in children:
            if (has_error or any(s in damaged for s in segs)) and not all(s in damaged for s in segs):
                damaged.update(segs)
                changed = True
    segments: list[tuple[int, int]] = []
    for index in sorted(damaged):
        end = seg_starts[index + 1] - 1 if index + 1 < len(seg_starts) else last_row
        segments.append((seg_starts[index], end))
    return segments


@dataclass
class _Scope:
    end: int
    owner: str  # node id that references inside this definition count for
    qualname: str | None  # set for classes and functions that are (or duplicate) symbols
    is_class: bool


@dataclass
class _Extraction:
    """Accumulates what one file yields across the full parse and any re-parsed segments."""

    path: str
    module: str
    is_package: bool
    symbols: dict[str, Symbol] = field(default_factory=dict)
    references: list[Reference] = field(default_factory=list)
    imports: dict[str, str] = field(default_factory=dict)
    local_imports: dict[str, str] = field(default_factory=dict)

    def collect(self, root: Node, source: bytes, query: Query, skip: bytearray | None) -> None:
        captures = QueryCursor(query).captures(root)

        def kept(nodes: list[Node]) -> list[Node]:
            if skip is None:
                return sorted(nodes, key=lambda n: n.start_byte)
            return sorted((n for n in nodes if not skip[n.start_point.row]), key=lambda n: n.start_byte)

        ranges = self._definitions(kept(captures.get("def", [])), source)
        callees = kept(captures.get("callee", []))
        for callee, owner in zip(
            callees, _owners(ranges, [n.start_byte for n in callees], self.path), strict=True
        ):
            target = _callee_text(callee)
            if target:
                self.references.append(Reference(owner, "calls", target, callee.start_point.row + 1))
        statements = kept(captures.get("import", []))
        for statement, owner in zip(
            statements, _owners(ranges, [n.start_byte for n in statements], self.path), strict=True
        ):
            self._import(statement, owner)

    def _definitions(self, defs: list[Node], source: bytes) -> list[tuple[int, int, str]]:
        items = []
        for definition in defs:
            parent = definition.parent
            outer = parent if parent is not None and parent.type == "decorated_definition" else definition
            items.append((outer.start_byte, -outer.end_byte, definition, outer))
        items.sort(key=lambda item: (item[0], item[1]))
        ranges: list[tuple[int, int, str]] = []
        stack: list[_Scope] = []
        for start, neg_end, definition, outer in items:
            while stack and stack[-1].end <= start:
                stack.pop()
            enclosing = stack[-1] if stack else None
            is_class = definition.type == "class_definition"
            name = _text(definition.child_by_field_name("name"))
            qualname: str | None = None
            owner = enclosing.owner if enclosing is not None else self.path
            if name and (enclosing is None or (enclosing.is_class and enclosing.qualname is not None)):
                qualname = name if enclosing is None else f"{enclosing.qualname}.{name}"
                node_id = f"{self.path}::{qualname}"
                owner = node_id
                if node_id not in self.symbols:
                    kind = "class" if is_class else ("function" if enclosing is None else "method")
                    self.symbols[node_id] = Symbol(
                        id=node_id,
                        kind=kind,
                        name=name,
                        qualname=qualname,
                        path=self.path,
                        start_line=outer.start_point.row + 1,
                        end_line=max(_end_line(outer), outer.start_point.row + 1),
                        signature=_signature(definition, source),
                        docstring=_docstring(definition.child_by_field_name("body")),
                    )
                if is_class:
                    self._bases(definition, node_id)
            stack.append(_Scope(-neg_end, owner, qualname, is_class))
            ranges.append((start, -neg_end, owner))
        return ranges

    def _bases(self, definition: Node, node_id: str) -> None:
        bases = definition.child_by_field_name("superclasses")
        if bases is None:
            return
        row = definition.start_point.row
        for base in bases.named_children:
            if definition.has_error and base.start_point.row != row:
                continue  # a broken header may have swallowed the body
            if base.type == "subscript":  # Generic[T] -> Generic
                base = base.child_by_field_name("value") or base
            target = _callee_text(base) if base.type in ("identifier", "attribute") else None
            if target:
                self.references.append(Reference(node_id, "inherits", target, base.start_point.row + 1))

    def _import(self, statement: Node, owner: str) -> None:
        line = statement.start_point.row + 1
        bindings = self.imports if owner == self.path else self.local_imports
        if statement.type == "import_statement":
            for name in statement.children_by_field_name("name"):
                if name.type == "aliased_import":
                    dotted = "".join(_text(name.child_by_field_name("name")).split())
                    alias = _text(name.child_by_field_name("alias"))
                    if dotted and alias:
                        bindings.setdefault(alias, dotted)
                else:
                    dotted = "".join(_text(name).split())
                    if dotted:  # `import a.b` binds `a`
                        head = dotted.split(".")[0]
                        bindings.setdefault(head, head)
                if dotted:
                    self.references.append(Reference(owner, "imports", dotted, line))
            return
        module_node = statement.child_by_field_name("module_name")
        if module_node is None:
            return
        base: str | None
        if module_node.type == "relative_import":
            dots = 0
            rest = ""
            for child in module_node.children:
                if child.type == "import_prefix":
                    dots = _text(child).count(".")
                elif child.type == "dotted_name":
                    rest = "".join(_text(child).split())
            base = resolve_relative(self.module, self.is_package, dots, rest)
            if base is None:
                return
        else:
            base = "".join(_text(module_node).split())
        if any(child.type == "wildcard_import" for child in statement.children):
            if base:
                self.references.append(Reference(owner, "imports", base, line))
            return
        for name in statement.children_by_field_name("name"):
            if name.type == "aliased_import":
                original = "".join(_text(name.child_by_field_name("name")).split())
                alias = _text(name.child_by_field_name("alias")) or original
            else:
                original = alias = "".join(_text(name).split())
            if not original:
                continue
            target = f"{base}.{original}" if base else original
            bindings.setdefault(alias, target)
            self.references.append(Reference(owner, "imports", target, line))


class PythonParser:
    """Reusable Python parser; one instance serves every file (see ``oya.graph.parsing.parser_for``)."""

    language = "python"

    def __init__(self) -> None:
        self._language = Language(tree_sitter_python.language())
        self._parser = TreeSitterParser(self._language)
        self._query = Query(self._language, _QUERY)

    def parse(self, file: SourceFile) -> ParsedFile:
        module = module_name(file.path)
        is_package = PurePosixPath(file.path).stem == "__init__"
        source = file.text.encode("utf-8")
        lines = _split_lines(file.text)
        tree = self._parser.parse(source)
        root = tree.root_node
        found = _Extraction(file.path, module, is_package)
        errors: list[tuple[int, str]] = []
        if not root.has_error:
            found.collect(root, source, self._query, None)
        else:
            segments = _damaged_segments(root, lines)
            skip = bytearray(len(lines) + 1)
            for first, last in segments:
                skip[first : last + 1] = b"\x01" * (last - first + 1)
            found.collect(root, source, self._query, skip)
            for first, last in segments:
                piece = ("\n" * first + "\n".join(lines[first : last + 1]) + "\n").encode("utf-8")
                sub = self._parser.parse(piece).root_node
                found.collect(sub, piece, self._query, None)
                errors.extend(_syntax_errors(sub))
        for name, target in found.local_imports.items():
            found.imports.setdefault(name, target)

        name = module.rpartition(".")[2]
        symbols, references = found.symbols.values(), found.references
        docstring = _module_docstring(root)
        return parsed_file(
            file.path, module, name, len(lines), docstring, symbols, references, found.imports, errors
        )


def _module_docstring(root: Node) -> str:
    for child in root.children:
        if child.type == "comment":
            continue
        if child.has_error:
            return ""
        return _docstring(root)
    return ""

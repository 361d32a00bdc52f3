"""The shared engine behind every tags-query parser: run one ``.scm`` query, build symbols and references.

Theory of operation:

* A language is data: a tree-sitter grammar, a query file under ``oya/graph/parsing/queries`` and a
  ``LanguageSpec`` (``oya.graph.parsing.languages``) that says how the language names its modules and
  imports. One query finds everything in C; Python code only looks at the captured nodes.
* Capture names are the contract between a query and this engine:

  ``@class`` / ``@function`` / ``@method`` / ``@scope`` with ``@name``
      a definition and its name. ``@scope`` (a Rust ``impl``) names a container without being a
      symbol; ``@receiver`` (a Go receiver type, a C++ ``Cls::``) puts a method under its type,
      and ``@self`` names the receiver variable (Go's ``s`` in ``func (s *Store)``), read as ``self``.
  ``@call`` (+ ``@call.object``)
      a callee; written as ``obj.name`` whatever the language's separator (``::``, ``->``).
  ``@inherit``
      a base class, interface or mixin of the enclosing class.
  ``@import`` (+ ``@import.name``, ``@import.alias``), ``@import.relative``
      an import's module spec; a name it binds. ``.relative`` specs are paths from the file's
      directory (``require_relative``, ``#include "x.h"``).
  ``@package``
      the file's package or namespace (Go, Java, C#, PHP, Kotlin).
* Symbols follow the Python parser's rules: classes (struct, interface, trait, enum too) and
  functions whose enclosing definitions are all classes; a nested function is not a symbol and
  its calls count for the outer one; the first definition of a qualified name wins (overloads,
  prototypes) and later ones add their references to it. Kinds are the graph's four
  (``module``, ``class``, ``function``, ``method``); the signature says ``interface`` or ``struct``.
* Doc comments are the comment block right above a definition (attributes and annotations in
  between are skipped), markers stripped.
* A file tree-sitter cannot read is not half-parsed: when there is more than one recovered error in
  ``ERROR_LINES`` of it, or it is too long or minified-looking, ``ParseError`` is raised and
  the pipeline indexes the file as text and counts it as degraded.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from tree_sitter import Language, Node, Query, QueryCursor
from tree_sitter import Parser as TreeSitterParser

from oya.core.records import Node as Symbol
from oya.errors import ParseError
from oya.graph.parsing.common import (
    end_line,
    node_text,
    owners,
    parsed_file,
    split_lines,
    syntax_errors,
)
from oya.models import ParsedFile, Reference, SourceFile


class LanguageSpec(Protocol):
    """What the engine reads of a language's spec (``oya.graph.parsing.languages.LanguageSpec``; a
    protocol here so the two modules do not import each other)."""

    @property
    def name(self) -> str: ...
    @property
    def fallback(self) -> str: ...
    @property
    def fallback_hint(self) -> str: ...
    @property
    def module_key(self) -> Callable[[str, str], str]: ...
    @property
    def imports(self) -> Callable[..., Any]: ...


# more recovered errors than one per ERROR_LINES lines (and at least MIN_ERRORS): too broken to trust;
# fewer are grammar gaps (an unknown macro, a new keyword) that cost a few symbols at most
ERROR_LINES = 5
MIN_ERRORS = 3
MAX_LINES = 50_000
MAX_MEAN_LINE = 300  # characters: minified or generated
_SIGNATURE_MAX = 200
_DOC_MAX = 2000
_DEF_KINDS = ("class", "function", "method", "scope")
_CHAIN = re.compile(r"[\w$]+(?:\(\))?(?:\.[\w$]+(?:\(\))?)*")
_NAME = re.compile(r"[\w$~]+[?!=]?")
_PLAIN = re.compile(r"[\w$]+(?:\.[\w$]+)*")
_GENERIC = re.compile(r"<[^<>()]*>")
_ARGS = re.compile(r"\([^()]*\)")
_SEPARATOR = re.compile(r"\?\.|::|->|\\|\.")
_SELF = {"this": "self", "$this": "self", "self": "self", "Self": "self", "@": "self"}
# what wraps a single definition: `export`, `const f = () => ...`, Go's `type T struct`
_WRAPPERS = frozenset(
    {
        "export_statement",
        "lexical_declaration",
        "variable_declaration",
        "type_declaration",
        "expression_statement",
    }
)
_HEADER_END = re.compile(r"(?:\s*(?:\{|=>|=|->))+\s*$")
_NAMED_FILE = re.compile(
    r"[\"'`]((?:\.{0,2}/)?[\w-]+(?:/[\w.-]+)*\.(?:py|go|js|mjs|ts|tsx|rb|php|java|rs|c|cpp|cs|sh))[\"'`]"
)
_DOC_SKIP = frozenset({"attribute_item", "attribute", "annotation", "marker_annotation", "decorator"})
_COMMENT_MARK = re.compile(r"^\s*(?:/\*+!?|\*+/|\*|///?!?|#+|--)\s?")


def dotted(text: str) -> str:
    """``a::b``, ``a->b``, ``a?.b``, ``A\\B`` as ``a.b``; generics and argument lists dropped."""
    if not _PLAIN.fullmatch(text):  # most names are plain: `foo`, `a.b` (a hot path on big files)
        text = "".join(text.split())
        for _ in range(3):
            if "<" not in text and "(" not in text:
                break
            text = _GENERIC.sub("", text)
            text = _ARGS.sub("()", text)
        text = _SEPARATOR.sub(".", text).strip(".")
    head, dot, rest = text.partition(".")
    if head in _SELF:
        text = "self" + dot + rest
    return text


def callee(name: Node, obj: Node | None) -> str | None:
    """The dotted callee; an unreadable receiver (``f(x)[0].m``) leaves ``?.m``: a method on an
    unknown object."""
    text = dotted(node_text(name) if obj is None else f"{node_text(obj)}.{node_text(name)}")
    if not text:
        return None
    if _CHAIN.fullmatch(text):
        return text
    last = dotted(node_text(name)).rpartition(".")[2]
    return f"?.{last}" if _PLAIN.fullmatch(last) and "." not in last else None


def _doc(outer: Node) -> str:
    lines: list[str] = []
    row = outer.start_point.row
    node = outer.prev_sibling
    while node is not None:
        if node.type in _DOC_SKIP:
            row = node.start_point.row
        elif "comment" in node.type and node.end_point.row >= row - 1:
            lines[:0] = node_text(node).split("\n")
            row = node.start_point.row
        else:
            break
        node = node.prev_sibling
    cleaned = [_COMMENT_MARK.sub("", line, count=1).rstrip() for line in lines]
    cleaned = [line.removesuffix("*/").rstrip() for line in cleaned]
    return "\n".join(cleaned).strip()[:_DOC_MAX]


def _signature(definition: Node, source: bytes) -> str:
    body = definition.child_by_field_name("body")
    if body is None and (value := definition.child_by_field_name("value")) is not None:
        body = value.child_by_field_name("body")
    if body is not None and body.start_byte > definition.start_byte:
        header = source[definition.start_byte : body.start_byte].decode("utf-8", errors="replace")
    else:
        header = node_text(definition).split("\n", 1)[0]
    text = _HEADER_END.sub("", " ".join(header.split()))
    if len(text) > _SIGNATURE_MAX:
        text = text[: _SIGNATURE_MAX - 3].rstrip() + "..."
    return text


def _outer(node: Node) -> Node:
    """The definition with what wraps it (``export``, a variable statement around an arrow function)."""
    parent = node.parent
    while parent is not None and parent.type in _WRAPPERS and parent.named_child_count == 1:
        node, parent = parent, parent.parent
    return node


@dataclass(frozen=True)
class _Definition:
    node: Node
    kind: str
    name: str
    receiver: str
    self_name: str = ""


@dataclass
class _Scope:
    end: int
    owner: str
    qualname: str | None
    is_container: bool


@dataclass
class _Extraction:
    path: str
    source: bytes
    symbols: dict[str, Symbol] = field(default_factory=dict)
    references: list[Reference] = field(default_factory=list)
    imports: dict[str, str] = field(default_factory=dict)
    self_names: dict[str, str] = field(default_factory=dict)  # method id -> its receiver variable

    def definitions(self, defs: list[_Definition]) -> list[tuple[int, int, str]]:
        """Symbols of the definitions; the (start, end, owner) ranges that own references."""
        items = sorted(
            {d.node.id: d for d in defs}.values(), key=lambda d: (d.node.start_byte, -d.node.end_byte)
        )
        ranges: list[tuple[int, int, str]] = []
        stack: list[_Scope] = []
        for d in items:
            start, end = d.node.start_byte, d.node.end_byte
            while stack and stack[-1].end <= start:
                stack.pop()
            enclosing = stack[-1] if stack else None
            owner = enclosing.owner if enclosing is not None else self.path
            qualname: str | None = None
            if d.name and (enclosing is None or (enclosing.is_container and enclosing.qualname)):
                prefix = enclosing.qualname if enclosing is not None else d.receiver
                qualname = f"{prefix}.{d.name}" if prefix else d.name
                node_id = f"{self.path}::{qualname}"
                if d.kind == "scope":
                    owner = node_id if node_id in self.symbols else owner
                else:
                    owner = node_id
                    if node_id not in self.symbols:
                        self.symbols[node_id] = self._symbol(d, node_id, qualname, bool(prefix))
                        if d.self_name:
                            self.self_names[node_id] = d.self_name
            stack.append(_Scope(end, owner, qualname, d.kind in ("class", "scope")))
            ranges.append((start, end, owner))
        return ranges

    def _symbol(self, d: _Definition, node_id: str, qualname: str, member: bool) -> Symbol:
        kind = "class" if d.kind == "class" else ("method" if member else "function")
        outer = _outer(d.node)
        return Symbol(
            id=node_id,
            kind=kind,
            name=d.name,
            qualname=qualname,
            path=self.path,
            start_line=outer.start_point.row + 1,
            end_line=max(end_line(outer), outer.start_point.row + 1),
            signature=_signature(d.node, self.source),
            docstring=_doc(outer),
        )

    def add(self, ranges: list[tuple[int, int, str]], found: list[tuple[Node, str, str]]) -> None:
        """References (node, kind, target) owned by the innermost definition around them."""
        found.sort(key=lambda f: f[0].start_byte)
        for (node, kind, target), owner in zip(
            found, owners(ranges, [f[0].start_byte for f in found], self.path), strict=True
        ):
            head, dot, rest = target.partition(".")
            if dot and head == self.self_names.get(owner):
                target = f"self.{rest}"
            self.references.append(Reference(owner, kind, target, node.start_point.row + 1))


def _named_files(root: Node, text: str) -> list[tuple[Node, str, str]]:
    """Files another program is told to run or read (``spawn("python", ["server/app.py"])``): an
    explicit link across languages, kept as an import of ``file:<path>``."""
    found: list[tuple[Node, str, str]] = []
    for match in _NAMED_FILE.finditer(text):
        offset = len(text[: match.start(1)].encode("utf-8"))
        node = root.descendant_for_byte_range(offset, offset)
        if node is not None:
            found.append((node, "imports", "file:" + match.group(1)))
    return found


class TagsParser:
    """A parser for one language from its spec; one instance serves every file of the language."""

    def __init__(self, spec: LanguageSpec, grammar: object, query_text: str) -> None:
        self.spec = spec
        self.language = spec.name
        self._language = Language(grammar)
        self._parser = TreeSitterParser(self._language)
        self._query = Query(self._language, query_text)
        # a file this grammar would misread goes to the fallback's grammar at once (C++ in a .h)
        self._hint = re.compile(spec.fallback_hint, re.MULTILINE) if spec.fallback_hint else None

    def _check_size(self, text: str, lines: list[str]) -> None:
        if len(lines) > MAX_LINES:
            raise ParseError(f"{len(lines)} lines, over the {MAX_LINES}-line parse limit")
        if len(text) > 10_000 and len(text) > MAX_MEAN_LINE * len(lines):
            raise ParseError(
                f"lines of {len(text) // len(lines)} characters on average: minified or generated"
            )

    def parse(self, file: SourceFile) -> ParsedFile:
        if self._hint is not None and self._hint.search(file.text):
            return self._fallback().parse(file)
        try:
            return self._parse(file)
        except ParseError:
            if not self.spec.fallback:
                raise
            return self._fallback().parse(file)

    def _fallback(self) -> TagsParser:
        from oya.graph.parsing import parser_for

        fallback = parser_for(self.spec.fallback)
        assert isinstance(fallback, TagsParser), self.spec.fallback
        return fallback

    def _parse(self, file: SourceFile) -> ParsedFile:
        lines = split_lines(file.text)
        self._check_size(file.text, lines)
        source = file.text.encode("utf-8")
        root = self._parser.parse(source).root_node
        errors: list[tuple[int, str]] = []
        if root.has_error:
            # A count, not the bytes under ERROR nodes: one unknown macro can wrap a whole C file
            # in an ERROR whose children still parse well.
            errors = syntax_errors(root)
            if len(errors) >= MIN_ERRORS and len(errors) * ERROR_LINES > len(lines):
                raise ParseError(f"{len(errors)} syntax errors in {len(lines)} lines ({errors[0][1]})")
        matches = QueryCursor(self._query).matches(root)
        defs: list[_Definition] = []
        package = ""
        for _, caps in matches:
            kind = next((k for k in _DEF_KINDS if k in caps), None)
            if kind is not None:
                name = dotted(node_text(caps["name"][0])).rpartition(".")[2] if "name" in caps else ""
                receiver = dotted(node_text(caps["receiver"][0])) if "receiver" in caps else ""
                self_name = node_text(caps["self"][0]) if "self" in caps else ""
                if _NAME.fullmatch(name):  # not a C++ operator or a template the grammar misread
                    defs.append(
                        _Definition(caps[kind][0], kind, name, receiver.rpartition(".")[2], self_name)
                    )
            elif "package" in caps and not package:
                package = dotted(node_text(caps["package"][0]))
        key = self.spec.module_key(file.path, package)
        found = _Extraction(file.path, source)
        ranges = found.definitions(defs)
        found.add(ranges, self._references(matches, key, file.path, found.imports))
        found.add(ranges, _named_files(root, file.text))
        return self._result(file, key, lines, found, errors)

    def _references(
        self, matches: list[tuple[int, dict[str, list[Node]]]], key: str, path: str, bindings: dict[str, str]
    ) -> list[tuple[Node, str, str]]:
        found: list[tuple[Node, str, str]] = []
        seen: set[tuple[int, str, str]] = set()
        for _, caps in matches:
            if "call" in caps:
                target = callee(caps["call"][0], caps["call.object"][0] if "call.object" in caps else None)
                if target:
                    found.append((caps["call"][0], "calls", target))
            elif "inherit" in caps:
                target = dotted(node_text(caps["inherit"][0]))
                if _CHAIN.fullmatch(target):
                    found.append((caps["inherit"][0], "inherits", target))
            elif "import" in caps or "import.relative" in caps:
                relative = "import.relative" in caps
                spec_node = caps["import.relative" if relative else "import"][0]
                name = node_text(caps["import.name"][0]) if "import.name" in caps else ""
                alias = node_text(caps["import.alias"][0]) if "import.alias" in caps else ""
                for bound, target in self.spec.imports(path, key, node_text(spec_node), relative):
                    local = alias or name or bound
                    full = f"{target}.{name}" if name else target
                    if local and local not in ("_", "."):
                        bindings.setdefault(local, full)
                    marker = (spec_node.start_byte, "imports", full)
                    if marker not in seen:
                        seen.add(marker)
                        found.append((spec_node, "imports", full))
        return found

    def _result(
        self, file: SourceFile, key: str, lines: list[str], found: _Extraction, errors: list[tuple[int, str]]
    ) -> ParsedFile:
        symbols, references = found.symbols.values(), found.references
        return parsed_file(file.path, key, "", len(lines), "", symbols, references, found.imports, errors)

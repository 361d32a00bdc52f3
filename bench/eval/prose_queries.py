"""Prose -> code queries: documentation paragraphs and change-log entries that name a symbol.

Theory of operation:

* Sources are the sdist's own prose: ``docs/``/``doc/`` ``.rst``/``.md`` files, ``changelog.d/``
  and top-level ``CHANGES``/``CHANGELOG``/``HISTORY``/``NEWS`` files. They are cut into
  paragraphs (blank-line separated; a change-log bullet is its own paragraph). Headings,
  directives, literal blocks (after ``::`` or fenced), tables and doctest lines are dropped.
* A paragraph becomes a query when it names at least one symbol of the indexed code through a
  Sphinx role (``:func:`x```, ``:meth:`A.b```, ``:class:`C```, ``:attr:``, ``:exc:``,
  ``:data:``, ``:obj:``) or a literal (````x````). A name resolves to graph nodes (classes,
  functions, methods) by its last one or two dotted parts; a name defined in more than
  ``MAX_FILES`` files is ambiguous and ignored.
* The answer is the set of files that define the resolved symbols (and, for chunk-level
  metrics, the symbols' own chunks). The query text is the paragraph with the resolved names
  REMOVED — the role or literal, and any bare mention of the name — and the rest of the markup
  flattened to words. A query keeps at least ``MIN_WORDS`` words.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from pathlib import Path

from oya.core.graph import CodeGraph

from .code_queries import is_prose_source

MAX_FILES = 3
MIN_WORDS = 8
_ROLE = re.compile(r":(?:py:)?(func|meth|class|attr|exc|data|obj|mod):`([^`]+)`")
_LITERAL = re.compile(r"``([^`]+)``")
_MD_CODE = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")
_IDENT_LIKE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*(?:\(\))?")
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+\.)\s+")
_HEADING_UNDERLINE = re.compile(r"^\s*([=\-~^\"'`#*+])\1{2,}\s*$")


@dataclass(frozen=True)
class ProseQuery:
    query: str
    source: str  # file the paragraph came from
    names: tuple[str, ...]  # the symbol names removed from the query
    nodes: tuple[str, ...]  # node ids the names resolve to
    files: tuple[str, ...]  # files defining them (the answer)


def prose_files(root: Path) -> list[Path]:
    out = []
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if path.is_file() and is_prose_source(rel) and path.suffix.lower() in (".rst", ".md", ".txt", ""):
            out.append(path)
    return out


def paragraphs(text: str) -> list[str]:
    """Prose paragraphs of an .rst/.md text (bullets split, code and directives dropped)."""
    out: list[str] = []
    cur: list[str] = []
    in_fence = False
    literal_indent: int | None = None

    def flush() -> None:
        if cur:
            out.append(" ".join(s.strip() for s in cur))
            cur.clear()

    lines = text.splitlines()
    for i, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            in_fence = not in_fence
            flush()
            continue
        if in_fence:
            continue
        indent = len(line) - len(line.lstrip())
        if literal_indent is not None:
            if not stripped or indent > literal_indent:
                continue
            literal_indent = None
        if not stripped:
            flush()
            continue
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if _HEADING_UNDERLINE.match(line) or _HEADING_UNDERLINE.match(nxt) or stripped.startswith("#"):
            flush()
            continue
        if stripped.startswith(("..", ">>>", "...", "|", "+-", ":param", ":return", ":raises")):
            flush()
            if stripped.startswith(".."):
                literal_indent = indent
            continue
        if _BULLET.match(line):
            flush()
            line = _BULLET.sub("", line)
        cur.append(line)
        if stripped.endswith("::"):
            flush()
            literal_indent = indent
    flush()
    return out


class NameResolver:
    """Symbol names -> graph node ids (classes, functions, methods)."""

    def __init__(self, graph: CodeGraph) -> None:
        self.by_name: dict[str, list[str]] = {}
        self.by_tail2: dict[str, list[str]] = {}
        self.graph = graph
        for node in graph.nodes.values():
            if node.kind == "module":
                continue
            self.by_name.setdefault(node.name, []).append(node.id)
            parts = node.qualname.split(".")
            if len(parts) >= 2:
                self.by_tail2.setdefault(".".join(parts[-2:]), []).append(node.id)

    def resolve(self, name: str) -> list[str]:
        name = name.strip().lstrip("~!").removesuffix("()")
        if "<" in name and name.endswith(">"):  # title <target>
            name = name[name.index("<") + 1 : -1].strip()
        parts = [p for p in name.split(".") if p]
        if not parts or not _IDENT_LIKE.fullmatch(name):
            return []
        ids: list[str] = []
        if len(parts) >= 2:
            ids = self.by_tail2.get(".".join(parts[-2:]), [])
        if not ids:
            ids = self.by_name.get(parts[-1], [])
        files = {self.graph.nodes[i].path for i in ids}
        if not ids or len(files) > MAX_FILES or len(parts[-1]) < 3 or parts[-1].startswith("__"):
            return []
        return sorted(ids)


def make_query(paragraph: str, resolver: NameResolver, source: str) -> ProseQuery | None:
    names: list[str] = []
    nodes: list[str] = []

    def take(match: re.Match[str], target: str, kind: str | None) -> str:
        if kind == "mod":
            return " "
        ids = resolver.resolve(target)
        if ids:
            short = target.strip().lstrip("~!").removesuffix("()").split("<")[-1].rstrip(">").split(".")[-1]
            names.append(short)
            nodes.extend(ids)
            return " "
        # not a symbol of this code: keep its words, drop the markup
        return " " + target.strip().lstrip("~!").split(".")[-1] + " "

    text = _ROLE.sub(lambda m: take(m, m.group(2), m.group(1)), paragraph)
    text = re.sub(r":[a-z]+:`([^`]*)`", r"\1", text)  # other roles (:ref:, :doc:, :issue:) keep their words
    text = _LITERAL.sub(lambda m: take(m, m.group(1), None), text)
    text = _MD_CODE.sub(lambda m: take(m, m.group(1), None), text)
    if not nodes:
        return None
    for name in set(names):  # bare mentions of a removed name go too
        text = re.sub(rf"\b{re.escape(name)}\b", " ", text)
    text = re.sub(r"[`*_]{1,2}", " ", text)
    text = re.sub(r"\s+", " ", text).strip()
    if len(text.split()) < MIN_WORDS:
        return None
    node_ids = tuple(sorted(set(nodes)))
    files = tuple(sorted({resolver.graph.nodes[n].path for n in node_ids}))
    return ProseQuery(text, source, tuple(sorted(set(names))), node_ids, files)


def collect_prose_queries(root: Path, graph: CodeGraph, n: int, seed: int) -> list[ProseQuery]:
    resolver = NameResolver(graph)
    found: dict[str, ProseQuery] = {}
    for path in prose_files(root):
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        rel = path.relative_to(root).as_posix()
        for para in paragraphs(text):
            q = make_query(para, resolver, rel)
            if q is not None and q.query.lower() not in found:
                found[q.query.lower()] = q
    ordered = sorted(found.values(), key=lambda q: (q.source, q.query))
    if len(ordered) > n:
        ordered = sorted(random.Random(seed).sample(ordered, n), key=lambda q: (q.source, q.query))
    return ordered

"""Code search queries (a function's docstring first line -> that function) and the stripped tree.

Theory of operation:

* Candidates are module-level functions and methods of module-level classes in library code
  (not tests, docs, examples, benchmarks) whose docstring's first line has at least four words
  and 20 characters and is unique in the project. A seeded sample of them is the query set.
* The evaluated index is built from a COPY of the source tree in which every sampled function's
  docstring is blanked out line for line (the first line becomes ``pass``, so a body that was only
  a docstring stays valid Python and every other line keeps its number). The answer cannot be
  found by matching the query against its own text; the chunk the harness expects is checked to
  no longer contain the first line.
* The copy also leaves out the prose the other query set is drawn from (docs folders and change
  logs): a paragraph must not find itself.
"""

from __future__ import annotations

import ast
import random
import shutil
from dataclasses import dataclass
from pathlib import Path

SKIP_DIRS = {"tests", "test", "testing", "docs", "doc", "examples", "example", "benchmarks", "bench"}
PROSE_DIRS = {"docs", "doc", "changelog.d"}
PROSE_FILES = ("CHANGES", "CHANGELOG", "HISTORY", "NEWS", "RELEASE")


@dataclass(frozen=True)
class CodeQuery:
    query: str  # the docstring's first line
    path: str  # repository-relative POSIX path
    qualname: str  # Class.method or function
    doc_lines: tuple[int, int]  # the docstring's line span (1-based, inclusive)

    @property
    def node_id(self) -> str:
        return f"{self.path}::{self.qualname}"


def is_prose_source(rel: Path) -> bool:
    return bool(rel.parts) and (
        rel.parts[0] in PROSE_DIRS or (len(rel.parts) == 1 and rel.name.upper().startswith(PROSE_FILES))
    )


def library_files(root: Path) -> list[Path]:
    out = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        if any(p in SKIP_DIRS or p.startswith((".", "test_")) for p in rel.parts[:-1]):
            continue
        if rel.name.startswith("test_") or rel.name == "conftest.py" or rel.name == "setup.py":
            continue
        out.append(path)
    return out


def _docstring_span(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[str, int, int] | None:
    if not fn.body:
        return None
    first = fn.body[0]
    if not (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)):
        return None
    if not isinstance(first.value.value, str) or first.end_lineno is None:
        return None
    if first.lineno == fn.lineno:  # def f(): "doc" on one line: cannot blank it out
        return None
    return first.value.value, first.lineno, first.end_lineno


def collect_candidates(root: Path) -> list[CodeQuery]:
    found: list[CodeQuery] = []
    for path in library_files(root):
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        rel = path.relative_to(root).as_posix()
        pairs: list[tuple[str, ast.AST]] = []
        for node in tree.body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                pairs.append((node.name, node))
            elif isinstance(node, ast.ClassDef):
                for sub in node.body:
                    if isinstance(sub, ast.FunctionDef | ast.AsyncFunctionDef):
                        pairs.append((f"{node.name}.{sub.name}", sub))
        for qualname, fn in pairs:
            assert isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef)
            span = _docstring_span(fn)
            if span is None:
                continue
            doc, start, end = span
            line = doc.strip().splitlines()[0].strip() if doc.strip() else ""
            if len(line.split()) < 4 or len(line) < 20:
                continue
            found.append(CodeQuery(line, rel, qualname, (start, end)))
    counts: dict[str, int] = {}
    for q in found:
        counts[q.query.lower()] = counts.get(q.query.lower(), 0) + 1
    return [q for q in found if counts[q.query.lower()] == 1]


def sample_queries(candidates: list[CodeQuery], n: int, seed: int) -> list[CodeQuery]:
    ordered = sorted(candidates, key=lambda q: (q.path, q.qualname))
    if len(ordered) <= n:
        return ordered
    return sorted(random.Random(seed).sample(ordered, n), key=lambda q: (q.path, q.qualname))


def blank_docstring(lines: list[str], start: int, end: int) -> None:
    """Blank lines ``start..end`` (1-based) in place; the first becomes ``pass`` at its indent."""
    first = lines[start - 1]
    indent = first[: len(first) - len(first.lstrip())]
    newline = "\n" if first.endswith("\n") else ""
    lines[start - 1] = f"{indent}pass{newline}"
    for i in range(start, end):
        lines[i] = "\n" if lines[i].endswith("\n") else ""


def make_eval_tree(src: Path, dest: Path, queries: list[CodeQuery]) -> None:
    """Copy ``src`` to ``dest`` without its prose sources, with the queries' docstrings blanked."""
    shutil.rmtree(dest, ignore_errors=True)

    def ignore(folder: str, names: list[str]) -> list[str]:
        rel = Path(folder).resolve().relative_to(src.resolve())
        return [n for n in names if is_prose_source(rel / n)]

    shutil.copytree(src, dest, ignore=ignore)
    by_path: dict[str, list[CodeQuery]] = {}
    for q in queries:
        by_path.setdefault(q.path, []).append(q)
    for rel, qs in by_path.items():
        target = dest / rel
        lines = target.read_text(encoding="utf-8").splitlines(keepends=True)
        for q in qs:
            blank_docstring(lines, *q.doc_lines)
        text = "".join(lines)
        ast.parse(text)  # the stripped file must still be valid Python
        target.write_text(text, encoding="utf-8")

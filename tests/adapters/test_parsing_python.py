"""The tree-sitter Python parser: symbols, spans, signatures, docstrings, references, recovery."""

from __future__ import annotations

import hashlib
import textwrap

import pytest

from oya.graph.parsing import parser_for
from oya.graph.parsing.python import module_name, resolve_relative
from oya.models import SourceFile


def source(path: str, text: str) -> SourceFile:
    text = textwrap.dedent(text).lstrip("\n")
    return SourceFile(
        path, "python", len(text), hashlib.sha256(text.encode()).hexdigest(), text.count("\n"), text
    )


def parse(path: str, text: str):
    parser = parser_for("python")
    assert parser is not None
    return parser.parse(source(path, text))


SAMPLE = '''
"""Storage of things.

Second paragraph.
"""
import os
import a.b as c
import x.y
from . import sibling
from .. import up
from ..core.records import Node as N, Edge
from pkg.util import *


CONSTANT = 1


@decorator(arg=1)
def top(
    a: int,  # the a
    b: str = ")",
) -> int:
    """Top-level function.

        Indented detail.
    """
    return helper(a) + os.path.join(b)


class Store(Base, mod.Mixin, Generic[T], metaclass=Meta):
    """A store."""

    limit = 10

    def save(self, item):
        def inner():
            nested_call()
        self.flush()
        return N(item), Cls().make()

    @property
    def size(self):
        return len(self.items)

    @size.setter
    def size(self, value):
        self.resize(value)

    class Inner:
        def deep(self):
            pass


async def fetch():
    await client.get()
'''


def by_id(parsed):
    return {s.id: s for s in parsed.symbols}


def test_registry_knows_python_and_nothing_else_by_default():
    assert parser_for("python") is parser_for("Python")
    assert parser_for("cobol") is None


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("pkg/__init__.py", "pkg"),
        ("src/pkg/a.py", "pkg.a"),
        ("src/pkg/__init__.py", "pkg"),
        ("setup.py", "setup"),
        ("pkg/sub/mod.pyi", "pkg.sub.mod"),
    ],
)
def test_module_name_from_path(path, expected):
    assert module_name(path) == expected


def test_resolve_relative():
    assert resolve_relative("pkg.sub.mod", False, 1, "x") == "pkg.sub.x"
    assert resolve_relative("pkg.sub.mod", False, 2, "") == "pkg"
    assert resolve_relative("pkg.sub", True, 1, "y") == "pkg.sub.y"
    assert resolve_relative("top", False, 3, "x") is None


def test_symbols_spans_kinds_and_module_node():
    parsed = parse("src/pkg/store.py", SAMPLE)
    module = parsed.symbols[0]
    assert parsed.module == "pkg.store"
    assert (module.id, module.kind, module.qualname) == ("src/pkg/store.py", "module", "pkg.store")
    assert module.docstring == "Storage of things.\n\nSecond paragraph."
    assert (module.start_line, module.end_line) == (1, SAMPLE.strip("\n").count("\n") + 1)
    symbols = by_id(parsed)
    kinds = {s.qualname: s.kind for s in parsed.symbols[1:]}
    assert kinds == {
        "top": "function",
        "Store": "class",
        "Store.save": "method",
        "Store.size": "method",
        "Store.Inner": "class",
        "Store.Inner.deep": "method",
        "fetch": "function",
    }
    top = symbols["src/pkg/store.py::top"]
    assert (top.start_line, top.end_line) == (17, 26)  # starts at the decorator
    store = symbols["src/pkg/store.py::Store"]
    assert (store.start_line, store.end_line) == (29, 50)
    save = symbols["src/pkg/store.py::Store.save"]
    assert (save.start_line, save.end_line) == (34, 38)
    # the setter is a second definition of Store.size: the first one is the symbol
    size = symbols["src/pkg/store.py::Store.size"]
    assert (size.start_line, size.end_line) == (40, 42)
    assert not any("inner" in s.id for s in parsed.symbols)  # nested functions are not symbols


def test_signatures_and_docstrings():
    symbols = by_id(parse("src/pkg/store.py", SAMPLE))
    top = symbols["src/pkg/store.py::top"]
    assert top.signature == 'def top(a: int, b: str = ")") -> int'
    assert top.docstring == "Top-level function.\n\nIndented detail."  # inspect.cleandoc
    store = symbols["src/pkg/store.py::Store"]
    assert store.signature == "class Store(Base, mod.Mixin, Generic[T], metaclass=Meta)"
    assert store.docstring == "A store."
    assert symbols["src/pkg/store.py::fetch"].signature == "async def fetch()"
    assert symbols["src/pkg/store.py::Store.save"].docstring == ""


def test_long_signature_is_capped():
    args = ", ".join(f"argument_{i}" for i in range(40))
    parsed = parse("m.py", f"def f({args}):\n    pass\n")
    signature = parsed.symbols[1].signature
    assert len(signature) <= 200
    assert signature.endswith("...")


def test_imports_are_absolute_bindings():
    parsed = parse("src/pkg/store.py", SAMPLE)
    assert parsed.imports == {
        "os": "os",
        "c": "a.b",
        "x": "x",
        "sibling": "pkg.sibling",
        "up": "up",
        "N": "core.records.Node",
        "Edge": "core.records.Edge",
    }
    imported = [r.target for r in parsed.references if r.kind == "imports"]
    assert imported == [
        "os",
        "a.b",
        "x.y",
        "pkg.sibling",
        "up",
        "core.records.Edge",  # one statement's targets are sorted
        "core.records.Node",
        "pkg.util",
    ]
    assert all(r.source == "src/pkg/store.py" for r in parsed.references if r.kind == "imports")


def test_relative_imports_in_a_package_init():
    parsed = parse("pkg/sub/__init__.py", "from .a import f\nfrom ..b import g\n")
    assert parsed.imports == {"f": "pkg.sub.a.f", "g": "pkg.b.g"}


def test_calls_and_bases_are_recorded_as_written():
    parsed = parse("src/pkg/store.py", SAMPLE)
    refs = {(r.source.split("::")[-1], r.kind, r.target) for r in parsed.references if r.kind != "imports"}
    assert {
        ("top", "calls", "decorator"),
        ("top", "calls", "helper"),
        ("top", "calls", "os.path.join"),
        ("Store", "inherits", "Base"),
        ("Store", "inherits", "mod.Mixin"),
        ("Store", "inherits", "Generic"),
        ("Store.save", "calls", "nested_call"),  # from the nested function
        ("Store.save", "calls", "self.flush"),
        ("Store.save", "calls", "N"),
        ("Store.save", "calls", "Cls().make"),
        ("Store.size", "calls", "self.resize"),  # the setter's call counts for Store.size
        ("fetch", "calls", "client.get"),
    } <= refs
    assert not any(target == "Meta" for _, _, target in refs)
    call_lines = {r.target: r.line for r in parsed.references if r.kind == "calls"}
    assert call_lines["self.flush"] == 37


SYNTAX_ERROR = '''
def before_error(x):
    return x + 1


x = broken(1, 2


def after_error():
    return before_error(2)


class Broken
    def m(self):
        return [1, 2


def last_one():
    """Still here."""
    return 3
'''


def test_syntax_error_keeps_definitions_before_and_after():
    parsed = parse("bad.py", SYNTAX_ERROR)
    names = {s.qualname for s in parsed.symbols[1:]}
    assert {"before_error", "after_error", "last_one"} <= names
    symbols = {s.qualname: s for s in parsed.symbols}
    assert (symbols["after_error"].start_line, symbols["after_error"].end_line) == (8, 9)
    assert symbols["last_one"].docstring == "Still here."
    assert parsed.errors
    assert all(e.startswith("line ") for e in parsed.errors)
    lines = {int(e.split()[1].rstrip(":")) for e in parsed.errors}
    assert 5 in lines
    calls = {(r.source, r.target) for r in parsed.references if r.kind == "calls"}
    assert ("bad.py::after_error", "before_error") in calls


def test_valid_file_has_no_errors():
    assert parse("ok.py", SAMPLE).errors == ()


def test_empty_file_has_only_the_module_node():
    parsed = parser_for("python").parse(SourceFile("pkg/__init__.py", "python", 0, "", 0, ""))
    assert [s.kind for s in parsed.symbols] == ["module"]
    assert parsed.symbols[0].start_line == parsed.symbols[0].end_line == 1

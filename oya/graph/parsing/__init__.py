"""Language parsers: one registry, one small protocol.

A parser turns a ``SourceFile`` into a ``ParsedFile`` (symbols as ``Node`` records plus
unresolved ``Reference``s); ``oya.graph.build`` resolves the references across files.
``oya.scanning.languages`` names a file's language from its extension; languages are plain strings checked
against this registry (``_FACTORIES``: adding a language is an entry there). Python has its
own parser (``oya.graph.parsing.python``); every other language is a tags query run by
``oya.graph.parsing.tags`` (``oya.graph.parsing.languages``). A factory runs once, on first use, and its
parser is reused (grammar loading is the expensive part). A parser raises ``oya.errors.ParseError``
for a file it cannot read; the pipeline then indexes that file as text.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from oya.models import ParsedFile, SourceFile


class Parser(Protocol):
    """Extracts symbols and references from one file of its language."""

    def parse(self, file: SourceFile) -> ParsedFile: ...


def _python() -> Parser:
    from oya.graph.parsing.python import PythonParser

    return PythonParser()


def _tags(language: str) -> Callable[[], Parser]:
    def factory() -> Parser:
        from oya.graph.parsing.languages import SPECS

        return next(spec for spec in SPECS if spec.name == language).parser()

    return factory


_TAGGED = (
    "javascript",
    "typescript",
    "tsx",
    "go",
    "java",
    "kotlin",
    "csharp",
    "rust",
    "c",
    "cpp",
    "ruby",
    "php",
)
_FACTORIES: dict[str, Callable[[], Parser]] = {"python": _python} | {name: _tags(name) for name in _TAGGED}
_PARSERS: dict[str, Parser] = {}


def parser_for(language: str) -> Parser | None:
    """The shared parser for ``language``, or None when Oya has no parser for it."""
    key = language.lower()
    parser = _PARSERS.get(key)
    if parser is None:
        factory = _FACTORIES.get(key)
        if factory is None:
            return None
        parser = _PARSERS[key] = factory()
    return parser


__all__ = ["Parser", "parser_for"]

"""Language parsers: one registry, one small protocol.

A parser turns a ``SourceFile`` into a ``ParsedFile`` (symbols as ``Node`` records plus
unresolved ``Reference``s); ``oya.graph_build`` resolves the references across files.
Languages are plain strings checked against the registry, so adding one is a call to
``register`` with a factory; the factory runs once, on first use, and its parser is reused
(grammar loading is the expensive part).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from oya.models import ParsedFile, SourceFile


class Parser(Protocol):
    """Extracts symbols and references from one file of its language."""

    def parse(self, file: SourceFile) -> ParsedFile: ...


def _python() -> Parser:
    from oya.parsing.python import PythonParser

    return PythonParser()


_FACTORIES: dict[str, Callable[[], Parser]] = {"python": _python}
_PARSERS: dict[str, Parser] = {}


def register(language: str, factory: Callable[[], Parser]) -> None:
    """Make ``factory`` the parser for ``language`` (replacing any earlier one)."""
    key = language.lower()
    _FACTORIES[key] = factory
    _PARSERS.pop(key, None)


def supported_languages() -> tuple[str, ...]:
    return tuple(sorted(_FACTORIES))


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


__all__ = ["Parser", "parser_for", "register", "supported_languages"]

"""Companion files: the other halves of a change to a file that ranks high (issue 24).

A fix often edits a file and its companion: a header and its implementation (``value.h`` and
``value.c``), a declaration and its inline definitions (``field.h`` and ``field-inl.h``), a type
and its part or variant in the same folder (``jv.c`` and ``jv_parse.c``, ``MockMaker.java`` and
``InlineMockMaker.java``). On issue reports, 14 of the 25 reports without a file to fix in the
first five had one ranked sixth to tenth, a few of them the companion of a file above.

Theory of operation: two source files in one folder are companions when their stems are equal
(their extensions differ) or when one stem's words are the other's plus one word at either end
(words split at ``_``, ``-``, ``.``, digits and camel case). The ``companions`` stage
(``favour_companions``) gives each of the first ``seeds`` source files the first of its companions
ranked within the first ``depth`` files, at least two places below it, the place right after it.
A companion gains a place only with its own evidence (it is already among the first ``depth``
files); no file joins or leaves, and no other file moves up. Copies (generated, vendored,
amalgamated: the corpus's ``file_origins``) and files of another kind (tests, docs) are neither
seeds nor companions.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace

from oya.core.kinds import SOURCE_EXTS, file_kind
from oya.core.results import FileHit
from oya.core.stages import Candidates, Query

_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


def _parts(path: str) -> tuple[str, str, str]:
    """``(folder, stem, extension)`` of a repository-relative path."""
    folder, _, name = path.rpartition("/")
    stem, dot, ext = name.rpartition(".")
    return (folder, stem, ext.lower()) if dot and stem else (folder, name, "")


def _words(stem: str) -> tuple[str, ...]:
    return tuple(w.lower() for w in _WORDS.findall(stem))


def are_companions(a: str, b: str) -> bool:
    """Whether source files ``a`` and ``b`` are companions: one folder, and equal stems with
    different extensions, or one stem's words the other's plus one word before or after."""
    fa, sa, ea = _parts(a)
    fb, sb, eb = _parts(b)
    if fa != fb or a == b or ea not in SOURCE_EXTS or eb not in SOURCE_EXTS:
        return False
    if sa == sb:
        return ea != eb
    short, long = sorted((_words(sa), _words(sb)), key=len)
    if not short or len(long) != len(short) + 1:
        return False
    return long[:-1] == short or long[1:] == short


def promote_companions(
    files: Sequence[FileHit], *, seeds: int, depth: int, origins: Mapping[str, str]
) -> list[FileHit]:
    """``files`` with each of the first ``seeds`` source files followed by the first of its
    companions among the source files ranked within the first ``depth``, at least two places
    below it there (one place below, it is already next to it)."""
    top = [f.path for f in files[:depth] if file_kind(f.path) == "source" and f.path not in origins]
    after: dict[str, str] = {}
    for i, seed in enumerate(top[:seeds]):
        moved = set(after.values())
        mate = next((p for p in top[i + 2 :] if p not in moved and are_companions(seed, p)), None)
        if mate is not None:
            after[seed] = mate
    if not after:
        return list(files)
    by_path = {f.path: f for f in files}
    moved = set(after.values())
    out: list[FileHit] = []
    for f in files:
        path: str | None = f.path
        if path in moved:
            continue
        while path is not None:  # a mate that is a seed itself brings its own mate along
            out.append(by_path[path])
            path = after.get(path)
    return out


def favour_companions(q: Query, c: Candidates, *, seeds: int, depth: int) -> Candidates:
    """The ranked files with companions of the first ``seeds`` source files moved right after
    them (``promote_companions``); unchanged when ``seeds`` is 0."""
    if seeds <= 0 or depth <= 0:
        return c
    files = promote_companions(c.files, seeds=seeds, depth=depth, origins=q.corpus.file_origins())
    return replace(c, files=tuple(files))

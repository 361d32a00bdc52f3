"""Files named after a type the report spells (issue 24): the ``named`` stage reading class names too.

Java and Kotlin keep a public type in the file of its name (``TreeTypeAdapter`` in
``TreeTypeAdapter.java``), and C#, Swift, TypeScript and many C++ projects follow the same habit. A
report names the types it is about in prose and code (```MockUtil.getMockMaker()```,
``org.mockito.internal.util.MockUtil``) without the file's extension, so the shipped ``named``
stage (``oya.core.scope.named_files``: a name with a source extension) does not see them. Measured
first on the 81 issue reports: the reports of JVM projects spell 16 of their 36 gold files' type
names (13 already in the first five, 3 at ranks 6, 8 and not ranked); no other family's do.

``type_names`` reads the compound identifiers of the question (a lower-to-upper case change
inside: ``MockUtil``, ``getMockMaker``; never a capitalised word like ``Note`` nor an acronym
like ``JSON``: prose carries those), ``names_type`` tells the source files whose stem (the file
name before its first dot) is one, case as spelled. ``with_type_names`` is the ``named`` stage
fusing those files too (row ``oya-typenames``); ``join=True`` also lets a named file that no
channel ranked join at the end of the named list (row ``oya-typenames-join``).
"""

from __future__ import annotations

import re
from dataclasses import replace
from functools import partial

from bench.variants import replaced
from oya.core.file_lexical import fuse_files
from oya.core.kinds import SOURCE_EXTS
from oya.core.pipeline import Pipeline
from oya.core.scope import named_files, names_file
from oya.core.stages import Candidates, Query

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_COMPOUND = re.compile(r"[a-z0-9][A-Z]")  # a hump: camelCase or PascalCase, not JSON nor Note
MAX_IDENT_CHARS = 80  # a longer run is data, not a type name


def type_names(question: str) -> frozenset[str]:
    """The compound identifiers (``TreeTypeAdapter``, ``getMockMaker``) the question spells."""
    out = {w for w in _IDENT.findall(question) if len(w) <= MAX_IDENT_CHARS and _COMPOUND.search(w)}
    return frozenset(out)


def names_type(path: str, names: frozenset[str]) -> bool:
    """Whether ``path`` is a source file whose stem (before the first dot) is one of ``names``."""
    base = path.rsplit("/", 1)[-1]
    stem, _dot, ext = base.partition(".")
    return bool(stem) and stem in names and ext.rsplit(".", 1)[-1].lower() in SOURCE_EXTS


def _favour_types(q: Query, c: Candidates, *, rrf_k: int, weight: float, join: bool) -> Candidates:
    names = named_files(q.question)
    types = type_names(q.question)
    ranked = [f.path for f in c.files if names_file(f.path, names) or names_type(f.path, types)]
    if join and types:
        have = {f.path for f in c.files}
        extra = sorted({p for p in q.corpus.chunk_paths().values() if p not in have and names_type(p, types)})
        ranked += extra
    if not ranked or weight <= 0:
        return c
    return replace(c, files=tuple(fuse_files(c.files, ranked, rrf_k=rrf_k, weight=weight)))


def with_type_names(pipeline: Pipeline, *, join: bool = False) -> Pipeline:
    """``pipeline`` whose ``named`` stage also moves up the files named after a type the
    question spells (``join``: and adds those no channel ranked)."""
    o = pipeline.options
    stage = partial(_favour_types, rrf_k=o.rrf_k, weight=o.named_weight, join=join)
    return replaced(pipeline, "named", stage)

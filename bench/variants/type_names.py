"""The ranking before a file named after a type the report spells moved up (issue 24), kept runnable.

Since 2026-11-28 the shipped ``named`` stage (``oya.core.stages.favour_named``) moves up the files
whose stem is a compound identifier the question spells (``oya.core.scope.type_names``:
``TreeTypeAdapter`` for ``TreeTypeAdapter.java``) besides the file names it spells with an
extension (docs/DECISIONS.md, "A file named after a type the report spells moves up").
``without_type_names`` is the stage before, file names only (row ``oya-notypenames`` of
``bench/commits_rank.py``); ``with_type_names_joined`` also lets a type's file that no channel
ranked join at the end of the named list (row ``oya-typenames-join``: on the issue reports it
changed nothing, the type's files were all among the candidates already).
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial

from bench.variants import replaced
from oya.core.file_lexical import fuse_files
from oya.core.pipeline import Pipeline
from oya.core.scope import named_files, names_file, names_type, type_names
from oya.core.stages import Candidates, Query


def _favour(q: Query, c: Candidates, *, rrf_k: int, weight: float, types: bool, join: bool) -> Candidates:
    names = named_files(q.question)
    spelled = type_names(q.question) if types else frozenset()
    ranked = [f.path for f in c.files if names_file(f.path, names) or names_type(f.path, spelled)]
    if join and spelled:
        have = {f.path for f in c.files}
        ranked += sorted(
            {p for p in q.corpus.chunk_paths().values() if p not in have and names_type(p, spelled)}
        )
    if not ranked or weight <= 0:
        return c
    return replace(c, files=tuple(fuse_files(c.files, ranked, rrf_k=rrf_k, weight=weight)))


def _named(pipeline: Pipeline, *, types: bool, join: bool) -> Pipeline:
    o = pipeline.options
    stage = partial(_favour, rrf_k=o.rrf_k, weight=o.named_weight, types=types, join=join)
    return replaced(pipeline, "named", stage)


def without_type_names(pipeline: Pipeline) -> Pipeline:
    """``pipeline`` whose ``named`` stage moves up only the files whose name the question spells."""
    return _named(pipeline, types=False, join=False)


def with_type_names_joined(pipeline: Pipeline) -> Pipeline:
    """``pipeline`` whose ``named`` stage also adds the type's files no channel ranked."""
    return _named(pipeline, types=True, join=True)

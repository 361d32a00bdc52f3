"""Files' scores normalised by their length in chunks (issue 24, hub files): it lost.

Theory of operation: a hub file (``json.hpp``, ``format.h``: thousands of chunks) has many chunks
that each match a little, so its decayed sum of chunk scores can outrank the small file a fix
edits. ``with_length_norm`` inserts a ``length`` stage right after ``files`` that divides each
file's score by ``(1 + ln chunks)^beta`` (the file's chunks in the corpus) and ranks them again.
Measured from the kept indexes (docs/DECISIONS.md, "A file's companion moves up beside it"): on
the issue reports beta 0.15 / 0.3 / 0.6 gave file R@5 81.0 / 80.3 / 81.0 against 82.8 (the
shipped ranking), R@1 43.8 / 42.6 / 42.0 against 43.8 — the hub files the fixes edit lose as much
as the hubs that crowded them out.
"""

from __future__ import annotations

import math
from dataclasses import replace
from functools import partial

from bench.variants import inserted
from oya.core.pipeline import Pipeline
from oya.core.stages import Candidates, Query


def normalise_by_length(q: Query, c: Candidates, *, beta: float) -> Candidates:
    """``c``'s files ranked by score / (1 + ln chunks)^beta."""
    counts: dict[str, int] = {}
    for path in q.corpus.chunk_paths().values():
        counts[path] = counts.get(path, 0) + 1
    files = [replace(f, score=f.score / (1 + math.log(counts.get(f.path, 1))) ** beta) for f in c.files]
    files.sort(key=lambda f: (-f.score, f.path))
    return replace(c, files=tuple(files))


def with_length_norm(pipeline: Pipeline, beta: float) -> Pipeline:
    """``pipeline`` with a ``length`` stage after ``files`` (``normalise_by_length``)."""
    return inserted(pipeline, "files", "length", partial(normalise_by_length, beta=beta))

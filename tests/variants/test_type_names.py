"""The type-name variants (``bench.variants.type_names``): the ``named`` stage before type names were
read (file names only), and the one that also lets a type's unranked file join."""

from __future__ import annotations

from collections.abc import Mapping

from bench.variants.type_names import with_type_names_joined, without_type_names
from oya.core.graph import CodeGraph
from oya.core.options import RetrievalOptions
from oya.core.pipeline import default_pipeline
from oya.core.query import plan_query
from oya.core.results import FileHit
from oya.core.stages import Candidates, Query

REPORT = "Crash in `MockUtil.getMockMaker()`, see Gson$FutureTypeAdapter and Note.java"


class Paths:
    """A corpus that only knows its chunks' paths (all the stage reads of it)."""

    def __init__(self, paths: Mapping[str, str]) -> None:
        self._paths = paths

    def chunk_paths(self) -> Mapping[str, str]:
        return self._paths


def test_before_type_names_only_the_spelled_file_name_moves_and_join_adds_an_unranked_type() -> None:
    ranked = ("a/JSON.java", "a/Gson.java", "a/MockUtil.java", "a/Note.java")
    files = tuple(FileHit(p, 1.0 - i / 10, ()) for i, p in enumerate(ranked))
    c = Candidates(weights={}, fetch_depth=10, files=files)
    corpus = Paths({"c1": "a/JSON.java", "c2": "b/FutureTypeAdapter.kt"})
    q = Query(REPORT, plan_query(REPORT), (), CodeGraph([], []), corpus, None, None, lambda: 0.0)  # type: ignore[arg-type]
    pipeline = default_pipeline(RetrievalOptions())
    shipped = dict(pipeline.stages)["named"](q, c)
    before = dict(without_type_names(pipeline).stages)["named"](q, c)
    joined = dict(with_type_names_joined(pipeline).stages)["named"](q, c)
    assert [f.path for f in shipped.files][:2] == ["a/MockUtil.java", "a/Note.java"]
    assert [f.path for f in before.files][0] == "a/Note.java"  # Note.java is spelled; MockUtil stays
    assert [f.path for f in before.files].index("a/MockUtil.java") == 3
    assert {f.path for f in shipped.files} == set(ranked)
    assert {f.path for f in joined.files} == {*ranked, "b/FutureTypeAdapter.kt"}

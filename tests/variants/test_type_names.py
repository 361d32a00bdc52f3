"""The type-name variant (``bench.variants.type_names``) moves up the files named after a compound
identifier the report spells, and only those: not a capitalised word, an acronym or a non-source file."""

from __future__ import annotations

from collections.abc import Mapping

from bench.variants.type_names import names_type, type_names, with_type_names
from oya.core.graph import CodeGraph
from oya.core.options import RetrievalOptions
from oya.core.pipeline import default_pipeline
from oya.core.query import plan_query
from oya.core.results import FileHit
from oya.core.stages import Candidates, Query

REPORT = "Note: `org.mockito.internal.util.MockUtil.getMockMaker(String)` in JSON, see Gson$FutureTypeAdapter"


class Paths:
    """A corpus that only knows its chunks' paths (all the stage reads of it)."""

    def __init__(self, paths: Mapping[str, str]) -> None:
        self._paths = paths

    def chunk_paths(self) -> Mapping[str, str]:
        return self._paths


def test_type_names_are_the_compound_identifiers() -> None:
    assert type_names(REPORT) == {"MockUtil", "getMockMaker", "FutureTypeAdapter"}


def test_a_source_file_of_that_stem_is_named() -> None:
    names = type_names(REPORT)
    assert names_type("src/main/java/org/mockito/internal/util/MockUtil.java", names)
    assert names_type("lib/getMockMaker.test.ts", names)
    assert not names_type("docs/MockUtil.md", names)  # not source
    assert not names_type("src/mockutil.java", names)  # case as spelled
    assert not names_type("src/Note.java", names) and not names_type("src/JSON.java", names)


def query(text: str, paths: Mapping[str, str]) -> Query:
    return Query(text, plan_query(text), (), CodeGraph([], []), Paths(paths), None, None, lambda: 0.0)  # type: ignore[arg-type]


def test_the_named_stage_moves_the_type_s_file_up_and_join_adds_one_unranked() -> None:
    ranked = ("a/Note.java", "a/JSON.java", "a/Gson.java", "a/MockUtil.java")
    c = Candidates(
        weights={}, fetch_depth=10, files=tuple(FileHit(p, 1.0 - i / 10, ()) for i, p in enumerate(ranked))
    )
    q = query(REPORT, {"c1": "a/Note.java", "c2": "b/FutureTypeAdapter.kt"})
    pipeline = default_pipeline(RetrievalOptions())
    assert dict(pipeline.stages)["named"](q, c) is c  # shipped: no file name with an extension
    moved = dict(with_type_names(pipeline).stages)["named"](q, c)
    assert [f.path for f in moved.files] == ["a/MockUtil.java", "a/Note.java", "a/JSON.java", "a/Gson.java"]
    joined = dict(with_type_names(pipeline, join=True).stages)["named"](q, c)
    assert {f.path for f in joined.files} == {*ranked, "b/FutureTypeAdapter.kt"}
    assert [f.path for f in joined.files][0] == "a/MockUtil.java"

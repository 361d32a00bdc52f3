"""Companion files: a high file's header, inline definitions or part move up beside it."""

from __future__ import annotations

import time

import pytest
from core_corpus import build_inventory

from oya.core.companions import are_companions, favour_companions, promote_companions
from oya.core.query import plan_query
from oya.core.results import FileHit
from oya.core.stages import Candidates, Query


def ranked(*paths: str) -> list[FileHit]:
    return [FileHit(p, 1.0 / i, ()) for i, p in enumerate(paths, 1)]


def order(files: list[FileHit]) -> list[str]:
    return [f.path for f in files]


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("src/value.h", "src/value.c"),  # header and implementation
        ("include/x/field.h", "include/x/field-inl.h"),  # inline definitions
        ("src/jv.c", "src/jv_parse.c"),  # a part of a module
        ("lib/MockMaker.java", "lib/InlineMockMaker.java"),  # a word before
        ("lib/Plugins.java", "lib/PluginsImpl.java"),  # a word after (camel case)
    ],
)
def test_companions_share_a_folder_and_all_but_one_word(a: str, b: str) -> None:
    assert are_companions(a, b) and are_companions(b, a)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("src/value.h", "include/value.h"),  # another folder
        ("src/jv.c", "src/jv_parse_aux.c"),  # two words more
        ("src/jv_print.c", "src/jv_parse.c"),  # siblings, not companions
        ("src/value.h", "src/value.h"),  # the same file
        ("src/value.h", "src/value.md"),  # not source
        ("src/parse.c", "src/my_parse_x.c"),  # the stem inside, not at either end
    ],
)
def test_other_files_are_not_companions(a: str, b: str) -> None:
    assert not are_companions(a, b)


def test_a_companion_below_moves_right_after_its_file_and_nothing_else_moves() -> None:
    files = ranked("a/util.c", "a/builtin.c", "a/jv_parse.c", "a/main.c", "a/dtoa.c", "a/print.c", "a/jv.c")
    out = promote_companions(files, seeds=3, depth=10, origins={})
    assert order(out) == [
        "a/util.c",
        "a/builtin.c",
        "a/jv_parse.c",
        "a/jv.c",
        "a/main.c",
        "a/dtoa.c",
        "a/print.c",
    ]
    assert sorted(order(out)) == sorted(order(files))


def test_a_companion_needs_its_own_place_within_the_depth() -> None:
    files = ranked("a/field.h", "a/value.h", "a/object.h", "a/field-inl.h")
    assert order(promote_companions(files, seeds=1, depth=3, origins={})) == order(files)
    assert order(promote_companions(files, seeds=1, depth=4, origins={}))[:2] == [
        "a/field.h",
        "a/field-inl.h",
    ]


def test_only_the_first_seeds_bring_a_companion() -> None:
    files = ranked("a/x.c", "a/y.c", "a/z.c", "a/w.c", "a/z.h")
    assert order(promote_companions(files, seeds=2, depth=10, origins={})) == order(files)
    assert order(promote_companions(files, seeds=3, depth=10, origins={}))[2:4] == ["a/z.c", "a/z.h"]


def test_copies_tests_and_docs_neither_seed_nor_follow() -> None:
    files = ranked("a/x.c", "a/b.c", "a/c.c", "a/x.h", "tests/x_test.c")
    copy = {"a/x.h": "generated"}
    assert order(promote_companions(files, seeds=3, depth=10, origins=copy)) == order(files)
    tests_first = ranked("tests/x.c", "a/b.c", "a/c.c", "tests/x.h")
    assert order(promote_companions(tests_first, seeds=3, depth=10, origins={})) == order(tests_first)


def test_a_companion_that_is_a_seed_brings_its_own_companion() -> None:
    files = ranked("a/jv.c", "a/q.c", "a/jv_parse.c", "a/r.c", "a/s.c", "a/jv_parse.h")
    out = order(promote_companions(files, seeds=3, depth=10, origins={}))
    assert out[:3] == ["a/jv.c", "a/jv_parse.c", "a/jv_parse.h"]
    assert sorted(out) == sorted(order(files))


def test_the_stage_moves_companions_in_the_ranked_files_and_seeds_zero_is_off() -> None:
    inv = build_inventory()
    q = Query("where is stock kept", plan_query("where is stock kept"), tuple(inv.channels), inv.graph,
              inv.corpus, None, None, time.perf_counter)  # fmt: skip
    files = ranked(
        "inventory/storage.py", "inventory/utils.py", "inventory/service.py", "inventory/storage_sql.py"
    )
    c = Candidates(weights={}, fetch_depth=10, files=tuple(files))
    moved = favour_companions(q, c, seeds=3, depth=10)
    assert order(list(moved.files))[:2] == ["inventory/storage.py", "inventory/storage_sql.py"]
    assert favour_companions(q, c, seeds=0, depth=10).files == c.files

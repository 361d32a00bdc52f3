"""A subject's scope prefix (``oya.core.scope``) and the ``scope`` stage that moves its files up; the
file names and type names a question spells and the ``named`` stage that does the same for them."""

from __future__ import annotations

import time
from dataclasses import replace

import pytest
from core_corpus import Inventory, build_inventory, embed

from oya.core.options import RetrievalOptions
from oya.core.pipeline import default_pipeline, retrieve
from oya.core.query import plan_query
from oya.core.results import FileHit
from oya.core.scope import named_files, names_file, names_scope, names_type, scope_words, type_names
from oya.core.stages import Candidates, Query, favour_named, favour_scope


@pytest.mark.parametrize(
    ("question", "words"),
    [
        ("printer: fix \\r\\n line terminator handling", {"printer"}),
        ("fix(parser): Honor positional value_terminator", {"parser"}),
        ("feat(parser)!: drop the old syntax", {"parser"}),
        ("[hmr] full reload on every change", {"hmr"}),
        ("ignore/types: fix futhark type extension", {"ignore", "types"}),
        ("fix(res.send): buffer handling", {"res", "send"}),
        ("  storage: items lost\nsecond line: not read", {"storage"}),
        # commit types and issue labels name no component
        ("fix: Give Arg::help_heading priority", set()),
        ("docs: a typo", set()),
        ("BUG: read_csv drops a row", set()),
        ("[Bug] crash on start", set()),
        ("Question: how do I restock?", set()),
        # no prefix at all
        ("Traceback (most recent call last):", set()),
        ("How is stock removed when an order ships?", set()),
        ("Where is Y decided: here or there?", set()),
        ("body only\nprinter: not the subject", set()),
        ("", set()),
    ],
)
def test_scope_words_read_the_first_lines_prefix(question: str, words: set[str]) -> None:
    assert scope_words(question) == words


def test_a_path_names_the_scope_by_a_folder_a_stem_or_a_piece_of_one() -> None:
    derive = frozenset({"derive"})
    assert names_scope("clap_derive/src/derives/args.rs", derive)  # a piece of a folder
    assert names_scope("src/derive.rs", derive)  # the stem
    assert not names_scope("src/derives/args.rs", derive)  # a longer word is another word
    assert names_scope("clap_builder/src/output/help_template.rs", frozenset({"help"}))
    assert names_scope("crates/printer/src/standard.rs", frozenset({"printer"}))
    assert names_scope("src/unix/linux-core.c", frozenset({"linux"}))
    assert not names_scope("src/unix/fs.c", frozenset({"linux"}))
    assert not names_scope("src/lib.rs", frozenset({"rs"}))  # the extension is not the stem
    assert not names_scope("anything/at/all.py", frozenset())


def _query(question: str) -> Query:
    inv = build_inventory()
    return Query(question, plan_query(question), (), inv.graph, inv.corpus, None, None, time.perf_counter)


def _files(*paths: str) -> tuple[FileHit, ...]:
    return tuple(FileHit(p, 1.0 / (i + 1), ()) for i, p in enumerate(paths))


def test_the_stage_fuses_the_scopes_files_as_one_more_list() -> None:
    files = _files("crates/core/app.rs", "crates/matcher/src/lib.rs", "crates/printer/src/standard.rs")
    c = replace(Candidates(weights={}, fetch_depth=10), files=files)
    out = favour_scope(_query("printer: fix CRLF handling"), c, rrf_k=10, weight=0.5)
    assert [f.path for f in out.files] == [
        "crates/printer/src/standard.rs", "crates/core/app.rs", "crates/matcher/src/lib.rs",
    ]  # fmt: skip
    assert out.files[0].score == pytest.approx(1 / 13 + 0.5 / 11)
    assert {f.path for f in out.files} == {f.path for f in files}  # no file joins or leaves
    for question, weight in (("fix: CRLF handling", 0.5), ("printer: fix CRLF", 0.0), ("lexer: x", 0.5)):
        assert favour_scope(_query(question), c, rrf_k=10, weight=weight).files == files


@pytest.fixture(scope="module")
def inventory() -> Inventory:
    return build_inventory()


@pytest.mark.parametrize(
    ("question", "scoped"),
    [
        ("legacy: reserving stock fails for a missing item", "inventory/legacy.py"),
        ("fix(storage): reserve stock OutOfStockError", "inventory/storage.py"),
        ("[utils] reserve stock parse quantity", "inventory/utils.py"),
    ],
)
def test_the_shipped_pipeline_puts_the_scopes_file_first(
    inventory: Inventory, question: str, scoped: str
) -> None:
    def files(weight: float) -> list[str]:
        result = retrieve(
            question,
            channels=inventory.channels,
            graph=inventory.graph,
            corpus=inventory.corpus,
            vector=embed(question),
            options=RetrievalOptions(scope_weight=weight),
        )
        return [f.path for f in result.files]

    without, shipped = files(0.0), files(RetrievalOptions().scope_weight)
    assert without[0] != scoped and shipped[0] == scoped  # the service module held the words
    assert sorted(without) == sorted(shipped)
    assert [n for n, _ in default_pipeline(RetrievalOptions()).stages].index("scope") == 6
    with pytest.raises(ValueError, match="scope_weight"):
        RetrievalOptions(scope_weight=-1.0)


def test_named_files_are_the_source_file_names_a_report_spells() -> None:
    report = (
        "Crash in reader\n"
        "at com.x.reader.ObjectReaderImplList.readObject(ObjectReaderImplList.java:123)\n"
        "thread 'main' panicked at src/main.rs:4:5\n"
        "see https://github.com/o/r/blob/0a1b2c/lib/utils.js#L12 and `include/fmt/ranges.h`.\n"
        "Works on 1.2.3, fails with node.js 18 (e.g. on Ubuntu 22.04); config.yml is fine; ..js"
    )
    assert named_files(report) == {"ObjectReaderImplList.java", "main.rs", "utils.js", "ranges.h", "node.js"}
    assert named_files("x" * 300 + ".py") == frozenset()  # a run that long is data
    assert names_file(
        "core/src/main/java/com/x/reader/ObjectReaderImplList.java", frozenset({"ObjectReaderImplList.java"})
    )
    assert not names_file("src/json.java", frozenset({"JSON.java"}))  # as spelled
    assert not names_file("src/main.rs.orig", frozenset({"main.rs"}))


def test_the_named_stage_fuses_the_named_files_as_one_more_list() -> None:
    files = _files("include/fmt/format.h", "include/fmt/core.h", "include/fmt/ranges.h")
    c = replace(Candidates(weights={}, fetch_depth=10), files=files)
    q = _query("fmt::join fails for a tuple\nThe overload in ranges.h is not picked (see prepare.h)")
    out = favour_named(q, c, rrf_k=10, weight=0.5)
    assert [f.path for f in out.files] == [
        "include/fmt/ranges.h",
        "include/fmt/format.h",
        "include/fmt/core.h",
    ]
    assert out.files[0].score == pytest.approx(1 / 13 + 0.5 / 11)
    assert {f.path for f in out.files} == {f.path for f in files}  # prepare.h no candidate: no join
    assert favour_named(q, c, rrf_k=10, weight=0.0).files == files
    assert favour_named(_query("fmt::join fails for a tuple"), c, rrf_k=10, weight=0.5).files == files
    with pytest.raises(ValueError, match="named_weight"):
        RetrievalOptions(named_weight=-1.0)


TYPE_REPORT = (
    "Note: `org.mockito.internal.util.MockUtil.getMockMaker(String)` in JSON, see Gson$FutureTypeAdapter"
)


def test_type_names_are_the_compound_identifiers_a_report_spells() -> None:
    # not a capitalised word (Note, String, Gson) nor an acronym (JSON): prose carries those
    assert type_names(TYPE_REPORT) == {"MockUtil", "getMockMaker", "FutureTypeAdapter"}
    assert type_names("a" * 40 + "B" * 41) == frozenset()  # that long is data
    names = type_names(TYPE_REPORT)
    assert names_type("src/main/java/org/mockito/internal/util/MockUtil.java", names)
    assert names_type("lib/getMockMaker.test.ts", names)  # the stem is the name before the first dot
    assert not names_type("docs/MockUtil.md", names)  # not source
    assert not names_type("src/mockutil.java", names)  # as spelled
    assert not names_type("src/Note.java", names) and not names_type("src/JSON.java", names)


def test_the_named_stage_moves_up_the_files_of_the_types_a_report_spells() -> None:
    files = _files("a/Note.java", "a/JSON.java", "a/Gson.java", "a/MockUtil.java", "b/TreeTypeAdapter.kt")
    c = replace(Candidates(weights={}, fetch_depth=10), files=files)
    out = favour_named(_query(TYPE_REPORT + " and TreeTypeAdapter"), c, rrf_k=10, weight=0.5)
    assert [f.path for f in out.files][:2] == ["a/MockUtil.java", "b/TreeTypeAdapter.kt"]
    assert {f.path for f in out.files} == {f.path for f in files}  # no join, none leaves
    assert favour_named(_query("Note: JSON in Gson"), c, rrf_k=10, weight=0.5).files == files

"""retrieve() end to end on a small in-memory repository (see core_corpus.py)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from core_corpus import Inventory, bm25_index, build_inventory, embed, make_chunk
from hypothesis import given, settings
from hypothesis import strategies as st

from oya.core.answer_diagram import EMPTY_PLAN
from oya.core.channels import (
    GRAPH_PREFIX_MATCH,
    BM25Channel,
    ChannelUnavailable,
    GraphChannel,
    MemoryCorpus,
    UnavailableChannel,
)
from oya.core.context import build_context, cut_snippet
from oya.core.files import DECAY_CHUNKS, rank_files
from oya.core.filters import path_filter
from oya.core.graph import CodeGraph
from oya.core.options import RetrievalOptions
from oya.core.pipeline import retrieve
from oya.core.query import QueryPlan
from oya.core.results import Hit, RetrievalResult, page_url
from oya.core.tokenize import count_tokens, tokenize


@pytest.fixture(scope="module")
def inventory() -> Inventory:
    return build_inventory()


QUESTIONS = [
    "where is parse_quantity defined",
    "how does reserving stock work",
    "OutOfStockError when reserving an item",
    "format money",
    "what is the overall architecture",
    "storage save item",
]


def run(
    inv: Inventory, question: str, use: Sequence[object] | None = None, **opts: object
) -> RetrievalResult:
    return retrieve(
        question,
        channels=list(use) if use is not None else inv.channels,  # type: ignore[arg-type]
        graph=inv.graph,
        corpus=inv.corpus,
        vector=embed(question),
        options=RetrievalOptions(**opts),  # type: ignore[arg-type]
    )


class Exploding:
    name = "semantic"

    def search(self, plan: QueryPlan, vector: Sequence[float] | None, k: int) -> list[tuple[str, float]]:
        raise RuntimeError("disk on fire")


def test_lookup_finds_the_definition(inventory: Inventory) -> None:
    result = run(inventory, "where is parse_quantity defined")
    top = result.hits[0].chunk
    assert "def parse_quantity" in top.text or top.title == "test_parse_quantity"
    titles = [h.chunk.title for h in result.hits[:3]]
    assert "parse_quantity" in titles
    assert result.quality.intent == "lookup"
    assert [c.status for c in result.quality.channels] == ["ran", "ran", "ran"]
    assert result.confidence.level in ("HIGH", "MEDIUM")
    assert result.to_dict()["question"] == "where is parse_quantity defined"


def test_channel_failure_is_reported_not_fatal(inventory: Inventory) -> None:
    result = run(inventory, "format money", [inventory.bm25, Exploding(), inventory.graph_channel])
    reports = {c.name: c for c in result.quality.channels}
    assert reports["semantic"].status == "failed"
    assert reports["semantic"].detail == "RuntimeError: disk on fire"
    assert reports["lexical"].status == "ran"
    assert result.hits and result.hits[0].chunk.title == "format_money"
    assert "semantic channel failed" in result.confidence.reasons
    assert result.quality.degraded == (reports["semantic"],)
    assert "semantic ✗ failed" in result.quality.summary()


def test_unavailable_and_missing_channels_are_reported(inventory: Inventory) -> None:
    no_vector = retrieve(
        "format money",
        channels=inventory.channels,
        graph=inventory.graph,
        corpus=inventory.corpus,
        vector=None,
    )
    rep = {c.name: c for c in no_vector.quality.channels}
    assert rep["semantic"].status == "unavailable"
    data = no_vector.to_dict()
    assert data["degraded"] is True
    assert data["degraded_reason"] == "semantic unavailable: no embedding for the question"
    assert data["search_quality"]["fetch_depth"] == 100
    assert data["search_quality"]["hops"] == max(no_vector.subgraph.distance.values(), default=0)
    full = run(inventory, "how does reserving stock work").to_dict()
    assert full["degraded"] is False and full["degraded_reason"] == ""
    assert full["search_quality"]["hops"] >= 1  # the expansion reached past the seeds
    filtered = run(inventory, "format money", include=("inventory",), k=50).to_dict()
    assert filtered["search_quality"]["fetch_depth"] == 150 * 5  # deeper: the filter drops some
    assert rep["semantic"].detail == "no embedding for the question"
    empty_index = UnavailableChannel("semantic", "no vectors were built")
    with pytest.raises(ChannelUnavailable, match="no vectors were built"):
        empty_index.search(QueryPlan("x", "general", {}, ()), [1.0], 3)
    only_lexical = run(inventory, "format money", [inventory.bm25])
    rep = {c.name: c for c in only_lexical.quality.channels}
    assert rep["semantic"].status == rep["graph"].status == "unavailable"
    assert rep["graph"].detail == "not provided by this index"
    empty_graph = GraphChannel(CodeGraph([], []), inventory.corpus, prefix_match=GRAPH_PREFIX_MATCH)
    res = run(inventory, "format money", [inventory.bm25, empty_graph])
    assert {c.name: c.status for c in res.quality.channels}["graph"] == "unavailable"


def test_all_channels_failing_gives_an_empty_low_result(inventory: Inventory) -> None:
    result = run(inventory, "format money", [Exploding()])
    assert result.hits == () and result.citations == () and result.context.snippets == ()
    assert result.confidence.level == "LOW"


def test_switched_off_channels(inventory: Inventory) -> None:
    result = run(inventory, "format money", channels=("lexical",))
    rep = {c.name: c.status for c in result.quality.channels}
    assert rep == {"lexical": "ran", "semantic": "off", "graph": "off"}
    assert all(h.channels == ("lexical",) for h in result.hits)


def test_bad_options() -> None:
    with pytest.raises(ValueError, match="lexical, semantic, graph"):
        RetrievalOptions(channels=("bm25",))
    with pytest.raises(ValueError, match="k must be"):
        RetrievalOptions(k=0)


@pytest.mark.parametrize("question", ["", "   ", "\n\t"])
def test_empty_question_raises(inventory: Inventory, question: str) -> None:
    with pytest.raises(ValueError, match="empty"):
        run(inventory, question)


def test_include_and_exclude_globs(inventory: Inventory) -> None:
    q = "parse_quantity quantity"
    only_tests = run(inventory, q, include=("tests",))
    assert only_tests.hits and {h.chunk.path for h in only_tests.hits} == {"tests/test_utils.py"}
    no_tests = run(inventory, q, exclude=("tests/*",))
    assert "tests/test_utils.py" not in {h.chunk.path for h in no_tests.hits}
    md = run(inventory, q, include=("*.md",))
    assert {h.chunk.path for h in md.hits} == {"docs/guide.md"}
    hidden = run(inventory, "ci pytest ubuntu jobs", include=(".github",))
    assert {h.chunk.path for h in hidden.hits} == {".github/workflows/ci.yml"}
    not_hidden = run(inventory, "ci pytest ubuntu jobs", exclude=(".github/",))
    assert ".github/workflows/ci.yml" not in {h.chunk.path for h in not_hidden.hits}


def test_excluded_paths_stay_out_of_the_context(inventory: Inventory) -> None:
    # test_parse_quantity is one hop from parse_quantity: expansion must not bring it back
    result = run(inventory, "where is parse_quantity defined", exclude=("tests",))
    assert all(not c.path.startswith("tests/") for c in result.citations)


def test_path_filter() -> None:
    assert path_filter((), ()) is None
    allowed = path_filter(("src", "*.md"), ("src/vendor/",))
    assert allowed is not None
    assert allowed("src/a.py") and allowed("src/deep/b.py") and allowed("README.md")
    assert not allowed("src/vendor/x.py") and not allowed("lib/a.py") and not allowed("srcx/a.py")
    single = path_filter(("./pkg/mod.py",), ())
    assert single is not None and single("pkg/mod.py") and not single("pkg/other.py")
    dotted = path_filter((".github",), ())
    assert dotted is not None and dotted(".github/workflows/ci.yml") and not dotted("github/x.yml")


def test_dedup_by_content_hash(inventory: Inventory) -> None:
    result = run(inventory, "parse_quantity negative quantity", k=10)
    hashes = [h.chunk.content_hash for h in result.hits]
    assert len(hashes) == len(set(hashes))
    copies = [h for h in result.hits if h.chunk.title == "parse_quantity"]
    assert len(copies) == 1
    snippet_hashes = [s.text for s in result.context.snippets]
    assert len(snippet_hashes) == len(set(snippet_hashes))


def test_max_per_file(inventory: Inventory) -> None:
    q = "InventoryService reserve restock stock item storage get_item save"
    for cap in (1, 2):
        result = run(inventory, q, max_per_file=cap, k=10)
        per_file: dict[str, int] = {}
        for h in result.hits:
            per_file[h.chunk.path] = per_file.get(h.chunk.path, 0) + 1
        assert max(per_file.values()) <= cap
    assert len(run(inventory, q, k=3).hits) <= 3


def test_file_ranking_decays_over_a_files_chunks() -> None:
    chunks = [make_chunk("a.py", "x", i * 10 + 1, f"text {i}") for i in range(4)] + [
        make_chunk("b.py", "y", 1, "other")
    ]
    hits = [
        Hit(chunks[0], 0.4, ()),
        Hit(chunks[1], 0.2, ()),
        Hit(chunks[2], 0.2, ()),
        Hit(chunks[3], 0.9, ()),
        Hit(chunks[4], 1.0, ()),
    ]
    files = rank_files(hits, mode="decay", graph=None, min_confidence=0.5, top_n=DECAY_CHUNKS)
    assert [f.path for f in files] == ["a.py", "b.py"]
    assert files[0].score == pytest.approx(0.9 + 0.4 / 2 + 0.2 / 4)
    assert files[0].chunks[0] == chunks[3].id and files[0].best_line == 31
    assert files[1].score == pytest.approx(1.0)
    assert rank_files([], mode="decay", graph=None, min_confidence=0.5, top_n=DECAY_CHUNKS) == []


def test_citations_only_for_context_snippets(inventory: Inventory) -> None:
    for q in QUESTIONS:
        result = run(inventory, q, context_budget=500)
        assert result.citations == tuple(s.citation for s in result.context.snippets)
        for c in result.citations:
            assert c.url == page_url(c.path, c.start_line)
            chunk = inventory.corpus.chunks[c.chunk_id]
            assert chunk.start_line == c.start_line <= c.end_line <= chunk.end_line
        for s in result.context.snippets:
            chunk = inventory.corpus.chunks[s.citation.chunk_id]
            assert chunk.text.startswith(s.text)
            assert s.text.count("\n") == s.citation.end_line - s.citation.start_line
            assert s.truncated == (s.text != chunk.text)


def test_graph_expansion_adds_connected_code(inventory: Inventory) -> None:
    result = run(inventory, "reserve stock OutOfStockError", k=1, seed_count=1)
    assert result.hits[0].chunk.title == "InventoryService.reserve"
    ids = [n.id for n in result.subgraph.nodes]
    assert ids[0] == "inventory/service.py::InventoryService.reserve"
    assert "inventory/storage.py::MemoryStorage.get_item" in ids
    assert result.quality.expanded == len(ids) - 1
    expanded = [
        s for s in result.context.snippets if s.citation.chunk_id not in {h.chunk.id for h in result.hits}
    ]
    assert expanded
    assert "n0 --> n1" in result.context.mermaid  # a call: an unlabelled arrow
    off = run(inventory, "reserve stock OutOfStockError", k=1, expand_graph=False)
    assert [n.id for n in off.subgraph.nodes] == ["inventory/service.py::InventoryService.reserve"]
    assert off.quality.expanded == 0
    weak = run(
        inventory, "reserve stock OutOfStockError", k=1, seed_count=1, min_edge_confidence=0.95, hops=1
    )
    weak_ids = {n.id for n in weak.subgraph.nodes}
    assert "inventory/storage.py::MemoryStorage.get_item" not in weak_ids  # edge confidence 0.9


def test_timings_and_determinism(inventory: Inventory) -> None:
    ticks = iter(range(1000))
    result = retrieve(
        "format money",
        channels=inventory.channels,
        graph=inventory.graph,
        corpus=inventory.corpus,
        vector=embed("format money"),
        clock=lambda: float(next(ticks)),
    )
    stages = {
        "gather",
        "fuse",
        "reweigh",
        "dedup",
        "files",
        "whole_files",
        "scope",
        "named",
        "kinds",
        "companions",
        "cap",
        "expand",
        "pack",
    }
    assert set(result.timings_ms) == {"lexical", "semantic", "graph", "total"} | stages
    again = run(inventory, "format money")
    assert [h.chunk.id for h in again.hits] == [h.chunk.id for h in run(inventory, "format money").hits]
    assert result.to_dict()["hits"] == again.to_dict()["hits"]


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(QUESTIONS),
    st.integers(0, 1500),
    st.integers(0, 400),
    st.integers(1, 12),
)
def test_context_stays_within_budget(
    inventory: Inventory, question: str, budget: int, diagram_budget: int, k: int
) -> None:
    inv = inventory
    result = run(inv, question, context_budget=budget, diagram_budget=diagram_budget, k=k)
    ctx = result.context
    assert ctx.budget == budget
    assert ctx.tokens <= budget
    spent = (count_tokens(ctx.mermaid) if ctx.mermaid else 0) + sum(
        count_tokens(s.text) for s in ctx.snippets
    )
    assert spent <= ctx.tokens
    if ctx.mermaid:
        assert count_tokens(ctx.mermaid) <= diagram_budget


def test_a_single_long_line_is_cut_to_the_budget() -> None:
    minified = "var " + ",".join(f"v{i}={i}" for i in range(3000)) + ";"
    chunk = make_chunk("static/app.min.js", "app.min.js", 1, minified + "\nnext line")
    corpus = MemoryCorpus([chunk])
    channel = BM25Channel(bm25_index([(chunk.id, tokenize(chunk.text))]))
    for budget in (50, 300, 1000):
        result = retrieve(
            "var v1",
            channels=[channel],
            graph=CodeGraph([], []),
            corpus=corpus,
            options=RetrievalOptions(context_budget=budget),
        )
        assert result.context.tokens <= budget
        assert result.context.snippets and result.context.snippets[0].truncated
        assert minified.startswith(result.context.snippets[0].text)


def test_cut_snippet() -> None:
    text = "a b c\nd e f\ng h i"  # 3 tokens + 1 per line
    assert cut_snippet(text, 100) == (text, False)
    assert cut_snippet(text, 8) == ("a b c\nd e f", True)
    assert cut_snippet(text, 4) == ("a b c", True)
    assert cut_snippet("", 10) == ("", False)


@given(
    st.lists(st.from_regex(r"[a-z (),.=]{0,30}", fullmatch=True), min_size=1, max_size=20), st.integers(1, 60)
)
def test_cut_snippet_property(lines: list[str], budget: int) -> None:
    text = "\n".join(lines)
    cut, truncated = cut_snippet(text, budget)
    assert text.startswith(cut)
    assert truncated == (cut != text)
    assert count_tokens(cut) <= budget


def test_build_context_without_hits() -> None:
    ctx = build_context([], [], EMPTY_PLAN, 100, 50)
    assert ctx.mermaid == "" and ctx.snippets == () and ctx.tokens == 0
    assert ctx.render() == ""


def test_context_render(inventory: Inventory) -> None:
    ctx = run(inventory, "InventoryService.reserve").context
    text = ctx.render()
    assert text.startswith("```mermaid\nflowchart TD")
    first = ctx.snippets[0].citation
    assert f"--- {first.path} lines {first.start_line}-{first.end_line} ({first.title})" in text


def test_memory_corpus(inventory: Inventory) -> None:
    corpus = inventory.corpus
    some = [c.id for c in inventory.chunks[:2]] + ["missing"]
    assert set(corpus.get_chunks(some)) == set(some[:2])
    by_node = corpus.chunk_ids_for_nodes(["inventory/utils.py::slugify", "nope"])
    assert list(by_node) == ["inventory/utils.py::slugify"]
    assert corpus.chunk_paths()[inventory.chunks[0].id] == inventory.chunks[0].path


@pytest.mark.parametrize(
    ("path", "is_test"),
    [
        ("tests/test_store.py", True),
        ("pkg/tests/helpers.py", True),
        ("test/data.py", True),
        ("pkg/test_utils.py", True),
        ("pkg/store_test.py", True),
        ("conftest.py", True),
        ("pkg/store.py", False),
        ("pkg/testing_tools/x.py", False),
        ("docs/testing.md", False),
        ("contest.py", False),
    ],
)
def test_is_test_path(path: str, is_test: bool) -> None:
    from oya.core.kinds import is_test_path

    assert is_test_path(path) is is_test


def test_tests_rank_below_the_code_they_test_unless_asked_for() -> None:
    from oya.core.kinds import mentions_tests

    impl_text = "def reserve_stock(item, count):\n    item.stock -= count\n    return item"
    test_text = "def test_reserve_stock():\n    item = reserve_stock(Item(), 2)\n    assert item.stock == 0"
    chunks = [
        make_chunk("pkg/stock.py", "reserve_stock", 1, impl_text),
        make_chunk("tests/test_stock.py", "test_reserve_stock", 1, test_text),
    ]
    corpus = MemoryCorpus(chunks)
    bm25 = bm25_index((c.id, tokenize(c.title + " " + c.text)) for c in chunks)
    graph = CodeGraph([], [])

    def top(question: str, **opts: object) -> str:
        result = retrieve(
            question,
            channels=[BM25Channel(bm25)],
            graph=graph,
            corpus=corpus,
            options=RetrievalOptions(**opts),  # type: ignore[arg-type]
        )
        return result.hits[0].chunk.path

    # the test chunk repeats the name and matches more terms; the penalty puts the code first
    assert top("reserve stock item test_reserve_stock", test_weight=1.0) == "tests/test_stock.py"
    assert top("reserve stock item test_reserve_stock") == "pkg/stock.py"
    assert mentions_tests("how is reserve_stock tested?")
    assert top("how is reserve_stock tested? test_reserve_stock item") == "tests/test_stock.py"


def _copies_corpus(origins: dict[str, str]) -> tuple[list[BM25Channel], MemoryCorpus]:
    text = "def parse_header(buffer): raise HeaderError('bad header length')"
    chunks = [
        make_chunk("single_include/lib.hpp", "parse_header", 1, text + " " + text),  # the copy says it twice
        make_chunk("include/lib/header.hpp", "parse_header", 1, text),
        make_chunk("include/lib/other.hpp", "other", 1, "def unrelated(): return 1"),
    ]
    bm25 = bm25_index((c.id, tokenize(c.title + " " + c.text)) for c in chunks)
    return [BM25Channel(bm25)], MemoryCorpus(chunks, origins)


@pytest.mark.parametrize("named", [False, True])
def test_a_copy_ranks_after_the_source_unless_the_question_names_its_path(named: bool) -> None:
    question = "HeaderError: bad header length from parse_header" + (
        " in single_include/lib.hpp" if named else ""
    )
    channels, plain = _copies_corpus({})
    before = retrieve(
        question,
        channels=channels,
        graph=CodeGraph([], []),
        corpus=plain,
        options=RetrievalOptions(channels=("lexical",)),
    )
    assert [f.path for f in before.files][0] == "single_include/lib.hpp"  # the copy leads on words alone
    channels, corpus = _copies_corpus({"single_include/lib.hpp": "amalgamated"})
    result = retrieve(
        question,
        channels=channels,
        graph=CodeGraph([], []),
        corpus=corpus,
        options=RetrievalOptions(channels=("lexical",)),
    )
    first = "single_include/lib.hpp" if named else "include/lib/header.hpp"
    assert [f.path for f in result.files][0] == first
    assert "single_include/lib.hpp" in [f.path for f in result.files]  # still searchable
    assert (result.hits[0].chunk.path == "single_include/lib.hpp") == named  # the answer's chunks too

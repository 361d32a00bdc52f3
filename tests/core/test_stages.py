"""Each retrieval stage alone: a ``Query`` and the ``Candidates`` the earlier stages would leave."""

from __future__ import annotations

import time
from dataclasses import replace

import pytest
from core_corpus import Inventory, build_inventory, embed

from oya.core import stages
from oya.core.channels import UnavailableChannel
from oya.core.evidence import named_in
from oya.core.filters import path_filter
from oya.core.fusion import Fused
from oya.core.graph import uniform_prior
from oya.core.kinds import DEMOTED, DEMOTED_ALL, NON_CODE, file_kind
from oya.core.options import RetrievalOptions
from oya.core.pipeline import default_pipeline, run
from oya.core.query import plan_query
from oya.core.results import Candidate, FileHit, Hit
from oya.core.stages import Candidates, Query

WEIGHTS = {"lexical": 1.0, "semantic": 1.0, "graph": 0.8}


@pytest.fixture(scope="module")
def inventory() -> Inventory:
    return build_inventory()


def query(inv: Inventory, question: str, *, channels: object = None, include: tuple[str, ...] = ()) -> Query:
    return Query(
        question=question,
        plan=plan_query(question),
        channels=tuple(channels if channels is not None else inv.channels),  # type: ignore[call-overload]
        graph=inv.graph,
        corpus=inv.corpus,
        vector=embed(question),
        allowed=path_filter(include, ()),
        clock=time.perf_counter,
    )


def start() -> Candidates:
    return Candidates(weights=dict(WEIGHTS), fetch_depth=50)


def hit(inv: Inventory, title: str, score: float, path: str | None = None) -> Hit:
    return Hit(inv.by_title(title, path), score, ("lexical",), (1,))


def test_gather_runs_the_named_channels_and_reports_the_others(inventory: Inventory) -> None:
    channels = [inventory.bm25, UnavailableChannel("semantic", "no model"), inventory.graph_channel]
    c = stages.gather(
        query(inventory, "format money", channels=channels), start(), names=("lexical", "semantic")
    )
    assert set(c.rankings) == {"lexical"} and c.rankings["lexical"]
    assert c.scores["lexical"][c.rankings["lexical"][0]] > 0
    status = {n: (r.status, r.detail) for n, r in c.reports.items()}
    assert status == {
        "lexical": ("ran", ""),
        "semantic": ("unavailable", "no model"),
        "graph": ("off", "switched off"),
    }
    assert c.reports["lexical"].weight == 1.0 and "lexical" in c.timings


def test_gather_applies_the_path_filter(inventory: Inventory) -> None:
    c = stages.gather(query(inventory, "quantity stock", include=("docs",)), start(), names=("lexical",))
    paths = inventory.corpus.chunk_paths()
    assert c.rankings["lexical"] and all(paths[i].startswith("docs/") for i in c.rankings["lexical"])


def test_fuse_rankings_is_weighted_rrf() -> None:
    c = replace(start(), rankings={"lexical": ["a", "b"], "semantic": ["b"]})
    out = stages.fuse_rankings(None, c, rrf_k=10, demoted=())  # type: ignore[arg-type]
    assert [f.id for f in out.fused] == ["b", "a"]
    assert out.fused[0].score == pytest.approx(1 / 12 + 1 / 11)


def test_fuse_rankings_reads_docs_after_the_rest_of_each_list(inventory: Inventory) -> None:
    # issue 24: an issue report's template and words matched the repository's docs first; read in
    # place they took a channel's first ranks and left its vote to the code below them
    guide = inventory.by_title("Guide > Quantities").id
    ci = inventory.by_title("ci.yml").id
    test = inventory.by_title("test_parse_quantity").id
    code = inventory.by_title("parse_quantity", "inventory/utils.py").id
    c = replace(start(), rankings={"lexical": [guide, ci, test, code], "semantic": [guide, code]})
    q = query(inventory, "parse_quantity drops the sign of a negative amount")
    out = stages.fuse_rankings(q, c, rrf_k=10, demoted=NON_CODE)
    # lexical reads [ci, test, code, guide] (build files and tests keep their place), semantic
    # [code, guide]: the code gets ranks 3 and 1, the guide 4 and 2
    assert [f.id for f in out.fused] == [code, guide, ci, test]
    assert out.fused[0].score == pytest.approx(1 / 13 + 1 / 11) and out.fused[0].ranks == (3, 1)
    assert out.rankings == c.rankings  # the channels' own lists stay (the confidence reads them)
    asked = stages.fuse_rankings(
        query(inventory, "the docs on quantities are wrong"), c, rrf_k=10, demoted=NON_CODE
    )
    assert [f.id for f in asked.fused][0] == guide  # the first line asks for docs: in place
    assert [f.id for f in stages.fuse_rankings(q, c, rrf_k=10, demoted=()).fused][0] == guide


def test_reweigh_weighs_test_code_down_unless_asked(inventory: Inventory) -> None:
    test_chunk = inventory.by_title("test_parse_quantity")
    code_chunk = inventory.by_title("parse_quantity")
    fused = (Fused(test_chunk.id, 1.0, ("lexical",), (1,)), Fused(code_chunk.id, 0.9, ("lexical",), (2,)))
    c = replace(start(), fused=fused)
    out = stages.reweigh(query(inventory, "parse a quantity"), c, test_weight=0.7, semantic_lead=0.0)
    assert [f.id for f in out.fused] == [code_chunk.id, test_chunk.id]
    asked = stages.reweigh(
        query(inventory, "which tests parse a quantity"), c, test_weight=0.7, semantic_lead=0.0
    )
    assert asked.fused == fused


def test_dedup_keeps_one_chunk_per_content(inventory: Inventory) -> None:
    a, b = inventory.chunks[0], inventory.chunks[1]
    fused = (
        Fused(a.id, 3.0, ("lexical",), (1,)),
        Fused(a.id, 2.0, ("graph",), (1,)),
        Fused(b.id, 1.0, (), ()),
    )
    out = stages.dedup(query(inventory, "x"), replace(start(), fused=fused), pool_size=10)
    assert [h.chunk.id for h in out.pool] == [a.id, b.id]
    assert [
        h.chunk.id
        for h in stages.dedup(query(inventory, "x"), replace(start(), fused=fused), pool_size=1).pool
    ] == [a.id]


def test_rank_candidate_files_ranks_the_pool(inventory: Inventory) -> None:
    pool = (
        hit(inventory, "InventoryService.reserve", 0.4),
        hit(inventory, "parse_quantity", 1.0),
        hit(inventory, "format_money", 0.5),
    )
    assert pool[0].chunk.path != pool[1].chunk.path == pool[2].chunk.path
    q, c = query(inventory, "x"), replace(start(), pool=pool)
    best = stages.rank_candidate_files(q, c, mode="max", min_confidence=0.5, top_n=3)
    assert [(f.path, f.score) for f in best.files] == [(pool[1].chunk.path, 1.0), (pool[0].chunk.path, 0.4)]
    decay = stages.rank_candidate_files(q, c, mode="decay", min_confidence=0.5, top_n=3)
    assert decay.files[0].score == pytest.approx(1.0 + 0.5 / 2)


def _files(*paths: str) -> tuple[FileHit, ...]:
    return tuple(FileHit(p, 1.0 / (i + 1), ()) for i, p in enumerate(paths))


def test_order_kinds_puts_code_files_first_unless_the_first_line_asks(inventory: Inventory) -> None:
    files = _files("CHANGELOG.md", "tests/test_store.py", "docs/guide.md", "shop/store.py", "shop/money.py")
    c = replace(start(), files=files)
    fix = stages.order_kinds(
        query(inventory, "reserve fails on an empty stock"), c, demoted=DEMOTED, hit_demoted=()
    )
    assert [f.path for f in fix.files] == [
        "shop/store.py", "shop/money.py", "CHANGELOG.md", "tests/test_store.py", "docs/guide.md",
    ]  # fmt: skip
    assert fix.files[0] is files[3]  # the records move, their scores stay
    asked = stages.order_kinds(
        query(inventory, "tests for reserve fail\n\nsee the docs"), c, demoted=DEMOTED, hit_demoted=()
    )
    # the subject asks for tests (they keep their place); the body's "docs" does not count
    assert [f.path for f in asked.files] == [
        "tests/test_store.py", "shop/store.py", "shop/money.py", "CHANGELOG.md", "docs/guide.md",
    ]  # fmt: skip


def test_order_kinds_moves_build_files_and_the_answers_chunks_when_asked_to(inventory: Inventory) -> None:
    files = _files("Makefile", ".github/settings.yml", "shop/store.py")
    pool = tuple(Hit(c, 1.0, ("lexical",)) for c in inventory.chunks)
    c = replace(start(), files=files, pool=pool)
    q = query(inventory, "how is stock reserved?")
    out = stages.order_kinds(q, c, demoted=DEMOTED_ALL, hit_demoted=DEMOTED_ALL)
    assert [f.path for f in out.files] == ["shop/store.py", "Makefile", ".github/settings.yml"]
    kinds = [file_kind(h.chunk.path) for h in out.pool]
    first_demoted = next(i for i, k in enumerate(kinds) if k in DEMOTED_ALL)
    assert {"docs/guide.md", ".github/workflows/ci.yml"} <= {h.chunk.path for h in pool}  # kinds to move
    assert all(k in DEMOTED_ALL for k in kinds[first_demoted:])
    asked = stages.order_kinds(
        query(inventory, "the Makefile target for stock"), c, demoted=DEMOTED_ALL, hit_demoted=()
    )
    assert [f.path for f in asked.files][0] == "Makefile" and asked.pool == c.pool


def test_the_shipped_kinds_stage_moves_build_file_chunks_after_the_code_but_not_tests(
    inventory: Inventory,
) -> None:
    # issue 16 item 8: a build file holding the question's words (the Makefile's sample question)
    # is not among the answer's first items; tests stay among the code (reweigh weighs them)
    stage = dict(default_pipeline(RetrievalOptions()).stages)["kinds"]
    chunks = sorted(inventory.chunks, key=lambda c: file_kind(c.path) != "other")  # build files first
    pool = tuple(Hit(c, 1.0, ("lexical",)) for c in chunks)
    out = stage(query(inventory, "how is stock reserved?"), replace(start(), pool=pool))
    kinds = [file_kind(h.chunk.path) for h in out.pool]
    assert "other" in kinds and "test" in kinds and "source" in kinds
    n_code = sum(1 for k in kinds if k in ("source", "test"))
    assert all(k in ("source", "test") for k in kinds[:n_code]), kinds  # every code chunk first
    code = [h.chunk.id for h in out.pool if file_kind(h.chunk.path) in ("source", "test")]
    assert code == [h.chunk.id for h in pool if file_kind(h.chunk.path) in ("source", "test")]


def test_cap_limits_per_file_and_in_all(inventory: Inventory) -> None:
    pool = tuple(Candidate(c.ref(), 1.0 / (i + 1), ("lexical",)) for i, c in enumerate(inventory.chunks))
    out = stages.cap(query(inventory, "x"), replace(start(), pool=pool), k=5, max_per_file=1)
    assert len(out.picked) == 5 and len({h.chunk.path for h in out.picked}) == 5
    assert list(out.picked) == [h for h in pool if h in out.picked]
    assert out.hits == ()  # no text read yet: expand reads it with the connected code's


def test_expand_reads_the_hits_text_and_the_pools_only_when_the_question_names_code(
    inventory: Inventory,
) -> None:
    pool = tuple(Candidate(c.ref(), 1.0 / (i + 1), ("lexical",)) for i, c in enumerate(inventory.chunks))
    c = replace(start(), pool=pool, picked=pool[:3])
    kw = {"seed_count": 1, "hops": 0, "min_confidence": 0.5, "max_nodes": 24, "prior": uniform_prior}
    plain = stages.expand(query(inventory, "how are prices rounded"), c, **kw)
    assert [h.chunk for h in plain.hits] == list(inventory.chunks[:3]) and plain.pool_chunks == ()
    named = stages.expand(query(inventory, "format_money drops cents"), c, **kw)
    assert named.hits == plain.hits and named.pool_chunks == tuple(inventory.chunks)


def test_expand_reads_no_pool_text_for_a_name_a_pool_path_holds(inventory: Inventory) -> None:
    """The evidence only counts the names found: one in a candidate's path is found without its text."""
    pool = tuple(Candidate(c.ref(), 1.0 / (i + 1), ("lexical",)) for i, c in enumerate(inventory.chunks))
    c = replace(start(), pool=pool, picked=pool[:3])
    kw = {"seed_count": 1, "hops": 0, "min_confidence": 0.5, "max_nodes": 24, "prior": uniform_prior}
    out = stages.expand(query(inventory, "what does inventory/utils.py export"), c, **kw)
    assert named_in(plan_query("what does inventory/utils.py export")) == ("utils.py",)
    assert out.named_proven == ("utils.py",) and out.pool_chunks == ()
    assert [h.chunk for h in out.hits] == list(inventory.chunks[:3])


def test_expand_follows_the_graph_from_the_top_hits(inventory: Inventory) -> None:
    hits = (hit(inventory, "InventoryService.reserve", 1.0),)
    c = replace(start(), picked=tuple(Candidate(h.chunk.ref(), h.score, h.channels, h.ranks) for h in hits))
    q = query(inventory, "reserve")
    out = stages.expand(q, c, seed_count=1, hops=2, min_confidence=0.5, max_nodes=24, prior=uniform_prior)
    assert out.hits == hits
    assert out.subgraph.seeds == (hits[0].chunk.node_id,)
    assert out.expanded and all(out.subgraph.distance[n] > 0 for n in out.expanded)
    assert out.connected and all(h.channels == ("graph-expansion",) for h in out.connected)
    assert hits[0].chunk.id not in {h.chunk.id for h in out.connected}
    none = stages.expand(q, c, seed_count=1, hops=0, min_confidence=0.5, max_nodes=24, prior=uniform_prior)
    assert none.expanded == () and none.connected == () and none.subgraph.seeds == out.subgraph.seeds


def test_pack_fits_the_context_in_its_budget(inventory: Inventory) -> None:
    hits = tuple(Hit(c, 1.0, ("lexical",)) for c in inventory.chunks[:6])
    out = stages.pack(
        query(inventory, "x"),
        replace(start(), hits=hits),
        budget=300,
        diagram_budget=100,
        diagram_nodes=10,
        min_confidence=0.5,
    )
    assert out.context.tokens <= 300 and out.context.snippets
    assert [s.citation.chunk_id for s in out.context.snippets] == [h.chunk.id for h in hits][
        : len(out.context.snippets)
    ]


def test_the_default_pipeline_is_these_stages_in_order(inventory: Inventory) -> None:
    pipeline = default_pipeline(RetrievalOptions())
    assert [n for n, _ in pipeline.stages] == [
        "gather", "fuse", "reweigh", "dedup", "files", "whole_files", "scope", "named", "kinds", "companions", "cap",
        "expand", "pack",
    ]  # fmt: skip
    c = run(pipeline, query(inventory, "how does reserving stock work"))
    assert c.hits and c.files and c.context.snippets and set(c.timings) >= {n for n, _ in pipeline.stages}

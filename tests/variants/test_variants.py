"""The losing variants kept in bench/variants/ still run and still do what they did.

They left the shipped core (docs/DECISIONS.md); ``bench/eval_quality.py`` measures them, so
they must keep working: MMR diversity, PageRank-ordered expansion, intent-adaptive weights and
identifier-only long queries.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.variants.centrality import centrality_prior, with_centrality
from bench.variants.mmr import graph_proximity, mmr_order, with_mmr
from bench.variants.no_kinds import old_is_test_path, without_kinds
from bench.variants.query_plans import (
    INTENT_WEIGHTS,
    LONG_QUERY_TOKENS,
    adaptive_plan,
    identifiers_plan,
    is_long,
    with_adaptive_weights,
)
from oya.core.graph import CodeGraph
from oya.core.options import RetrievalOptions
from oya.core.pipeline import Pipeline, default_pipeline, retrieve
from oya.core.query import INTENTS, plan_query
from oya.core.records import Edge, Node
from oya.core.results import RetrievalResult
from oya.core.tokenize import tokenize
from tests.core.core_corpus import Inventory, build_inventory, embed, normalize


def node(node_id: str, centrality: float) -> Node:
    return Node(node_id, "function", node_id, node_id, "m.py", 1, 2, centrality=centrality)


def star() -> CodeGraph:
    """A hub with five callees of rising centrality, and one weak edge."""
    nodes = [node("hub", 0.5)] + [node(f"leaf{i}", i / 10) for i in range(5)] + [node("weak", 1.0)]
    edges = [Edge("hub", f"leaf{i}", "calls", 1.0) for i in range(5)] + [Edge("hub", "weak", "calls", 0.2)]
    return CodeGraph(nodes, edges)


ids_st = st.lists(st.text("abcdefgh", min_size=1, max_size=3), min_size=0, max_size=12, unique=True)


@st.composite
def pools(draw: st.DrawFn) -> tuple[list[str], dict[str, float], dict[str, list[float]]]:
    ids = draw(ids_st)
    scores = {i: draw(st.floats(0.001, 1.0)) for i in ids}
    order = sorted(ids, key=lambda i: -scores[i])
    vecs = {i: normalize([draw(st.floats(-1, 1)) for _ in range(3)]) for i in ids}
    return order, scores, vecs


@settings(max_examples=80, deadline=None)
@given(pools(), st.floats(0.0, 1.0), st.integers(1, 15))
def test_mmr_is_a_permutation(
    pool: tuple[list[str], dict[str, float], dict[str, list[float]]], lam: float, k: int
) -> None:
    order, scores, vecs = pool
    out = mmr_order(order, scores, k=k, diversity=lam, vectors=vecs)
    assert sorted(out) == sorted(order)
    assert out == mmr_order(order, scores, k=k, diversity=lam, vectors=vecs)  # deterministic


@settings(max_examples=50, deadline=None)
@given(pools(), st.integers(1, 15))
def test_mmr_off_keeps_the_order_and_the_best_stays_first(
    pool: tuple[list[str], dict[str, float], dict[str, list[float]]], k: int
) -> None:
    order, scores, vecs = pool
    assert mmr_order(order, scores, k=k, diversity=0.0, vectors=vecs) == order
    if order:
        # nothing is picked before the first, so redundancy cannot demote the best hit
        assert mmr_order(order, scores, k=k, diversity=0.7, vectors=vecs)[0] == order[0]


def test_mmr_demotes_a_near_duplicate() -> None:
    scores = {"a": 1.0, "a2": 0.95, "b": 0.9}
    vecs = {"a": [1.0, 0.0], "a2": [1.0, 0.0], "b": [0.0, 1.0]}
    assert mmr_order(["a", "a2", "b"], scores, k=3, diversity=0.0, vectors=vecs) == ["a", "a2", "b"]
    assert mmr_order(["a", "a2", "b"], scores, k=3, diversity=0.5, vectors=vecs) == ["a", "b", "a2"]


def test_mmr_uses_the_graph_when_vectors_are_absent() -> None:
    scores = {"a": 1.0, "caller": 0.95, "far": 0.9}
    nodes = {"a": "n1", "caller": "n2", "far": "n3"}
    adj = {"n1": ["n2"], "n2": ["n1"], "n3": []}
    out = mmr_order(
        ["a", "caller", "far"],
        scores,
        k=3,
        diversity=0.5,
        vectors=None,
        nodes=nodes,
        neighbors=lambda n: adj[n],
    )
    assert out == ["a", "far", "caller"]
    assert graph_proximity("n1", "n1", frozenset()) == 1.0
    assert graph_proximity("n1", "n2", frozenset({"n2"})) == 0.5
    assert graph_proximity(None, "n2", frozenset({"n2"})) == 0.0


def test_mmr_rejects_bad_parameters() -> None:
    with pytest.raises(ValueError, match="diversity"):
        mmr_order(["a"], {"a": 1.0}, k=1, diversity=1.5)
    with pytest.raises(ValueError, match="graph_weight"):
        mmr_order(["a"], {"a": 1.0}, k=1, diversity=0.5, graph_weight=-0.1)
    with pytest.raises(ValueError, match="file_aggregation must be one of max, decay, graph"):
        RetrievalOptions(file_aggregation="sum")


@pytest.fixture(scope="module")
def inventory() -> Inventory:
    return build_inventory()


def run_variant(inventory: Inventory, q: str, variant: Callable[[Pipeline], Pipeline]) -> RetrievalResult:
    return retrieve(
        q,
        channels=inventory.channels,
        graph=inventory.graph,
        corpus=inventory.corpus,
        vector=embed(q),
        pipeline=variant(default_pipeline(RetrievalOptions())),
    )


@pytest.mark.parametrize("diversity", [0.0, 0.3, 1.0])
def test_retrieve_with_diversity_keeps_its_invariants(inventory: Inventory, diversity: float) -> None:
    q = "how does reserving stock work"
    base = retrieve(
        q, channels=inventory.channels, graph=inventory.graph, corpus=inventory.corpus, vector=embed(q)
    )
    r = retrieve(
        q,
        channels=inventory.channels,
        graph=inventory.graph,
        corpus=inventory.corpus,
        vector=embed(q),
        pipeline=with_mmr(default_pipeline(RetrievalOptions()), diversity=diversity, graph_weight=0.5),
    )
    assert len(r.hits) == len(base.hits)
    assert r.hits[0].chunk.id == base.hits[0].chunk.id
    assert {h.chunk.id for h in r.hits} <= {h.chunk.id for h in base.hits} | {
        c for f in base.files for c in f.chunks
    } | set(inventory.corpus.chunks)
    assert len({h.chunk.content_hash for h in r.hits}) == len(r.hits)


LONG = (
    "After upgrading, calling parse_quantity with an empty string crashes the whole checkout and "
    + "the page shows nothing useful at all so we cannot tell customers what went wrong " * 5
)


def test_long_query_identifiers_switch() -> None:
    on = identifiers_plan(plan_query(LONG))
    off = plan_query(LONG)  # the shipped plan: no measured gain (bench/eval_quality.py)
    assert is_long(on) and is_long(off)
    assert set(on.lexical_tokens) <= {"parse_quantity", "parse", "quantity"}
    assert off.lexical_tokens == tuple(tokenize(off.text))
    assert not is_long(plan_query("where is parse_quantity defined"))


def test_every_intent_weighs_the_three_channels() -> None:
    assert set(INTENT_WEIGHTS) == set(INTENTS)
    for weights in INTENT_WEIGHTS.values():
        assert set(weights) == {"lexical", "semantic", "graph"}
        assert all(w > 0 for w in weights.values())
    assert INTENT_WEIGHTS["lookup"]["lexical"] > INTENT_WEIGHTS["lookup"]["semantic"]
    assert INTENT_WEIGHTS["conceptual"]["semantic"] > INTENT_WEIGHTS["conceptual"]["lexical"]


def test_adaptive_plan_takes_its_intents_weights(inventory: Inventory) -> None:
    plan = adaptive_plan(plan_query("  where is parse_quantity defined  "))
    assert plan.intent == "lookup" and plan.weights == INTENT_WEIGHTS["lookup"]
    assert INTENT_WEIGHTS["general"] == plan_query("x").weights  # the shipped weights: its general row
    r = run_variant(inventory, "where is parse_quantity defined", with_adaptive_weights)
    assert {c.name: c.weight for c in r.quality.channels if c.status == "ran"} == INTENT_WEIGHTS["lookup"]


def test_long_bug_report_searches_its_identifiers() -> None:
    from tests.core.test_query import TRACEBACK_REPORT

    plan = identifiers_plan(plan_query(TRACEBACK_REPORT))
    assert plan.intent == "debug"
    assert is_long(plan) and len(tokenize(plan.text)) > LONG_QUERY_TOKENS
    assert plan.paths == ("inventory/cli.py", "inventory/service.py", "inventory/storage.py")
    # traceback frame functions come first, then other code names in order of appearance
    assert plan.identifiers[:3] == ("main", "reserve", "get_item")
    for name in ("KeyError", "OutOfStockError", "InventoryService.reserve", "self.storage.get_item"):
        assert name in plan.identifiers
    lexical = set(plan.lexical_tokens)
    assert {"get_item", "keyerror", "outofstockerror", "inventoryservice", "storage", "service"} <= lexical
    # the prose is gone from the lexical query, but still in the text the semantic channel embeds
    assert not {"upgrading", "nightly", "memory", "configuration", "urgent"} & lexical
    assert plan.text == TRACEBACK_REPORT.strip()
    assert len(plan.lexical_tokens) == len(set(plan.lexical_tokens))


def test_cap_takes_the_most_central_first() -> None:
    sub = star().expand(["hub"], hops=1, min_confidence=0.5, max_nodes=3, prior=centrality_prior)
    assert [n.id for n in sub.nodes] == ["hub", "leaf4", "leaf3"]
    assert sub.truncated == 3
    assert sub.edges == tuple(sorted(sub.edges, key=lambda e: (e.source, e.target, e.kind)))


def test_centrality_pipeline_runs(inventory: Inventory) -> None:
    r = run_variant(inventory, "how does reserving stock work", with_centrality)
    assert r.hits and r.quality.expanded > 0


def test_without_kinds_is_the_pipeline_before_the_kinds_stage(inventory: Inventory) -> None:
    assert old_is_test_path("tests/test_store.py") and not old_is_test_path("web/app.test.ts")
    before = without_kinds(default_pipeline(RetrievalOptions()))
    assert [n for n, _ in before.stages] == [n for n, _ in default_pipeline(RetrievalOptions()).stages]
    r = run_variant(inventory, "how does reserving stock work", without_kinds)
    assert r.hits and r.files


def test_without_file_lexical_ranks_files_from_the_chunks_alone(inventory: Inventory) -> None:
    from bench.variants.file_lexical import without_file_lexical
    from bench.variants.ranking import main_pipeline, with_build_files_last

    shipped = default_pipeline(RetrievalOptions())
    assert [n for n, _ in shipped.stages][3:6] == ["dedup", "files", "whole_files"]
    q = "reserve stock OutOfStockError"
    before = run_variant(inventory, q, without_file_lexical)
    after = run_variant(inventory, q, lambda p: p)
    assert before.files and after.files and after.files[0].path == "inventory/service.py"
    assert before.timings_ms.get("whole_files", -1) >= 0  # the stage still runs, as a no-op
    # without it, a file no chunk candidate holds never ranks; with it, whole-file BM25 may add one
    assert all(f.chunks for f in before.files)
    assert main_pipeline(shipped).options.file_aggregation == "graph"
    r = run_variant(inventory, "how does reserving stock work", with_build_files_last)
    assert r.files and r.files[0].path.endswith(".py")


def test_coactivation_spreads_from_the_seeds_along_calls(inventory: Inventory) -> None:
    from bench.variants.coactivation import with_coactivation

    q = "how does reserving stock work"
    base = run_variant(inventory, q, lambda p: p)
    co = run_variant(inventory, q, with_coactivation)
    assert co.hits and co.timings_ms.get("coactivate", -1) >= 0
    # the seeds' callees gain: parse_quantity (called by reserve) ranks no lower than before
    rank = lambda r: next(i for i, h in enumerate(r.hits) if h.chunk.title == "parse_quantity")  # noqa: E731
    assert rank(co) <= rank(base)


def test_query_parts_split_prose_code_and_frames() -> None:
    from bench.variants.query_parts import embedding_text, split_parts
    from bench.variants.ranking import subject_text

    text = (
        "Redirects lose the method\n\nWhen a 303 follows a POST the method stays POST.\n"
        "```\nsession.post(url)\n```\n"
        'Traceback (most recent call last):\n  File "requests/sessions.py", line 12, in resolve\n'
        "    prepared.method = method\nValueError: bad method\n    at f (lib/x.js:3:1)\n"
    )
    parts = split_parts(text)
    assert parts.prose.startswith("Redirects lose the method") and "session.post" not in parts.prose
    assert "session.post(url)" in parts.code and "prepared.method = method" in parts.code
    assert parts.frames == ('File "requests/sessions.py", line 12, in resolve', "at f (lib/x.js:3:1)")
    assert subject_text(text) == "Redirects lose the method"
    assert embedding_text("foo(bar);") == "foo(bar);"  # no prose: the whole text


def test_without_scope_reads_the_prefix_as_one_more_word(inventory: Inventory) -> None:
    from bench.variants.scope import with_scope_weight, without_scope

    q = "legacy: reserving stock fails for a missing item"
    shipped = run_variant(inventory, q, lambda p: p)
    before = run_variant(inventory, q, without_scope)
    heavier = run_variant(inventory, q, lambda p: with_scope_weight(p, 2.0))
    assert shipped.files[0].path == heavier.files[0].path == "inventory/legacy.py"
    assert before.files[0].path != "inventory/legacy.py"
    assert before.timings_ms.get("scope", -1) >= 0  # the stage still runs, as a no-op


def test_without_code_first_fuses_the_lists_as_the_channels_gave_them(inventory: Inventory) -> None:
    from bench.variants.code_first import with_code_first, without_code_first, without_named
    from oya.core.kinds import HIT_DEMOTED
    from oya.core.results import FileHit
    from oya.core.stages import Candidates, Query

    q = "parse_quantity drops the sign (see utils.py)"
    query = Query(q, plan_query(q), (), inventory.graph, inventory.corpus, None, None, lambda: 0.0)
    guide = inventory.by_title("Guide > Quantities").id
    code = inventory.by_title("parse_quantity", "inventory/utils.py").id
    files = (FileHit("inventory/service.py", 1.0, ()), FileHit("inventory/utils.py", 0.5, ()))
    c = Candidates(weights={"lexical": 1.0}, fetch_depth=10, rankings={"lexical": [guide, code]}, files=files)
    shipped = dict(default_pipeline(RetrievalOptions()).stages)
    before = dict(without_code_first(default_pipeline(RetrievalOptions())).stages)
    assert [f.id for f in shipped["fuse"](query, c).fused] == [code, guide]
    assert [f.id for f in before["fuse"](query, c).fused] == [guide, code]
    assert shipped["named"](query, c).files[0].path == "inventory/utils.py"
    assert before["named"](query, c) is c
    assert dict(without_named(default_pipeline(RetrievalOptions())).stages)["named"](query, c) is c
    ci = inventory.by_title("ci.yml").id  # a build file: the shipped fuse keeps it in place
    c = replace(c, rankings={"lexical": [ci, code]})
    assert [f.id for f in shipped["fuse"](query, c).fused] == [ci, code]
    wider = dict(with_code_first(default_pipeline(RetrievalOptions()), HIT_DEMOTED, copies=True).stages)
    assert [f.id for f in wider["fuse"](query, c).fused] == [code, ci]


def test_without_companions_leaves_the_files_in_place(inventory: Inventory) -> None:
    from bench.variants.companions import with_companions, without_companions
    from oya.core.results import FileHit
    from oya.core.stages import Candidates, Query

    q = "stock is lost"
    query = Query(q, plan_query(q), (), inventory.graph, inventory.corpus, None, None, lambda: 0.0)
    paths = ("inventory/storage.py", "inventory/utils.py", "inventory/service.py", "inventory/storage_sql.py")
    c = Candidates(weights={}, fetch_depth=10, files=tuple(FileHit(p, 1.0, ()) for p in paths))
    shipped = dict(default_pipeline(RetrievalOptions()).stages)["companions"](query, c)
    before = dict(without_companions(default_pipeline(RetrievalOptions())).stages)["companions"](query, c)
    shallow = dict(with_companions(default_pipeline(RetrievalOptions()), seeds=3, depth=3).stages)
    assert [f.path for f in shipped.files][:2] == ["inventory/storage.py", "inventory/storage_sql.py"]
    assert before is c and shallow["companions"](query, c).files == c.files


def test_length_norm_puts_a_long_file_after_a_short_one_of_near_score(inventory: Inventory) -> None:
    from bench.variants.length_norm import with_length_norm
    from oya.core.results import FileHit
    from oya.core.stages import Candidates, Query

    q = "stock is lost"
    query = Query(q, plan_query(q), (), inventory.graph, inventory.corpus, None, None, lambda: 0.0)
    counts: dict[str, int] = {}
    for path in inventory.corpus.chunk_paths().values():
        counts[path] = counts.get(path, 0) + 1
    longest, shortest = max(counts, key=lambda p: (counts[p], p)), min(counts, key=lambda p: (counts[p], p))
    assert counts[longest] > counts[shortest]
    # the long file a little ahead: only the normalisation puts it second
    c = Candidates(weights={}, fetch_depth=10, files=(FileHit(longest, 1.05, ()), FileHit(shortest, 1.0, ())))
    stages = dict(with_length_norm(default_pipeline(RetrievalOptions()), beta=0.5).stages)
    assert [f.path for f in stages["length"](query, c).files] == [shortest, longest]
    assert "length" not in dict(default_pipeline(RetrievalOptions()).stages)


def test_a_variant_names_a_stage_the_pipeline_has() -> None:
    from bench.variants import inserted, replaced
    from oya.core import stages

    pipeline = default_pipeline(RetrievalOptions())
    with pytest.raises(ValueError, match="no stage"):
        replaced(pipeline, "rerank", stages.pack)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="no stage"):
        inserted(pipeline, "rerank", "x", stages.pack)  # type: ignore[arg-type]
    swapped = replaced(pipeline, "pack", stages.pack)  # type: ignore[arg-type]
    assert [n for n, _ in swapped.stages] == [n for n, _ in pipeline.stages]
    added = inserted(pipeline, "files", "x", stages.pack)  # type: ignore[arg-type]
    names = [n for n, _ in added.stages]
    assert names[names.index("files") + 1] == "x" and len(names) == len(pipeline.stages) + 1

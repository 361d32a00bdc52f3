"""Records validate themselves; page URLs; search quality; HIGH / MEDIUM / LOW confidence."""

from __future__ import annotations

import json

import pytest
from core_corpus import Inventory, build_inventory, embed, make_chunk

from oya.core.confidence import DISCLAIMERS, assess_confidence
from oya.core.options import RetrievalOptions
from oya.core.pipeline import retrieve
from oya.core.query import plan_query
from oya.core.records import Chunk, Edge, Node
from oya.core.results import ChannelReport, Citation, Confidence, Hit, SearchQuality, page_url


@pytest.fixture(scope="module")
def inventory() -> Inventory:
    return build_inventory()


def test_page_url() -> None:
    assert page_url("pkg/mod.py") == "files/pkg/mod.py.html"
    assert page_url("pkg/mod.py", 12) == "files/pkg/mod.py.html#L12"
    assert page_url("pkg/mod.py", 0) == "files/pkg/mod.py.html"
    assert page_url("docs/a b#c?.md", 3) == "files/docs/a%20b%23c%3F.md.html#L3"
    assert page_url("x/<script>.py") == "files/x/%3Cscript%3E.py.html"


def test_records_validate() -> None:
    with pytest.raises(ValueError, match="node kind must be one of module, class"):
        Node("a", "lambda", "a", "a", "a.py", 1, 1)
    with pytest.raises(ValueError, match="bad line span"):
        Node("a", "function", "a", "a", "a.py", 3, 2)
    with pytest.raises(ValueError, match="bad line span"):
        Node("a", "function", "a", "a", "a.py", 0, 2)
    with pytest.raises(ValueError, match="id and a path"):
        Node("", "function", "a", "a", "a.py", 1, 1)
    with pytest.raises(ValueError, match="edge kind"):
        Edge("a", "b", "uses", 1.0)
    with pytest.raises(ValueError, match="confidence"):
        Edge("a", "b", "calls", 1.5)
    with pytest.raises(ValueError, match="chunk kind"):
        Chunk("c", "a.py", "image", "t", 1, 1, "x", "h", 1)
    with pytest.raises(ValueError, match="negative"):
        Chunk("c", "a.py", "code", "t", 1, 1, "x", "h", -1)
    with pytest.raises(ValueError, match="channel status must be one of ran, failed"):
        ChannelReport("lexical", "exploded")
    with pytest.raises(ValueError, match="HIGH, MEDIUM, LOW"):
        Confidence("CERTAIN", 1.0, "")
    node = Node("a", "function", "a", "a", "a.py", 1, 1)
    with pytest.raises(AttributeError):
        node.name = "b"  # type: ignore[misc]


def test_citation_label() -> None:
    c = Citation("a.py", "f", 3, 9, None, page_url("a.py", 3), "cid")
    assert c.label == "a.py:3-9"


def quality(*reports: ChannelReport) -> SearchQuality:
    return SearchQuality("general", reports, found=1, used=1)


def test_search_quality_summary() -> None:
    q = SearchQuality(
        "debug",
        (ChannelReport("lexical", "ran", 4), ChannelReport("semantic", "unavailable", detail="no vector")),
        found=4,
        used=2,
        expanded=3,
    )
    assert q.summary() == (
        "intent debug; channels: lexical ✓ (4), semantic ✗ unavailable: no vector; found 4, used 2; graph +3 nodes"
    )
    assert [r.name for r in q.degraded] == ["semantic"]


CHUNK = make_chunk(
    "inventory/utils.py", "format_money", 1, "def format_money(cents):\n    return cents / 100"
)


def test_confidence_high_medium_low() -> None:
    plan = plan_query("format money cents")
    assert plan.lexical_tokens == ("format", "money", "cents")
    agreeing = [Hit(CHUNK, 0.1, ("lexical", "semantic"))]
    high = assess_confidence(plan, agreeing, {"semantic": {CHUNK.id: 0.7}}, quality())
    assert high.level == "HIGH" and high.disclaimer == DISCLAIMERS["HIGH"]
    assert high.score == pytest.approx(0.4 * 1 + 0.4 * 1 + 0.2)  # all terms in the title and text
    medium = assess_confidence(
        plan, [Hit(CHUNK, 0.1, ("lexical",))], {"semantic": {CHUNK.id: 0.3}}, quality()
    )
    assert medium.level == "MEDIUM"
    assert medium.score == pytest.approx(0.4 * 0.5 + 0.4 * 1)
    low = assess_confidence(
        plan_query("zebra"), [Hit(CHUNK, 0.1, ("semantic",))], {"semantic": {CHUNK.id: 0.1}}, quality()
    )
    assert low.level == "LOW" and low.disclaimer == DISCLAIMERS["LOW"]


def test_confidence_without_semantic_channel_is_never_high() -> None:
    plan = plan_query("format_money cents")
    conf = assess_confidence(plan, [Hit(CHUNK, 0.1, ("lexical", "graph"))], {}, quality())
    assert conf.level == "MEDIUM" and conf.score == pytest.approx(0.64)


def test_confidence_names_degraded_channels_and_empty_results() -> None:
    plan = plan_query("format money")
    q = quality(ChannelReport("semantic", "failed", detail="boom"))
    conf = assess_confidence(plan, [Hit(CHUNK, 0.1, ("lexical",))], {}, q)
    assert "semantic channel failed" in conf.reasons
    nothing = assess_confidence(plan, [], {}, q)
    assert (nothing.level, nothing.score, nothing.reasons) == ("LOW", 0.0, ("nothing matched the question",))


def test_graph_expansion_alone_is_not_agreement() -> None:
    plan = plan_query("format money cents")
    conf = assess_confidence(plan, [Hit(CHUNK, 0.0, ("lexical", "graph-expansion"))], {}, quality())
    assert not any(r.startswith("top result found by") for r in conf.reasons)


def test_result_to_dict_is_json(inventory: Inventory) -> None:
    result = retrieve(
        "format money",
        channels=inventory.channels,
        graph=inventory.graph,
        corpus=inventory.corpus,
        vector=embed("format money"),
        options=RetrievalOptions(k=3),
    )
    data = json.loads(json.dumps(result.to_dict()))
    assert data["confidence"]["level"] in ("HIGH", "MEDIUM", "LOW")
    assert [c["url"] for c in data["citations"]] == [c.url for c in result.citations]
    assert data["hits"][0]["url"] == page_url(result.hits[0].chunk.path, result.hits[0].chunk.start_line)
    assert data["context_tokens"] == result.context.tokens
    assert {c["name"] for c in data["search_quality"]["channels"]} == {"lexical", "semantic", "graph"}

"""Records validate themselves; page URLs; search quality; HIGH / MEDIUM / LOW confidence."""

from __future__ import annotations

import json

import pytest
from core_corpus import Inventory, build_inventory, embed, make_chunk

from oya.core.confidence import DISCLAIMERS, ConfidenceRule, assess_confidence
from oya.core.evidence import agreements, channel_files, gather_evidence
from oya.core.options import RetrievalOptions
from oya.core.pipeline import retrieve
from oya.core.query import plan_query
from oya.core.records import Chunk, Edge, Node
from oya.core.results import (
    ChannelReport,
    Citation,
    Confidence,
    Evidence,
    FileHit,
    Hit,
    SearchQuality,
    page_url,
)


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
OTHER = make_chunk("inventory/store.py", "Store", 1, "class Store:\n    pass")
FILES = (FileHit("inventory/utils.py", 1.0, (CHUNK.id,)), FileHit("inventory/store.py", 0.5, (OTHER.id,)))


def evidence(
    cosine: float | None = 0.7,
    convergence: tuple[int, ...] = (3, 1),
    voters: int = 3,
    overlap: bool | None = True,
    named: tuple[str, ...] = (),
    named_found: int = 0,
    leaders: int = 2,
    margin: float | None = 2.0,
) -> Evidence:
    top = ("lexical", "semantic")
    return Evidence(cosine, 0.5, convergence, voters, overlap, named, named_found, top, leaders, margin)


def test_gather_evidence_counts_channel_votes_and_names() -> None:
    paths = {CHUNK.id: CHUNK.path, OTHER.id: OTHER.path}
    votes = channel_files({"lexical": [CHUNK.id, OTHER.id], "semantic": [CHUNK.id], "graph": []}, paths)
    assert votes == {
        "lexical": ["inventory/utils.py", "inventory/store.py"],
        "semantic": ["inventory/utils.py"],
    }
    hits = [Hit(CHUNK, 0.1, ("lexical", "semantic")), Hit(OTHER, 0.05, ("lexical",))]
    plan = plan_query("format_money drops cents in Store.restock and inventory/ledger.py")
    ev = gather_evidence(
        plan, hits, [CHUNK, OTHER], FILES, votes, {"semantic": {CHUNK.id: 0.61, OTHER.id: 0.2}}
    )
    assert ev.cosine == pytest.approx(0.61)
    assert ev.convergence == (2, 1) and ev.voters == 2 and ev.overlap is True
    assert agreements(FILES, votes) == {"lexical": 2, "semantic": 1}
    # format_money is in the code found; restock and ledger.py are not
    assert ev.named == ("format_money", "restock", "ledger.py") and ev.named_found == 1
    assert ev.top_channels == ("lexical", "semantic")
    assert ev.leaders == 2 and ev.margin == pytest.approx(2.0)  # both rank utils.py first; 1.0 / 0.5
    apart = channel_files({"lexical": [CHUNK.id], "semantic": [OTHER.id]}, paths)
    assert gather_evidence(plan, hits, [CHUNK, OTHER], FILES, apart, {}).overlap is False
    assert gather_evidence(plan, hits, [CHUNK, OTHER], FILES, {"lexical": ["a"]}, {}).overlap is None


def test_confidence_high_when_every_channel_backs_the_first_file() -> None:
    high = assess_confidence(evidence(), quality())
    assert high.level == "HIGH" and high.disclaimer == DISCLAIMERS["HIGH"] and high.gaps == ()
    assert high.score == 1.0
    assert "first file found by 3 of 3 channels" in high.reasons
    assert "first file scores 2.00x the second" in high.reasons  # reported, not used for the level
    # two of three channels, one of them ranking it first: a majority, no gap, MEDIUM; a weak
    # cosine is no gap, nor is no channel ranking the first file first when all three have it
    two = assess_confidence(evidence(convergence=(2, 1)), quality())
    assert two.level == "MEDIUM" and two.gaps == () and two.score == 0.75
    assert assess_confidence(evidence(cosine=0.1, leaders=0, margin=1.0), quality()).level == "HIGH"
    # without the semantic channel two of two is all of them: no gap either
    assert (
        assess_confidence(evidence(cosine=None, voters=2, convergence=(2,), leaders=0), quality()).gaps == ()
    )


def test_each_gap_is_named_and_makes_low() -> None:
    rule = ConfidenceRule()
    cases = {
        "the first file is backed by 1 of 3 search channels": evidence(convergence=(1, 3)),
        "the search channels disagree: none of the first files is found by two of them": evidence(
            convergence=(3, 1), overlap=False
        ),
        "only 0 of 2 names the question spells (parse_money, cents_total) are in the code found": evidence(
            named=("parse_money", "cents_total")
        ),
        "no search channel ranks the first file first, and 2 of 3 have it at all": evidence(
            convergence=(2, 2), leaders=0
        ),
    }
    for gap, ev in cases.items():
        conf = assess_confidence(ev, quality(), rule)
        assert conf.gaps == (gap,), gap
        assert conf.level == "LOW" and conf.disclaimer == DISCLAIMERS["LOW"] and conf.reasons[0] == gap
        assert assess_confidence(ev, quality(), ConfidenceRule(low_gaps=2)).level == "MEDIUM"
    both = assess_confidence(evidence(convergence=(1, 1, 0)), quality(), rule)
    assert len(both.gaps) == 2  # backed by one channel, and no file by two
    alone = Evidence(0.5, 0.5, (1, 0), 3, True, (), 0, ("semantic",))
    assert assess_confidence(alone, quality()).gaps[0].endswith("search channels (semantic search)")
    # half the names found is enough
    assert assess_confidence(evidence(named=("a_b", "c_d"), named_found=1), quality()).gaps == ()


def test_confidence_without_semantic_channel_is_never_high() -> None:
    conf = assess_confidence(evidence(cosine=None), quality())
    assert conf.level == "MEDIUM" and conf.gaps == ()
    failed = quality(ChannelReport("semantic", "failed", detail="boom"))
    conf = assess_confidence(evidence(cosine=None, voters=2, convergence=(2,)), failed)
    assert conf.level == "MEDIUM" and conf.gaps == ("semantic channel failed",)


def test_nothing_found_is_low() -> None:
    q = quality(ChannelReport("semantic", "failed", detail="boom"))
    nothing = assess_confidence(evidence(), q, found=False)
    assert (nothing.level, nothing.score) == ("LOW", 0.0)
    assert nothing.reasons == nothing.gaps == ("nothing matched the question", "semantic channel failed")


def test_summary_reports_the_channels_agreement() -> None:
    q = SearchQuality(
        "debug",
        (ChannelReport("lexical", "ran", 4),),
        found=4,
        used=2,
        evidence=evidence(convergence=(3, 2, 1, 1, 0)),
    )
    # the browser's footer says the same (tests/js/answer.test.js, agreementText)
    assert q.summary().endswith("; top files found by 3/2/1/1/0 of 3 channels")


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
    ev = data["search_quality"]["evidence"]
    assert ev["voters"] >= 1 and len(ev["convergence"]) == min(len(result.files), 5)
    assert data["confidence"]["gaps"] == list(result.confidence.gaps)
    assert all("agrees" in c for c in data["search_quality"]["channels"])

"""The extractive answer and the check of a model's proposed citations."""

from __future__ import annotations

import re

import pytest
from core_corpus import Inventory, ask, build_inventory

from oya.core.answer import extractive_answer, first_sentence, validate_citations


@pytest.fixture(scope="module")
def inventory() -> Inventory:
    return build_inventory()


def test_extractive_answer_cites_only_retrieved_code(inventory: Inventory) -> None:
    result = ask(inventory, "reserve stock OutOfStockError", k=2, seed_count=1)
    answer = extractive_answer(result)
    assert answer.method == "extractive"
    assert answer.text.startswith("The most relevant code:")
    assert set(answer.citations) <= set(result.citations)
    numbers = [int(n) for n in re.findall(r"^\[(\d+)\]", answer.text, re.M)]
    assert numbers == list(range(1, len(answer.citations) + 1))
    # the best hit is described by its signature and the first sentence of its docstring
    assert "`def reserve(self, sku: str, quantity: str) -> None`" in answer.text
    assert "Reserve stock of an item; raise OutOfStockError when too few are left." in answer.text
    assert "Connected code (through the code graph):" in answer.text


def test_extractive_answer_for_a_doc_hit(inventory: Inventory) -> None:
    result = ask(inventory, "negative quantities are rejected", k=1, include=("docs",))
    answer = extractive_answer(result)
    assert "docs/guide.md:1-3" in answer.text
    assert (
        "A quantity is parsed from text by parse_quantity; negative quantities are rejected." in answer.text
    )


def test_extractive_answer_limits_items(inventory: Inventory) -> None:
    result = ask(inventory, "item storage stock", k=8)
    answer = extractive_answer(result, max_items=2)
    hit_ids = {h.chunk.id for h in result.hits}
    assert len([c for c in answer.citations if c.chunk_id in hit_ids]) <= 2


def test_extractive_answer_without_results(inventory: Inventory) -> None:
    result = ask(inventory, "zebra xylophone", channels=("lexical",))
    answer = extractive_answer(result)
    assert answer.citations == ()
    assert answer.text.startswith("No code in the index matches")


def test_validate_citations(inventory: Inventory) -> None:
    result = ask(inventory, "reserve stock OutOfStockError", k=3)
    first = result.citations[0]
    proposed = [
        (first.path, first.start_line),
        (first.path, first.end_line),  # the same citation again: kept once
        (first.path, None),  # no line: any snippet of that file
        (first.path, first.end_line + 1000),  # outside every snippet
        ("made/up.py", 1),
    ]
    kept, rejected = validate_citations(proposed, result)
    assert kept == (first,)
    assert rejected == 2
    assert validate_citations([], result) == ((), 0)


def test_first_sentence() -> None:
    assert first_sentence("Parse a thing. Then more.") == "Parse a thing."
    assert first_sentence("  no   full stop  ") == "no full stop"
    long = first_sentence("word " * 100, limit=20)
    assert len(long) == 20 and long.endswith("…")


def test_answer_items_are_structured(inventory: Inventory) -> None:
    result = ask(inventory, "reserve stock OutOfStockError", k=2, seed_count=1)
    answer = extractive_answer(result)
    data = answer.to_dict()
    assert set(data) == {"method", "note", "text", "items", "citations"}
    items = data["items"]
    assert [i["n"] for i in items] == list(range(1, len(answer.citations) + 1))
    assert len(items) == len(data["citations"])
    first = items[0]
    assert set(first) == {
        "n", "kind", "symbol", "symbol_kind", "title", "path", "span", "url",
        "signature", "summary", "snippet", "reason",
    }  # fmt: skip
    assert first["kind"] == "match"
    assert first["symbol"] == "InventoryService.reserve" and first["symbol_kind"] == "method"
    assert first["signature"] == "def reserve(self, sku: str, quantity: str) -> None"
    assert first["summary"] == "Reserve stock of an item; raise OutOfStockError when too few are left."
    cit = answer.citations[0]
    assert first["span"] == [cit.start_line, cit.end_line] and first["url"] == cit.url
    snippet = next(s for s in result.context.snippets if s.citation == cit)
    assert first["snippet"] == snippet.text
    assert set(first["reason"].split("+")) <= {"bm25", "vector", "name"}
    connected = [i for i in items if i["kind"] == "connected"]
    assert connected and all(i["reason"].startswith("graph") for i in connected)
    assert any(i["reason"] in ("graph:calls", "graph:contains", "graph:imports") for i in connected)
    # the plain text is a rendering of the same items
    for item in answer.items:
        assert item.line() in answer.text


def test_answer_item_for_a_chunk_without_a_symbol(inventory: Inventory) -> None:
    result = ask(inventory, "negative quantities are rejected", k=1, include=("docs",))
    item = extractive_answer(result).items[0]
    assert item.symbol == "" and item.symbol_kind == "chunk" and item.signature == ""
    assert item.summary.startswith("A quantity is parsed from text by parse_quantity")
    assert item.path == "docs/guide.md"


def test_no_match_has_no_items(inventory: Inventory) -> None:
    answer = extractive_answer(ask(inventory, "zebra xylophone", channels=("lexical",)))
    assert answer.items == () and answer.to_dict()["items"] == []

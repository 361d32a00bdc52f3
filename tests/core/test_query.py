"""Intent classification, channel weights, and the precise sub-query of a long bug report."""

from __future__ import annotations

import pytest

from oya.core.query import (
    CHANNEL_WEIGHTS,
    classify_intent,
    extract_identifiers,
    plan_query,
)
from oya.core.tokenize import tokenize


@pytest.mark.parametrize(
    ("question", "intent"),
    [
        ("where is parse_quantity defined", "lookup"),
        ("which file handles money formatting", "lookup"),
        ("find the storage class", "lookup"),
        ("parse_quantity", "lookup"),
        ("InventoryService", "lookup"),
        ("TypeError in format_money", "debug"),
        ("why does reserve raise OutOfStockError", "debug"),
        ("saving fails with a traceback", "debug"),
        ("the report is broken after the upgrade", "debug"),
        ('File "inventory/cli.py", line 3, in main', "debug"),
        ("what is the overall architecture", "architecture"),
        ("explain the module structure", "architecture"),
        ("components and layers of the package", "architecture"),
        ("how does the storage layer save items", "conceptual"),
        ("what happens when an item is saved", "conceptual"),
        ("explain low stock reports", "conceptual"),
        ("list all the things", "general"),
        ("money", "general"),
    ],
)
def test_classify_intent(question: str, intent: str) -> None:
    assert classify_intent(question) == intent


def test_plan_for_a_short_question() -> None:
    plan = plan_query("  where is parse_quantity defined  ")
    assert plan.text == "where is parse_quantity defined"
    assert plan.intent == "lookup"
    assert plan.weights == CHANNEL_WEIGHTS  # the same for every intent
    assert plan.lexical_tokens == tuple(tokenize(plan.text))
    assert plan.identifiers == ("parse_quantity",)


def test_plan_options() -> None:
    assert plan_query("where is x", intent="conceptual").intent == "conceptual"
    with pytest.raises(ValueError, match="lookup, debug"):
        plan_query("x", intent="nonsense")


def test_plan_weights_are_a_copy() -> None:
    plan_query("where is x").weights["lexical"] = 99.0
    assert CHANNEL_WEIGHTS["lexical"] == 1.0


TRACEBACK_REPORT = """\
After upgrading, reserving stock fails every time. I was running the nightly job like we always do,
and I expected the report to come out as usual, but it crashed with the traceback below. We did not
change anything in our configuration and the machine has plenty of memory and disk space left, so I
do not think it is an environment issue. Here it is:

Traceback (most recent call last):
  File "inventory/cli.py", line 42, in main
    service.reserve(args.sku, qty)
  File "inventory/service.py", line 88, in reserve
    item = self.storage.get_item(sku)
  File "inventory/storage.py", line 120, in get_item
    raise KeyError(sku)
KeyError: 'ABC-1'

During handling, OutOfStockError was raised by InventoryService.reserve. Please help, this is urgent.
"""


def test_long_question_without_identifiers_keeps_all_tokens() -> None:
    question = " ".join(["please tell me about saving items in stock"] * 12)
    plan = plan_query(question)
    assert plan.lexical_tokens == tuple(tokenize(plan.text))


def test_extract_identifiers_kinds() -> None:
    idents, paths = extract_identifiers(
        "getUser calls parse_quantity in utils.py; JsonStorage raised ValueError via os.path.join"
    )
    assert idents == ["getUser", "parse_quantity", "JsonStorage", "ValueError", "os.path.join"]
    assert paths == ["utils.py"]
    assert extract_identifiers("nothing special here") == ([], [])

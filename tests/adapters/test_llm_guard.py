"""The degenerate-output checks and the machine-speed time limit, on plain text and numbers.

The answering loop that uses them is tested with fake models in test_llm.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oya.query.llm_guard import citations_before, degenerate_reason, final_reason, ungrounded_name
from oya.query.llm_speed import MAX_LIMIT, MIN_LIMIT, SLACK, Speed, SpeedRecord, time_limit

REAL_ANSWERS = [
    # answers the survey's models gave, right or wrong, none of them degenerate
    "A group finds its subcommand by taking the first remaining argument as the name, calling "
    "get_command with it, and failing with 'No such command' when the name is unknown.",
    "Abort sets the index to abortIndex so the remaining handlers are not called; the current "
    "handler still runs to its end. AbortWithStatus also writes the status code.",
    "The value of the option is read from the value of the environment variable named by the "
    "prefix and the name of the option, and the value of the default is used otherwise.",
    "Yes, it is stripped when the output is not a terminal.",
]


@pytest.mark.parametrize("text", REAL_ANSWERS)
def test_ordinary_answers_are_not_degenerate(text: str) -> None:
    assert degenerate_reason(text) is None
    assert final_reason(text, "some question?") is None


@pytest.mark.parametrize(
    "text",
    [
        "The answer is: " * 3,
        "It restocks the item. " * 3,
        "the the the the",
        "Abort stops the chain " + "and " * 4,
        "See " + "!" * 12,
        "ab" * 10,
        # a loop that varies a word now and then: caught by the 4-gram diversity
        " ".join(f"the handler calls the next handler {i % 2} then" for i in range(8)),
    ],
)
def test_loops_are_degenerate(text: str) -> None:
    assert degenerate_reason(text) is not None


def test_a_loop_is_seen_while_it_grows_not_only_at_the_end() -> None:
    grown = ""
    for word in ("The answer is: " * 5).split(" "):
        grown += word + " "
        if degenerate_reason(grown) is not None:
            break
    assert grown.count("The answer is:") == 3  # the third repeat, no later


def test_citations_are_read_before_the_answer_key() -> None:
    buffer = json.dumps({"citations": [{"path": "a.py", "line": 3}, {"path": 1}], "answer": "x"})
    assert citations_before(buffer, buffer.index('"answer"')) == [("a.py", 3)]
    first = json.dumps({"answer": "x", "citations": []})
    assert citations_before(first, first.index('"answer"')) is None  # not written yet


def test_the_time_limit_follows_the_measured_speed() -> None:
    assert time_limit(None, 1000, 120.0) == 120.0  # nothing measured: the fixed default
    fast, slow = Speed(read_tps=1000.0, write_tps=100.0), Speed(read_tps=50.0, write_tps=8.0)
    assert time_limit(fast, 1000, 120.0) == MIN_LIMIT  # 3 x (1 + 2) s, under the floor
    assert time_limit(slow, 1000, 120.0) == pytest.approx(SLACK * (1000 / 50 + 200 / 8))
    assert time_limit(Speed(1.0, 1.0), 10_000, 120.0) == MAX_LIMIT


def test_the_speed_record_moves_halfway_and_survives_junk(tmp_path: Path) -> None:
    record = SpeedRecord(tmp_path)
    assert record.get("m") is None
    record.update("m", read_tps=100.0)
    first = record.get("m")
    assert first is not None and first.read_tps == 100.0 and 0 < first.write_tps < 100.0  # assumed
    record.update("m", read_tps=50.0, write_tps=10.0)
    assert record.get("m") == Speed(75.0, round((first.write_tps + 10.0) / 2, 2))
    (tmp_path / "speed.json").write_text("not json", encoding="utf-8")
    assert record.get("m") is None


def test_code_names_are_read_in_single_and_double_backticks() -> None:
    corpus = "def scan(path):\n    st = os.stat(path)  # compare with the previous record\n"
    # a docstring's ``name``: the words between two spans are prose, not a span
    text = "It keeps the ``stat`` of each file and comparing it to its ``previous`` record."
    assert ungrounded_name(text, corpus) is None
    assert ungrounded_name("It calls `scan` then ``restat_all``.", corpus) == "restat_all"
    assert ungrounded_name("It calls scan_twice on the path.", corpus) == "scan_twice"

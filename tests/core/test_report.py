"""A long pasted report condensed to what locates the bug (``oya.core.report``)."""

from __future__ import annotations

import json

import pytest
from test_bundle_format import tiny_bundle

from bench.variants.whole_bundle import decode_bundle
from oya.core.bundle import ask_json
from oya.core.query import MAX_QUESTION_CHARS
from oya.core.report import FRAMES_KEPT, condense_report

TITLE = "Crash when parsing a header with a zero length"
STORY = "I upgraded to 3.2 and the parser now crashes on some inputs.\nSteps: run the script below.\n"
TRACE = (
    "Traceback (most recent call last):\n"
    '  File "/app/main.py", line 10, in <module>\n'
    "    parse(buf)\n"
    '  File "/usr/lib/python3/site-packages/lib/header.py", line 42, in parse_header\n'
    "    raise HeaderError(length)\n"
    "lib.errors.HeaderError: zero length\n"
)


def _log(n: int) -> str:
    return "".join(
        f"2024-01-01 10:00:{i % 60:02d} INFO worker {i} processed batch number {i}\n" for i in range(n)
    )


def test_a_report_that_fits_is_left_alone() -> None:
    assert condense_report(TITLE + "\n" + STORY, 20_000) is None


def test_the_title_the_error_and_its_frames_survive_a_long_log() -> None:
    report = TITLE + "\n" + STORY + "\n" + _log(2_000) + TRACE
    assert len(report) > 100_000
    condensed = condense_report(report, 20_000)
    assert condensed is not None
    assert len(condensed.text) <= 20_000
    assert condensed.text.startswith(TITLE + "\n" + STORY.split("\n")[0])
    for line in ("HeaderError: zero length", 'header.py", line 42, in parse_header', "Traceback"):
        assert line in condensed.text
    assert condensed.text.index("Traceback") > condensed.text.index(TITLE)  # the report's own order
    # the first cut of H3's rule (the first 20,000 characters) lost the error
    assert "HeaderError" not in report[:20_000]
    assert condensed.original_chars == len(report)
    assert condensed.dropped_lines > 0
    note = condensed.note()
    assert f"{len(report):,} characters" in note and "dropped" in note


def test_repeated_lines_count_once() -> None:
    report = TITLE + "\n" + "the same warning about a deprecated flag, again\n" * 5_000 + TRACE
    condensed = condense_report(report, 20_000)
    assert condensed is not None
    assert condensed.text.count("the same warning") == 1
    assert condensed.repeated_lines == 4_999


def test_a_deep_recursion_keeps_its_two_ends() -> None:
    frames = "".join(f'  File "/app/walk.py", line {i}, in walk_{i}\n    walk(node)\n' for i in range(3_000))
    report = (
        TITLE + "\n" + "Traceback (most recent call last):\n" + frames + "RecursionError: maximum depth\n"
    )
    condensed = condense_report(report, 4_000)  # room for the two ends, not for the middle
    assert condensed is not None
    half = FRAMES_KEPT // 2
    for i in (0, half - 1, 3_000 - half, 2_999):  # the two ends, whole
        assert f"in walk_{i}\n" in condensed.text
    assert "in walk_1500\n" not in condensed.text  # the middle only if room is left
    assert "RecursionError: maximum depth" in condensed.text


def test_a_report_read_only_in_part_says_more_than() -> None:
    condensed = condense_report(TITLE + "\n" + _log(500), 1_000)
    assert condensed is not None
    said = f"the question is more than {condensed.original_chars:,} characters long"
    assert condensed.note(more=True).startswith(said)
    assert "more than" not in condensed.note()


def test_the_bundle_condenses_a_long_question_and_says_so() -> None:
    """``Bundle.ask`` (the browser's entry, through ``ask_json``) condenses as the CLI does: it
    refused a question over the limit before; ``retrieve`` still does."""
    bundle = decode_bundle(json.dumps(tiny_bundle()))
    report = TITLE + "\n" + STORY + "\n" + _log(1_000) + TRACE
    condensed = condense_report(report, MAX_QUESTION_CHARS)
    assert condensed is not None
    out = json.loads(ask_json(bundle, json.dumps({"question": report})))
    assert out["question"] == condensed.text and "HeaderError: zero length" in out["question"]
    assert out["question_note"] == condensed.note()
    assert "question_note" not in bundle.ask(TITLE)
    with pytest.raises(ValueError, match="the limit is 20,000"):
        bundle.retrieve(report)

"""The Ask panel and long questions, in a real offline Chromium (issue 11).

A 16,000-character one-word question used to take 12.6 s in the panel (the core's identifier
extraction was quadratic), and a ``?ask=`` link asks as soon as the page opens. Now a long
question costs about what a short one does, and one over the core's limit is condensed by the core
in the worker (``oya.core.report``: the title, errors, stack frames), with the line the CLI says
(issue 24; issue 22 cut it to its first 20,000 characters, which lost the error at the end).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from test_ask_panel import ANSWERED, FILE_PAGE, ask_in_panel, serve

from oya.core.query import MAX_QUESTION_CHARS
from oya.core.report import condense_report

pytestmark = pytest.mark.slow

ASK_UTIL_JS = Path(__file__).resolve().parents[2] / "site_template" / "static" / "ask" / "util.js"


def test_the_panel_and_the_core_share_the_limit() -> None:
    found = re.search(r"export const MAX_QUESTION_CHARS = (\d+);", ASK_UTIL_JS.read_text(encoding="utf-8"))
    assert found and int(found.group(1)) == MAX_QUESTION_CHARS


def test_a_long_one_word_question_costs_about_what_a_short_one_does(ask_site: Any, browser_page: Any) -> None:
    page = browser_page.page
    with serve(ask_site.root) as server:
        page.goto(server.url + FILE_PAGE)
        page.click("#ask-toggle")
        ask_in_panel(page, "Where is the low stock report built?")  # cold start paid here
        short = ask_in_panel(page, "How do I restock an existing item?")
        long = ask_in_panel(page, "restock" + "aB_." * 4_000)  # 16,007 characters, one word
        entry = page.locator(".ask-entry").last
        assert entry.locator(".ask-banner").count() == 1, entry.inner_text()  # answered, not refused
    print(f"short question {short:.2f} s, 16,007-character one-word question {long:.2f} s")
    assert long < 5 * short + 1.0, (short, long)  # was 12.6 s


def test_an_over_long_deep_link_is_condensed_answered_and_says_so(ask_site: Any, browser_page: Any) -> None:
    """Past the limit the panel asks what the core condensed (the title and the error at the end,
    not the first 20,000 characters) and shows the core's line, as ``oya ask`` prints it."""
    page = browser_page.page
    title = "How is stock removed when an order ships?"
    error = "ValueError: cannot remove more units than are in stock (remove_stock)"
    question = f"{title}\n{'x' * 60_000}\n{error}"  # (Python's server refuses request lines over 64 kB)
    condensed = condense_report(question, MAX_QUESTION_CHARS)
    assert condensed is not None and error not in question[:MAX_QUESTION_CHARS]
    with serve(ask_site.root) as server:
        page.goto(server.url + FILE_PAGE + "?ask=" + quote(question))  # (nginx refuses lines over 8 kB)
        page.wait_for_selector(ANSWERED)
        entry = page.locator(".ask-entry").last
        note = entry.locator(".ask-question-note").text_content()
        assert note == condensed.note(), note
        assert note.startswith("the question is 60,112 characters long; "), note
        assert entry.locator(".ask-banner").count() == 1, entry.inner_text()  # answered, not refused
        assert entry.locator(".ask-error").count() == 0
        shown = entry.locator(".ask-q-text").text_content()
        assert shown == condensed.text, shown[:200]
        assert shown.startswith(title + "\n") and shown.endswith("\n" + error)

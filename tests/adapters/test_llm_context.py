"""What a local model reads (oya.query.llm_context): whole first-ranked snippets, no line numbers;
and when its answer gives way to the extractive one: LOW confidence, an off-topic answer, an
answer resting on tests alone (oya.query.llm_guard).

The answering loop is real; ``FakeLlama`` (tests/adapters/fake_models.py) only records the
prompt it was given and streams a canned reply, so the tests can read what the model read.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from fake_models import FakeLlama

from oya.core.results import Confidence, RetrievalResult
from oya.core.tokenize import count_tokens
from oya.query.llm import LlamaAnswerer, build_messages
from oya.query.llm_context import fit_context
from oya.query.llm_guard import off_topic_reason
from oya.query.llm_server import OpenAIServerAnswerer
from oya.query.searcher import Searcher
from pipelines.build import run_build

NEEDLE = 'return "parcel_total_needle"'
QUESTION = "How does weigh_parcels compute the parcel total?"
# one function of ~300 core tokens: more than the core packer's share of 800 (a quarter),
# less than half of it; the line that answers is its last
_LONG = (
    "def weigh_parcels(sku: str) -> str:\n"
    '    """Weigh every parcel of ``sku`` and report the parcel total."""\n'
    + "".join(f"    weight_{i} = scale_reading(sku, slot={i}) + tare_offset({i})\n" for i in range(20))
    + f"    {NEEDLE}\n"
)
_OTHER = '''\
def scale_reading(sku: str, slot: int) -> float:
    """One reading of the parcel scale."""
    return float(slot)


def tare_offset(slot: int) -> float:
    """The empty scale's weight for ``slot``."""
    return 0.5 * slot
'''


_TEST = """\
from parcels.weigh import weigh_parcels


def test_weigh_parcels_reports_the_parcel_total() -> None:
    assert weigh_parcels("sku-1") == "parcel_total_needle"
"""


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("llm_context")
    repo = base / "repo"
    (repo / "parcels").mkdir(parents=True)
    (repo / "parcels" / "weigh.py").write_text(_LONG, encoding="utf-8")
    (repo / "parcels" / "scale.py").write_text(_OTHER, encoding="utf-8")
    (repo / "tests").mkdir()
    (repo / "tests" / "test_weigh.py").write_text(_TEST, encoding="utf-8")
    run_build(repo, base / "idx", embedder="hashing", cache_dir=base / "cache")
    return base / "idx"


def _reply(path: str, line: int) -> str:
    return json.dumps({"citations": [{"path": path, "line": line}], "answer": "It sums the weights."})


def _asked(index_dir: Path, answerer: LlamaAnswerer | OpenAIServerAnswerer) -> RetrievalResult:
    with Searcher.open(index_dir) as searcher:
        return searcher.search(QUESTION, options=answerer.retrieval_options(8))


def test_a_local_model_reads_the_first_ranked_function_whole(index_dir: Path) -> None:
    fake = FakeLlama("")
    answerer = LlamaAnswerer(llm=fake)
    result = _asked(index_dir, answerer)
    first = result.context.snippets[0]
    assert first.citation.path == "parcels/weigh.py"
    assert first.truncated and NEEDLE not in first.text, (
        "the core's packer must cut it for this to mean anything"
    )
    fake.reply = _reply("parcels/weigh.py", first.citation.start_line)
    answer = answerer.answer(QUESTION, result)
    assert NEEDLE in fake.prompt  # the line that answers reached the model
    assert answer.method == "llama" and answer.citations[0].end_line >= _LONG.count("\n")


def test_a_local_prompt_has_no_line_numbers_and_its_citations_still_check(index_dir: Path) -> None:
    fake = FakeLlama("")
    answerer = LlamaAnswerer(llm=fake)
    result = _asked(index_dir, answerer)
    fake.reply = _reply("parcels/weigh.py", result.citations[0].start_line)
    answer = answerer.answer(QUESTION, result)
    assert "--- parcels/weigh.py lines 1-" in fake.prompt
    assert "\n1: def weigh_parcels" not in fake.prompt and "\ndef weigh_parcels" in fake.prompt
    assert answer.method == "llama" and answer.citations[0].path == "parcels/weigh.py"
    # a server may cite any line, so its prompt keeps them numbered
    server = build_messages(QUESTION, _asked(index_dir, OpenAIServerAnswerer("http://127.0.0.1:9")))
    assert "\n1: def weigh_parcels" in server[1]["content"]


def test_fitting_keeps_the_budget_the_rank_order_and_reads_nothing_twice(index_dir: Path) -> None:
    result = _asked(index_dir, LlamaAnswerer(llm=FakeLlama("")))
    doubled = replace(result, hits=result.hits + result.hits)
    for budget in (60, 200, 400, 800):
        fitted = fit_context(doubled, budget)
        spans = [(c.path, c.start_line) for c in fitted.citations]
        assert len(spans) == len(set(spans)), "a chunk was read twice"
        assert fitted.context.tokens <= budget
        assert sum(count_tokens(s.text) for s in fitted.context.snippets) <= budget
        assert fitted.citations[0].path == result.hits[0].chunk.path  # the first-ranked first
        assert [s.citation for s in fitted.context.snippets] == list(fitted.citations)


# -- when the model's answer is not shown ----------------------------------------------------
def _at(result: RetrievalResult, level: str) -> RetrievalResult:
    return replace(result, confidence=Confidence(level, 0.0, f"{level} (test)"))


def test_at_low_confidence_the_local_model_is_not_asked(index_dir: Path) -> None:
    fake = FakeLlama("")
    answerer = LlamaAnswerer(llm=fake)
    result = _asked(index_dir, answerer)
    fake.reply = _reply("parcels/weigh.py", result.citations[0].start_line)
    low = answerer.answer(QUESTION, _at(result, "LOW"))
    assert low.method == "extractive" and not fake.calls
    assert "confidence is LOW" in low.note and "not asked" in low.note
    for level in ("MEDIUM", "HIGH"):
        assert answerer.answer(QUESTION, _at(result, level)).method == "llama"


def test_an_answer_sharing_no_word_with_the_question_is_not_shown(index_dir: Path) -> None:
    answerer = LlamaAnswerer(llm=FakeLlama(""))
    result = _at(_asked(index_dir, answerer), "HIGH")
    first = result.citations[0]
    answerer.load().reply = json.dumps(  # a docstring sentence about something else, copied
        {"citations": [{"path": first.path, "line": first.start_line}], "answer": "A relative site URL."}
    )
    answer = answerer.answer(QUESTION, result)
    assert answer.method == "extractive" and "shares no word with the question" in answer.note
    # the same words, or a part of a name, are enough
    assert off_topic_reason("It adds the parcel weights.", QUESTION) is None
    assert off_topic_reason("It sums every weight_3 reading.", QUESTION) is None


def test_an_answer_citing_only_tests_stops_before_it_is_written(index_dir: Path) -> None:
    fake = FakeLlama("")
    answerer = LlamaAnswerer(llm=fake)
    result = _at(_asked(index_dir, answerer), "HIGH")
    test = next(c for c in result.citations if c.path.startswith("tests/"))
    fake.reply = _reply(test.path, test.start_line)
    shown: list[str] = []
    answer = answerer.answer_stream(QUESTION, result, shown.append)
    assert answer.method == "extractive" and "only test code" in answer.note
    assert not shown  # rejected with the citations, before a word of the answer
    # a question about the tests may rest on them
    asked = "Which test checks the parcel total of weigh_parcels?"
    assert answerer.answer(asked, result).method == "llama"

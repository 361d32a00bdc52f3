"""The static variant's WordPiece tokenizer (bench/variants/static) on a small vocabulary: each
rule of the library it copies.

Parity with the ``tokenizers`` library itself (real MiniLM vocabulary, real texts, every code point)
is tests/bench/test_wordpiece_parity.py; these run with the standard library only.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bench.variants.static import wordpiece
from bench.variants.static.wordpiece import WordPiece, pre_tokenize

VOCAB = [
    "[PAD]",
    "[UNK]",
    "[CLS]",
    "[SEP]",
    "[MASK]",
    "short",
    "##est",
    "_",
    "path",
    "##s",
    "graph",
    "un",
    "##able",
    "cafe",
    "(",
    ")",
    "中",
    "a",
    "##b",
    "##c",
    "é",
]


def names(wp: WordPiece, text: str, max_tokens: int | None = None) -> list[str]:
    return [VOCAB[i] for i in wp.encode(text, max_tokens)]


@pytest.fixture
def wp() -> WordPiece:
    return WordPiece(VOCAB)


def test_longest_match_first_with_continuations(wp: WordPiece) -> None:
    assert names(wp, "shortest_paths(graph)") == ["short", "##est", "_", "path", "##s", "(", "graph", ")"]


def test_a_word_with_an_unmatched_piece_is_one_unk(wp: WordPiece) -> None:
    assert names(wp, "unable unablex graph") == ["un", "##able", "[UNK]", "graph"]


def test_a_word_over_100_characters_is_one_unk(wp: WordPiece) -> None:
    assert names(wp, "a" + "b" * 99) == ["a"] + ["##b"] * 99
    assert names(wp, "a" + "b" * 100) == ["[UNK]"]


def test_lower_case_and_accents_stripped(wp: WordPiece) -> None:
    # NFD then the non-spacing mark dropped: "É" -> "e" + U+0301 -> "e"
    assert names(wp, "CAFÉ Graph") == ["cafe", "graph"]


def test_cjk_ideographs_stand_alone(wp: WordPiece) -> None:
    assert names(wp, "graph中graph") == ["graph", "中", "graph"]


def test_control_characters_vanish_and_join_their_neighbours(wp: WordPiece) -> None:
    # U+000B and U+0085 are White_Space but also controls: the library drops them before mapping spaces
    assert names(wp, "gr\x00a\x0bph") == ["graph"]
    assert names(wp, "gr\u0085aph\u200bs") == ["graph", "##s"]  # U+200B is a format character
    assert names(wp, "path\u00a0graph\u3000path") == ["path", "graph", "path"]


def test_special_tokens_written_in_the_text_keep_their_ids(wp: WordPiece) -> None:
    assert names(wp, "graph[MASK]path [SEP]") == ["graph", "[MASK]", "path", "[SEP]"]
    # written otherwise it is text: "[", "mask" and "]" are no pieces of this vocabulary
    assert names(wp, "[mask]") == ["[UNK]", "[UNK]", "[UNK]"]


def test_truncation_keeps_the_first_ids(wp: WordPiece) -> None:
    assert names(wp, "shortest paths graph", max_tokens=3) == ["short", "##est", "path"]


def test_vocabulary_must_be_consistent() -> None:
    with pytest.raises(ValueError):
        WordPiece(["a", "a", "[UNK]"])
    with pytest.raises(ValueError):
        WordPiece(["a"])


def test_the_library_view_of_characters_it_does_not_know() -> None:
    # U+0890 (ARABIC POUND MARK ABOVE, Unicode 14) is unknown to the library's tables: kept as is
    assert wordpiece.category("\u0890") == "Cn"
    assert wordpiece.category("a") == "Ll"
    assert wordpiece.category("\u166d") == "Po"


@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=200))
def test_the_ascii_fast_path_equals_the_general_path(text: str) -> None:
    general = pre_tokenize("\u00e9" + text)  # a non-ASCII first character takes the general path
    fast = pre_tokenize(text)
    assert general[0].startswith("e")
    rest = general[0][1:]
    assert ([rest] if rest else []) + general[1:] == fast

"""The code-aware tokenizer: identifier splits, ASCII-only tokens, and the token estimate."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from oya.core.tokenize import STOPWORDS, count_tokens, split_identifier, tokenize, truncate_to_tokens

TOKEN = re.compile(r"[a-z0-9_]+")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("get_user", ["get_user", "get", "user"]),
        ("camelCase", ["camelcase", "camel", "case"]),
        ("HTTPServer", ["httpserver", "http", "server"]),
        ("XMLHttpRequest", ["xmlhttprequest", "xml", "http", "request"]),
        ("parseHTTPResponse_v2", ["parsehttpresponse_v2", "parse", "http", "response", "v", "2"]),
        ("utf8", ["utf8", "utf", "8"]),
        ("IOError", ["ioerror", "io", "error"]),
        ("ABC", ["abc"]),
        ("__init__", ["init"]),
        ("oya/core/bm25.py", ["oya", "core", "bm25", "bm", "25", "py"]),
        ("os.path.join", ["os", "path", "join"]),
        ("pkg::Class.method", ["pkg", "class", "method"]),
        ("café naïve", ["cafe", "naive"]),
        ("ﬁle ²", ["file", "2"]),  # compatibility forms fold to ASCII
        ("日本語 foo", ["foo"]),  # no ASCII form: dropped, never garbage
        ("kebab-case-name", ["kebab", "case", "name"]),
    ],
)
def test_splits(text: str, expected: list[str]) -> None:
    assert tokenize(text) == expected


def test_stopwords_dropped_but_code_keywords_kept() -> None:
    assert tokenize("how is the user saved") == ["user", "saved"]
    assert tokenize("yield async def") == ["yield", "async", "def"]
    # a stopword inside an identifier is dropped as a part, the identifier itself stays
    assert tokenize("is_valid") == ["is_valid", "valid"]


def test_duplicates_are_kept_for_term_frequency() -> None:
    assert tokenize("user user User") == ["user", "user", "user"]


def test_split_identifier() -> None:
    assert split_identifier("parseHTTPResponse_v2") == ["parse", "http", "response", "v", "2"]
    assert split_identifier("snake_case_name") == ["snake", "case", "name"]
    assert split_identifier("___") == []


def test_empty_and_punctuation_only() -> None:
    assert tokenize("") == []
    assert tokenize("  ...  -> :: () ") == []


@given(st.text())
def test_tokens_are_lowercase_ascii_words(text: str) -> None:
    for tok in tokenize(text):
        assert TOKEN.fullmatch(tok), tok
        assert tok not in STOPWORDS
        assert not tok.startswith("_") and not tok.endswith("_")


@given(st.text(alphabet=st.characters(codec="ascii"), max_size=80))
def test_tokenize_is_deterministic_and_whitespace_joinable(text: str) -> None:
    toks = tokenize(text)
    assert toks == tokenize(text)
    # the DuckDB index stores the tokens space-joined; splitting gives them back
    assert " ".join(toks).split() == toks


@given(st.lists(st.from_regex(r"[a-z]{3,8}", fullmatch=True), min_size=1, max_size=5))
def test_snake_case_yields_whole_and_parts(words: list[str]) -> None:
    ident = "_".join(words)
    toks = tokenize(ident)
    kept = [w for w in words if w not in STOPWORDS]
    if len(words) > 1:
        assert toks[0] == ident
        assert toks[1:] == kept
    else:
        assert toks == kept


@pytest.mark.parametrize(
    ("text", "n"),
    [
        ("", 0),
        ("hello", 1),
        ("def foo(x): return x+1", 10),
        ("a.b", 3),
        ("x\n\n  y", 2),
    ],
)
def test_count_tokens(text: str, n: int) -> None:
    assert count_tokens(text) == n


@given(st.text(), st.text())
def test_count_tokens_adds_across_whitespace(a: str, b: str) -> None:
    assert count_tokens(a + "\n" + b) == count_tokens(a) + count_tokens(b)


def test_truncate_to_tokens() -> None:
    assert truncate_to_tokens("a.b(c) d", 3) == "a.b"
    assert truncate_to_tokens("a b", 5) == "a b"
    assert truncate_to_tokens("a b", 0) == ""


@given(st.text(max_size=60), st.integers(0, 30))
def test_truncate_to_tokens_property(text: str, limit: int) -> None:
    cut = truncate_to_tokens(text, limit)
    assert text.startswith(cut)
    assert count_tokens(cut) == min(limit, count_tokens(text))

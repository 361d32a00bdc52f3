"""The suffix folding variant (bench/variants/suffix_folds.py): the folds it makes, and that it
only adds tokens. It left the core's tokenizer (docs/quality.md, ablation "suffix folding on")."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bench.variants.suffix_folds import fold_suffix, with_folds
from oya.core.tokenize import tokenize


@pytest.mark.parametrize(
    ("word", "folded"),
    [
        ("nodes", "node"),
        ("edges", "edge"),
        ("classes", "class"),
        ("matches", "match"),
        ("properties", "property"),
        ("sorted", "sort"),
        ("create", "creat"),
        ("created", "creat"),
        ("creating", "creat"),
        ("status", "status"),
        ("process", "process"),
        ("bus", "bus"),
        ("ids", "ids"),
        ("utf8s", "utf8s"),
    ],
)
def test_fold_suffix(word: str, folded: str) -> None:
    assert fold_suffix(word) == folded


@given(st.text(max_size=60))
def test_with_folds_keeps_every_token_and_only_adds_folds(text: str) -> None:
    toks = tokenize(text)
    out = with_folds(toks)
    i = 0
    for t in toks:  # each token in order, followed by its fold when the fold changes it
        assert out[i] == t
        i += 1
        if fold_suffix(t) != t:
            assert out[i] == fold_suffix(t)
            i += 1
    assert i == len(out)
    assert all(re.fullmatch(r"[a-z0-9_]+", t) for t in out)

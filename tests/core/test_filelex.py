"""File-level BM25 (``oya.core.filelex``): the same formula as BM25 over whole-file documents."""

from __future__ import annotations

import random

import pytest

from oya.core.bm25 import BM25Index
from oya.core.channels import BM25Channel
from oya.core.filelex import PATH_WEIGHT, FileDocs, FileTermSource, MemoryFileTerms, rank_file_docs
from oya.core.tokenize import tokenize

WORDS = "parse quantity stock reserve item storage money format error value report slug".split()


def corpus(seed: int) -> tuple[dict[str, list[str]], dict[str, str]]:
    """Chunks (id -> tokens) spread over files of different sizes, and each chunk's path."""
    rng = random.Random(seed)
    paths = [
        "inventory/service.py",
        "inventory/storage.py",
        "money/format.py",
        "docs/guide.rst",
        "a/b/report.py",
    ]
    tokens: dict[str, list[str]] = {}
    chunk_path: dict[str, str] = {}
    for i in range(60):
        cid = f"c{i:03d}"
        tokens[cid] = [rng.choice(WORDS) for _ in range(rng.randint(1, 30))]
        chunk_path[cid] = paths[rng.randrange(len(paths))]
    return tokens, chunk_path


def whole_file_bm25(tokens: dict[str, list[str]], chunk_path: dict[str, str]) -> BM25Index:
    """The reference: BM25 over one document per file, path tokens x PATH_WEIGHT + every chunk's tokens."""
    docs: dict[str, list[str]] = {}
    for cid, toks in tokens.items():
        docs.setdefault(chunk_path[cid], []).extend(toks)
    return BM25Index.build((p, tokenize(p) * PATH_WEIGHT + t) for p, t in sorted(docs.items()))


@pytest.mark.parametrize("seed", range(5))
def test_file_bm25_equals_bm25_over_whole_file_documents(seed: int) -> None:
    tokens, chunk_path = corpus(seed)
    source = MemoryFileTerms(BM25Index.build(tokens.items()))
    ref = whole_file_bm25(tokens, chunk_path)
    rng = random.Random(seed)
    for _ in range(20):
        terms = rng.sample([*WORDS, "inventory", "py", "zebra"], rng.randint(1, 5))
        got = rank_file_docs(terms, source, chunk_path, 100)
        want = ref.search(terms)
        assert [p for p, _ in got] == [p for p, _ in want], terms
        for (_, a), (_, b) in zip(got, want, strict=True):
            assert a == pytest.approx(b, rel=1e-12)


def test_path_tokens_alone_rank_a_file() -> None:
    tokens = {"c1": ["unrelated"], "c2": ["other"]}
    paths = {"c1": "src/zsh_completions.go", "c2": "src/bash.go"}
    ranked = rank_file_docs(["zsh"], MemoryFileTerms(BM25Index.build(tokens.items())), paths, 10)
    assert [p for p, _ in ranked] == ["src/zsh_completions.go"]


def test_no_terms_and_unknown_terms_rank_nothing() -> None:
    tokens, chunk_path = corpus(0)
    source = MemoryFileTerms(BM25Index.build(tokens.items()))
    assert rank_file_docs([], source, chunk_path, 10) == []
    assert rank_file_docs(["zebra"], source, chunk_path, 10) == []
    assert FileDocs({}).score(["x"], {"x": {"a": 1}}) == {}


def test_the_core_lexical_channel_is_a_file_term_source() -> None:
    tokens, chunk_path = corpus(1)
    channel = BM25Channel(BM25Index.build(tokens.items()))
    assert isinstance(channel, FileTermSource)
    counts = channel.file_term_counts(["stock"], chunk_path)
    want: dict[str, int] = {}
    for cid, toks in tokens.items():
        if "stock" in toks:
            want[chunk_path[cid]] = want.get(chunk_path[cid], 0) + toks.count("stock")
    assert counts == {"stock": want}

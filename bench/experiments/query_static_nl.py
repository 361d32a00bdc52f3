"""A static question encoder fit on natural language (issue 25, the second try after ``query_static``).

Theory of operation: as in ``bench.experiments.query_static``, the index keeps MiniLM's chunk
vectors and only the reader's question would be embedded without a model runtime, by plain
arithmetic over rows fetched per WordPiece token. That try fit its table to CODE chunks and lost
(cosine 0.63 / 0.67 with MiniLM's question vectors). Here the fit is to texts like the questions,
from repositories in neither eval set, and the static form may be a little richer:

1. ``corpus``: texts from git snapshots given by ``--git`` (full histories): commit messages
   (subject and body, no merges), Markdown paragraphs grouped to about 120 words, windows of 8-40
   source lines, and "issue-like" mixes (a commit subject, a paragraph, a fenced code window, as an
   issue report mixes a title, prose and code). Sampled with a seeded random generator, deduplicated;
   ``texts.jsonl`` under ``bench/.cache/query_static_nl``. Fetched data is never committed.
2. ``embed``: the targets, each text exactly as the product embeds a question
   (``OnnxMiniLMEmbedder``: int8 ONNX, the model's tokenizer truncated to 256, mean pooling, unit
   length), one thread, resumable; and the queries of ``--sets`` (the measurement's targets).
3. ``fit``: each variant maps the bag of the text's tokens (the product tokenizer's ids, [CLS] and
   [SEP] included, as MiniLM's mean pooling includes them) to a vector, trained with torch on the
   cosine loss (the ranking only sees the direction), rows initialised with model2vec's (every token
   through MiniLM alone, SIF-weighted), optionally pulled towards them (``--l2``; 0 below), 5 % held out:
   ``table`` (unit length of the mean of the rows), ``affine`` (a 384×384 map and a bias after the
   mean), ``mlp`` (the mean plus a residual 384→768→384 GELU layer). Each prints its cosine on the
   held-out texts and on every set's queries (the measurement), and is saved for ``rank``.
4. ``rank``: as ``query_static.rank``: every query of ``--set`` over its kept index with MiniLM's
   question vector (``oya``), the static one (``static-query``) and no semantic channel.

Measured (2026-11-28; docs/DECISIONS.md, "The embedding model stays all-MiniLM-L6-v2"): 68,667 texts
(39,124 commit messages, 7,874 paragraphs, 6,669 code windows, 15,000 mixes) of 15 snapshots in no eval
set (apache/commons-lang, catchorg/Catch2, composer/composer, curl/curl, denoland/deno, eslint/eslint,
jekyll/jekyll, laravel/framework, pallets/flask, prometheus/prometheus, pytest-dev/pytest, redis/redis,
rust-lang/cargo, square/retrofit, tokio-rs/tokio); embedding them took 17 CPU min, a fit about 50 CPU s per epoch.
Cosine with MiniLM's question vectors, held-out texts / issue reports / fix commits: model2vec's rows
untrained 0.28 / 0.18 / 0.25; ``table`` (3 epochs) 0.868 / 0.776 / 0.831 (code-fit ``query_static``:
0.63 / 0.67), the same with int8 rows (one scale per row); ``affine`` (4) 0.868 / 0.776 / 0.830; ``mlp``
(4) 0.869 / 0.776 / 0.831: the richer forms add nothing. Ranked with the ``table`` (file R@1 / R@5, paired
bootstrap of static − MiniLM): issue reports 43.6 / 79.2 against 43.8 / 81.0, −0.2 [−5.1, +4.7] /
−1.7 [−5.3, +1.2] (no semantic channel 41.6 / 72.3; static − none R@5 +6.9 [+1.4, +13.2]); fix commits
63.8 / 88.3 against 64.7 / 89.5, −0.9 [−3.4, +1.6] / −1.2 [−3.1, +0.4], no family's interval
excluding 0 (no semantic channel 62.0 / 88.8). It holds both sets within noise. The own eval
(``bench.eval_quality --question-encoder static-nl``: the questions through ``QuestionEmbedder``, the
chunks keeping MiniLM's vectors; mean over networkx, click, attrs; paired bootstrap of static − MiniLM
over the same queries) does not hold: code chunk R@1 / R@10 / MRR 34.8 / 72.3 / 47.4 against MiniLM's
36.4 / 75.4 / 48.9 (−1.6 [−5.3, +2.0] / −3.2 [−6.2, −0.3] / −1.5 [−3.9, +0.8]; earlier static models lost
about 12 R@1), no semantic channel 27.2 / 64.1 / 39.9 (static − none R@1 +7.6 [+3.7, +11.6]); prose
file R@1 / R@5 47.6 / 74.7 against 48.2 / 74.9 (none 47.8 / 72.4), within noise; connected coverage
62.3 against 57.4 (+4.9 [+1.6, +8.7]), but no semantic channel has 60.9: a weaker semantic channel
leaves the context to the graph, no merit of the table. Held-out requests: static 52.1 / 82.2 / 62.1
against 49.3 / 80.1 / 59.7. A loss on R@10 whose interval excludes 0, the rest within noise: not shipped.
Tables: ``bench/results/archive/query_static_nl.md``.

Run: ``python -m bench.experiments.query_static_nl corpus --git /path/*.git``, then ``embed --sets
../shared/eval/issues,../shared/eval/commits``, then ``fit --sets ... --variants table --epochs 3``; then
``OYA_COMMITS_CACHE=... OYA_MIRRORS=... python -m bench.experiments.query_static_nl rank --set
../shared/eval/issues --model bench/.cache/query_static_nl/table.pt --log L`` (``--most N`` splits a
long run; it resumes from ``L``) and ``python -m bench.commits_families --log L --set ... --rows
oya,static-query,nosemantic --compare static-query,oya``. The own eval: ``python -m bench.eval_quality
--no-ablation --question-encoder static-nl --out eq_static_nl.json``, against a run without the option.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import subprocess
from pathlib import Path
from typing import Any

import numpy as np

from bench.common import CACHE_DIR

WORK = CACHE_DIR / "query_static_nl"
TEXTS = WORK / "texts.jsonl"
SOURCE_SUFFIXES = (
    ".c",
    ".h",
    ".cc",
    ".cpp",
    ".hpp",
    ".go",
    ".java",
    ".js",
    ".ts",
    ".rs",
    ".py",
    ".rb",
    ".php",
)
VARIANTS = ("table", "affine", "mlp")
_SPLIT = re.compile(r"\n\s*\n")


# ---------------------------------------------------------------- corpus


def _git(repo: Path, *args: str) -> str:
    out = subprocess.run(["git", f"--git-dir={repo}", *args], capture_output=True, check=True)
    return out.stdout.decode("utf-8", errors="replace")


def _commit_messages(repo: Path) -> list[str]:
    log = _git(repo, "log", "--no-merges", "--format=%B%x1e", "-n", "40000", "HEAD")
    return [m.strip() for m in log.split("\x1e") if len(m.strip()) >= 20]


def _files(repo: Path, suffixes: tuple[str, ...], rng: random.Random, n: int) -> list[str]:
    """The text of up to ``n`` files at HEAD whose names end with one of ``suffixes``."""
    names = [
        p for p in _git(repo, "ls-tree", "-r", "--name-only", "HEAD").splitlines() if p.endswith(suffixes)
    ]
    rng.shuffle(names)
    out = []
    for name in names[:n]:
        try:
            text = _git(repo, "show", f"HEAD:{name}")
        except subprocess.CalledProcessError:
            continue
        if len(text) < 200_000:
            out.append(text)
    return out


def _paragraphs(markdown: str) -> list[str]:
    """Blank-line paragraphs grouped to about 120 words (a heading starts a new group)."""
    groups: list[str] = []
    cur: list[str] = []
    for para in _SPLIT.split(markdown):
        para = para.strip()
        if not para:
            continue
        if cur and (para.startswith("#") or sum(len(p.split()) for p in cur) > 120):
            groups.append("\n\n".join(cur))
            cur = []
        cur.append(para)
    if cur:
        groups.append("\n\n".join(cur))
    return [g for g in groups if len(g.split()) >= 5]


def _windows(source: str, rng: random.Random, k: int) -> list[str]:
    lines = source.splitlines()
    out = []
    for _ in range(k):
        if len(lines) < 8:
            break
        size = rng.randint(8, 40)
        start = rng.randrange(max(1, len(lines) - size))
        window = "\n".join(lines[start : start + size]).strip()
        if len(window) >= 40:
            out.append(window)
    return out


def corpus(repos: list[Path], per_repo: int, seed: int) -> None:
    rng = random.Random(seed)
    rows: list[dict[str, str]] = []
    seen: set[str] = set()

    def add(kind: str, repo: Path, text: str) -> None:
        if text not in seen:
            seen.add(text)
            rows.append({"kind": kind, "repo": repo.name, "text": text})

    for repo in repos:
        messages = _commit_messages(repo)
        rng.shuffle(messages)
        paragraphs = [p for t in _files(repo, (".md", ".markdown", ".rst"), rng, 400) for p in _paragraphs(t)]
        rng.shuffle(paragraphs)
        windows = [w for t in _files(repo, SOURCE_SUFFIXES, rng, 600) for w in _windows(t, rng, 2)]
        rng.shuffle(windows)
        n_msg, n_md, n_code, n_mix = per_repo * 55 // 100, per_repo * 15 // 100, per_repo // 10, per_repo // 5
        for m in messages[:n_msg]:
            add("commit", repo, m)
        for p in paragraphs[:n_md]:
            add("markdown", repo, p)
        for w in windows[:n_code]:
            add("code", repo, w)
        for _ in range(n_mix if messages and paragraphs and windows else 0):
            subject = rng.choice(messages).split("\n", 1)[0]
            parts = [subject, rng.choice(paragraphs), "```\n" + rng.choice(windows) + "\n```"]
            if rng.random() < 0.5:
                parts.append(rng.choice(paragraphs))
            add("mix", repo, "\n\n".join(parts))
        print(f"{repo}: {len(messages)} messages, {len(paragraphs)} paragraphs, {len(windows)} windows")
    rng.shuffle(rows)
    WORK.mkdir(parents=True, exist_ok=True)
    with TEXTS.open("w") as fh:
        for row in rows:
            fh.write(json.dumps(row) + "\n")
    kinds = {k: sum(r["kind"] == k for r in rows) for k in ("commit", "markdown", "code", "mix")}
    print(f"{len(rows)} texts {kinds} -> {TEXTS}")


# ---------------------------------------------------------------- targets


def _embedder() -> Any:
    from oya.embedding.embedder import OnnxMiniLMEmbedder

    return OnnxMiniLMEmbedder(threads=1)


def _embed_into(texts: list[str], out: Path, block: int = 2000) -> None:
    """MiniLM vectors of ``texts`` as ``out`` (n × 384 float32), in resumable blocks."""
    embedder = _embedder()
    parts = out.parent / (out.stem + ".parts")
    parts.mkdir(parents=True, exist_ok=True)
    for start in range(0, len(texts), block):
        part = parts / f"{start:08d}.npy"
        if not part.exists():
            vecs = [np.frombuffer(b, dtype="<f4") for b in embedder.embed(texts[start : start + block])]
            np.save(part, np.vstack(vecs))
            print(f"{out.name}: {start + len(vecs)} / {len(texts)}", flush=True)
    np.save(out, np.vstack([np.load(p) for p in sorted(parts.glob("*.npy"))]))


def _set_queries(evalset: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (evalset / "queries.jsonl").open()]


def embed(sets: list[Path], limit: int | None) -> None:
    for evalset in sets:
        queries = _set_queries(evalset)
        _embed_into([q["query"] for q in queries], WORK / f"queries-{evalset.name}.npy", block=10_000)
    texts = [json.loads(line)["text"] for line in TEXTS.open()][:limit]
    _embed_into(texts, WORK / "targets.npy")


# ---------------------------------------------------------------- the static encoders


def _tokenizer() -> Any:
    """The product's question tokenizer (the exported model's ``tokenizer.json``, 256 tokens)."""
    from tokenizers import Tokenizer

    from oya.embedding.embedder import MAX_SEQ_LENGTH
    from oya.embedding.model_export import export_query_model

    tok = Tokenizer.from_file(str(export_query_model() / "tokenizer.json"))
    tok.enable_truncation(MAX_SEQ_LENGTH)
    tok.no_padding()
    return tok


def token_ids(texts: list[str]) -> list[list[int]]:
    return [e.ids for e in _tokenizer().encode_batch(texts)]


def initial_rows() -> np.ndarray:
    """model2vec's rows in MiniLM's own space: each token through MiniLM alone, SIF-weighted, scaled
    so a typical text's mean has unit length (cached; the starting point and the prior)."""
    path = WORK / "e0.npy"
    if path.exists():
        return np.load(path)
    from bench.variants.static.static_model import _UNUSED, _token_states, sif_weights

    tok = _tokenizer()
    vocab = [t for t, _ in sorted(tok.get_vocab().items(), key=lambda kv: kv[1])]
    keep = [i for i, t in enumerate(vocab) if not _UNUSED.fullmatch(t)]
    e0 = np.zeros((len(vocab), 384), dtype=np.float32)
    e0[keep] = _token_states(vocab, keep) * sif_weights(len(keep), 1e-4)[:, None]
    WORK.mkdir(parents=True, exist_ok=True)
    np.save(path, e0)
    return e0


class StaticQuestion:
    """One static form (torch module built lazily so the corpus and embed steps need no torch)."""

    def __init__(self, variant: str, e0: np.ndarray) -> None:
        """Rows start at ``e0`` (and ``--l2`` pulls them back to it); the head starts as the identity."""
        import torch

        if variant not in VARIANTS:
            raise ValueError(f"unknown variant {variant!r}; choose from {', '.join(VARIANTS)}")
        self.variant = variant
        self.e0 = torch.tensor(e0)
        self.rows = torch.nn.Embedding.from_pretrained(self.e0.clone(), freeze=False, sparse=True)
        self.head = torch.nn.ModuleDict()
        if variant == "affine":
            self.head["map"] = torch.nn.Linear(384, 384)
            with torch.no_grad():
                self.head["map"].weight.copy_(torch.eye(384))
                self.head["map"].bias.zero_()
        elif variant == "mlp":
            self.head["up"] = torch.nn.Linear(384, 768)
            self.head["down"] = torch.nn.Linear(768, 384)
            with torch.no_grad():
                self.head["down"].weight.zero_()
                self.head["down"].bias.zero_()

    def forward(self, flat: Any, offsets: Any) -> Any:
        import torch
        import torch.nn.functional as F

        h = F.embedding_bag(flat, self.rows.weight, offsets, mode="mean", sparse=True)
        if self.variant == "affine":
            h = self.head["map"](h)
        elif self.variant == "mlp":
            h = h + self.head["down"](F.gelu(self.head["up"](h)))
        return torch.nn.functional.normalize(h, dim=1)

    def encode(self, ids: list[list[int]]) -> np.ndarray:
        import torch

        with torch.no_grad():
            flat, offsets = _batch(ids)
            return self.forward(flat, offsets).numpy()

    def save(self, path: Path) -> None:
        import torch

        torch.save(
            {"variant": self.variant, "rows": self.rows.weight.data, "head": self.head.state_dict()}, path
        )

    @classmethod
    def load(cls, path: Path) -> StaticQuestion:
        import torch

        state = torch.load(path)
        model = cls(state["variant"], state["rows"].numpy())
        model.rows.weight.data.copy_(state["rows"])
        model.head.load_state_dict(state["head"])
        return model


class QuestionEmbedder:
    """The fitted static form behind the product's ``embed`` interface (texts -> float32 blobs), for
    ``bench.eval_quality --question-encoder static-nl``: only the questions; chunks keep MiniLM's."""

    def __init__(self, path: Path = WORK / "table.pt") -> None:
        self.model = StaticQuestion.load(path)

    def embed(self, texts: list[str]) -> list[bytes]:
        from oya.core.vectors import encode_f32

        if not texts:
            return []
        return [encode_f32([float(v) for v in row]) for row in self.model.encode(token_ids(texts))]


def _batch(ids: list[list[int]]) -> tuple[Any, Any]:
    import torch

    flat = torch.tensor([i for t in ids for i in t], dtype=torch.long)
    offsets = torch.tensor(np.cumsum([0] + [len(t) for t in ids[:-1]]), dtype=torch.long)
    return flat, offsets


def _cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.mean(np.sum(a * b, axis=1)))


def fit(variants: list[str], epochs: int, l2: float, lr: float, limit: int | None, sets: list[str]) -> None:
    import torch

    torch.manual_seed(0)
    y_all = np.load(WORK / "targets.npy")
    texts = [json.loads(line) for line in TEXTS.open()][: len(y_all)][:limit]
    y_all = y_all[: len(texts)]
    ids = token_ids([t["text"] for t in texts])
    held = np.arange(len(texts)) % 20 == 0
    train_idx = np.flatnonzero(~held)
    queries = {
        s: (
            token_ids([q["query"] for q in _set_queries(Path(s))]),
            np.load(WORK / f"queries-{Path(s).name}.npy"),
        )
        for s in sets
    }
    e0 = initial_rows()
    e0 = e0 / max(float(np.median(np.linalg.norm(e0, axis=1))), 1e-9)  # unit-sized rows for Adam's steps
    report: dict[str, Any] = {}
    base = StaticQuestion("table", e0)
    report["model2vec"] = _measure(base, ids, y_all, held, queries)
    print("model2vec (untrained)", report["model2vec"], flush=True)
    for variant in variants:
        model = StaticQuestion(variant, e0)
        sparse_opt = torch.optim.SparseAdam([model.rows.weight], lr=lr)
        dense = list(model.head.parameters())
        dense_opt = torch.optim.Adam(dense, lr=1e-3) if dense else None
        y = torch.tensor(y_all)
        rng = np.random.default_rng(0)
        for epoch in range(epochs):
            order = rng.permutation(train_idx)
            for start in range(0, len(order), 256):
                batch = order[start : start + 256]
                flat, offsets = _batch([ids[i] for i in batch])
                pred = model.forward(flat, offsets)
                loss = 1.0 - (pred * y[batch]).sum(dim=1).mean()
                if l2 > 0:  # pull the rows the batch touched towards model2vec's
                    touched = torch.unique(flat)
                    rows = torch.nn.functional.embedding(touched, model.rows.weight, sparse=True)
                    loss = loss + l2 * ((rows - model.e0[touched]) ** 2).sum(dim=1).mean()
                sparse_opt.zero_grad()
                if dense_opt:
                    dense_opt.zero_grad()
                loss.backward()
                sparse_opt.step()
                if dense_opt:
                    dense_opt.step()
            scores = _measure(model, ids, y_all, held, queries)
            print(f"{variant} epoch {epoch + 1}: {scores}", flush=True)
        report[variant] = scores
        model.save(WORK / f"{variant}.pt")
    (WORK / "fit.json").write_text(json.dumps(report, indent=1))


def _measure(
    model: StaticQuestion, ids: list[list[int]], y: np.ndarray, held: np.ndarray, queries: dict[str, Any]
) -> dict[str, float]:
    held_ids = [t for t, h in zip(ids, held, strict=True) if h]
    out = {"held-out": round(_cosine(model.encode(held_ids), y[held]), 4)}
    for name, (q_ids, q_y) in queries.items():
        out[Path(name).name] = round(_cosine(model.encode(q_ids), q_y), 4)
    return out


# ---------------------------------------------------------------- ranking


def rank(evalset_dir: Path, model_path: Path, log: Path, most: int | None = None) -> None:
    """Rank up to ``most`` queries not yet in ``log`` (a run longer than a CPU slot resumes)."""
    from bench.experiments.kept_runs import rank_kept
    from bench.experiments.query_static import static_rows

    model = StaticQuestion.load(model_path)

    def rows_for(rankers: Any, q: dict[str, Any]) -> dict[str, list[str]]:
        vector = model.encode(token_ids([q["query"]]))[0]
        return static_rows(rankers, q["query"], [float(v) for v in vector])

    rank_kept(evalset_dir, log, rows_for, most)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("corpus")
    c.add_argument("--git", nargs="+", required=True, help="git directories of repositories in no eval set")
    c.add_argument("--per-repo", type=int, default=5000)
    c.add_argument("--seed", type=int, default=25)
    e = sub.add_parser("embed")
    e.add_argument("--sets", required=True, help="comma-separated eval set folders")
    e.add_argument("--limit", type=int)
    f = sub.add_parser("fit")
    f.add_argument("--variants", default=",".join(VARIANTS))
    f.add_argument("--sets", required=True)
    f.add_argument("--epochs", type=int, default=6)
    f.add_argument("--l2", type=float, default=0.0)
    f.add_argument("--lr", type=float, default=0.01)
    f.add_argument("--limit", type=int)
    r = sub.add_parser("rank")
    r.add_argument("--set", required=True)
    r.add_argument("--model", default=str(WORK / "table.pt"))
    r.add_argument("--log", required=True)
    r.add_argument("--most", type=int, help="rank at most this many queries in this run")
    a = ap.parse_args(argv)
    if a.cmd == "corpus":
        corpus([Path(g) for g in a.git], a.per_repo, a.seed)
    elif a.cmd == "embed":
        embed([Path(s) for s in a.sets.split(",")], a.limit)
    elif a.cmd == "fit":
        fit(a.variants.split(","), a.epochs, a.l2, a.lr, a.limit, a.sets.split(","))
    else:
        rank(Path(a.set), Path(a.model), Path(a.log), a.most)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

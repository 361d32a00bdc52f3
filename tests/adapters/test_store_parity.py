"""The DuckDB index against the pure core on the same corpus, its round trip, and atomic writes.

Corpus: the committed sample repository (read, parsed and chunked by the real adapters) plus
about 2,000 generated chunks from a fixed seed. Vectors are a deterministic fake embedder
(tokens hashed into buckets, normalised), never random numbers.
"""

from __future__ import annotations

import hashlib
import random
import shutil
import zlib
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

import oya.store.backends
import oya.store.writer
from oya.chunking.chunks import chunk_file
from oya.core.query import plan_query
from oya.core.records import Chunk, Edge, Node
from oya.core.text import indexed_text
from oya.core.tokenize import count_tokens, tokenize
from oya.core.vectors import VectorIndex, encode_f32
from oya.errors import IndexCorruptError, IndexMissingError
from oya.graph.build import build_graph
from oya.graph.parsing import parser_for
from oya.models import SkippedFile, SourceFile
from oya.scanning.reader import scan_repository
from oya.store.backends import DuckBM25Channel, MatrixVectorChannel
from oya.store.index import Index
from oya.store.schema import INDEX_FILE, WHOLE_SIZE_FILE
from oya.store.writer import chunk_tokens, write_index
from tests.core.core_corpus import bm25_index, normalize

SAMPLE_REPO = Path(__file__).resolve().parents[2] / "data" / "sample_repo"
DIM = 48
SEED = 20240601
N_SYNTHETIC = 2000

# a Zipf-like vocabulary of code words: a few very common, many rare
VOCAB = [
    f"{a}_{b}" if i % 3 == 0 else f"{a}{b.capitalize()}" if i % 3 == 1 else a
    for i, (a, b) in enumerate(
        (a, b)
        for a in [
            "get",
            "set",
            "load",
            "save",
            "parse",
            "render",
            "index",
            "query",
            "graph",
            "token",
            "cache",
            "user",
            "item",
            "stock",
            "order",
            "price",
            "money",
            "file",
            "path",
            "node",
        ]
        for b in ["value", "list", "map", "id", "name", "count", "state", "config", "error", "result"]
    )
]


def embed(text: str) -> list[float]:
    v = [0.0] * DIM
    for tok in tokenize(text):
        v[zlib.crc32(tok.encode()) % DIM] += 1.0
    return normalize(v)


def synthetic_chunks() -> list[Chunk]:
    rng = random.Random(SEED)
    weights = [1 / (rank + 1) for rank in range(len(VOCAB))]
    chunks: list[Chunk] = []
    for i in range(N_SYNTHETIC):
        words = rng.choices(VOCAB, weights, k=rng.randint(3, 60))
        lines = [" ".join(words[j : j + 8]) for j in range(0, len(words), 8)]
        text = "\n".join(f"    x = {line}" for line in lines)
        if i % 400 == 7:
            text = "+++ --- ***"  # no tokens at all: a zero-length document
        path = f"gen/pkg{i % 7}/mod{i % 53:02d}.py"
        start = 1 + (i // 53) * 70
        chunks.append(
            Chunk(
                id=f"s{i:05d}",
                path=path,
                kind="code",
                title=f"fn_{i}" if i % 400 != 7 else "***",
                start_line=start,
                end_line=start + text.count("\n"),
                text=text,
                content_hash=hashlib.sha256(text.encode()).hexdigest(),
                n_tokens=count_tokens(text),
                node_id=None,
            )
        )
    return chunks


class Corpus:
    def __init__(self) -> None:
        scan = scan_repository(SAMPLE_REPO)
        self.files = list(scan.files)
        self.skipped = [
            *scan.skipped,
            SkippedFile("assets/logo.png", "binary", "PNG image"),
            SkippedFile(".env", "secret", "secret-looking file name"),
        ]
        parsed = []
        self.sample_chunks: list[Chunk] = []
        for f in self.files:
            parser = parser_for(f.language)
            p = parser.parse(f) if parser else None
            if p is not None:
                parsed.append(p)
            self.sample_chunks.extend(chunk_file(f, p))
        self.nodes, self.edges = build_graph(parsed)
        self.chunks = self.sample_chunks + synthetic_chunks()
        self.embeddings = {c.id: encode_f32(embed(indexed_text(c))) for c in self.chunks}


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    return Corpus()


@pytest.fixture(scope="module")
def index_dir(corpus: Corpus, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("index")
    write_index(
        out,
        files=corpus.files,
        skipped=corpus.skipped,
        chunks=corpus.chunks,
        embeddings=corpus.embeddings,
        nodes=corpus.nodes,
        edges=corpus.edges,
        meta={"repo": "sample_repo", "model": "fake-hash-embedder"},
        dim=DIM,
    )
    return out


@pytest.fixture(scope="module")
def index(index_dir: Path):
    with Index(index_dir) as idx:
        yield idx


def queries() -> list[str]:
    rng = random.Random(SEED + 1)
    qs = [
        "where is parse_quantity defined",
        "how does the inventory service reserve stock",
        "OutOfStockError",
        "JsonStorage save load",
        "format money",
        "low stock report",
        "slugify name",
        "build_parser main cli",
        "nothing_matches_this_zebra",
    ]
    for _ in range(60):
        qs.append(" ".join(rng.sample(VOCAB, rng.randint(1, 4))))
    qs += [VOCAB[0], VOCAB[-1], "value", "error result", "get_value getValue get value"]
    return qs


def test_corpus_is_realistic(corpus: Corpus) -> None:
    assert len(corpus.chunks) > 2000
    assert {c.path for c in corpus.sample_chunks} >= {"inventory/service.py", "README.md", "docs/guide.rst"}
    assert any(e.kind == "calls" for e in corpus.edges)


def test_duckdb_bm25_equals_core_bm25(corpus: Corpus, index: Index) -> None:
    core = bm25_index((c.id, chunk_tokens(c)) for c in corpus.chunks)
    channel = DuckBM25Channel(index)
    compared = 0
    for q in queries():
        plan = plan_query(q)
        for k in (10, 200):
            duck = channel.search(plan, None, k)
            ref = core.search(plan.lexical_tokens, k)
            assert [d for d, _ in duck] == [d for d, _ in ref], q
            for (_, a), (_, b) in zip(duck, ref, strict=True):
                assert a == pytest.approx(b, abs=1e-9, rel=0)
            compared += len(ref)
    assert compared > 5000


def test_duckdb_bm25_terms_are_literals_not_sql(corpus: Corpus, index: Index) -> None:
    """The terms are inlined into the SQL (bound parameters cost 80 ms for a long report): a term
    carrying quotes or SQL stays a term that matches nothing, and the others rank as before."""
    word = next(t for t in tokenize(corpus.chunks[0].text) if len(t) > 3)
    plain = oya.store.backends.bm25_sql(index.con, [word], 50)
    hostile = ["x') OR 1=1 --", "'; DROP TABLE chunks; --", "it''s", word, "O'Reilly"]
    assert plain and oya.store.backends.bm25_sql(index.con, hostile, 50) == plain
    assert index.con.execute("SELECT count(*) FROM chunks").fetchone() == (len(corpus.chunks),)


def match_bm25_ranking(con: duckdb.DuckDBPyConnection, terms: list[str]) -> list[str]:
    rows = con.execute(
        "SELECT id, score FROM (SELECT id, fts_main_chunks.match_bm25(id, ?, fields := 'tokens') AS score "
        "FROM chunks) WHERE score IS NOT NULL ORDER BY score DESC, id",
        [" ".join(terms)],
    ).fetchall()
    return [str(i) for i, _ in rows]


def tie_groups(ranked: list[tuple[str, float]]) -> list[list[str]]:
    """Ids grouped by equal score (to 1e-9 relative), best group first: floating-point sums may
    order exact ties differently, so ties are compared as sets."""
    groups: list[list[str]] = []
    last: float | None = None
    for doc, score in ranked:
        if last is None or abs(score - last) > 1e-9 * max(abs(score), 1.0):
            groups.append([])
        groups[-1].append(doc)
        last = score
    return [sorted(g) for g in groups]


def _load_fts(con: duckdb.DuckDBPyConnection) -> None:
    import duckdb_extensions  # registry package that ships the fts binary (no download)

    duckdb_extensions.import_extension("fts", con=con)


@pytest.fixture
def extension_fts(index_dir: Path, tmp_path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    """A copy of the index with DuckDB's own fts index built over the same tokens."""
    copy = tmp_path / "with_extension_fts.duckdb"
    shutil.copy(index_dir / INDEX_FILE, copy)
    con = duckdb.connect(str(copy))
    try:
        _load_fts(con)
        con.execute(
            "PRAGMA create_fts_index('chunks', 'id', 'tokens', stemmer='none', stopwords='none', "
            "ignore='\\s+', strip_accents=0, lower=0, overwrite=1)"
        )
        yield con
    finally:
        con.close()


def test_bm25_tables_equal_the_fts_extensions(
    index_dir: Path, extension_fts: duckdb.DuckDBPyConnection
) -> None:
    ours = duckdb.connect(str(index_dir / INDEX_FILE), read_only=True)
    try:
        queries = {
            "docs": "SELECT docid, name, len FROM fts_main_chunks.docs ORDER BY docid",
            "dict": "SELECT term, df FROM fts_main_chunks.dict ORDER BY term",
            "stats": "SELECT num_docs, avgdl FROM fts_main_chunks.stats",
        }
        for name, sql in queries.items():
            assert ours.execute(sql).fetchall() == extension_fts.execute(sql).fetchall(), name
        postings = ours.execute(
            "SELECT d.term, p.docid, p.tf FROM bm25_postings p JOIN fts_main_chunks.dict d USING (termid) ORDER BY 1, 2"
        ).fetchall()
        theirs = extension_fts.execute(
            "SELECT d.term, t.docid, count(*) FROM fts_main_chunks.terms t JOIN fts_main_chunks.dict d "
            "USING (termid) GROUP BY ALL ORDER BY 1, 2"
        ).fetchall()
        assert postings == theirs and len(postings) > 1000
    finally:
        ours.close()


def test_core_bm25_ranks_like_duckdb_match_bm25(
    corpus: Corpus, extension_fts: duckdb.DuckDBPyConnection
) -> None:
    core = bm25_index((c.id, chunk_tokens(c)) for c in corpus.chunks)
    con = extension_fts
    for q in queries():
        terms = list(dict.fromkeys(plan_query(q).lexical_tokens))
        ref = core.search(terms)
        theirs = match_bm25_ranking(con, terms)
        assert sorted(theirs) == sorted(d for d, _ in ref), q
        # match_bm25 uses log10 in idf: every score is scaled by 1/ln(10), so the order holds,
        # except that exact ties may come out a rounding error apart, in either order
        at = 0
        for group in tie_groups(ref):
            assert sorted(theirs[at : at + len(group)]) == group, q
            at += len(group)


def test_matrix_vectors_equal_core_vectors(corpus: Corpus, index: Index) -> None:
    blobs = index.embedding_blobs()
    assert len(blobs) == len(corpus.chunks)
    core = VectorIndex([i for i, _ in blobs], b"".join(b for _, b in blobs), index.dim)
    channel = MatrixVectorChannel(index)
    for q in queries():
        vec = embed(q)
        plan = plan_query(q)
        for k in (10, 100):
            got = channel.search(plan, vec, k)
            ref = core.search(vec, k)
            assert [i for i, _ in got] == [i for i, _ in ref], q
            for (_, a), (_, b) in zip(got, ref, strict=True):
                assert a == pytest.approx(b, abs=1e-5)


def test_index_round_trip(corpus: Corpus, index: Index) -> None:
    ordered = sorted(corpus.chunks, key=lambda c: (c.path, c.start_line, c.id))
    assert index.all_chunks() == ordered
    assert index.chunk_token_lists() == [(c.id, chunk_tokens(c)) for c in ordered]
    assert dict(index.embedding_blobs()) == corpus.embeddings
    some = [ordered[0].id, ordered[500].id, "missing"]
    assert index.get_chunks(some) == {c.id: c for c in (ordered[0], ordered[500])}
    assert index.get_chunks([]) == {}
    # refs come without the text, each as the chunk's own (node and content key included)
    assert index.chunk_refs([c.id for c in ordered] + ["missing"]) == {c.id: c.ref() for c in ordered}
    assert any(c.node_id for c in ordered) and index.chunk_refs([]) == {}
    assert index.chunk_paths() == {c.id: c.path for c in corpus.chunks}
    graph = index.graph
    assert sorted(graph.nodes.values(), key=lambda n: n.id) == sorted(corpus.nodes, key=lambda n: n.id)
    assert sorted(graph.edges, key=edge_key) == sorted(corpus.edges, key=edge_key)
    with_node = [c for c in ordered if c.node_id]
    assert with_node
    by_node = index.chunk_ids_for_nodes([with_node[0].node_id or ""])
    assert with_node[0].id in by_node[with_node[0].node_id or ""]
    assert index.files() == [
        (f.path, f.language, f.size, f.n_lines) for f in sorted(corpus.files, key=lambda f: f.path)
    ]
    assert index.skipped() == sorted(corpus.skipped, key=lambda s: s.path)
    stats = index.stats()
    assert (stats.files, stats.chunks, stats.nodes, stats.edges, stats.embeddings, stats.skipped) == (
        len(corpus.files),
        len(corpus.chunks),
        len(corpus.nodes),
        len(corpus.edges),
        len(corpus.chunks),
        len(corpus.skipped),
    )
    assert index.meta["repo"] == "sample_repo" and index.meta["dim"] == str(DIM)
    assert index.has_fts


def edge_key(e: Edge) -> tuple[str, str, str]:
    return (e.source, e.target, e.kind)


def small_index(out: Path, marker: str, embeddings: dict[str, object] | None = None) -> Path:
    chunk = Chunk("c1", "a.py", "code", marker, 1, 1, f"def {marker}(): pass", "h1", 5, None)
    return write_index(
        out,
        files=[SourceFile("a.py", "python", 20, "0" * 64, 1, f"def {marker}(): pass\n")],
        skipped=[],
        chunks=[chunk],
        embeddings=embeddings if embeddings is not None else {"c1": encode_f32([1.0, 0.0])},  # type: ignore[arg-type]
        nodes=[Node("a.py", "module", "a", "a", "a.py", 1, 1)],
        edges=[],
        meta={"marker": marker},
        dim=2,
    )


def assert_intact(out: Path, marker: str) -> None:
    # the index and the record of its size when written whole (oya.store.schema.WHOLE_SIZE_FILE), nothing else
    names = sorted(p.name for p in out.iterdir())
    assert names == sorted([INDEX_FILE, WHOLE_SIZE_FILE]), f"temporary files were left behind: {names}"
    with Index(out) as idx:
        assert idx.meta["marker"] == marker
        assert [c.title for c in idx.all_chunks()] == [marker]


def test_failed_write_keeps_the_previous_index(tmp_path: Path) -> None:
    small_index(tmp_path, "first_build")
    assert_intact(tmp_path, "first_build")
    with pytest.raises(TypeError):
        small_index(tmp_path, "second_build", {"c1": "not a float32 blob"})
    assert_intact(tmp_path, "first_build")


def test_failure_in_the_bm25_step_keeps_the_previous_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    small_index(tmp_path, "first_build")

    def boom(con: duckdb.DuckDBPyConnection) -> None:
        raise RuntimeError("out of disk while writing the BM25 tables")

    monkeypatch.setattr(oya.store.writer, "_write_bm25_tables", boom)
    with pytest.raises(RuntimeError, match="out of disk"):
        small_index(tmp_path, "second_build")
    assert_intact(tmp_path, "first_build")
    monkeypatch.undo()
    small_index(tmp_path, "third_build")
    assert_intact(tmp_path, "third_build")


def test_missing_index_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(IndexMissingError) as err:
        Index(tmp_path / "nowhere")
    assert "\n" not in str(err.value) and "no index at" in str(err.value)


def test_garbage_index_is_one_line(tmp_path: Path) -> None:
    (tmp_path / INDEX_FILE).write_bytes(b"this is not a duckdb database\n" * 100)
    with pytest.raises(IndexCorruptError) as err:
        Index(tmp_path)
    assert "\n" not in str(err.value) and "cannot read the index" in str(err.value)


def test_wrong_schema_version_is_one_line(tmp_path: Path) -> None:
    con = duckdb.connect(str(tmp_path / INDEX_FILE))
    con.execute("CREATE TABLE meta (key VARCHAR, value VARCHAR)")
    con.execute("INSERT INTO meta VALUES ('schema_version', '0')")
    con.close()
    with pytest.raises(IndexCorruptError) as err:
        Index(tmp_path)
    assert "\n" not in str(err.value) and "rebuild it with oya build" in str(err.value)


def test_empty_index_has_no_fts_and_channels_are_unavailable(tmp_path: Path) -> None:
    from oya.core.channels import ChannelUnavailable

    write_index(tmp_path, files=[], skipped=[], chunks=[], embeddings={}, nodes=[], edges=[], meta={}, dim=4)
    with Index(tmp_path) as idx:
        assert not idx.has_fts
        with pytest.raises(ChannelUnavailable):
            DuckBM25Channel(idx).search(plan_query("x"), None, 5)
        with pytest.raises(ChannelUnavailable):
            MatrixVectorChannel(idx).search(plan_query("x"), [1.0, 0, 0, 0], 5)


def test_duckdb_file_bm25_equals_core_file_bm25(corpus: Corpus, index: Index) -> None:
    from oya.core.file_lexical import MemoryFileTerms, rank_file_docs

    paths = {c.id: c.path for c in corpus.chunks}
    core = MemoryFileTerms(bm25_index((c.id, chunk_tokens(c)) for c in corpus.chunks))
    duck = DuckBM25Channel(index)
    compared = 0
    for q in queries():
        terms = plan_query(q).lexical_tokens
        want = rank_file_docs(terms, core, paths, 50)
        got = rank_file_docs(terms, duck, paths, 50)
        assert [p for p, _ in got] == [p for p, _ in want], q
        for (_, a), (_, b) in zip(got, want, strict=True):
            assert a == pytest.approx(b, rel=1e-9)
        compared += len(want)
    assert compared > 100


def long_queries() -> list[str]:
    """Questions with more distinct known terms than ``MAX_QUERY_TERMS`` (a pasted bug report)."""
    rng = random.Random(SEED + 2)
    return [
        " ".join(rng.sample(VOCAB, min(len(VOCAB), 300))) + " parse_quantity OutOfStockError"
        for _ in range(3)
    ]


def test_long_questions_search_the_same_rarest_terms_in_both_backends(corpus: Corpus, index: Index) -> None:
    from oya.core.bm25 import MAX_QUERY_TERMS
    from oya.core.file_lexical import MemoryFileTerms, rank_file_docs

    core = bm25_index((c.id, chunk_tokens(c)) for c in corpus.chunks)
    paths = {c.id: c.path for c in corpus.chunks}
    channel = DuckBM25Channel(index)
    for q in long_queries():
        plan = plan_query(q)
        assert len(core.query_terms(plan.lexical_tokens)) == MAX_QUERY_TERMS
        duck = channel.search(plan, None, 100)
        ref = core.search(plan.lexical_tokens, 100)
        assert [d for d, _ in duck] == [d for d, _ in ref]
        want = rank_file_docs(plan.lexical_tokens, MemoryFileTerms(core), paths, 30)
        got = rank_file_docs(plan.lexical_tokens, channel, paths, 30)
        assert [p for p, _ in got] == [p for p, _ in want]

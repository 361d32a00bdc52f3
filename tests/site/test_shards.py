"""The sharded bundle answers every question exactly as the whole bundle does, fetching only the shards
the question reads (issue 26, ``oya.core.shards``).

The index is of a real repository: a copy of Oya's own ``oya/core`` and ``oya/site`` plus the sample
repository, indexed with the deterministic hashing embedder (``make_index`` of test_pages). The
questions are generated from the index itself: its symbol names, file names and docstring words,
plus a few prose questions.
"""

from __future__ import annotations

import gzip
import json
import re
import shutil
from bisect import bisect_right
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from test_pages import SAMPLE_REPO, make_index

from bench.variants.whole_bundle import decode_bundle
from oya.core.bundle import Bundle, ask_json
from oya.core.bundle_format import BundleError
from oya.core.channels import BM25Channel
from oya.core.evidence import named_in
from oya.core.query import plan_query
from oya.core.records import Chunk, chunk_id
from oya.core.shard_graph import ShardedCodeGraph, decode_sharded_graph
from oya.core.shard_store import (
    ShardsMissing,
    ShardStore,
    deltas,
    folder_fetch,
    pack_ids,
    term_bucket,
    undelta,
    unpack_ids,
)
from oya.core.shards import open_shards
from oya.site.assets import site_file
from oya.site.build import render_wiki_pages, write_wiki_site
from oya.site.bundle import bundle_document
from oya.site.checks import golden_mismatches
from oya.site.shards import SHARDS_DIR, export_shards, graph_table
from oya.store.index import Index

REPO_ROOT = Path(__file__).resolve().parents[2]
# small targets, so this small repository is cut into many shards and a question's share shows
TERM_BYTES = 3_000
CHUNK_BYTES = 12_000
NODE_BYTES = 3_000
PROSE = (
    "How is stock removed when an order ships?",
    "how does the bundle decode postings lazily",
    "Which function fits snippets into the context budget?",
    "where are pages written for every file",
    "what happens when a channel is unavailable",
    "reciprocal rank fusion of the channel lists",
)


class CountingFetch:
    """A folder fetcher that records every name it is asked for (the test's view of the link)."""

    def __init__(self, folder: Path) -> None:
        self._read = folder_fetch(folder)
        self.names: list[str] = []
        self.bytes = 0

    def __call__(self, name: str) -> bytes:
        data = self._read(name)
        self.names.append(name)
        self.bytes += len(data)
        return data


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    work = tmp_path_factory.mktemp("shards")
    repo = work / "repo"
    shutil.copytree(SAMPLE_REPO, repo)
    for part in ("oya/core", "oya/site"):
        shutil.copytree(REPO_ROOT / part, repo / part, ignore=shutil.ignore_patterns("__pycache__", "*.mjs"))
    index_dir = make_index(repo, work / "index")
    with Index(index_dir) as index:
        doc, vec_bytes = bundle_document(index)
    info = export_shards(
        doc, vec_bytes, work / "shards", term_bytes=TERM_BYTES, chunk_bytes=CHUNK_BYTES, node_bytes=NODE_BYTES
    )
    whole = decode_bundle(json.dumps(doc), vec_bytes or None)  # the reference: the document whole
    return {"work": work, "info": info, "whole": whole, "folder": work / "shards"}


def _questions(whole: Bundle) -> list[str]:
    """About 70 questions made from the index: symbols, file names, docstring words, prose."""
    nodes = sorted(whole.graph.nodes.values(), key=lambda n: n.id)
    names = sorted({n.name for n in nodes if len(n.name) > 3})
    files = sorted(whole.pages)
    words = sorted({w for n in nodes for w in re.findall(r"[a-z]{6,}", n.docstring.lower())})
    out = [f"where is {name} defined and who calls it" for name in names[:: max(1, len(names) // 30)]]
    out += [f"what does {Path(p).stem} do" for p in files[:: max(1, len(files) // 15)]]
    out += [" ".join(words[i : i + 3]) for i in range(0, len(words), max(1, len(words) // 20))]
    return out + list(PROSE)


def _answer(bundle: Bundle, question: str, **kwargs: Any) -> dict[str, Any]:
    out = bundle.ask(question, **kwargs)
    out.pop("timings_ms")
    return out


def test_the_sharded_bundle_answers_every_question_as_the_whole_bundle(built: dict[str, Any]) -> None:
    whole: Bundle = built["whole"]
    sharded = open_shards(folder_fetch(built["folder"]), built["info"]["manifest"])
    questions = _questions(whole)
    assert len(questions) >= 50 and len(sharded) == len(whole)
    answered = 0
    for q in questions:
        expected = _answer(whole, q)
        assert _answer(sharded, q) == expected, q  # files, chunks, scores, confidence, answer
        answered += bool(expected["hits"])
    assert answered >= 0.9 * len(questions)


def test_the_sharded_graph_walks_as_the_whole_one(built: dict[str, Any]) -> None:
    whole: Bundle = built["whole"]
    sharded = open_shards(folder_fetch(built["folder"]), built["info"]["manifest"])
    assert list(sharded.graph.nodes) == list(whole.graph.nodes) and sharded.graph.edges == whole.graph.edges
    for nid in whole.graph.nodes:  # the same neighbours in the same order (walks and diagrams follow it)
        assert sharded.graph.neighbors(nid) == whole.graph.neighbors(nid), nid
        assert sharded.graph.callers(nid) == whole.graph.callers(nid), nid
        forward = [(e.target, e) for e in whole.graph.edges if e.source == nid]
        assert sharded.graph.successors(nid) == whole.graph.successors(nid) == forward, nid
    sharded.graph.load_details(list(whole.graph.nodes))
    assert sharded.graph.nodes == whole.graph.nodes  # lines, signatures and docstrings too


def test_a_question_makes_only_the_edges_it_walks(built: dict[str, Any]) -> None:
    """Opening makes no edge record (sympy's 172k took 0.4 s); a question makes the ones it walks."""
    whole: Bundle = built["whole"]
    sharded = open_shards(folder_fetch(built["folder"]), built["info"]["manifest"])
    made = sharded.graph._columns._made  # type: ignore[attr-defined]
    assert not made
    assert _answer(sharded, _questions(whole)[0]) == _answer(whole, _questions(whole)[0])
    assert 0 < len(made) < len(whole.graph.edges)


def test_parity_holds_with_vectors_scanned_in_python_and_ranked_elsewhere(built: dict[str, Any]) -> None:
    whole: Bundle = built["whole"]
    fetch = CountingFetch(built["folder"])
    sharded = open_shards(fetch, built["info"]["manifest"])
    assert whole.vector_index is not None and sharded.vector_layout() == whole.vector_layout()
    assert not [n for n in fetch.names if n.startswith("vectors-")]  # not until a semantic search
    for i, q in enumerate(_questions(whole)[::7]):
        vector = list(whole.vector_index.row(i * 5))
        assert _answer(sharded, q, vector=vector) == _answer(whole, q, vector=vector), q
        ranked = whole.rank_vectors(vector, whole.fetch_depth())
        assert _answer(sharded, q, ranked=ranked) == _answer(whole, q, ranked=ranked), q
    assert len([n for n in fetch.names if n.startswith("vectors-")]) == 1


def _manifest(folder: Path, name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(gzip.decompress((folder / name).read_bytes()))
    return data


def _watch_reads(bundle: Bundle) -> set[str]:
    """The ids of the chunks the stages ask ``bundle``'s corpus for, filled as they ask."""
    read: set[str] = set()
    get_chunks = bundle.corpus.get_chunks

    def watched(ids: Sequence[str]) -> dict[str, Chunk]:
        read.update(ids)
        return get_chunks(ids)

    bundle.corpus.get_chunks = watched  # type: ignore[method-assign]
    return read


def _watch_details(monkeypatch: pytest.MonkeyPatch) -> set[str]:
    """The node ids whose details the stages ask a sharded graph for, filled as they ask."""
    asked: set[str] = set()
    load = ShardedCodeGraph.load_details

    def watched(graph: ShardedCodeGraph, ids: Sequence[str]) -> None:
        asked.update(ids)
        load(graph, ids)

    monkeypatch.setattr(ShardedCodeGraph, "load_details", watched)
    return asked


def _detail_homes(manifest: dict[str, Any]) -> Callable[[int], str]:
    """Node position -> the shard holding its details, read from the manifest: the chunk shard of
    the node's first chunk, else the ``nodes`` run of the nodes without chunks."""
    cfirst, cnames = undelta(manifest["chunks"]["shards"]["first"]), manifest["chunks"]["shards"]["name"]
    homes: dict[int, str] = {}
    for pos, node in enumerate(undelta(manifest["chunks"]["node"])):
        if node >= 0:
            homes.setdefault(node, cnames[bisect_right(cfirst, pos) - 1])
    nfirst, nnames = undelta(manifest["nodes"]["first"]), manifest["nodes"]["name"]
    return lambda p: homes.get(p) or nnames[bisect_right(nfirst, p) - 1]


def test_node_details_travel_in_the_chunk_shard_of_the_nodes_first_chunk(built: dict[str, Any]) -> None:
    """A question reads the text of the nodes it shows (the hits', the connected code's): their
    lines, signatures and docstrings come in the same shards, not in shards of their own."""
    info = built["info"]
    folder: Path = built["folder"]
    manifest = _manifest(folder, info["manifest"])
    doc_nodes = built["whole"].graph.nodes
    cfirst, cnames = undelta(manifest["chunks"]["shards"]["first"]), manifest["chunks"]["shards"]["name"]
    chunk_nodes = undelta(manifest["chunks"]["node"])
    housed = 0
    for shard, name in enumerate(cnames):
        end = cfirst[shard + 1] if shard + 1 < len(cfirst) else len(chunk_nodes)
        firsts = {
            n for n in chunk_nodes[cfirst[shard] : end] if n >= 0 and chunk_nodes.index(n) >= cfirst[shard]
        }
        details = json.loads(gzip.decompress((folder / name).read_bytes()))["details"]
        assert set(undelta(details["at"])) == firsts, name
        housed += len(firsts)
    assert housed == len({n for n in chunk_nodes if n >= 0}) > 0.5 * len(doc_nodes)
    assert info["node_shards"] == len(manifest["nodes"]["name"])


def test_node_details_come_only_for_the_nodes_an_answer_shows(
    built: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    info = built["info"]
    folder: Path = built["folder"]
    home = _detail_homes(_manifest(folder, info["manifest"]))
    fetched_any = 0
    asked = _watch_details(monkeypatch)
    for q in _questions(built["whole"])[::4]:
        fetch = CountingFetch(folder)
        bundle = open_shards(fetch, info["manifest"])
        pos = {nid: i for i, nid in enumerate(bundle.graph.nodes)}
        read = _watch_reads(bundle)
        asked.clear()
        out = bundle.ask(q)
        homes = {home(pos[n]) for n in asked if n in pos}
        fetched = {n for n in fetch.names if n.startswith(("nodes-", "chunks-"))}
        # the shards holding the details asked for and the chunks read, no other
        assert homes <= fetched, q
        assert {n for n in fetched if n.startswith("nodes-")} == {
            h for h in homes if h.startswith("nodes-")
        }, q
        # every node the answer shows is whole: its lines, signature and docstring arrived
        shown = {n.id for n in bundle.retrieve(q).subgraph.nodes}
        assert shown <= asked, q
        assert all(
            bundle.graph.nodes[n].end_line > 1 or not built["whole"].graph.nodes[n].end_line > 1
            for n in shown
        ), q
        fetched_any += bool(homes) and bool(out["answer"]["items"]) and bool(read)
    assert fetched_any >= 5


@pytest.mark.parametrize("values", [[], [7], [0, 1, 2, 3], [5, -1, -1, 9, 2], [3, 3, 3]])
def test_deltas_read_back(values: list[int]) -> None:
    assert undelta(deltas(values)) == values


def test_the_graph_shard_keeps_ids_and_qualified_names_of_any_form() -> None:
    doc = {
        "nodes": {
            "id": ["a.py", "a.py::f", "odd-id", "a.py::Cls.m", "a.py::weird qual"],
            "kind": ["module", "function", "function", "method", "function"],
            "name": ["a", "f", "g", "m", "<lambda>"],
            "qualname": ["a", "f", "g", "Cls.m", "weird qual"],
            "path": [0, 0, 0, 0, 0],
            "centrality": [0.1, 0.2, 0.3, 0.4, 0.5],
            "start_line": [1, 2, 5, 8, 9],
            "end_line": [9, 3, 6, 9, 9],
            "signature": ["", "def f()", "def g()", "def m(self)", ""],
            "docstring": ["", "F.", "", "M.", ""],
        },
        "edges": {
            "source": [0, 0, 3],
            "target": [1, 3, 1],
            "kind": ["contains", "contains", "calls"],
            "confidence": [1.0, 1.0, 0.5],
        },
    }
    table = graph_table(doc, ["a.py"])
    assert table["nodes"]["ids"] == {"at": [2], "id": ["odd-id"]}
    assert table["nodes"]["qualnames"] == {"at": [4], "qualname": ["weird qual"]}
    details = {"first": [0], "name": ["nodes-0000000000000000.json.gz"]}
    ids, graph = decode_sharded_graph(ShardStore(folder_fetch(".")), table, details, ["a.py"])
    assert ids == doc["nodes"]["id"]
    assert [(n.kind, n.name, n.qualname, n.path, n.centrality) for n in graph.nodes.values()] == [
        (k, nm, q, "a.py", c)
        for k, nm, q, c in zip(
            *(doc["nodes"][c] for c in ("kind", "name", "qualname", "centrality")), strict=True
        )
    ]
    assert sorted((e.source, e.target, e.kind) for e in graph.edges) == [
        ("a.py", "a.py::Cls.m", "contains"),
        ("a.py", "a.py::f", "contains"),
        ("a.py::Cls.m", "a.py::f", "calls"),
    ]


def test_a_question_fetches_only_the_shards_it_reads(
    built: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    info = built["info"]
    folder: Path = built["folder"]
    manifest = _manifest(folder, info["manifest"])
    pos = {
        cid: i for i, cid in enumerate(unpack_ids(manifest["chunks"]["id"], len(manifest["chunks"]["path"])))
    }
    first, names = undelta(manifest["chunks"]["shards"]["first"]), manifest["chunks"]["shards"]["name"]
    every = [p.name for p in folder.iterdir()]
    assert info["term_shards"] >= 10 and info["chunk_shards"] >= 10
    buckets = manifest["bm25"]["buckets"]
    home = _detail_homes(manifest)
    details = _watch_details(monkeypatch)
    for q in _questions(built["whole"])[::5]:
        fetch = CountingFetch(folder)
        bundle = open_shards(fetch, info["manifest"])
        read = _watch_reads(bundle)
        details.clear()
        bundle.ask(q)
        # the postings of the question's own terms: their buckets, no other
        asked = {buckets[term_bucket(t, len(buckets))] for t in plan_query(q).lexical_tokens}
        assert {n for n in fetch.names if n.startswith("terms-")} <= asked, q
        # the chunk shards holding the chunks the stages read and the details of the nodes shown, no other
        holding = {names[bisect_right(first, pos[cid]) - 1] for cid in read}
        nodes = {nid: i for i, nid in enumerate(bundle.graph.nodes)}
        holding |= {h for n in details if n in nodes and (h := home(nodes[n])).startswith("chunks-")}
        assert {n for n in fetch.names if n.startswith("chunks-")} == holding, q
        assert fetch.names[:2] == [info["manifest"], manifest["graph"]], q
        assert len(set(fetch.names)) < len(every), q
        # each shard once, but a chunk shard the corpus read for text and the graph for details
        # (the worker holds what it fetched: a second read is not a second request)
        again = [n for n in set(fetch.names) if fetch.names.count(n) > 1]
        assert all(n.startswith("chunks-") and fetch.names.count(n) == 2 for n in again), q
        # asked again, nothing more is fetched
        before = list(fetch.names)
        bundle.ask(q)
        assert fetch.names == before, q


def _ask_watched(folder: Path, manifest: str, q: str) -> tuple[Any, set[str], set[str]]:
    """A lexical answer from freshly opened shards, the chunks whose text it read, and the chunks
    the answer shows (its hits and the first chunk of each connected node)."""
    bundle = open_shards(folder_fetch(folder), manifest)
    read = _watch_reads(bundle)
    r = bundle.retrieve(q, None, semantic_reason="test")
    expanded = [n.id for n in r.subgraph.nodes if r.subgraph.distance.get(n.id, 0) > 0]
    connected = {ids[0] for ids in bundle.corpus.chunk_ids_for_nodes(expanded).values()}
    return r, read, {h.chunk.id for h in r.hits} | connected


def test_a_question_naming_no_code_reads_only_its_hits_and_connected_chunks(built: dict[str, Any]) -> None:
    """The candidate pool is ranked from the manifest (paths, start lines, repeated texts): only the
    hits' text and the connected code's are read, not the pool's (~40 chunk shards on sympy)."""
    folder: Path = built["folder"]
    plain = [q for q in _questions(built["whole"]) if not named_in(plan_query(q))]
    assert len(plain) >= 20
    fewer = 0
    for q in plain:
        r, read, answer_chunks = _ask_watched(folder, built["info"]["manifest"], q)
        assert read <= answer_chunks, q
        fewer += len(read) < r.quality.found
    assert fewer >= len(plain) // 3  # of these small answers, many had more candidates than reads


def test_a_question_naming_code_its_postings_show_in_the_pool_reads_no_pool_text(
    built: dict[str, Any],
) -> None:
    """The evidence counts the question's names found in the pool; a name that is a term whose
    postings (fetched in the terms' round) list a pool chunk, or that a pool path holds, is found
    without the text: only the hits' and the connected code's text is read (sympy: up to 36 chunk
    shards less for such a question)."""
    folder: Path = built["folder"]
    whole: Bundle = built["whole"]
    named = [q for q in _questions(whole) if named_in(plan_query(q))]
    assert len(named) >= 20
    without_pool = 0
    for q in named:
        r, read, answer_chunks = _ask_watched(folder, built["info"]["manifest"], q)
        expected = whole.retrieve(q, None, semantic_reason="test").quality.evidence
        assert r.quality.evidence == expected, q
        without_pool += read <= answer_chunks and r.quality.found > len(read)
    assert without_pool >= len(named) // 2


def test_the_manifest_lists_the_chunks_whose_text_is_not_ascii(tmp_path: Path) -> None:
    """A token of a non-ASCII text is of its folded form (``naïve_total`` -> ``naive_total``), which
    the text does not hold: such a chunk's postings prove no name, its text is read as before."""
    repo = tmp_path / "repo"
    (repo / "lib").mkdir(parents=True)
    (repo / "lib" / "sums.py").write_text(
        'def naïve_total(values):\n    """Add the values."""\n    return sum(values)\n\n\n'
        'def plain_total(values):\n    """Add the values, plainly."""\n    return sum(values)\n',
        encoding="utf-8",
    )
    with Index(make_index(repo, tmp_path / "index")) as index:
        doc, vec_bytes = bundle_document(index)
    info = export_shards(doc, vec_bytes, tmp_path / "shards")
    manifest = _manifest(tmp_path / "shards", info["manifest"])
    ct = doc["chunks"]
    wide = [i for i, (t, h) in enumerate(zip(ct["text"], ct["title"], strict=True)) if not (t + h).isascii()]
    assert wide and undelta(manifest["chunks"]["wide"]) == wide
    whole = decode_bundle(json.dumps(doc), vec_bytes or None)
    sharded = open_shards(folder_fetch(tmp_path / "shards"), info["manifest"])
    for q in ("where is naive_total called", "where is plain_total called"):
        expected = whole.retrieve(q, None, semantic_reason="test").quality.evidence
        assert sharded.retrieve(q, None, semantic_reason="test").quality.evidence == expected, q
    assert (
        whole.retrieve(
            "where is naive_total called", None, semantic_reason="test"
        ).quality.evidence.named_found
        == 0
    )


def test_prepare_reads_no_shard_and_changes_no_answer(built: dict[str, Any]) -> None:
    """The worker runs ``prepare`` while a question's shards download: it must need none itself."""
    folder: Path = built["folder"]
    fetch = CountingFetch(folder)
    bundle = open_shards(fetch, built["info"]["manifest"])
    opened = list(fetch.names)
    bundle.prepare()
    assert fetch.names == opened
    assert bundle.graph._names is not None  # the name index is built
    for q in _questions(built["whole"])[::7]:
        assert _answer(bundle, q) == _answer(built["whole"], q), q


def test_shards_are_content_addressed_and_deterministic(built: dict[str, Any], tmp_path: Path) -> None:
    folder: Path = built["folder"]
    with Index(built["work"] / "index") as index:
        doc, vec_bytes = bundle_document(index)
    (tmp_path / "chunks-0123456789abcdef.json.gz").write_bytes(b"stale")  # an earlier export's shard
    again = export_shards(
        doc, vec_bytes, tmp_path, term_bytes=TERM_BYTES, chunk_bytes=CHUNK_BYTES, node_bytes=NODE_BYTES
    )
    assert again == built["info"]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in folder.iterdir())
    for p in folder.iterdir():
        assert p.read_bytes() == (tmp_path / p.name).read_bytes()
        assert gzip.decompress(p.read_bytes())  # every file is gzip


class AskFirstFetch:
    """A fetcher like the browser's asynchronous one: it holds what was fetched before and raises
    ``ShardsMissing`` for the rest; the caller fetches those together and asks again."""

    def __init__(self, folder: Path) -> None:
        self._read = folder_fetch(folder)
        self.held: dict[str, bytes] = {}
        self.rounds: list[tuple[str, ...]] = []

    def __call__(self, name: str) -> bytes:
        if name not in self.held:
            raise ShardsMissing([name])
        return self.held[name]

    def until_done(self, call: Callable[[], Any]) -> Any:
        while True:
            try:
                return call()
            except ShardsMissing as exc:
                assert exc.names and not set(exc.names) & set(self.held)  # only what it lacks
                self.rounds.append(exc.names)
                self.held.update((n, self._read(n)) for n in exc.names)  # "in parallel"


def test_a_fetcher_that_asks_to_fetch_first_gets_the_same_answers_in_few_rounds(
    built: dict[str, Any],
) -> None:
    whole: Bundle = built["whole"]
    fetch = AskFirstFetch(built["folder"])
    bundle = fetch.until_done(lambda: open_shards(fetch, built["info"]["manifest"]))
    assert len(fetch.rounds) == 2  # the manifest, then the graph
    for q in _questions(whole)[::3]:
        before = len(fetch.rounds)
        got = fetch.until_done(lambda q=q: _answer(bundle, q))
        assert got == _answer(whole, q), q  # nothing half-loaded survives an interrupted run
        # one round for the terms, one for the pool's chunks, one for the connected code's
        assert len(fetch.rounds) - before <= 3, q
    vector = list(whole.vector_index.row(3)) if whole.vector_index is not None else None
    assert fetch.until_done(lambda: _answer(bundle, PROSE[0], vector=vector)) == _answer(
        whole, PROSE[0], vector=vector
    )


def test_a_question_asked_again_after_fetching_resumes_where_it_stopped(
    built: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    whole: Bundle = built["whole"]
    searches: list[str] = []
    search = BM25Channel.search

    def counted(channel: BM25Channel, plan: Any, vector: Any, k: int) -> Any:
        searches.append(plan.text)
        return search(channel, plan, vector, k)

    monkeypatch.setattr(BM25Channel, "search", counted)
    fetch = AskFirstFetch(built["folder"])
    bundle = fetch.until_done(lambda: open_shards(fetch, built["info"]["manifest"]))
    resumed = 0
    for q in _questions(whole)[::6]:
        expected = _answer(whole, q)
        searches.clear()
        before = len(fetch.rounds)
        assert fetch.until_done(lambda q=q: _answer(bundle, q)) == expected, q
        rounds = len(fetch.rounds) - before
        # the lexical channel runs once for its terms' shards, once with them; never after
        assert len(searches) <= 2, (q, rounds)
        resumed += rounds >= 2
    assert resumed >= 3


def test_ask_json_names_the_missing_shards_and_answers_once_they_are_fetched(built: dict[str, Any]) -> None:
    whole: Bundle = built["whole"]
    fetch = AskFirstFetch(built["folder"])
    bundle = fetch.until_done(lambda: open_shards(fetch, built["info"]["manifest"]))
    request = json.dumps({"question": PROSE[1], "semantic_reason": "no model"})
    rounds = 0
    while "missing" in (reply := json.loads(ask_json(bundle, request))):
        rounds += 1
        fetch.held.update((n, folder_fetch(built["folder"])(n)) for n in reply["missing"])
    expected = json.loads(ask_json(whole, request))
    reply.pop("timings_ms"), expected.pop("timings_ms")
    assert reply == expected and 1 <= rounds <= 3


def _tampered(folder: Path, change: Callable[[str, bytes], bytes]) -> Callable[[str], bytes]:
    read = folder_fetch(folder)
    return lambda name: change(name, read(name))


def test_shards_served_inflated_answer_alike(built: dict[str, Any]) -> None:
    # a host that sends .gz files with Content-Encoding: gzip: the browser gets the inflated bytes
    whole: Bundle = built["whole"]
    sharded = open_shards(
        _tampered(built["folder"], lambda _n, data: gzip.decompress(data)), built["info"]["manifest"]
    )
    for q in _questions(whole)[:10]:
        assert _answer(sharded, q) == _answer(whole, q), q


def test_a_shard_whose_bytes_do_not_match_its_name_is_refused(built: dict[str, Any]) -> None:
    def swap_chunks(name: str, data: bytes) -> bytes:
        if name.startswith("chunks-"):
            return gzip.compress(b'{"path":[],"kind":[],"title":[],"start_line":[],"end_line":[],'
                                 b'"text":[],"n_tokens":[],"node":[]}')  # fmt: skip
        return data

    bundle = open_shards(_tampered(built["folder"], swap_chunks), built["info"]["manifest"])
    with pytest.raises(BundleError, match="does not hold the bytes its name hashes"):
        bundle.ask(PROSE[0])
    with pytest.raises(BundleError, match="not a shard manifest name"):
        open_shards(folder_fetch(built["folder"]), "../manifest-0123456789abcdef.json.gz")


# -- in the site ----------------------------------------------------------------------------------
def test_the_site_ships_only_shards_and_its_check_reads_them(built: dict[str, Any], tmp_path: Path) -> None:
    index_dir = built["work"] / "index"
    site = tmp_path / "site"
    report = write_wiki_site(
        render_wiki_pages(index_dir, site), index_dir, site, with_runtime=False, with_bundle=True
    )
    bundle_info = report["manifest"]["bundle"]
    shards = bundle_info["shards"]
    folder = site / bundle_info["path"] / shards["path"]
    assert (folder / shards["manifest"]).is_file() and shards["chunk_shards"] > 1
    # the bundle folder holds the shards and nothing a reader would not fetch (no whole bundle)
    assert [p.name for p in (site / bundle_info["path"]).iterdir()] == [SHARDS_DIR]
    assert bundle_info["chunks"] == len(built["whole"].chunks)
    # what every question reads is named in manifest.json, so the browser fetches it with the
    # manifest in one round: the graph, and the vectors (the JS kernel's file)
    listed = json.loads(gzip.decompress((folder / shards["manifest"]).read_bytes()))
    assert shards["graph"] == listed["graph"] and (folder / shards["graph"]).is_file()
    assert shards["vectors"] == listed["vectors"]["file"] and (folder / shards["vectors"]).is_file()
    sharded = open_shards(folder_fetch(folder), shards["manifest"])
    for q in PROSE:
        assert _answer(sharded, q) == _answer(built["whole"], q), q
    questions, wrong = golden_mismatches(index_dir, site_file(site, "bundle/"))
    assert questions and not wrong

    # shards that answer otherwise (each chunk under its neighbour's id) fail the check
    with Index(index_dir) as index:
        doc, vec_bytes = bundle_document(index)
    doc["chunks"]["end_line"] = [n + 1 for n in doc["chunks"]["end_line"]]  # other spans: other ids
    shutil.rmtree(folder)
    export_shards(doc, vec_bytes, folder)
    _, wrong = golden_mismatches(index_dir, site_file(site, "bundle/"))
    assert wrong and all(": index (" in w for w in wrong)
    # a shard whose bytes are not the ones its name hashes is a mismatch too, not an error
    [manifest] = folder.glob("manifest-*")
    manifest.write_bytes(gzip.compress(gzip.decompress(manifest.read_bytes()) + b" "))
    _, wrong = golden_mismatches(index_dir, site_file(site, "bundle/"))
    assert len(wrong) == 1 and "does not hold the bytes its name hashes" in wrong[0], wrong
    # and a bundle folder without its shards is a mismatch, not a pass
    shutil.rmtree(folder)
    _, wrong = golden_mismatches(index_dir, site_file(site, "bundle/"))
    assert wrong == [f"{site_file(site, 'bundle/').name}/{SHARDS_DIR}: no single shard manifest"]


def test_chunk_ids_travel_packed_and_come_back_checked() -> None:
    """The manifest ships ids as their bytes in base64 (8.1 bytes an id gzipped, not 10.3)."""
    ids = [chunk_id(f"f{i}.py", i, i + 3, "x" * i) for i in range(50)]
    packed = pack_ids(ids)
    assert isinstance(packed, str) and unpack_ids(packed, 50) == ids
    assert len(packed) == 4 * ((8 * 50 + 2) // 3)  # 8 bytes an id, base64
    with pytest.raises(ValueError, match="16 lower-case hex"):
        pack_ids(["ABCDEF0123456789"])
    for bad, n, message in [
        (packed, 49, "50 chunk ids for 49 chunks"),
        (packed[:-4] + "!!!!", 50, "not base64"),
        (ids, 50, "chunk ids are missing"),
    ]:
        with pytest.raises(BundleError, match=message):
            unpack_ids(bad, n)

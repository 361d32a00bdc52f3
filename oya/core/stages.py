"""The stages of a retrieval, each a function ``(Query, Candidates, **parameters) -> Candidates``.

In pipeline order (``oya.core.pipeline.default_pipeline`` binds their parameters from the
options): ``gather`` runs the channels; ``fuse_rankings`` fuses their lists (weighted RRF),
each read with the chunks of docs, change logs and templates the question does not ask for after
the rest;
``reweigh`` weighs test code down and promotes a clear semantic winner; ``dedup`` keeps each
content once among the fused pool (where each candidate is, not its text: ``Candidate``);
``rank_candidate_files`` ranks files from that pool and
``fuse_whole_files`` fuses BM25 over whole files into that ranking; ``favour_scope`` moves up
the files a first line's scope prefix names ("printer: fix ..."), ``favour_named`` those whose
file name the question spells (a stack frame's ``Foo.java``);
``order_kinds`` moves tests, docs, change logs and templates after the code files unless the
question's first line asks for them; ``oya.core.companions.favour_companions`` moves a high file's
companion (its header, ``x-inl.h``) up beside it;
``cap`` picks the hits (at most ``max_per_file`` of one file, ``k`` in all); ``expand``
follows the code graph from the top hits and reads the answer's text in one round (the hits',
the connected code's, and the pool's when the question names code: the evidence looks for the
names); ``pack`` fits diagram and snippets into the budget.
Each stage reads only the fields earlier stages filled, so each can be run and tested alone.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from oya.core.answer_diagram import plan_diagram
from oya.core.channels import Channel, ChannelUnavailable, Corpus, DataMissing, fetched_together
from oya.core.context import build_context
from oya.core.evidence import named_in, names_proven
from oya.core.file_lexical import FileTerms, fuse_files, rank_file_docs
from oya.core.files import rank_files
from oya.core.filters import promote_clear_winner, weigh_tests
from oya.core.fusion import Fused, fuse
from oya.core.graph import CodeGraph, Subgraph
from oya.core.kinds import code_first, first_line, mentions_tests, unnamed_copies
from oya.core.query import QueryPlan
from oya.core.records import Chunk, Node
from oya.core.results import Candidate, ChannelReport, Context, FileHit, Hit
from oya.core.scope import named_files, names_file, names_scope, names_type, scope_words, type_names


@dataclass(frozen=True)
class Query:
    """What a retrieval is asked and over what: fixed for all its stages."""

    question: str
    plan: QueryPlan
    channels: tuple[Channel, ...]
    graph: CodeGraph
    corpus: Corpus
    vector: Sequence[float] | None
    allowed: Callable[[str], bool] | None  # the path filter (None: every path)
    clock: Callable[[], float]


@dataclass(frozen=True)
class Candidates:
    """The one record the stages pass along; each stage fills its own fields."""

    weights: dict[str, float]
    fetch_depth: int
    rankings: dict[str, list[str]] = field(default_factory=dict)
    scores: dict[str, dict[str, float]] = field(default_factory=dict)
    reports: dict[str, ChannelReport] = field(default_factory=dict)
    fused: tuple[Fused, ...] = ()
    pool: tuple[Candidate, ...] = ()  # fused candidates, each content once
    picked: tuple[Candidate, ...] = ()  # the hits before their text is read
    pool_chunks: tuple[Chunk, ...] = ()  # the pool's chunks, read only when the question names code
    named_proven: tuple[str, ...] = ()  # its names known to occur in the pool without the text
    files: tuple[FileHit, ...] = ()
    hits: tuple[Hit, ...] = ()
    subgraph: Subgraph = Subgraph((), (), {}, ())
    expanded: tuple[str, ...] = ()  # node ids the expansion added
    connected: tuple[Hit, ...] = ()  # their chunks, for the context after the hits
    context: Context = Context("", (), 0, 0)
    timings: dict[str, float] = field(default_factory=dict)


def _run_channel(q: Query, ch: Channel, depth: int) -> tuple[list[tuple[str, float]] | None, str, str]:
    """``(ranked, status, detail)``: a channel that cannot run or breaks is reported, not fatal."""
    try:
        return ch.search(q.plan, q.vector, depth), "ran", ""
    except ChannelUnavailable as exc:
        return None, "unavailable", str(exc)
    except DataMissing:
        raise  # the caller fetches what is missing and asks again (oya.core.shards)
    except Exception as exc:  # a broken channel must not sink the answer
        return None, "failed", f"{type(exc).__name__}: {exc}"


def gather(q: Query, c: Candidates, *, names: tuple[str, ...]) -> Candidates:
    """Run the channels named in ``names`` to ``c.fetch_depth``; the path filter applies here."""
    rankings: dict[str, list[str]] = {}
    scores: dict[str, dict[str, float]] = {}
    reports: dict[str, ChannelReport] = {}
    timings = dict(c.timings)
    for ch in q.channels:
        if ch.name not in names:
            reports[ch.name] = ChannelReport(ch.name, "off", detail="switched off")
            continue
        t0 = q.clock()
        ranked, status, detail = _run_channel(q, ch, c.fetch_depth)
        timings[ch.name] = (q.clock() - t0) * 1000
        if ranked is None:
            reports[ch.name] = ChannelReport(ch.name, status, detail=detail)
            continue
        if q.allowed is not None:
            paths = q.corpus.chunk_paths()
            ranked = [(cid, s) for cid, s in ranked if cid in paths and q.allowed(paths[cid])]
        rankings[ch.name] = [cid for cid, _ in ranked]
        scores[ch.name] = dict(ranked)
        reports[ch.name] = ChannelReport(
            ch.name, "ran", found=len(ranked), weight=c.weights.get(ch.name, 1.0)
        )
    for name in names:
        if name not in reports:
            reports[name] = ChannelReport(name, "unavailable", detail="not provided by this index")
    return replace(c, rankings=rankings, scores=scores, reports=reports, timings=timings)


def fuse_rankings(q: Query, c: Candidates, *, rrf_k: int, demoted: Sequence[str]) -> Candidates:
    """Weighted reciprocal rank fusion of the channels' lists, each read with the chunks of files
    of a ``demoted`` kind (docs, change logs, templates) the question's first line does not ask
    for after the rest, order kept (``kinds.code_first``). The ``kinds`` stage puts those files
    last anyway; read in place, they took a channel's first ranks (a pasted issue template
    matches the repository's own, a report's words its manual) and RRF's steep 1 / (k + rank)
    left the code below them little of that channel's vote. ``c.rankings`` stay as the
    channels gave them (the confidence reads them)."""
    lists = c.rankings
    if demoted:
        paths, subject = q.corpus.chunk_paths(), first_line(q.question)

        def path(cid: str) -> str:
            return paths.get(cid, "")

        lists = {name: code_first(ids, path, subject, demoted) for name, ids in c.rankings.items()}
    return replace(c, fused=tuple(fuse(lists, c.weights, k=rrf_k)))


def reweigh(q: Query, c: Candidates, *, test_weight: float, semantic_lead: float) -> Candidates:
    """Test code down by ``test_weight`` (unless asked about); a clear semantic winner first."""
    fused = list(c.fused)
    weigh_test_code = test_weight < 1.0 and not mentions_tests(q.question)
    if weigh_test_code and fused:
        fused = weigh_tests(fused, q.corpus.chunk_paths(), test_weight)
    if semantic_lead > 0 and fused:
        fused = promote_clear_winner(
            fused,
            c.rankings.get("semantic", []),
            c.scores.get("semantic", {}),
            semantic_lead,
            q.corpus.chunk_paths() if weigh_test_code else None,
        )
    return replace(c, fused=tuple(fused))


def dedup(q: Query, c: Candidates, *, pool_size: int) -> Candidates:
    """The first ``pool_size`` fused ids as candidates, each content kept once (no text read)."""
    top = c.fused[:pool_size]
    refs = q.corpus.chunk_refs([f.id for f in top])
    seen: set[str] = set()
    pool: list[Candidate] = []
    for f in top:
        ref = refs.get(f.id)
        if ref is None or ref.content_key in seen:
            continue
        seen.add(ref.content_key)
        pool.append(Candidate(ref, f.score, f.channels, f.ranks))
    return replace(c, pool=tuple(pool))


def rank_candidate_files(
    q: Query, c: Candidates, *, mode: str, min_confidence: float, top_n: int
) -> Candidates:
    """Files ranked from the whole candidate pool (before the per-file cap)."""
    files = rank_files(c.pool, mode=mode, graph=q.graph, min_confidence=min_confidence, top_n=top_n)
    return replace(c, files=tuple(files))


def fuse_whole_files(q: Query, c: Candidates, *, depth: int, rrf_k: int, weight: float) -> Candidates:
    """The ranked files fused (weighted RRF, ``rrf_k``) with BM25 over whole files (path + text,
    ``oya.core.file_lexical``), whose list counts ``weight``; unchanged when the lexical channel
    did not run or cannot count per file."""
    lexical = next((ch for ch in q.channels if ch.name == "lexical"), None)
    if weight <= 0 or not isinstance(lexical, FileTerms) or "lexical" not in c.rankings:
        return c
    paths = q.corpus.chunk_paths()
    ranked = [p for p, _ in rank_file_docs(q.plan.lexical_tokens, lexical, paths, depth)]
    if q.allowed is not None:
        ranked = [p for p in ranked if q.allowed(p)]
    return replace(c, files=tuple(fuse_files(c.files, ranked, rrf_k=rrf_k, weight=weight)))


def favour_scope(q: Query, c: Candidates, *, rrf_k: int, weight: float) -> Candidates:
    """The ranked files fused (weighted RRF, ``rrf_k``) with those of them whose path names the
    question's scope prefix ("printer: fix ...", ``oya.core.scope``), in their order, as a list
    that counts ``weight``: they move up; no file joins or leaves."""
    words = scope_words(q.question)
    if weight <= 0 or not words:
        return c
    ranked = [f.path for f in c.files if names_scope(f.path, words)]
    if not ranked:
        return c
    return replace(c, files=tuple(fuse_files(c.files, ranked, rrf_k=rrf_k, weight=weight)))


def favour_named(q: Query, c: Candidates, *, rrf_k: int, weight: float) -> Candidates:
    """The ranked files fused (weighted RRF, ``rrf_k``) with those of them whose file name the
    question spells (``oya.core.scope.named_files``: a frame's ``Foo.java``, ``src/main.rs:4``) or
    whose stem is a type it spells (``type_names``: ``TreeTypeAdapter``), in their order, as a list
    that counts ``weight``: they move up; no file joins or leaves."""
    if weight <= 0:
        return c
    names, types = named_files(q.question), type_names(q.question)
    ranked = [f.path for f in c.files if names_file(f.path, names) or names_type(f.path, types)]
    if not ranked:
        return c
    return replace(c, files=tuple(fuse_files(c.files, ranked, rrf_k=rrf_k, weight=weight)))


def order_kinds(q: Query, c: Candidates, *, demoted: Sequence[str], hit_demoted: Sequence[str]) -> Candidates:
    """The ranked files with those of a ``demoted`` kind (tests, docs, change logs, templates,
    build files) after the code files, and the candidate chunks of a ``hit_demoted`` kind after
    the code's, unless the question's first line asks for that kind (a fix description or a
    behaviour question asks for code; issue 16 items 7 and 8). Files that are not source
    (generated, vendored, amalgamated, copies: the corpus's ``file_origins``) go after too,
    files and chunks, unless the question names their path (issue 24)."""
    subject = first_line(q.question)
    origins = q.corpus.file_origins()
    paths = {f.path for f in c.files} | {h.chunk.path for h in c.pool}
    copies = unnamed_copies(origins, paths, q.question)
    files = tuple(code_first(c.files, _path, subject, demoted, copies))
    pool = tuple(code_first(c.pool, _hit_path, subject, hit_demoted, copies)) if hit_demoted else c.pool
    return replace(c, files=files, pool=pool)


def _path(f: FileHit) -> str:
    return f.path


def _hit_path(h: Candidate) -> str:
    return h.chunk.path


def cap(q: Query, c: Candidates, *, k: int, max_per_file: int) -> Candidates:
    """The hits' candidates: the pool in order, at most ``max_per_file`` of one file and ``k`` in
    all (``expand`` reads their text with the connected code's, in one round)."""
    picked: list[Candidate] = []
    per_file: dict[str, int] = {}
    for h in c.pool:
        if per_file.get(h.chunk.path, 0) >= max_per_file:
            continue
        per_file[h.chunk.path] = per_file.get(h.chunk.path, 0) + 1
        picked.append(h)
        if len(picked) >= k:
            break
    return replace(c, picked=tuple(picked))


def _read_answer(q: Query, c: Candidates, expanded: list[str]) -> Candidates:
    """The hits with their chunks, the first chunk of each expanded node not already in the
    context (through the path filter), the details of the nodes the answer shows, and the whole
    pool's chunks when the question names code the pool is not known to hold (the evidence looks
    for the names; ``names_proven``): one round."""
    by_node = q.corpus.chunk_ids_for_nodes(expanded) if expanded else {}
    want = [cids[0] for n in expanded for cids in [by_node.get(n, [])] if cids]
    named = named_in(q.plan)
    proven = names_proven(q.plan, c.pool, q.corpus.names_in_text) if named else ()
    read_pool = len(proven) < len(named)
    texts = [h.chunk.id for h in (c.pool if read_pool else c.picked)]
    shown = [n.id for n in c.subgraph.nodes] + [h.chunk.node_id for h in c.picked if h.chunk.node_id]
    got: dict[str, Chunk] = {}
    fetched_together(
        lambda: got.update(q.corpus.get_chunks(texts + want)), lambda: q.graph.load_details(shown)
    )
    hits = tuple(Hit(got[h.chunk.id], h.score, h.channels, h.ranks) for h in c.picked if h.chunk.id in got)
    pool_chunks = tuple(got[h.chunk.id] for h in c.pool if h.chunk.id in got) if read_pool else ()
    hit_ids = {h.chunk.id for h in hits}
    # dedup against what is in the context, not the whole fused pool: a chunk the channels
    # ranked below the hits is still connected code worth showing
    taken = {h.chunk.content_hash for h in hits}
    extra: list[Hit] = []
    for cid in want:
        chunk = got.get(cid)
        if chunk is None or cid in hit_ids or chunk.content_hash in taken:
            continue
        if q.allowed is not None and not q.allowed(chunk.path):  # the filter holds here too
            continue
        taken.add(chunk.content_hash)
        extra.append(Hit(chunk, 0.0, ("graph-expansion",)))
    return replace(c, hits=hits, pool_chunks=pool_chunks, named_proven=proven, connected=tuple(extra))


def expand(
    q: Query,
    c: Candidates,
    *,
    seed_count: int,
    hops: int,
    min_confidence: float,
    max_nodes: int,
    prior: Callable[[Node], float],
) -> Candidates:
    """The code graph around the top ``seed_count`` hits (``hops`` 0: the seeds alone); then the
    answer's text (``_read_answer``)."""
    seeds = [h.chunk.node_id for h in c.picked[:seed_count] if h.chunk.node_id]
    if hops > 0 and seeds:
        subgraph = q.graph.expand(
            seeds, hops=hops, min_confidence=min_confidence, max_nodes=max_nodes, prior=prior
        )
    else:
        subgraph = q.graph.expand(
            seeds, hops=0, min_confidence=min_confidence, max_nodes=len(seeds), prior=prior
        )
    expanded = [n.id for n in subgraph.nodes if subgraph.distance.get(n.id, 0) > 0]
    return _read_answer(q, replace(c, subgraph=subgraph, expanded=tuple(expanded)), expanded)


def pack(
    q: Query, c: Candidates, *, budget: int, diagram_budget: int, diagram_nodes: int, min_confidence: float
) -> Candidates:
    """The context: the diagram (the paths between the hits' symbols first, at most
    ``diagram_nodes`` nodes), then the hits' and the connected code's snippets, in budget."""
    matches = [h.chunk.node_id for h in c.hits if h.chunk.node_id]
    ranked = [h.chunk.node_id for h in c.pool if h.chunk.node_id]
    relevance = {n: i for i, n in reversed(list(enumerate(ranked)))}
    # the nodes whose lines, signatures and docstrings the answer shows: a sharded graph
    # (oya.core.shard_graph) fetches them with the diagram's in one round
    shown = [n.id for n in c.subgraph.nodes] + [
        h.chunk.node_id for h in (*c.hits, *c.connected) if h.chunk.node_id
    ]
    plan = plan_diagram(
        q.graph,
        matches,
        c.subgraph,
        max_nodes=diagram_nodes,
        min_confidence=min_confidence,
        relevance=relevance,
        details_for=shown,
    )
    subgraph = replace(c.subgraph, nodes=tuple(q.graph.nodes[n.id] for n in c.subgraph.nodes))
    return replace(
        c, subgraph=subgraph, context=build_context(c.hits, c.connected, plan, budget, diagram_budget)
    )

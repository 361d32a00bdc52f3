"""The retrieval pipeline: channels -> fusion -> dedup -> files -> graph expansion -> context.

Theory of operation:

1. The question is analysed once (``plan_query``): intent, channel weights, lexical tokens.
2. Each channel returns a ranked list of chunk ids. A channel that is unavailable (no query
   vector, no index) or raises is skipped and reported, never fatal.
3. Weighted RRF fuses the lists; path filters (include/exclude globs) drop chunks first.
4. Chunks with identical content are kept once; at most ``max_per_file`` chunks of one file
   are kept among the hits so one long file cannot crowd out the rest.
   With ``diversity > 0`` the hits are first reordered by MMR (``oya.core.diversity``): cosine
   between candidates' vectors (``vectors_for`` of the semantic channel, when it has one)
   blended with their graph proximity.
5. File ranking aggregates the fused scores of a file's chunks (``file_aggregation``): ``max``
   (best chunk), ``decay`` (best + 1/2 second + 1/4 third: a file that holds several relevant
   chunks outranks a file with one lucky chunk), or ``graph`` (decay, plus a share of the scores
   of candidates in other files whose symbols call, extend or import its symbols).
6. The top hits' graph nodes seed a bounded expansion (``CodeGraph.expand``); the connected
   code joins the context after the hits.
7. The context is token-budgeted: the Mermaid diagram first (its own budget), then snippets
   cut at line boundaries. Citations are made only from what entered the context.
"""

from __future__ import annotations

import fnmatch
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

from oya.core.bm25 import BM25Index
from oya.core.confidence import assess_confidence
from oya.core.diagram import render_mermaid
from oya.core.diversity import mmr_order
from oya.core.fusion import Fused, fuse
from oya.core.graph import CodeGraph, Subgraph
from oya.core.query import QueryPlan, plan_query
from oya.core.records import Chunk
from oya.core.results import (
    ChannelReport,
    Citation,
    Context,
    FileHit,
    Hit,
    RetrievalResult,
    SearchQuality,
    Snippet,
    page_url,
)
from oya.core.text import split_lines
from oya.core.tokenize import count_tokens, truncate_to_tokens
from oya.core.vectors import VectorIndex

CHANNEL_NAMES = ("lexical", "semantic", "graph")
FILE_AGGREGATIONS = ("max", "decay", "graph")


class ChannelUnavailable(Exception):
    """A channel cannot run for this query (no vector, no index); reported, not fatal."""


class Channel(Protocol):
    name: str

    def search(self, plan: QueryPlan, vector: Sequence[float] | None, k: int) -> list[tuple[str, float]]: ...


class VectorSource(Protocol):
    """Optional on a semantic channel: the stored vectors of some chunks (for diversity)."""

    def vectors_for(self, ids: Sequence[str]) -> Mapping[str, Sequence[float]]: ...


class Corpus(Protocol):
    def get_chunks(self, ids: Sequence[str]) -> dict[str, Chunk]: ...

    def chunk_ids_for_nodes(self, node_ids: Sequence[str]) -> dict[str, list[str]]: ...

    def chunk_paths(self) -> Mapping[str, str]: ...


class MemoryCorpus:
    """All chunks in memory (the browser bundle, tests, small indexes)."""

    def __init__(self, chunks: Sequence[Chunk]) -> None:
        self.chunks = {c.id: c for c in chunks}
        self._by_node: dict[str, list[str]] = {}
        for c in sorted(chunks, key=lambda c: (c.path, c.start_line, c.id)):
            if c.node_id:
                self._by_node.setdefault(c.node_id, []).append(c.id)
        self._paths = {c.id: c.path for c in chunks}

    def get_chunks(self, ids: Sequence[str]) -> dict[str, Chunk]:
        return {i: self.chunks[i] for i in ids if i in self.chunks}

    def chunk_ids_for_nodes(self, node_ids: Sequence[str]) -> dict[str, list[str]]:
        return {n: self._by_node[n] for n in node_ids if n in self._by_node}

    def chunk_paths(self) -> Mapping[str, str]:
        return self._paths


class BM25Channel:
    name = "lexical"

    def __init__(self, index: BM25Index) -> None:
        self.index = index

    def search(self, plan: QueryPlan, vector: Sequence[float] | None, k: int) -> list[tuple[str, float]]:
        if not plan.lexical_tokens:
            return []
        return self.index.search(plan.lexical_tokens, k)


class VectorChannel:
    name = "semantic"

    def __init__(self, index: VectorIndex | None, reason: str = "no vectors in the index") -> None:
        self.index = index
        self.reason = reason

    def search(self, plan: QueryPlan, vector: Sequence[float] | None, k: int) -> list[tuple[str, float]]:
        if self.index is None or len(self.index) == 0:
            raise ChannelUnavailable(self.reason)
        if vector is None:
            raise ChannelUnavailable("no embedding for the question")
        return self.index.search(vector, k)

    def vectors_for(self, ids: Sequence[str]) -> Mapping[str, Sequence[float]]:
        return {} if self.index is None else self.index.vectors_for(ids)


class GraphChannel:
    """Question terms matched against graph node names, qualified names and paths."""

    name = "graph"

    def __init__(self, graph: CodeGraph, corpus: Corpus, *, prefix_match: bool = True) -> None:
        self.graph = graph
        self.corpus = corpus
        self.prefix_match = prefix_match

    def search(self, plan: QueryPlan, vector: Sequence[float] | None, k: int) -> list[tuple[str, float]]:
        if len(self.graph) == 0:
            raise ChannelUnavailable("the index has no code graph")
        matches = self.graph.match_names(
            plan.lexical_tokens,
            identifiers=plan.identifiers,
            paths=plan.paths,
            k=k,
            prefix_match=self.prefix_match,
        )
        by_node = self.corpus.chunk_ids_for_nodes([n for n, _ in matches])
        out: list[tuple[str, float]] = []
        for node_id, score in matches:
            for cid in by_node.get(node_id, [])[:1]:
                out.append((cid, score))
        return out[:k]


@dataclass(frozen=True, slots=True)
class RetrievalOptions:
    k: int = 10
    fetch_k: int = 100  # how deep each channel ranks before fusion
    hops: int = 2
    min_edge_confidence: float = 0.5
    max_graph_nodes: int = 24
    seed_count: int = 3
    max_per_file: int = 3
    context_budget: int = 2400  # tokens for snippets and diagram together
    diagram_budget: int = 600
    # off by default: on the measured questions intent-adaptive weights gained nothing and cost
    # connected-code coverage (bench/eval_quality.py); the intent is still classified and reported
    adaptive_weights: bool = False
    # off by default: ranking the next hop by PageRank prefers hubs over the seed's own callees
    # and callers (bench/eval_quality.py: connected-code coverage +8 points without it)
    use_centrality: bool = False
    expand_graph: bool = True
    channels: tuple[str, ...] = CHANNEL_NAMES
    # RRF's k: 10 rather than Cormack et al.'s 60 gives a channel's first ranks more say over
    # agreement far down the lists (three channels, not dozens of TREC runs); measured in bench/
    rrf_k: int = 10
    # the semantic channel's first chunk goes first when its cosine leads the runner-up's by this
    # much (0 = off): code search R@1 +4.8 points, held out +4.1 (bench/eval_quality.py); the
    # scale is all-MiniLM-L6-v2's cosine
    semantic_lead: float = 0.04
    # MMR trade-off (0 = fused order kept) and the graph share of its redundancy measure
    diversity: float = 0.0
    diversity_graph_weight: float = 0.5
    file_aggregation: str = "graph"  # one of FILE_AGGREGATIONS
    # off by default: no question set of real pasted bug reports exists to show it helps (the
    # eval's long questions moved by <= 0.2 points); BM25's IDF already favours rare identifiers
    long_query_identifiers: bool = False  # on: a long question's lexical query = its identifiers
    # fused score factor for test code (tests/, test_*.py, *_test.py, conftest.py) unless the
    # question asks about tests: tests repeat the names they test and crowd out the code itself
    test_weight: float = 0.7
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    intent: str | None = None
    weights: Mapping[str, float] | None = field(default=None)

    def __post_init__(self) -> None:
        for name in self.channels:
            if name not in CHANNEL_NAMES:
                raise ValueError(f"channel must be one of {', '.join(CHANNEL_NAMES)}; got {name!r}")
        if self.k < 1:
            raise ValueError("k must be at least 1")
        if self.rrf_k < 1:
            raise ValueError("rrf_k must be at least 1")
        if self.file_aggregation not in FILE_AGGREGATIONS:
            raise ValueError(
                f"file_aggregation must be one of {', '.join(FILE_AGGREGATIONS)}; got {self.file_aggregation!r}"
            )
        if not 0.0 <= self.test_weight <= 1.0:
            raise ValueError("test_weight must be in [0, 1]")
        if not 0.0 <= self.diversity <= 1.0 or not 0.0 <= self.diversity_graph_weight <= 1.0:
            raise ValueError("diversity and diversity_graph_weight must be in [0, 1]")


_TEST_WORD = re.compile(r"\btest(s|ing|ed)?\b|\bpytest\b|\bunittest\b|\bfixtures?\b", re.IGNORECASE)


def is_test_path(path: str) -> bool:
    """Test code by the usual conventions: a tests/ or test/ folder, test_*.py, *_test.py, conftest.py."""
    parts = path.split("/")
    name = parts[-1]
    return (
        any(p in ("tests", "test", "testing") for p in parts[:-1])
        or name.startswith("test_")
        or name.endswith(("_test.py", "_tests.py"))
        or name == "conftest.py"
    )


def mentions_tests(question: str) -> bool:
    return _TEST_WORD.search(question) is not None


def promote_clear_winner(
    fused: Sequence[Fused],
    ranked: Sequence[str],
    scores: Mapping[str, float],
    lead: float,
    test_paths: Mapping[str, str] | None,
) -> list[Fused]:
    """Put the semantic channel's first chunk first when it leads its second by ``lead`` or more.

    Fusion rewards agreement: a chunk ranked fifth by two channels outscores one ranked first
    by one. When the embedding clearly prefers one chunk (cosine lead over the runner-up),
    that preference is the best evidence there is and should not be outvoted. Test code that
    is being weighed down (``test_paths`` given) is not promoted.
    """
    out = list(fused)
    if len(ranked) < 2 or scores.get(ranked[0], 0.0) - scores.get(ranked[1], 0.0) < lead:
        return out
    top = ranked[0]
    if test_paths is not None and is_test_path(test_paths.get(top, "")):
        return out
    at = next((i for i, f in enumerate(out) if f.id == top), None)
    if not at:  # already first, or not fused
        return out
    winner = out.pop(at)
    out.insert(0, replace(winner, score=max(winner.score, out[0].score)))
    return out


def weigh_tests(fused: Sequence[Fused], paths: Mapping[str, str], weight: float) -> list[Fused]:
    """Scale the fused score of test chunks by ``weight`` and re-sort (ties by id)."""
    out = [replace(f, score=f.score * weight) if is_test_path(paths.get(f.id, "")) else f for f in fused]
    out.sort(key=lambda f: (-f.score, f.id))
    return out


def path_filter(include: Sequence[str], exclude: Sequence[str]) -> Callable[[str], bool] | None:
    """A predicate over repository paths from glob patterns (``tests/*``, ``*.md``)."""
    if not include and not exclude:
        return None

    def norm(pattern: str) -> list[str]:
        p = pattern.strip()
        start = 0
        while p.startswith("./", start):  # not lstrip("./"): that would eat the dot of ".github"
            start += 2
        p = p[start:].lstrip("/")
        # "tests" and "tests/" mean the folder and everything below it
        if not any(ch in p for ch in "*?[") and not p.endswith((".py", ".md", ".rst")):
            p = p.rstrip("/")
            return [p, p + "/*"]
        return [p, p + "/*"] if p.endswith("/") else [p]

    inc = [q for p in include for q in norm(p)]
    exc = [q for p in exclude for q in norm(p)]

    def allowed(path: str) -> bool:
        if inc and not any(fnmatch.fnmatchcase(path, p) for p in inc):
            return False
        return not any(fnmatch.fnmatchcase(path, p) for p in exc)

    return allowed


def fetch_depth(opts: RetrievalOptions) -> int:
    """How deep each channel ranks before fusion (deeper when a path filter will drop some)."""
    filtered = bool(opts.include or opts.exclude)
    return max(opts.fetch_k, opts.k * 3) * (5 if filtered else 1)


def retrieve(
    question: str,
    *,
    channels: Sequence[Channel],
    graph: CodeGraph,
    corpus: Corpus,
    vector: Sequence[float] | None = None,
    options: RetrievalOptions | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> RetrievalResult:
    opts = options or RetrievalOptions()
    if not question or not question.strip():
        raise ValueError("the question is empty")
    timings: dict[str, float] = {}
    t0 = clock()
    plan = plan_query(
        question,
        intent=opts.intent,
        adaptive_weights=opts.adaptive_weights,
        long_query_identifiers=opts.long_query_identifiers,
    )
    weights = dict(opts.weights) if opts.weights is not None else plan.weights
    allowed = path_filter(opts.include, opts.exclude)
    paths = corpus.chunk_paths() if allowed else {}
    fetch = fetch_depth(opts)

    rankings: dict[str, list[str]] = {}
    channel_scores: dict[str, dict[str, float]] = {}
    reports: dict[str, ChannelReport] = {}
    for ch in channels:
        if ch.name not in opts.channels:
            reports[ch.name] = ChannelReport(ch.name, "off", detail="switched off")
            continue
        tc = clock()
        try:
            ranked = ch.search(plan, vector, fetch)
        except ChannelUnavailable as exc:
            reports[ch.name] = ChannelReport(ch.name, "unavailable", detail=str(exc))
            continue
        except Exception as exc:  # a broken channel must not sink the answer
            reports[ch.name] = ChannelReport(ch.name, "failed", detail=f"{type(exc).__name__}: {exc}")
            continue
        finally:
            timings[ch.name] = (clock() - tc) * 1000
        if allowed:
            ranked = [(cid, s) for cid, s in ranked if cid in paths and allowed(paths[cid])]
        rankings[ch.name] = [cid for cid, _ in ranked]
        channel_scores[ch.name] = dict(ranked)
        reports[ch.name] = ChannelReport(ch.name, "ran", found=len(ranked), weight=weights.get(ch.name, 1.0))
    for name in opts.channels:
        if name not in reports:
            reports[name] = ChannelReport(name, "unavailable", detail="not provided by this index")

    tf = clock()
    fused = fuse(rankings, weights, k=opts.rrf_k)
    weigh_test_code = opts.test_weight < 1.0 and not mentions_tests(question)
    if weigh_test_code and fused:
        fused = weigh_tests(fused, corpus.chunk_paths(), opts.test_weight)
    if opts.semantic_lead > 0 and fused:
        fused = promote_clear_winner(
            fused,
            rankings.get("semantic", []),
            channel_scores.get("semantic", {}),
            opts.semantic_lead,
            corpus.chunk_paths() if weigh_test_code else None,
        )
    pool = fused[: max(opts.k * 6, 60)]
    chunks = corpus.get_chunks([f.id for f in pool])
    seen_hashes: set[str] = set()
    candidates: list[Hit] = []
    for f in pool:
        chunk = chunks.get(f.id)
        if chunk is None or chunk.content_hash in seen_hashes:
            continue
        seen_hashes.add(chunk.content_hash)
        candidates.append(Hit(chunk, f.score, f.channels, f.ranks))
    files = rank_files(
        candidates, mode=opts.file_aggregation, graph=graph, min_confidence=opts.min_edge_confidence
    )
    if opts.diversity > 0 and len(candidates) > 1:
        candidates = diversify(candidates, channels, graph, opts)
    hits: list[Hit] = []
    per_file: dict[str, int] = {}
    for h in candidates:
        if per_file.get(h.chunk.path, 0) >= opts.max_per_file:
            continue
        per_file[h.chunk.path] = per_file.get(h.chunk.path, 0) + 1
        hits.append(h)
        if len(hits) >= opts.k:
            break
    timings["fusion"] = (clock() - tf) * 1000

    tg = clock()
    seeds = [h.chunk.node_id for h in hits[: opts.seed_count] if h.chunk.node_id]
    if opts.expand_graph and seeds:
        subgraph = graph.expand(
            seeds,
            hops=opts.hops,
            min_confidence=opts.min_edge_confidence,
            max_nodes=opts.max_graph_nodes,
            use_centrality=opts.use_centrality,
        )
    else:
        subgraph = graph.expand(seeds, hops=0, max_nodes=len(seeds))
    expanded_ids = [n.id for n in subgraph.nodes if subgraph.distance.get(n.id, 0) > 0]
    extra: list[Hit] = []
    if expanded_ids:
        by_node = corpus.chunk_ids_for_nodes(expanded_ids)
        want = [cids[0] for n in expanded_ids for cids in [by_node.get(n, [])] if cids]
        got = corpus.get_chunks(want)
        hit_ids = {h.chunk.id for h in hits}
        # dedup against what is in the context, not the whole fused pool: a chunk the channels
        # ranked below the hits is still connected code worth showing
        taken = {h.chunk.content_hash for h in hits}
        for cid in want:
            c = got.get(cid)
            if c is None or cid in hit_ids or c.content_hash in taken:
                continue
            if allowed and not allowed(c.path):  # the path filter holds for connected code too
                continue
            taken.add(c.content_hash)
            extra.append(Hit(c, 0.0, ("graph-expansion",)))
    timings["graph"] = (clock() - tg) * 1000

    context = build_context(hits, extra, subgraph, opts.context_budget, opts.diagram_budget)
    citations = tuple(s.citation for s in context.snippets)
    used = len(context.snippets)
    for name, rep in list(reports.items()):
        if rep.status == "ran":
            n_used = sum(1 for h in hits if name in h.channels)
            reports[name] = ChannelReport(rep.name, rep.status, rep.found, n_used, rep.detail, rep.weight)
    ordered = tuple(reports[n] for n in CHANNEL_NAMES if n in reports) + tuple(
        r for n, r in reports.items() if n not in CHANNEL_NAMES
    )
    quality = SearchQuality(
        intent=plan.intent,
        channels=ordered,
        found=len(fused),
        used=used,
        expanded=len(expanded_ids),
        fetch_depth=fetch,
        hops=opts.hops if opts.expand_graph and seeds else 0,
    )
    confidence = assess_confidence(plan, hits, channel_scores, quality)
    timings["total"] = (clock() - t0) * 1000
    return RetrievalResult(
        question=question,
        hits=tuple(hits),
        files=tuple(files[: max(opts.k, 10)]),
        subgraph=subgraph,
        context=context,
        confidence=confidence,
        quality=quality,
        citations=citations,
        timings_ms=timings,
        symbols={
            c.node_id: graph.nodes[c.node_id]
            for c in citations
            if c.node_id is not None and c.node_id in graph.nodes
        },
    )


def diversify(
    candidates: Sequence[Hit], channels: Sequence[Channel], graph: CodeGraph, opts: RetrievalOptions
) -> list[Hit]:
    """``candidates`` reordered by MMR; vectors come from the semantic channel when it has them."""
    ids = [h.chunk.id for h in candidates]
    vectors: Mapping[str, Sequence[float]] = {}
    for ch in channels:
        source = getattr(ch, "vectors_for", None)
        if ch.name == "semantic" and source is not None and "semantic" in opts.channels:
            try:
                vectors = source(ids)
            except Exception:  # no vectors: the graph view alone still diversifies
                vectors = {}
    by_id = {h.chunk.id: h for h in candidates}
    order = mmr_order(
        ids,
        {h.chunk.id: h.score for h in candidates},
        k=opts.k,
        diversity=opts.diversity,
        vectors=vectors,
        nodes={h.chunk.id: h.chunk.node_id for h in candidates},
        neighbors=lambda n: [m for m, _ in graph.neighbors(n, opts.min_edge_confidence)],
        graph_weight=opts.diversity_graph_weight,
    )
    return [by_id[i] for i in order]


# share of a candidate's score that flows to each file one edge away ("graph" aggregation)
FILE_PROPAGATION = 0.5


def rank_files(
    hits: Sequence[Hit],
    top_n: int = 3,
    *,
    mode: str = "decay",
    graph: CodeGraph | None = None,
    min_confidence: float = 0.5,
) -> list[FileHit]:
    """Files ranked from their chunks' fused scores.

    ``max``: the best chunk. ``decay``: best + 1/2 second + 1/4 third (the top ``top_n``).
    ``graph``: decay, plus ``FILE_PROPAGATION`` of each candidate's score split evenly over the
    other candidate files that define what its symbol calls, extends or imports (outgoing edges
    at or above ``min_confidence``): code that uses a thing points at the file defining it, so
    that file rises; only files that are candidates themselves are ranked.
    """
    if mode not in FILE_AGGREGATIONS:
        raise ValueError(f"mode must be one of {', '.join(FILE_AGGREGATIONS)}; got {mode!r}")
    by_path: dict[str, list[Hit]] = {}
    for h in hits:
        by_path.setdefault(h.chunk.path, []).append(h)
    scores: dict[str, float] = {}
    best: dict[str, list[Hit]] = {}
    for path, hs in by_path.items():
        hs = sorted(hs, key=lambda h: -h.score)[: 1 if mode == "max" else top_n]
        best[path] = hs
        scores[path] = sum(h.score / (2**i) for i, h in enumerate(hs))
    if mode == "graph" and graph is not None:
        bonus: dict[str, float] = {}
        for h in hits:
            node = h.chunk.node_id
            if node is None or node not in graph.nodes:
                continue
            targets = {
                graph.nodes[m].path
                for m, e in graph.neighbors(node, min_confidence)
                if e.kind != "contains" and e.source == node and graph.nodes[m].path != h.chunk.path
            }
            targets &= by_path.keys()
            for path in targets:
                bonus[path] = bonus.get(path, 0.0) + FILE_PROPAGATION * h.score / len(targets)
        for path, b in bonus.items():
            scores[path] += b
    out = [
        FileHit(path, scores[path], tuple(h.chunk.id for h in hs), hs[0].chunk.start_line)
        for path, hs in best.items()
    ]
    out.sort(key=lambda f: (-f.score, f.path))
    return out


def cut_snippet(text: str, budget: int) -> tuple[str, bool]:
    """The longest prefix of whole lines within ``budget`` tokens (a line costs its tokens + 1).

    A first line longer than the whole budget (minified code) is itself cut after
    ``budget - 1`` tokens, so the snippet never exceeds its budget.
    """
    lines = split_lines(text)
    kept: list[str] = []
    used = 0
    for line in lines:
        cost = count_tokens(line) + 1
        if used + cost > budget:
            if not kept:
                return truncate_to_tokens(line, budget - 1), True
            return "\n".join(kept), True
        kept.append(line)
        used += cost
    return "\n".join(kept), False


def citation_for(chunk: Chunk, end_line: int | None = None) -> Citation:
    return Citation(
        path=chunk.path,
        title=chunk.title,
        start_line=chunk.start_line,
        end_line=end_line or chunk.end_line,
        node_id=chunk.node_id,
        url=page_url(chunk.path, chunk.start_line),
        chunk_id=chunk.id,
    )


def build_context(
    hits: Sequence[Hit], extra: Sequence[Hit], subgraph: Subgraph, budget: int, diagram_budget: int
) -> Context:
    mermaid = ""
    # the diagram keeps to its own budget in tokens (and the whole budget): fewer nodes until it fits
    cap = min(diagram_budget, budget)
    n_nodes = min(len(subgraph.nodes), 30)
    while n_nodes > 0:
        mermaid = render_mermaid(
            subgraph.nodes,
            subgraph.edges,
            highlight=subgraph.seeds,
            max_nodes=n_nodes,
            max_chars=diagram_budget * 4,
        )
        if count_tokens(mermaid) <= cap:
            break
        mermaid = ""
        n_nodes = n_nodes * 3 // 4
    used = count_tokens(mermaid) if mermaid else 0
    snippets: list[Snippet] = []
    per_snippet = max(120, (budget - used) // 4)
    for h in list(hits) + list(extra):
        room = budget - used
        if room < 40:
            break
        # 8 tokens of each snippet's room are its header line in Context.render
        text, truncated = cut_snippet(h.chunk.text, min(per_snippet, room - 8))
        n_lines = len(split_lines(text))
        cit = citation_for(h.chunk, h.chunk.start_line + n_lines - 1)
        snippets.append(Snippet(cit, text, truncated))
        used += count_tokens(text) + 8
    return Context(mermaid=mermaid, snippets=tuple(snippets), tokens=used, budget=budget)

"""The retrieval pipeline: plan -> gather -> fuse -> reweigh -> dedup -> files -> whole_files -> scope -> named ->
kinds -> companions -> cap -> expand -> pack.

Theory of operation:

1. The question is analysed once (``plan_query``): intent, channel weights, identifiers.
2. ``default_pipeline(options)`` binds every stage's parameters (``oya.core.stages``) from
   the options record, the only place tuning defaults live. A pipeline is a frozen record of
   named stages, so a bench variant (``bench/variants/``) swaps or inserts a stage or the
   planner in a copy, and the losing variants stay runnable without shipping.
3. ``run`` passes one ``Candidates`` record through the stages, timing each, and
   ``retrieve`` turns the last record into a ``RetrievalResult``: the channel reports, the
   search quality (``degraded`` when a channel could not run), confidence and citations,
   made only from what entered the context.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import partial

from oya.core.channels import CHANNEL_NAMES, Channel, Corpus, DataMissing
from oya.core.companions import favour_companions
from oya.core.confidence import assess_confidence
from oya.core.evidence import agreements, channel_files, gather_evidence
from oya.core.files import DECAY_CHUNKS
from oya.core.filters import path_filter
from oya.core.graph import CodeGraph, uniform_prior
from oya.core.kinds import DEMOTED_ALL, HIT_DEMOTED, NON_CODE
from oya.core.options import RetrievalOptions, fetch_depth
from oya.core.query import QueryPlan, plan_query
from oya.core.records import Node
from oya.core.results import ChannelReport, RetrievalResult, SearchQuality
from oya.core.stages import (
    Candidates,
    Query,
    cap,
    dedup,
    expand,
    favour_named,
    favour_scope,
    fuse_rankings,
    fuse_whole_files,
    gather,
    order_kinds,
    pack,
    rank_candidate_files,
    reweigh,
)

Stage = Callable[[Query, Candidates], Candidates]
MIN_POOL = 60  # fused candidates read at least (k * 6 when larger): dedup and files need depth


@dataclass(frozen=True)
class Pipeline:
    """A planner and named stages with their parameters bound: one retrieval setup."""

    options: RetrievalOptions
    plan: Callable[[str], QueryPlan]
    stages: tuple[tuple[str, Stage], ...]


def expand_stage(options: RetrievalOptions, prior: Callable[[Node], float]) -> Stage:
    """The expansion stage with ``options``' parameters and the hop candidates' ``prior``."""
    o = options
    return partial(
        expand,
        seed_count=o.seed_count,
        hops=o.hops if o.expand_graph else 0,
        min_confidence=o.min_edge_confidence,
        max_nodes=o.max_graph_nodes,
        prior=prior,
    )


def default_pipeline(options: RetrievalOptions) -> Pipeline:
    """The shipped retrieval, every stage parameter taken from ``options``."""
    o = options
    stages: tuple[tuple[str, Stage], ...] = (
        ("gather", partial(gather, names=o.channels)),
        # each channel's list read with docs, change logs and templates after the rest (issue 24;
        # docs/DECISIONS.md, "Docs come after the code inside each channel's list")
        ("fuse", partial(fuse_rankings, rrf_k=o.rrf_k, demoted=NON_CODE)),
        ("reweigh", partial(reweigh, test_weight=o.test_weight, semantic_lead=o.semantic_lead)),
        ("dedup", partial(dedup, pool_size=max(o.k * 6, MIN_POOL))),
        (
            "files",
            partial(
                rank_candidate_files,
                mode=o.file_aggregation,
                min_confidence=o.min_edge_confidence,
                top_n=DECAY_CHUNKS,
            ),
        ),
        (
            "whole_files",
            partial(fuse_whole_files, depth=o.fetch_k, rrf_k=o.rrf_k, weight=o.file_lexical_weight),
        ),
        ("scope", partial(favour_scope, rrf_k=o.rrf_k, weight=o.scope_weight)),
        ("named", partial(favour_named, rrf_k=o.rrf_k, weight=o.named_weight)),
        # files: tests, docs, change logs, templates and build files after the code; the answer's
        # chunks: docs, change logs, templates and build files (tests are weighed by reweigh;
        # moving them out too cost connected coverage 9 points). Issue 16 items 7 and 8;
        # docs/DECISIONS.md
        ("kinds", partial(order_kinds, demoted=DEMOTED_ALL, hit_demoted=HIT_DEMOTED)),
        # a high source file's companion (header, implementation, x-inl.h) moves up beside it (issue 24)
        ("companions", partial(favour_companions, seeds=o.companion_seeds, depth=o.companion_depth)),
        ("cap", partial(cap, k=o.k, max_per_file=o.max_per_file)),
        ("expand", expand_stage(o, uniform_prior)),
        (
            "pack",
            partial(
                pack,
                budget=o.context_budget,
                diagram_budget=o.diagram_budget,
                diagram_nodes=o.diagram_nodes,
                min_confidence=o.min_edge_confidence,
            ),
        ),
    )
    return Pipeline(o, partial(plan_query, intent=o.intent), stages)


@dataclass
class Resume:
    """Where a retrieval stopped because a stage needs data fetched first (``DataMissing``): the
    same retrieval (``key``) asked again starts at that stage with the record it had, instead of
    running the stages before it again. Exact: a stage is a function of the query and the record.
    One slot per bundle (``oya.core.bundle``); any other key starts from the first stage."""

    key: object = None
    stage: int = 0
    record: Candidates | None = None


def run(pipeline: Pipeline, query: Query, resume: Resume | None = None, key: object = None) -> Candidates:
    """``query`` through every stage of ``pipeline``; each stage's milliseconds in ``timings``."""
    o = pipeline.options
    if resume is not None and resume.record is not None and resume.key == key:
        start, c = resume.stage, resume.record
    else:
        weights = dict(o.weights) if o.weights is not None else dict(query.plan.weights)
        start, c = 0, Candidates(weights=weights, fetch_depth=fetch_depth(o))
    for i, (name, stage) in enumerate(pipeline.stages[start:], start):
        t0 = query.clock()
        try:
            after = stage(query, c)
        except DataMissing:
            if resume is not None:
                resume.key, resume.stage, resume.record = key, i, c
            raise
        c = after
        c.timings[name] = (query.clock() - t0) * 1000
    if resume is not None:
        resume.record = None
    return c


def _reports(c: Candidates, agrees: dict[str, int]) -> tuple[ChannelReport, ...]:
    """Channel reports in ``CHANNEL_NAMES`` order, each with how many hits it found and how many
    of the top files it has among its first results (``agrees``)."""
    reports = dict(c.reports)
    for name, rep in c.reports.items():
        if rep.status == "ran":
            used = sum(1 for h in c.hits if name in h.channels)
            reports[name] = replace(rep, used=used, agrees=agrees.get(name, 0))
    return tuple(reports[n] for n in CHANNEL_NAMES if n in reports) + tuple(
        r for n, r in reports.items() if n not in CHANNEL_NAMES
    )


def result_of(query: Query, c: Candidates, options: RetrievalOptions, total_ms: float) -> RetrievalResult:
    """The retrieval's result from the last stage's record."""
    citations = tuple(s.citation for s in c.context.snippets)
    votes = channel_files(c.rankings, query.corpus.chunk_paths())
    quality = SearchQuality(
        intent=query.plan.intent,
        channels=_reports(c, agreements(c.files, votes)),
        found=len(c.fused),
        used=len(c.context.snippets),
        expanded=len(c.expanded),
        fetch_depth=c.fetch_depth,
        hops=max(c.subgraph.distance.values(), default=0),
        evidence=gather_evidence(
            query.plan, c.hits, c.pool_chunks, c.files, votes, c.scores, proven=c.named_proven
        ),
    )
    graph = query.graph
    graph.load_details([n for c_ in citations if (n := c_.node_id) is not None])
    return RetrievalResult(
        question=query.question,
        hits=c.hits,
        files=c.files[: max(options.k, 10)],
        subgraph=c.subgraph,
        context=c.context,
        confidence=assess_confidence(quality.evidence, quality, options.confidence, found=bool(c.hits)),
        quality=quality,
        citations=citations,
        timings_ms={**c.timings, "total": total_ms},
        symbols={n: graph.nodes[n] for c_ in citations if (n := c_.node_id) is not None and n in graph.nodes},
    )


def retrieve(
    question: str,
    *,
    channels: Sequence[Channel],
    graph: CodeGraph,
    corpus: Corpus,
    vector: Sequence[float] | None = None,
    options: RetrievalOptions | None = None,
    pipeline: Pipeline | None = None,
    clock: Callable[[], float] = time.perf_counter,
    resume: Resume | None = None,
    key: object = None,
) -> RetrievalResult:
    """Retrieve for ``question`` with ``pipeline`` (default: ``default_pipeline(options)``).

    ``resume`` and ``key``: a retrieval interrupted by ``DataMissing`` and asked again with the same
    ``key`` (which must name everything it depends on) resumes at the stage that asked (``Resume``)."""
    if not question or not question.strip():
        raise ValueError("the question is empty")
    pipe = pipeline or default_pipeline(options or RetrievalOptions())
    t0 = clock()
    o = pipe.options
    query = Query(
        question=question,
        plan=pipe.plan(question),
        channels=tuple(channels),
        graph=graph,
        corpus=corpus,
        vector=vector,
        allowed=path_filter(o.include, o.exclude),
        clock=clock,
    )
    c = run(pipe, query, resume, key)
    return result_of(query, c, o, (clock() - t0) * 1000)

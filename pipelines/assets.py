"""Software-defined assets, in lineage order. Each calls one ``oya.build.steps`` step and
reports counts (and its own seconds) in metadata; no parsing, ranking or SQL here."""

import time
from dataclasses import fields
from pathlib import Path
from typing import Any

from dagster import AssetExecutionContext, MetadataValue, Output, ResourceParam, asset

from oya.build import steps
from oya.build.leftovers import remove_build_leftovers
from oya.build.lock import output_lock
from oya.build.ownership import claim_output
from oya.build.stats import (
    PATH,
    AssetStats,
    ChunksStats,
    CodeGraphStats,
    EmbeddingStats,
    PublishedSiteStats,
    SearchIndexStats,
    SourceFilesStats,
    WikiPagesStats,
    WikiSiteStats,
)
from oya.core.records import Chunk
from oya.models import ScanResult
from oya.site.build import WikiPages, render_wiki_pages, swap_site, write_wiki_site
from oya.site.publish import client, publish_site
from oya.store.schema import INDEX_FILE
from oya.store.writer import publish_index
from oya.terminal import safe_text
from pipelines.repos import repos_partitions
from pipelines.resources import OyaSettings, Progress

GROUP = "oya_index"


def _seconds(t0: float) -> float:
    return round(time.perf_counter() - t0, 3)


def _metadata(stats: AssetStats) -> dict[str, Any]:
    """The asset's record as Dagster metadata, one entry per field: mappings as JSON, paths as paths."""
    paths = {f.name for f in fields(stats) if f.metadata == PATH}  # type: ignore[arg-type]
    out: dict[str, Any] = {}
    for name, value in stats.fields().items():
        if name in paths:
            out[name] = MetadataValue.path(value)
        elif isinstance(value, dict):
            out[name] = MetadataValue.json(value)
        else:
            out[name] = value
    return out


@asset(
    group_name=GROUP,
    partitions_def=repos_partitions,
    description="Text files of the repository, with content hashes; skips with reasons.",
)
def source_files(
    context: AssetExecutionContext, settings: ResourceParam[OyaSettings], progress: ResourceParam[Progress]
) -> Output[ScanResult]:
    t0 = time.perf_counter()
    progress.update("source_files", 0, 1)
    # a build starts here: the output folders must be ones it may write into (not the repository,
    # and before the lock, whose file is itself a sign of an output folder); then what killed
    # builds left there goes (under the folder's lock: a concurrent build's staged files are not
    # leftovers while it publishes)
    claim_output(settings.out, repo=settings.repo)
    with output_lock(settings.out):
        removed = remove_build_leftovers(settings.out, settings.site, older_than=time.time())
    for name in removed:
        context.log.info(f"removed {name}, left behind by an interrupted build")
    result = steps.scan(
        settings.repo, settings.max_file_bytes, settings.out, outputs=(settings.out, settings.site)
    )
    skips = result.skip_counts()
    if result.skipped:  # one log entry (a Dagster event each): not one per file
        context.log.info(
            f"skipped {len(result.skipped)} files:\n"
            + "\n".join(
                # build.log is read in a terminal: a file name's control characters are shown, not run
                safe_text(f"  {s.path}: {s.reason}" + (f" ({s.detail})" if s.detail else ""), one_line=True)
                for s in result.skipped
            )
        )
    languages: dict[str, int] = {}
    for f in result.files:
        languages[f.language] = languages.get(f.language, 0) + 1
    stats = SourceFilesStats(
        files=len(result.files),
        lines=sum(f.n_lines for f in result.files),
        skipped=len(result.skipped),
        skipped_by_reason=skips,
        redactions=result.redaction_counts(),
        languages=dict(sorted(languages.items())),
        leftovers_removed=len(removed),
        seconds=_seconds(t0),
    )
    # the HEAD scanned (the sensor's run tag names the one it saw move), so each materialization
    # of a repository's partition says which commit it indexed
    commit = steps.repo_commit(settings.repo)
    return Output(result, metadata={**_metadata(stats), "commit": commit or "(not a git work tree)"})


@asset(
    group_name=GROUP,
    partitions_def=repos_partitions,
    description="Symbols and their contains/imports/calls/inherits edges, with centrality.",
)
def code_graph(
    context: AssetExecutionContext,
    source_files: ScanResult,
    settings: ResourceParam[OyaSettings],
    progress: ResourceParam[Progress],
) -> Output[steps.CodeGraphData]:
    t0 = time.perf_counter()
    progress.update("code_graph", 0, 1)
    graph = steps.parse_and_link(
        source_files, settings.out, progress=progress.reporter(context, "code_graph", "files")
    )
    counts = graph.stats()
    stats = CodeGraphStats(
        symbols=int(counts["nodes"]),
        edges=int(counts["edges"]),
        parse_errors=sum(len(v) for v in graph.parse_errors.values()),
        parses_reused=graph.reused,
        degraded_files=len(graph.degraded),
        stats=counts,
        seconds=_seconds(t0),
    )
    return Output(graph, metadata=_metadata(stats))


@asset(
    group_name=GROUP,
    partitions_def=repos_partitions,
    description="Retrievable chunks: one per symbol, module code, docs sections.",
)
def chunks(
    context: AssetExecutionContext,
    source_files: ScanResult,
    code_graph: steps.CodeGraphData,
    settings: ResourceParam[OyaSettings],
    progress: ResourceParam[Progress],
) -> Output[list[Chunk]]:
    t0 = time.perf_counter()
    progress.update("chunks", 0, 1)
    out = steps.make_chunks(
        source_files, code_graph, settings.out, progress=progress.reporter(context, "chunks", "files")
    )
    stats = ChunksStats(
        chunks=len(out),
        code_chunks=sum(1 for c in out if c.kind == "code"),
        doc_chunks=sum(1 for c in out if c.kind == "doc"),
        tokens=sum(c.n_tokens for c in out),
        seconds=_seconds(t0),
    )
    return Output(out, metadata=_metadata(stats))


@asset(
    group_name=GROUP,
    partitions_def=repos_partitions,
    description="Unit vectors per chunk, reused from the cross-index cache when unchanged.",
)
def chunk_embeddings(
    context: AssetExecutionContext,
    chunks: list[Chunk],
    settings: ResourceParam[OyaSettings],
    progress: ResourceParam[Progress],
) -> Output[steps.EmbeddingData]:
    t0 = time.perf_counter()
    progress.update("chunk_embeddings", 0, 1)
    embedder = settings.make_embedder()
    data = steps.embed(
        chunks,
        embedder,
        settings.cache.embeddings(embedder.model_id),
        progress=progress.reporter(context, "chunk_embeddings", "embedded"),
    )
    stats = EmbeddingStats(
        model=data.model_id,
        embedded=data.embedded,
        cached=data.cached,
        vectors=len(data.vectors),
        model_seconds=dict(getattr(embedder, "load_seconds", {})),
        seconds=_seconds(t0),
    )
    return Output(data, metadata=_metadata(stats))


@asset(
    group_name=GROUP,
    partitions_def=repos_partitions,
    description="The DuckDB index: files, chunks, embeddings, nodes, edges, full-text index. "
    "Staged beside the live index; published once the checks passed (wiki_site, or oya build).",
)
def search_index(
    context: AssetExecutionContext,
    settings: ResourceParam[OyaSettings],
    source_files: ScanResult,
    code_graph: steps.CodeGraphData,
    chunks: list[Chunk],
    chunk_embeddings: steps.EmbeddingData,
    progress: ResourceParam[Progress],
) -> Output[str]:
    t0 = time.perf_counter()
    progress.update("search_index", 0, 1)
    written: dict[str, int] = {}
    path = steps.write_search_index(
        settings.out,
        settings.repo,
        source_files,
        code_graph,
        chunks,
        chunk_embeddings,
        progress=progress.reporter(context, "search_index", "tables written"),
        report=written,
        stage=True,  # published after the checks (wiki_site, or oya build without a site)
    )
    stats = SearchIndexStats(
        path=str(settings.out / INDEX_FILE),  # where it is published; the value is the staged file
        bytes=path.stat().st_size,
        chunks=len(chunks),
        patched=written,  # the previous index patched (rows per table), or written anew
        seconds=_seconds(t0),
    )
    return Output(str(path), metadata=_metadata(stats))


@asset(
    group_name=GROUP,
    partitions_def=repos_partitions,
    description="Every wiki page rendered from the index (overview, architecture, dirs, files); "
    "pages unchanged since the existing site are reused from it.",
)
def wiki_pages(
    context: AssetExecutionContext,
    settings: ResourceParam[OyaSettings],
    search_index: str,
    progress: ResourceParam[Progress],
) -> Output[WikiPages]:
    t0 = time.perf_counter()
    progress.update("wiki_pages", 0, 1)
    pages = render_wiki_pages(
        Path(search_index),  # the staged index
        settings.site,  # pages whose inputs did not change are taken from the existing site
        progress=progress.reporter(context, "wiki_pages", "pages"),
    )
    stats = WikiPagesStats(**{k: int(v) for k, v in pages.counts.items()}, seconds=_seconds(t0))
    return Output(pages, metadata=_metadata(stats))


@asset(
    group_name=GROUP,
    partitions_def=repos_partitions,
    description="The static wiki folder, staged beside the live one: pages, Ask-panel runtime, model, "
    "core wheel, bundle. Its checks (links, secrets, golden queries) block the publish.",
)
def wiki_site(
    settings: ResourceParam[OyaSettings],
    search_index: str,
    wiki_pages: WikiPages,
    progress: ResourceParam[Progress],
) -> Output[str]:
    t0 = time.perf_counter()
    progress.update("wiki_site", 0, 1)
    report = write_wiki_site(
        wiki_pages,
        Path(search_index),
        settings.site,
        with_runtime=settings.site_runtime,
        cache=settings.cache,
        swap=False,  # published_site swaps it in, once its checks passed
    )
    stats = WikiSiteStats(
        path=str(settings.site),  # where it is published; the value is the staged folder
        pages=int(report["pages"]),
        bytes={k: int(v) for k, v in report["bytes"].items()},
        steps={k: float(v) for k, v in report["steps"].items()},
        seconds=_seconds(t0),
    )
    return Output(str(report["staged"]), metadata=_metadata(stats))


@asset(
    group_name=GROUP,
    partitions_def=repos_partitions,
    description="The publish step, after every blocking check: the staged site swapped in, then the "
    "staged index; then, if the repository names a publish_url, the site uploaded to object storage.",
)
def published_site(
    context: AssetExecutionContext,
    settings: ResourceParam[OyaSettings],
    search_index: str,
    wiki_site: str,
    progress: ResourceParam[Progress],
) -> Output[str]:
    t0 = time.perf_counter()
    progress.update("published_site", 0, 1)
    # the site first: a site that fails to swap in leaves the old index live beside the old site
    with output_lock(settings.out):  # two publishes of one folder never interleave their renames
        swap_site(Path(wiki_site), settings.site)
        publish_index(Path(search_index))
    url, uploaded, copied = "", 0, 0
    if settings.publish_url:
        done = publish_site(settings.site, settings.publish_url, client(settings.publish_endpoint))
        context.log.info(f"published {done.url}: {done.uploaded} files uploaded, {done.copied} copied")
        url, uploaded, copied = done.url, done.uploaded, done.copied
    stats = PublishedSiteStats(
        site=str(settings.site), url=url, uploaded=uploaded, copied=copied, seconds=_seconds(t0)
    )
    return Output(str(settings.site), metadata=_metadata(stats))


INDEX_ASSETS = [source_files, code_graph, chunks, chunk_embeddings, search_index]
SITE_ASSETS = [wiki_pages, wiki_site, published_site]

"""Asset checks, one partition (repository) at a time.

Dagster marks ``partitions_def`` on a check as a preview; partitioned checks are still what a
partitioned asset needs (an unpartitioned one would load every repository's value as its input),
so the warning is silenced where the checks are made, not for the whole process.
"""

import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dagster import (
    AssetCheckResult,
    AssetChecksDefinition,
    AssetIn,
    PreviewWarning,
    ResourceParam,
    asset_check,
)

from oya.chunking.clean import chunks_with_secrets
from oya.core.records import Chunk
from oya.site.assets import site_file
from oya.site.checks import broken_links, files_with_secrets, golden_mismatches
from oya.store.health import index_health
from oya.store.index import Index
from pipelines.assets import chunks, search_index, wiki_site
from pipelines.repos import repos_partitions
from pipelines.resources import OyaSettings


def partitioned_check(**kwargs: Any) -> Callable[[Callable[..., AssetCheckResult]], AssetChecksDefinition]:
    """``asset_check`` partitioned by repository."""

    def make(fn: Callable[..., AssetCheckResult]) -> AssetChecksDefinition:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PreviewWarning)
            return asset_check(partitions_def=repos_partitions, **kwargs)(fn)

    return make


@partitioned_check(
    asset=chunks,
    blocking=True,
    description="No chunk carries a secret-looking string (all were redacted). Blocks the index.",
)
def chunks_hold_no_secrets(chunks: list[Chunk], settings: ResourceParam[OyaSettings]) -> AssetCheckResult:
    # texts an earlier build of this repository found clean are not scanned again (oya.chunking.clean)
    return _secrets_result("chunks", chunks_with_secrets(chunks, settings.out))


@partitioned_check(
    asset=search_index,
    blocking=True,
    description="The index is consistent (an empty one is): every chunk has one vector of the "
    "index's dimension, every edge joins two nodes. Blocks the site.",
)
def search_index_is_consistent(search_index: str) -> AssetCheckResult:
    with Index(Path(search_index)) as idx:
        health = index_health(idx)
    problems = health.problems
    return AssetCheckResult(
        passed=not problems,
        metadata={"chunks": health.chunks, "nodes": health.nodes, **problems},
        description=", ".join(f"{k}: {v}" for k, v in problems.items())
        or ("the index is empty: the repository had nothing to index" if not health.chunks else None),
    )


@partitioned_check(
    asset=wiki_site,
    blocking=True,
    description="Every internal link (href, src) of every page names a file of the staged site. "
    "Blocks the publish.",
)
def site_links_resolve(wiki_site: str) -> AssetCheckResult:
    broken = broken_links(Path(wiki_site))
    return AssetCheckResult(
        passed=not broken,
        metadata={"broken_links": len(broken), "links": "\n".join(broken[:20])},
        description=f"{len(broken)} links name no file of the site: " + ", ".join(broken[:5])
        if broken
        else None,
    )


@partitioned_check(
    asset=wiki_site,
    blocking=True,
    description="No file of the staged site (pages, bundle, static files, runtime) carries a token, a "
    "private key or a password in a URL. Blocks the publish.",
)
def site_holds_no_secrets(wiki_site: str, settings: ResourceParam[OyaSettings]) -> AssetCheckResult:
    # Pages are escaped, highlighted HTML of no one language: the language-aware assignment rules
    # already ran on each file as it was read (oya.scanning.redact), so here only the rules that need none.
    # Files hard-linked from the live site passed this check when it was published.
    found, scanned = files_with_secrets(Path(wiki_site), settings.site)
    return _secrets_result("files", found, scanned=scanned)


@partitioned_check(
    asset=wiki_site,
    blocking=True,
    additional_ins={"search_index": AssetIn("search_index")},
    description="A few of the repository's own symbol names, asked of the index (DuckDB channels) and "
    "of the site's bundle (the pure core the Ask panel runs), lead to the same hit and files. "
    "Blocks the publish.",
)
def site_answers_like_the_index(wiki_site: str, search_index: str) -> AssetCheckResult:
    bundle = site_file(Path(wiki_site), "bundle/")
    if not bundle.is_dir():  # a site built without the runtime has no Ask panel, so nothing to agree
        return AssetCheckResult(passed=True, metadata={"questions": 0}, description="no bundle in this site")
    questions, wrong = golden_mismatches(Path(search_index), bundle)
    if not questions:  # nothing indexed, or no name long enough to ask: nothing to disagree on
        return AssetCheckResult(
            passed=True,
            metadata={"questions": 0, "disagreements": 0},
            description="nothing to compare: the index has no function or class name to ask about",
        )
    return AssetCheckResult(
        passed=not wrong,
        metadata={
            "questions": ", ".join(questions),
            "disagreements": len(wrong),
            "details": "\n".join(wrong),
        },
        description="; ".join(wrong) or None,
    )


def _secrets_result(what: str, bad: list[str], **counts: int) -> AssetCheckResult:
    paths = ", ".join(bad[:20])
    return AssetCheckResult(
        passed=not bad,
        metadata={f"{what}_with_secrets": len(bad), "paths": paths, **counts},
        description=f"{len(bad)} {what} with a secret-looking string: {paths}" if bad else None,
    )


INDEX_CHECKS = [chunks_hold_no_secrets, search_index_is_consistent]
SITE_CHECKS = [site_links_resolve, site_holds_no_secrets, site_answers_like_the_index]
CHECKS = [*INDEX_CHECKS, *SITE_CHECKS]

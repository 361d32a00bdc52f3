"""Asset checks, one partition (repository) at a time.

Dagster marks ``partitions_def`` on a check as a preview; partitioned checks are still what a
partitioned asset needs (an unpartitioned one would load every repository's value as its input),
so the warning is silenced where the checks are made, not for the whole process.
"""

import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dagster import AssetCheckResult, AssetChecksDefinition, PreviewWarning, ResourceParam, asset_check

from oya.clean_chunks import chunks_with_secrets
from oya.core.records import Chunk
from oya.redact import find_credentials
from oya.site.render import WikiPages
from oya.store import Index
from oya.store_health import index_health
from pipelines.assets import chunks, search_index, wiki_pages
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
    # texts an earlier build of this repository found clean are not scanned again (oya.clean_chunks)
    return _secrets_result("chunks", chunks_with_secrets(chunks, settings.out))


@partitioned_check(
    asset=search_index,
    blocking=True,
    description="The index is not empty and consistent: every chunk has one vector of the index's "
    "dimension, every edge joins two nodes. Blocks the site.",
)
def search_index_is_consistent(search_index: str) -> AssetCheckResult:
    with Index(Path(search_index)) as idx:
        health = index_health(idx)
    problems = health.problems
    return AssetCheckResult(
        passed=not problems,
        metadata={"chunks": health.chunks, "nodes": health.nodes, **problems},
        description=", ".join(f"{k}: {v}" for k, v in problems.items()) or None,
    )


@partitioned_check(
    asset=wiki_pages,
    blocking=True,
    description="No page rendered for the site carries a token, a private key or a password in a URL. "
    "Blocks the site.",
)
def wiki_pages_hold_no_secrets(wiki_pages: WikiPages) -> AssetCheckResult:
    # Pages are escaped, highlighted HTML of no one language: the language-aware assignment rules
    # already ran on each file as it was read (oya.redact), so here only the rules that need none.
    texts = {**wiki_pages.pages, **wiki_pages.assets}
    return _secrets_result("pages", sorted(path for path, text in texts.items() if find_credentials(text)))


def _secrets_result(what: str, bad: list[str]) -> AssetCheckResult:
    paths = ", ".join(bad[:20])
    return AssetCheckResult(
        passed=not bad,
        metadata={f"{what}_with_secrets": len(bad), "paths": paths},
        description=f"{len(bad)} {what} with a secret-looking string: {paths}" if bad else None,
    )


INDEX_CHECKS = [chunks_hold_no_secrets, search_index_is_consistent]
SITE_CHECKS = [wiki_pages_hold_no_secrets]
CHECKS = [*INDEX_CHECKS, *SITE_CHECKS]

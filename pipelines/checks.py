"""Asset checks, one partition (repository) at a time.

Dagster marks ``partitions_def`` on a check as a preview; partitioned checks are still what a
partitioned asset needs (an unpartitioned one would load every repository's value as its input),
so the warning is silenced where the checks are made, not for the whole process.
"""

import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dagster import AssetCheckResult, AssetChecksDefinition, PreviewWarning, asset_check

from oya.core.records import Chunk
from oya.reader import detect_language
from oya.redact import find_secrets
from pipelines.assets import chunks, search_index
from pipelines.repos import repos_partitions


def partitioned_check(**kwargs: Any) -> Callable[[Callable[..., AssetCheckResult]], AssetChecksDefinition]:
    """``asset_check`` partitioned by repository."""

    def make(fn: Callable[..., AssetCheckResult]) -> AssetChecksDefinition:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PreviewWarning)
            return asset_check(partitions_def=repos_partitions, **kwargs)(fn)

    return make


@partitioned_check(
    asset=chunks,
    description="No chunk carries a secret-looking string (all were redacted).",
)
def chunks_hold_no_secrets(chunks: list[Chunk]) -> AssetCheckResult:
    bad = [c.path for c in chunks if find_secrets(c.text, detect_language(c.path))]
    return AssetCheckResult(
        passed=not bad, metadata={"chunks_with_secrets": len(bad), "paths": ", ".join(bad[:20])}
    )


@partitioned_check(
    asset=search_index,
    description="The index opens and holds the chunks it was given.",
)
def search_index_opens(search_index: str) -> AssetCheckResult:
    from oya.store import Index

    with Index(Path(search_index)) as idx:
        stats = idx.stats()
    return AssetCheckResult(
        passed=stats.chunks > 0 and stats.embeddings == stats.chunks,
        metadata={"chunks": stats.chunks, "embeddings": stats.embeddings, "nodes": stats.nodes},
    )


CHECKS = [chunks_hold_no_secrets, search_index_opens]

"""Dagster Definitions for Oya: the index assets, their checks, a job, a schedule and a
sensor that rebuilds when the repository's HEAD moves. Resources are bound here only.

Configure the repository with environment variables (read when the code location loads):
``OYA_REPO`` (default: the current directory), ``OYA_OUT`` (default: ``<repo>/.oya``),
``OYA_EMBEDDER`` (``minilm`` or ``hashing``).
"""

import os
from pathlib import Path

from dagster import (
    AssetCheckResult,
    AssetSelection,
    DefaultScheduleStatus,
    DefaultSensorStatus,
    Definitions,
    RunRequest,
    ScheduleDefinition,
    SensorEvaluationContext,
    SkipReason,
    asset_check,
    define_asset_job,
    sensor,
)

from oya import indexing
from oya.clean_chunks import chunks_with_secrets
from oya.core.records import Chunk
from pipelines.assets import INDEX_ASSETS, SITE_ASSETS, chunks, search_index
from pipelines.resources import OyaSettings, Progress


@asset_check(asset=chunks, description="No chunk carries a secret-looking string (all were redacted).")
def chunks_hold_no_secrets(chunks: list[Chunk], settings: OyaSettings) -> AssetCheckResult:
    bad = chunks_with_secrets(
        chunks, settings.out
    )  # texts found clean by an earlier build are not scanned again
    return AssetCheckResult(
        passed=not bad, metadata={"chunks_with_secrets": len(bad), "paths": ", ".join(bad[:20])}
    )


@asset_check(asset=search_index, description="The index opens and holds the chunks it was given.")
def search_index_opens(search_index: str) -> AssetCheckResult:
    from oya.store import Index

    with Index(Path(search_index)) as idx:
        stats = idx.stats()
    return AssetCheckResult(
        passed=stats.chunks > 0 and stats.embeddings == stats.chunks,
        metadata={"chunks": stats.chunks, "embeddings": stats.embeddings, "nodes": stats.nodes},
    )


def settings_from_env() -> OyaSettings:
    return OyaSettings(
        repo_path=os.environ.get("OYA_REPO", "."),
        out_dir=os.environ.get("OYA_OUT", ""),
        embedder=os.environ.get("OYA_EMBEDDER", "minilm"),
    )


index_job = define_asset_job("index_repository", selection=AssetSelection.assets(*INDEX_ASSETS, *SITE_ASSETS))

nightly_rebuild = ScheduleDefinition(
    job=index_job, cron_schedule="0 3 * * *", default_status=DefaultScheduleStatus.STOPPED
)


@sensor(job=index_job, minimum_interval_seconds=60, default_status=DefaultSensorStatus.STOPPED)
def new_commit_sensor(context: SensorEvaluationContext):  # type: ignore[no-untyped-def]
    """Rebuild on every commit: one run per new HEAD of the configured repository."""
    commit = indexing.repo_commit(settings_from_env().repo)
    if not commit:
        return SkipReason("the repository is not a git work tree")
    if context.cursor == commit:
        return SkipReason(f"HEAD {commit[:12]} already indexed")
    context.update_cursor(commit)
    return RunRequest(run_key=commit)


def build_definitions(settings: OyaSettings | None = None, progress: Progress | None = None) -> Definitions:
    return Definitions(
        assets=[*INDEX_ASSETS, *SITE_ASSETS],
        asset_checks=[chunks_hold_no_secrets, search_index_opens],
        jobs=[index_job],
        schedules=[nightly_rebuild],
        sensors=[new_commit_sensor],
        resources={"settings": settings or settings_from_env(), "progress": progress or Progress()},
    )


defs = build_definitions()

"""Dagster Definitions for Oya: the index assets partitioned by repository, their checks, a
job, a nightly schedule and a sensor that rebuilds a repository when its HEAD moves. Resources
are bound here only.

Configure the repositories with environment variables (read when the code location loads):
``OYA_REPOS`` (a TOML file listing them, see ``pipelines/repos.py``) or, for one repository,
``OYA_REPO`` (default: the current directory) and ``OYA_OUT`` (default: ``<repo>/.oya``);
``OYA_EMBEDDER`` (``minilm`` or ``hashing``).
"""

import json
from pathlib import Path

from dagster import (
    AssetKey,
    AssetRecordsFilter,
    AssetSelection,
    DagsterInstance,
    DefaultScheduleStatus,
    DefaultSensorStatus,
    Definitions,
    RunRequest,
    ScheduleEvaluationContext,
    SensorEvaluationContext,
    SensorResult,
    define_asset_job,
    in_process_executor,
    schedule,
    sensor,
)

from oya.build import steps
from pipelines.assets import INDEX_ASSETS, SITE_ASSETS
from pipelines.checks import CHECKS
from pipelines.repos import COMMIT_TAG, OyaRepos, repo_settings, repos_from_env, repos_partitions
from pipelines.resources import OyaSettings, Progress

REPOS = repos_partitions.name


# In-process: a run is one repository, whose steps form a chain, so a process per step buys no
# parallelism and costs a Python start and imports each: the one-file rebuild of networkx took
# 57 CPU s with the multiprocess executor, 16 with this one (bench/dagster_bench.py). Repositories
# still build in parallel: each run is its own process, launched from the run queue.
index_job = define_asset_job(
    "index_repository",
    selection=AssetSelection.assets(*INDEX_ASSETS, *SITE_ASSETS),
    executor_def=in_process_executor,
)


@schedule(job=index_job, cron_schedule="0 3 * * *", default_status=DefaultScheduleStatus.STOPPED)
def nightly_rebuild(context: ScheduleEvaluationContext, repos: OyaRepos) -> list[RunRequest]:
    """Every configured repository once a night (the ones the sensor has made partitions of)."""
    known = set(context.instance.get_dynamic_partitions(REPOS))
    day = context.scheduled_execution_time.strftime("%Y-%m-%d")
    return [RunRequest(partition_key=n, run_key=f"{n}:nightly:{day}") for n in repos.names if n in known]


@sensor(job=index_job, minimum_interval_seconds=60, default_status=DefaultSensorStatus.STOPPED)
def new_commit_sensor(context: SensorEvaluationContext, repos: OyaRepos) -> SensorResult:
    """One run per repository whose HEAD moved since the cursor ({repo: HEAD}); new repositories
    become partitions first. The run key names the commit, so a restart never builds one twice.
    Repositories no longer configured lose their partition; their published index and site stay."""
    cursor: dict[str, str] = json.loads(context.cursor) if context.cursor else {}
    known = set(context.instance.get_dynamic_partitions(REPOS))
    new = [n for n in repos.names if n not in known]
    gone = sorted(known - set(repos.names))
    for name in gone:
        cursor.pop(name, None)
        context.log.warning(removed_repository_message(context.instance, name))
    requests = []
    for entry in repos.repos:
        head = steps.repo_commit(Path(entry.path).expanduser())
        if not head:  # not a git work tree (yet): the nightly schedule still builds it
            continue
        if cursor.get(entry.name) != head:
            tags = {COMMIT_TAG: head}
            requests.append(RunRequest(partition_key=entry.name, run_key=f"{entry.name}:{head}", tags=tags))
        cursor[entry.name] = head
    changes = [repos_partitions.build_add_request(new)] if new else []
    changes += [repos_partitions.build_delete_request(gone)] if gone else []
    return SensorResult(
        run_requests=requests,
        cursor=json.dumps(cursor, sort_keys=True),
        dynamic_partitions_requests=changes,
        skip_reason=None if requests or changes else "no repository's HEAD moved",
    )


def removed_repository_message(instance: DagsterInstance, name: str) -> str:
    """What the sensor says when a repository leaves the configuration. Its index and site are
    left where they are (a reader may still be using them; deleting published files is the
    owner's call, not a side effect of editing a list), so the message says where they are."""
    site = last_published_site(instance, name)
    where = (
        f"its last published site {site} and the index beside it" if site else "its index and site, if any,"
    )
    return f"repository {name!r} is no longer configured: its partition is deleted; {where} are left in place"


def last_published_site(instance: DagsterInstance, name: str) -> str:
    records = instance.fetch_materializations(
        AssetRecordsFilter(asset_key=AssetKey("published_site"), asset_partitions=[name]), limit=1
    ).records
    if not records or records[0].asset_materialization is None:
        return ""
    path = records[0].asset_materialization.metadata.get("site")
    return str(path.value) if path is not None else ""


def build_definitions(
    settings: OyaSettings | None = None, progress: Progress | None = None, repos: OyaRepos | None = None
) -> Definitions:
    """``settings`` pins every run to one repository (tests); otherwise each run gets its
    partition's entry of ``repos`` (default: from ``OYA_REPOS`` / ``OYA_REPO``)."""
    repos = repos or repos_from_env()
    return Definitions(
        assets=[*INDEX_ASSETS, *SITE_ASSETS],
        asset_checks=CHECKS,
        jobs=[index_job],
        schedules=[nightly_rebuild],
        sensors=[new_commit_sensor],
        resources={
            "repos": repos,
            "settings": settings or repo_settings,
            "progress": progress or Progress(),
        },
    )


defs = build_definitions()

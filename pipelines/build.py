"""``oya build``: run the Dagster asset job in-process, showing its progress on the display it is
given (``oya.build.progress.ProgressBars``), and collect a summary: each asset's record
(``oya.build.stats``), read back from its materialization.

Dagster's own log (every event, progress lines, a failure's stack trace) goes to ``build.log``
in the index folder, not to the terminal: a failed build says why in one line and where the
log is. ``OYA_DEBUG=1`` also prints Dagster's error log, stack trace included.
"""

from __future__ import annotations

import contextlib
import logging
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from oya.build.ownership import LOG_FILE, claim_output
from oya.build.progress import ProgressBars
from oya.build.stats import RECORDS, AssetStats, BuildStats, BuildSummary, CheckResult
from oya.errors import OyaError
from oya.store.index import Index
from oya.store.writer import publish_index


def run_build(
    repo: Path,
    out_dir: Path | None,
    *,
    embedder: str = "minilm",
    cache_dir: Path | None = None,
    with_site: bool = False,
    progress: ProgressBars | None = None,
) -> BuildSummary:
    from dagster import DagsterInstance, materialize, mem_io_manager

    from oya.build.lock import output_lock
    from oya.site.prepare import start_preparation, stop_preparation
    from pipelines.assets import INDEX_ASSETS, SITE_ASSETS
    from pipelines.checks import INDEX_CHECKS, SITE_CHECKS
    from pipelines.repos import repos_partitions
    from pipelines.resources import OyaSettings
    from pipelines.resources import Progress as ProgressResource

    settings = OyaSettings(
        repo_path=str(repo.resolve()),
        out_dir=str(out_dir.resolve()) if out_dir else "",
        embedder=embedder,
        cache_dir=str(cache_dir) if cache_dir else "",
    )
    assets: list[Any] = [*INDEX_ASSETS, *INDEX_CHECKS]
    if with_site:
        assets += [*SITE_ASSETS, *SITE_CHECKS]
    # before anything is written (build.log included): nothing of the user's is replaced (oya.build.ownership)
    claim_output(settings.out, settings.site if with_site else None, repo=settings.repo)
    debug = bool(os.environ.get("OYA_DEBUG"))
    instance = DagsterInstance.ephemeral()
    # the assets are partitioned by repository; the CLI's one repository is its one partition
    # (its name is only a label here: ``settings`` is bound to the repository directly)
    partition = "repo"
    instance.add_dynamic_partitions(repos_partitions.name, [partition])
    t0 = time.perf_counter()
    # one build per output folder at a time: a second `oya build` of it fails here at once
    with (
        contextlib.ExitStack() as stack,
        output_lock(settings.out, wait=0),
        progress or contextlib.nullcontext(),
    ):
        # the site's one-off preparations (npm install, model export, the runtime's slow compression)
        # start now in a child at the lowest priority, on the CPU the index steps leave idle; the
        # site step waits for it and does whatever it left; a failed build ends it (oya.site.prepare)
        if with_site and embedder == "minilm":
            stack.callback(stop_preparation, start_preparation(settings.cache.root))
        result = materialize(
            assets,
            resources={
                "settings": settings,
                "progress": ProgressResource(progress.update if progress else None),
                "io_manager": mem_io_manager,
            },
            instance=instance,
            partition_key=partition,
            run_config={"loggers": {"console": {"config": {"log_level": "ERROR" if debug else "CRITICAL"}}}},
            raise_on_error=False,
        )
        if result.success and not with_site:  # no publish step: every blocking check has passed here
            publish_index(Path(result.output_for_node("search_index")))
    log_path = write_log(instance, result.run_id, settings.out / LOG_FILE)
    if not result.success:  # the staged index (if any) stays unpublished; the next build removes it
        raise OyaError(f"{_failure_message(result)} (log: {log_path})")
    seconds = time.perf_counter() - t0

    def stats(record: type[AssetStats]) -> AssetStats | None:  # None: not run (the site's, alone)
        found = result.asset_materializations_for_node(record.asset)
        return record.from_metadata(found[0].metadata) if found else None

    built = BuildStats(**{record.asset: stats(record) for record in RECORDS})
    with Index(Path(built.search_index.path)) as idx:
        skipped = tuple(idx.skipped())
    return BuildSummary(
        repo=str(repo.resolve()),
        index=built.search_index.path,
        seconds=seconds,
        stats=built,
        checks=tuple(CheckResult(ev.check_name, ev.passed) for ev in result.get_asset_check_evaluations()),
        skipped=skipped,
        site=built.wiki_site.path if built.wiki_site is not None else "",
    )


def write_log(instance: Any, run_id: str, path: Path) -> Path:
    """Every event of the run as text lines (a failure with its stack trace) into ``path``, or
    into a temporary file when ``path`` cannot be written; returns where it went."""
    lines = []
    for entry in instance.all_logs(run_id):
        stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(entry.timestamp))
        level = entry.level if isinstance(entry.level, str) else logging.getLevelName(entry.level)
        lines.append(f"{stamp} {level:<7} {entry.step_key or '-'} - {entry.user_message or entry.message}")
        event = entry.dagster_event
        if event is not None and event.is_step_failure and event.step_failure_data.error is not None:
            lines.append(event.step_failure_data.error.to_string().rstrip())
    text = "\n".join(lines) + "\n"
    try:
        path.write_text(text, encoding="utf-8")
    except OSError:
        fd, name = tempfile.mkstemp(prefix="oya-build-", suffix=".log")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        path = Path(name)
    return path


def _failure_message(result: Any) -> str:
    for check in result.get_asset_check_evaluations():  # a blocking check stopped the build
        if not check.passed:
            return f"check {check.check_name} failed: {check.description or 'see the log'}"
    for event in result.all_events:
        if event.is_step_failure and event.step_failure_data is not None:
            err = event.step_failure_data.user_failure_data or None
            error = event.step_failure_data.error
            while error is not None and error.cause is not None and "OyaError" not in error.cls_name:
                error = error.cause
            text = (error.message if error is not None else str(err)).strip().splitlines()
            return f"step {event.step_key} failed: {text[-1] if text else 'unknown error'}"
    return "the build failed"

"""The index job with Dagster's multiprocess executor (a process per step): the variant the
shipped in-process job replaced (docs/DECISIONS.md), kept runnable for ``bench/dagster_bench.py
--executor multiprocess``: ``dagster job execute -f bench/variants/dagster_multiprocess.py -a defs``."""

from dagster import AssetSelection, Definitions, define_asset_job, multiprocess_executor

from pipelines.assets import INDEX_ASSETS, SITE_ASSETS
from pipelines.definitions import build_definitions

_shipped = build_definitions()
defs = Definitions(
    assets=[*INDEX_ASSETS, *SITE_ASSETS],
    asset_checks=list(_shipped.asset_checks or []),
    jobs=[
        define_asset_job(
            "index_repository",
            selection=AssetSelection.assets(*INDEX_ASSETS, *SITE_ASSETS),
            executor_def=multiprocess_executor,
        )
    ],
    resources=dict(_shipped.resources or {}),
)

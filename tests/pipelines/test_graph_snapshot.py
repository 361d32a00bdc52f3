"""A snapshot of the Dagster definitions (asset keys, dependencies, partitions, checks, jobs,
schedules, sensors, resources): accidental rewiring fails here. After an intended change, rewrite
the golden file with ``OYA_UPDATE_GOLDEN=1 pytest tests/pipelines/test_graph_snapshot.py`` and
review its diff."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from dagster import Definitions

from pipelines.definitions import defs

GOLDEN = Path(__file__).with_name("asset_graph.golden.json")


def _partitions(pd: Any) -> str | None:
    return None if pd is None else f"{type(pd).__name__}:{getattr(pd, 'name', '')}"


def graph_snapshot(definitions: Definitions) -> dict[str, Any]:
    graph = definitions.resolve_asset_graph()
    repo = definitions.get_repository_def()
    assets = {}
    for key in sorted(graph.get_all_asset_keys(), key=lambda k: k.to_user_string()):
        node = graph.get(key)
        assets[key.to_user_string()] = {
            "deps": sorted(p.to_user_string() for p in node.parent_keys),
            "group": node.group_name,
            "partitions": _partitions(node.partitions_def),
        }
    checks = {}
    for ck in sorted(graph.asset_check_keys, key=lambda c: c.to_user_string()):
        spec = graph.get_check_spec(ck)
        checks[ck.to_user_string()] = {
            "blocking": spec.blocking,
            "partitions": _partitions(spec.partitions_def),
        }
    return {
        "assets": assets,
        "checks": checks,
        "jobs": {
            j.name: sorted(k.to_user_string() for k in j.asset_layer.executable_asset_keys)
            for j in sorted(repo.get_all_jobs(), key=lambda j: j.name)
            if not j.name.startswith("__")
        },
        "schedules": {s.name: s.cron_schedule for s in repo.schedule_defs},
        "sensors": {s.name: [t.job_name for t in s.targets] for s in repo.sensor_defs},
        "resources": sorted(repo.get_top_level_resources()),
    }


def test_definitions_match_the_golden_snapshot() -> None:
    snapshot = json.loads(json.dumps(graph_snapshot(defs)))  # JSON's types, as the file holds
    if os.environ.get("OYA_UPDATE_GOLDEN"):
        GOLDEN.write_text(json.dumps(snapshot, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    assert snapshot == golden, "the Dagster definitions changed; see the module docstring"


def test_the_snapshot_sees_a_rewired_dependency() -> None:
    """The snapshot is not blind: dropping one dependency edge changes it."""
    from dagster import AssetIn, asset

    from pipelines.assets import INDEX_ASSETS, SITE_ASSETS, wiki_pages
    from pipelines.checks import CHECKS
    from pipelines.repos import repos_partitions

    @asset(name="wiki_site", partitions_def=repos_partitions, ins={"wiki_pages": AssetIn()})
    def rewired(wiki_pages: object) -> str:  # no longer reads search_index
        return ""

    assert wiki_pages in SITE_ASSETS
    changed = Definitions(
        assets=[*INDEX_ASSETS, wiki_pages, rewired], asset_checks=CHECKS, resources=defs.resources
    )
    assert graph_snapshot(changed)["assets"]["wiki_site"]["deps"] == ["wiki_pages"]
    assert graph_snapshot(changed)["assets"] != json.loads(GOLDEN.read_text())["assets"]

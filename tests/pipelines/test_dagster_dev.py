"""`dagster dev` loads the code location and its UI serves the asset graph (slow: starts Dagster)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


QUERY = """{
  assetNodes {
    assetKey { path }
    dependencyKeys { path }
    partitionDefinition { name }
    assetChecksOrError { ... on AssetChecks { checks { name blocking } } }
  }
  repositoriesOrError { ... on RepositoryConnection { nodes { sensors { name } schedules { name } } } }
}"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_dagster_dev_serves_the_asset_graph(tmp_path: Path) -> None:
    home = tmp_path / "dagster_home"
    home.mkdir()
    (home / "dagster.yaml").write_text((ROOT / "dagster.yaml").read_text())
    port = _free_port()
    env = {**os.environ, "DAGSTER_HOME": str(home), "OYA_REPO": str(ROOT / "data" / "sample_repo")}
    dagster = Path(sys.executable).parent / "dagster"
    proc = subprocess.Popen(
        [str(dagster), "dev", "-m", "pipelines.definitions", "-h", "127.0.0.1", "-p", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    query = json.dumps({"query": QUERY}).encode()
    nodes = None
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and nodes is None:
            try:
                req = urllib.request.Request(
                    f"http://127.0.0.1:{port}/graphql",
                    data=query,
                    headers={"Content-Type": "application/json"},
                )
                with urllib.request.urlopen(req, timeout=5) as resp:
                    data = json.load(resp)["data"]
                nodes, repos = data["assetNodes"], data["repositoriesOrError"]["nodes"]
            except (OSError, KeyError, TypeError):
                time.sleep(1)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
    assert nodes is not None, "dagster dev did not answer on its GraphQL endpoint"
    deps = {n["assetKey"]["path"][0]: {d["path"][0] for d in n["dependencyKeys"]} for n in nodes}
    assert deps["search_index"] == {"source_files", "code_graph", "chunks", "chunk_embeddings"}
    assert deps["chunk_embeddings"] == {"chunks"}
    # the repositories are partitions; the checks, the sensor and the schedule are visible
    assert {n["partitionDefinition"]["name"] for n in nodes} == {"repos"}
    checks = {c["name"]: c["blocking"] for n in nodes for c in n["assetChecksOrError"].get("checks", [])}
    assert checks == {
        "chunks_hold_no_secrets": True,
        "search_index_is_consistent": True,
        "site_links_resolve": True,
        "site_holds_no_secrets": True,
        "site_answers_like_the_index": True,
    }
    [repo] = repos
    assert [x["name"] for x in repo["sensors"]] == ["new_commit_sensor"]
    assert [x["name"] for x in repo["schedules"]] == ["nightly_rebuild"]
    assert not (home / ".telemetry").exists() or not any((home / ".telemetry").iterdir())

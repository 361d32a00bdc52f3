"""Two builds of one repository never overlap: the run queue keeps Dagster's runs of a partition
apart, and the output folder's lock keeps any two builds of one folder from interleaving, checked
with real processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest
from dagster import DagsterInstance, DagsterRun, DagsterRunStatus
from dagster._core.remote_origin import RegisteredCodeLocationOrigin, RemoteJobOrigin, RemoteRepositoryOrigin
from dagster._core.utils import make_new_run_id

from oya.build.lock import LOCK_FILE
from pipelines.definitions import build_definitions
from pipelines.repos import OyaRepos, RepoEntry

ROOT = Path(__file__).resolve().parents[2]
HOLD = """
import sys, time
from pathlib import Path
from oya.build.lock import output_lock
with output_lock(Path(sys.argv[1]), wait=0):
    print("held", flush=True)
    time.sleep(float(sys.argv[2]))
"""


@pytest.fixture
def queued_instance(tmp_path: Path) -> Iterator[DagsterInstance]:
    """An instance configured by the project's own dagster.yaml."""
    home = tmp_path / "dagster_home"
    home.mkdir()
    (home / "dagster.yaml").write_text((ROOT / "dagster.yaml").read_text())
    instance = DagsterInstance.from_config(str(home))
    yield instance
    instance.dispose()


ORIGIN = RemoteJobOrigin(  # where the daemon would load the job from (the code location)
    repository_origin=RemoteRepositoryOrigin(RegisteredCodeLocationOrigin("pipelines"), "__repository__"),
    job_name="index_repository",
)


def _run(instance: DagsterInstance, repo: str, status: DagsterRunStatus) -> str:
    run = DagsterRun(
        job_name="index_repository",
        run_id=make_new_run_id(),
        status=status,
        tags={"dagster/partition": repo},
        remote_job_origin=ORIGIN,
    )
    instance.add_run(run)
    return run.run_id


def test_the_run_queue_never_runs_one_repository_twice_at_once(queued_instance: DagsterInstance) -> None:
    """Dagster's own dequeue decision over the project's dagster.yaml: of two queued runs of
    alpha only one may start; beta and gamma start beside it; a repository with a run in
    progress gets none."""
    from dagster._daemon.run_coordinator.queued_run_coordinator_daemon import QueuedRunCoordinatorDaemon

    _run(queued_instance, "delta", DagsterRunStatus.STARTED)
    queued = {
        "alpha-1": _run(queued_instance, "alpha", DagsterRunStatus.QUEUED),
        "alpha-2": _run(queued_instance, "alpha", DagsterRunStatus.QUEUED),
        "beta": _run(queued_instance, "beta", DagsterRunStatus.QUEUED),
        "delta": _run(queued_instance, "delta", DagsterRunStatus.QUEUED),
        "gamma": _run(queued_instance, "gamma", DagsterRunStatus.QUEUED),
    }
    daemon = QueuedRunCoordinatorDaemon(interval_seconds=1)
    picked = daemon._get_runs_to_dequeue(  # noqa: SLF001 - the daemon's decision, without launching
        queued_instance, queued_instance.get_concurrency_config(), fixed_iteration_time=None
    )
    names = sorted(k for k, run_id in queued.items() if run_id in {r.run_id for r in picked})
    assert names == ["alpha-1", "beta", "gamma"]  # 4 at most: delta's running one is the fourth


def _sample_repos(sample_repo: Path, out: Path) -> OyaRepos:
    return OyaRepos(
        repos=[RepoEntry(name="sample", path=str(sample_repo), out=str(out))],
        embedder="hashing",
        cache_dir=str(out.parent / "cache"),
        site_runtime=False,
    )


def _hold(out: Path, seconds: float) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(out), str(seconds)], env=env, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


def _oya_build(repo: Path, out: Path, cache: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "oya", "build", str(repo), "--out", str(out), "--site"]
    cmd += ["--embedder", "hashing", "--cache-dir", str(cache), "-q"]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)


def test_a_second_oya_build_of_a_folder_in_use_fails_with_one_line(sample_repo: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    holder = _hold(out, 60)  # another process's build of the same folder
    try:
        done = _oya_build(sample_repo, out, tmp_path / "cache")
    finally:
        holder.kill()
        holder.wait()
    assert done.returncode != 0
    assert f"another build is writing {out}" in done.stderr
    assert len([line for line in done.stderr.splitlines() if line.strip()]) == 1, done.stderr
    assert not (out / "index.duckdb").exists() and not (out / "site").exists()
    # the holder was killed: the kernel dropped its lock, so the next build proceeds
    assert _oya_build(sample_repo, out, tmp_path / "cache").returncode == 0


def test_a_run_waits_for_the_folder_and_then_publishes(sample_repo: Path, tmp_path: Path) -> None:
    """A Dagster run whose folder another process holds waits for it (its clean-up and its swap
    are under the lock), then publishes a site and index of one build."""
    out = tmp_path / "out"
    repos = _sample_repos(sample_repo, out)
    instance = DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("repos", ["sample"])
    job = build_definitions(repos=repos).resolve_job_def("index_repository")
    holder = _hold(out, 3)
    t0 = time.monotonic()
    result = job.execute_in_process(partition_key="sample", instance=instance)
    assert result.success and time.monotonic() - t0 >= 2.5
    assert holder.wait() == 0
    _assert_one_build(out)


def _assert_one_build(out: Path) -> None:
    manifest = json.loads((out / "site" / "manifest.json").read_text())
    with duckdb.connect(str(out / "index.duckdb"), read_only=True) as con:
        built_at = con.execute("SELECT value FROM meta WHERE key = 'built_at'").fetchone()
    assert built_at is not None and manifest["index_built_at"] == built_at[0]


def test_two_builds_of_one_folder_at_once_never_mix(sample_repo: Path, tmp_path: Path) -> None:
    """Two real `oya build` processes started together on one folder: each either built and
    published, or failed with the lock's one line; what is live is one build's site and index."""
    out, cache = tmp_path / "out", tmp_path / "cache"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "oya", "build", str(sample_repo), "--out", str(out), "--site"]
    cmd += ["--embedder", "hashing", "--cache-dir", str(cache), "-q"]
    procs = [subprocess.Popen(cmd, env=env, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outcomes = [(p.wait(timeout=300), p.stderr.read() if p.stderr else "") for p in procs]
    assert any(code == 0 for code, _ in outcomes), outcomes
    for code, err in outcomes:
        assert code == 0 or "another build is writing" in err, err
    _assert_one_build(out)
    assert (out / LOCK_FILE).is_file()
    assert [p.name for p in out.iterdir() if p.name.startswith(".site.")] == []

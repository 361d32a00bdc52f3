"""Many repositories in one deployment: configuration, one run per partition, the commit sensor."""

from __future__ import annotations

import datetime
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from dagster import DagsterInstance, DeleteDynamicPartitionsRequest, build_sensor_context

from oya.errors import SetupError
from pipelines.definitions import build_definitions, new_commit_sensor
from pipelines.repos import COMMIT_TAG, OyaRepos, RepoEntry, load_repos_file, repos_from_env

GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"]


def _git_repo(path: Path, text: str) -> Path:
    path.mkdir(parents=True)
    (path / "mod.py").write_text(text, encoding="utf-8")
    subprocess.run([*GIT, "init", "-q", str(path)], check=True)
    _commit(path, "first")
    return path


def _commit(path: Path, message: str) -> str:
    subprocess.run([*GIT, "-C", str(path), "add", "-A"], check=True)
    subprocess.run([*GIT, "-C", str(path), "commit", "-q", "--allow-empty", "-m", message], check=True)
    out = subprocess.run(["git", "-C", str(path), "rev-parse", "HEAD"], capture_output=True, text=True)
    return out.stdout.strip()


def test_repositories_file_lists_each_with_its_output(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    conf = tmp_path / "oya-repos.toml"
    conf.write_text(
        'embedder = "hashing"\n'
        '[[repos]]\npath = "a"\nout = "/srv/oya/a"\n'
        '[[repos]]\nname = "beta"\npath = "b"\n',
        encoding="utf-8",
    )
    repos = load_repos_file(conf)
    assert repos.names == ["a", "beta"]
    assert repos.embedder == "hashing"
    a, b = repos.settings_for("a"), repos.settings_for("beta")
    assert a.repo == tmp_path / "a" and a.out == Path("/srv/oya/a") and a.site == Path("/srv/oya/a/site")
    assert b.repo == tmp_path / "b" and b.out == tmp_path / "b" / ".oya"
    with pytest.raises(SetupError, match="not configured"):
        repos.settings_for("gamma")


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ('[[repos]]\npath = "x"\n[[repos]]\npath = "other/x"\n', "configured twice"),
        ('[[repos]]\nname = "a/b"\npath = "x"\n', "partition key"),
        ("embedder = 'hashing'\n", "no \\[\\[repos\\]\\]"),
        ("[[repos]\n", "cannot read"),
        ("[[repos]]\nname = 'x'\n", "needs a path"),
    ],
)
def test_bad_repositories_files_are_one_line_errors(tmp_path: Path, text: str, error: str) -> None:
    conf = tmp_path / "r.toml"
    conf.write_text(text, encoding="utf-8")
    with pytest.raises(SetupError, match=error):
        load_repos_file(conf)


def test_single_repository_environment_is_a_one_entry_list(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("OYA_REPOS", raising=False)
    monkeypatch.setenv("OYA_REPO", str(tmp_path / "myrepo"))
    monkeypatch.setenv("OYA_OUT", str(tmp_path / "out"))
    monkeypatch.setenv("OYA_EMBEDDER", "hashing")
    repos = repos_from_env()
    assert repos.names == ["myrepo"] and repos.embedder == "hashing"
    assert repos.settings_for("myrepo").out == tmp_path / "out"
    conf = tmp_path / "r.toml"
    conf.write_text('embedder = "minilm"\n[[repos]]\npath = "a"\n[[repos]]\npath = "b"\n', encoding="utf-8")
    monkeypatch.setenv("OYA_REPOS", str(conf))
    both = repos_from_env()
    assert both.names == ["a", "b"] and both.embedder == "hashing"  # the environment wins


def _two_repos(tmp_path: Path) -> OyaRepos:
    a = _git_repo(tmp_path / "alpha", "def alpha():\n    return 1\n")
    b = _git_repo(tmp_path / "beta", "def beta():\n    return 2\n")
    return OyaRepos(
        repos=[
            RepoEntry(name="alpha", path=str(a), out=str(tmp_path / "out_alpha")),
            RepoEntry(name="beta", path=str(b), out=str(tmp_path / "out_beta")),
        ],
        embedder="hashing",
        cache_dir=str(tmp_path / "cache"),
        site_runtime=False,
    )


def test_a_run_builds_only_its_partitions_repository(tmp_path: Path) -> None:
    repos = _two_repos(tmp_path)
    defs = build_definitions(repos=repos)
    instance = DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("repos", repos.names)
    result = defs.resolve_job_def("index_repository").execute_in_process(
        partition_key="alpha", instance=instance
    )
    assert result.success
    assert (tmp_path / "out_alpha" / "index.duckdb").is_file()
    assert (tmp_path / "out_alpha" / "site" / "index.html").is_file()
    assert not (tmp_path / "out_beta").exists()
    from oya.store.index import Index

    with Index(tmp_path / "out_alpha") as idx:
        names = {n.name for n in idx.graph.nodes.values()}
    assert "alpha" in names and "beta" not in names


def _evaluate(instance: DagsterInstance, repos: OyaRepos, cursor: str | None):  # type: ignore[no-untyped-def]
    definitions = build_definitions(repos=repos)  # built before the context's instance is entered
    with build_sensor_context(
        instance_ref=instance.get_ref(),  # a stored instance, as the daemon's
        cursor=cursor,
        definitions=definitions,
        resources={"repos": repos},
    ) as context:  # exiting it puts back what its instance installed
        data = new_commit_sensor.evaluate_tick(context)
    for request in data.dynamic_partitions_requests or []:  # what the daemon does with them
        keys = list(request.partition_keys or [])
        if isinstance(request, DeleteDynamicPartitionsRequest):
            for key in keys:
                instance.delete_dynamic_partition(request.partitions_def_name, key)
        else:
            instance.add_dynamic_partitions(request.partitions_def_name, keys)
    return data


@pytest.fixture
def instance(tmp_path: Path) -> Iterator[DagsterInstance]:
    home = tmp_path / "dagster_home"
    home.mkdir()
    # a stored instance (a ref, as the daemon has) that is not entered as a context manager:
    # entering one leaves its state storage installed for later tests
    inst = DagsterInstance.local_temp(str(home))
    yield inst
    inst.dispose()


def test_commit_sensor_requests_one_run_per_moved_repository(
    tmp_path: Path, instance: DagsterInstance
) -> None:
    repos = _two_repos(tmp_path)
    first = _evaluate(instance, repos, None)
    # first sight: both repositories become partitions and are built once
    assert sorted(r.partition_key for r in first.run_requests) == ["alpha", "beta"]
    assert set(instance.get_dynamic_partitions("repos")) == {"alpha", "beta"}

    assert _evaluate(instance, repos, first.cursor).run_requests == []

    (tmp_path / "beta" / "mod.py").write_text("def beta():\n    return 3\n", encoding="utf-8")
    head = _commit(tmp_path / "beta", "second")
    moved = _evaluate(instance, repos, first.cursor)
    assert len(moved.run_requests) == 1
    request = moved.run_requests[0]
    assert request.partition_key == "beta"
    assert request.run_key == f"beta:{head}"
    assert request.tags[COMMIT_TAG] == head
    assert json.loads(moved.cursor)["beta"] == head

    assert _evaluate(instance, repos, moved.cursor).run_requests == []


def test_commit_sensor_adds_newly_configured_repositories(tmp_path: Path, instance: DagsterInstance) -> None:
    repos = _two_repos(tmp_path)
    only_alpha = OyaRepos(repos=repos.repos[:1], embedder="hashing")
    first = _evaluate(instance, only_alpha, None)
    assert [r.partition_key for r in first.run_requests] == ["alpha"]
    assert instance.get_dynamic_partitions("repos") == ["alpha"]
    second = _evaluate(instance, repos, first.cursor)
    assert [r.partition_key for r in second.run_requests] == ["beta"]
    assert set(instance.get_dynamic_partitions("repos")) == {"alpha", "beta"}


def test_a_repository_removed_from_the_list_loses_its_partition_not_its_site(
    tmp_path: Path, instance: DagsterInstance, capfd: pytest.CaptureFixture[str]
) -> None:
    repos = _two_repos(tmp_path)
    job = build_definitions(repos=repos).resolve_job_def("index_repository")
    first = _evaluate(instance, repos, None)
    assert job.execute_in_process(partition_key="beta", instance=instance).success
    site = tmp_path / "out_beta" / "site"
    before = {p: p.read_bytes() for p in sorted(site.rglob("*")) if p.is_file()}

    only_alpha = OyaRepos(repos=repos.repos[:1], embedder="hashing")
    capfd.readouterr()
    second = _evaluate(instance, only_alpha, first.cursor)
    logged = capfd.readouterr().err  # the sensor's log, as the daemon shows it
    assert instance.get_dynamic_partitions("repos") == ["alpha"]
    assert second.run_requests == []
    assert "beta" not in json.loads(second.cursor)
    # left in place, and the sensor's log says so and where
    assert {p: p.read_bytes() for p in sorted(site.rglob("*")) if p.is_file()} == before
    assert (tmp_path / "out_beta" / "index.duckdb").is_file()
    [said] = [line for line in logged.splitlines() if "no longer configured" in line]
    assert "WARNING" in said and "'beta'" in said and str(site) in said and "left in place" in said
    # configured again: a partition again, built again (its cursor entry went with it)
    again = _evaluate(instance, repos, second.cursor)
    assert [r.partition_key for r in again.run_requests] == ["beta"]
    assert set(instance.get_dynamic_partitions("repos")) == {"alpha", "beta"}


def test_nightly_schedule_rebuilds_every_known_repository(tmp_path: Path, instance: DagsterInstance) -> None:
    from dagster import build_schedule_context

    from pipelines.definitions import nightly_rebuild

    repos = _two_repos(tmp_path)
    instance.add_dynamic_partitions("repos", ["alpha", "beta"])
    night = datetime.datetime(2026, 11, 24, 3, tzinfo=datetime.UTC)
    repository = build_definitions(repos=repos).get_repository_def()
    with build_schedule_context(
        instance_ref=instance.get_ref(),
        resources={"repos": repos},
        scheduled_execution_time=night,
        repository_def=repository,
    ) as context:
        requests = nightly_rebuild.evaluate_tick(context).run_requests or []
    assert sorted(r.partition_key for r in requests) == ["alpha", "beta"]
    assert {r.run_key for r in requests} == {"alpha:nightly:2026-11-24", "beta:nightly:2026-11-24"}


def test_a_materialization_names_the_commit_it_indexed(tmp_path: Path) -> None:
    repos = _two_repos(tmp_path)
    head = _commit(tmp_path / "alpha", "again")
    instance = DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("repos", repos.names)
    job = build_definitions(repos=repos).resolve_job_def("index_repository")
    result = job.execute_in_process(partition_key="alpha", instance=instance, tags={COMMIT_TAG: head})
    [scan] = result.asset_materializations_for_node("source_files")
    assert scan.partition == "alpha"
    assert scan.metadata["commit"].value == head


def test_the_readme_repositories_example_loads(tmp_path: Path) -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    start = readme.index("```toml\n# oya-repos.toml") + len("```toml\n")
    conf = tmp_path / "deploy" / "oya-repos.toml"
    conf.parent.mkdir()
    conf.write_text(readme[start : readme.index("```", start)], encoding="utf-8")
    repos = load_repos_file(conf)
    assert repos.names == ["payments", "web"]
    assert repos.settings_for("payments").out == Path("/srv/oya/payments")
    assert repos.settings_for("web").site == Path("/var/www/oya/web")
    assert repos.settings_for("web").repo == tmp_path / "src" / "web-frontend"

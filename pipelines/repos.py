"""Many repositories in one deployment: the configured list, the ``repos`` partitions, and the
per-run settings of the partition a run builds.

Theory of operation. A repository is a partition of every asset (``repos``, dynamic, one key per
repository and never one per commit: a commit is a run of its repository's partition, named by the
run key and the ``oya/commit`` tag). The list of repositories is configuration, read when the code
location loads: ``OYA_REPOS`` names a TOML file of ``[[repos]]`` entries; without it, ``OYA_REPO`` /
``OYA_OUT`` make a one-entry list (the single-repository setup). The assets keep asking for one
``settings`` resource; ``repo_settings`` builds it for the run's partition from the run's
``dagster/partition`` tag, so a run reads and writes only its own repository, index and site.
"""

import os
import tomllib
from pathlib import Path

from dagster import (
    Config,
    ConfigurableResource,
    DynamicPartitionsDefinition,
    InitResourceContext,
    resource,
)

from oya.errors import SetupError
from pipelines.resources import OyaSettings

repos_partitions = DynamicPartitionsDefinition(name="repos")

PARTITION_TAG = "dagster/partition"  # set by Dagster on every run of one partition
COMMIT_TAG = "oya/commit"  # set by the commit sensor: the HEAD a run builds
_BAD_KEY_CHARS = ("...", ",", "\n", "\r", "\t", "\0", "/", "\\")


class RepoEntry(Config):
    """One configured repository: its partition key, its clone, where its index and site go."""

    name: str
    path: str
    out: str = ""  # default: <path>/.oya
    site: str = ""  # default: <out>/site
    publish_url: str = ""  # also publish the site to object storage (oya/site/publish.py)
    publish_endpoint: str = ""


class OyaRepos(ConfigurableResource):  # type: ignore[type-arg]
    """Every configured repository and the settings they share (embedder, cache, limits)."""

    repos: list[RepoEntry]
    embedder: str = "minilm"
    cache_dir: str = ""
    max_file_bytes: int = 1_000_000
    site_runtime: bool = True

    @property
    def names(self) -> list[str]:
        return [r.name for r in self.repos]

    def settings_for(self, name: str) -> OyaSettings:
        for r in self.repos:
            if r.name == name:
                return OyaSettings(
                    repo_path=r.path,
                    out_dir=r.out,
                    site_dir=r.site,
                    publish_url=r.publish_url,
                    publish_endpoint=r.publish_endpoint,
                    embedder=self.embedder,
                    cache_dir=self.cache_dir,
                    max_file_bytes=self.max_file_bytes,
                    site_runtime=self.site_runtime,
                )
        raise SetupError(f"repository {name!r} is not configured (configured: {', '.join(self.names)})")


@resource(required_resource_keys={"repos"})
def repo_settings(context: InitResourceContext) -> OyaSettings:
    """The ``settings`` resource of a run: the configured repository of the run's partition."""
    run = context.run
    key = run.tags.get(PARTITION_TAG) if run is not None else None
    if key is None:
        raise SetupError("an Oya run builds one repository: launch it for one partition of 'repos'")
    repos: OyaRepos = context.resources.repos
    return repos.settings_for(key)


def repo_name(path: str) -> str:
    """A repository's default partition key: its folder's name."""
    return Path(path).expanduser().resolve().name or "repo"


def check_names(repos: list[RepoEntry]) -> list[RepoEntry]:
    seen: set[str] = set()
    for r in repos:
        if not r.name or any(c in r.name for c in _BAD_KEY_CHARS):
            raise SetupError(f"repository name {r.name!r} cannot be a partition key (no '/', ',' or '...')")
        if r.name in seen:
            raise SetupError(f"repository name {r.name!r} is configured twice; give each a unique name")
        seen.add(r.name)
    return repos


def load_repos_file(path: Path, embedder: str = "") -> OyaRepos:
    """``[[repos]]`` entries (``name``, ``path``, ``out``, ``site``) and shared top-level keys."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise SetupError(f"cannot read the repositories file {path}: {exc}") from exc
    base = path.parent
    entries = []
    for raw in data.pop("repos", []):
        if not isinstance(raw, dict) or "path" not in raw:
            raise SetupError(f"{path}: every [[repos]] entry needs a path")
        repo = str((base / Path(raw["path"]).expanduser()).resolve())  # relative to the file
        entries.append(RepoEntry(name=str(raw.get("name") or repo_name(repo)), **_paths(raw, repo)))
    if not entries:
        raise SetupError(f"{path}: no [[repos]] entry")
    if embedder:  # OYA_EMBEDDER wins over the file (tests and demos use "hashing")
        data["embedder"] = embedder
    return OyaRepos(repos=check_names(entries), **data)


def _paths(raw: dict[str, object], repo: str) -> dict[str, str]:
    keys = ("out", "site", "publish_url", "publish_endpoint")
    return {"path": repo, **{k: str(raw.get(k, "")) for k in keys}}


def repos_from_env() -> OyaRepos:
    """``OYA_REPOS`` (a TOML file) or the single repository of ``OYA_REPO`` / ``OYA_OUT``."""
    embedder = os.environ.get("OYA_EMBEDDER", "")
    listed = os.environ.get("OYA_REPOS", "")
    if listed:
        return load_repos_file(Path(listed).expanduser(), embedder)
    path = os.environ.get("OYA_REPO", ".")
    entry = RepoEntry(name=repo_name(path), path=path, out=os.environ.get("OYA_OUT", ""))
    return OyaRepos(repos=check_names([entry]), embedder=embedder or "minilm")

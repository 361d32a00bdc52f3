"""Publishing a site to S3-compatible object storage: a real local server (moto's, on 127.0.0.1),
read back over plain HTTP as a reader would; a publish that dies half-way leaves the previous
version live and whole."""

from __future__ import annotations

import json
import re
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from dagster import DagsterInstance

from oya.site.publish import POINTER, PublishError, Target, client, publish_site
from pipelines.definitions import build_definitions
from pipelines.repos import OyaRepos, RepoEntry

BUCKET = "wikis"
URL = f"s3://{BUCKET}/teams/sample"


def test_publish_urls_are_checked() -> None:
    assert Target.parse("s3://b/a/c/") == Target("b", "a/c/")
    assert Target.parse("s3://b") == Target("b", "")
    with pytest.raises(PublishError, match="s3://bucket/prefix"):
        Target.parse("https://b/a")


@pytest.fixture
def endpoint(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    from moto.server import ThreadedMotoServer

    for key, value in {"AWS_ACCESS_KEY_ID": "local", "AWS_SECRET_ACCESS_KEY": "local"}.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    url = f"http://{host}:{port}"
    s3 = client(url)
    s3.create_bucket(Bucket=BUCKET)
    # a static-site bucket: anyone may read (README: the team's bucket policy or CDN does this)
    statement = {
        "Effect": "Allow",
        "Principal": "*",
        "Action": "s3:GetObject",
        "Resource": f"arn:aws:s3:::{BUCKET}/*",
    }
    s3.put_bucket_policy(
        Bucket=BUCKET, Policy=json.dumps({"Version": "2012-10-17", "Statement": [statement]})
    )
    yield url
    server.stop()


def _build(sample_repo: Path, tmp_path: Path, endpoint: str) -> Any:
    entry = RepoEntry(
        name="sample",
        path=str(sample_repo),
        out=str(tmp_path / "out"),
        publish_url=URL,
        publish_endpoint=endpoint,
    )
    repos = OyaRepos(repos=[entry], embedder="hashing", cache_dir=str(tmp_path / "cache"), site_runtime=False)
    instance = DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("repos", ["sample"])
    job = build_definitions(repos=repos).resolve_job_def("index_repository")
    result = job.execute_in_process(partition_key="sample", instance=instance)
    [done] = result.asset_materializations_for_node("published_site")
    return done.metadata


def _get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=10) as response:  # noqa: S310 - loopback only
        return bytes(response.read())


def _read_live(endpoint: str) -> tuple[str, dict[str, bytes]]:
    """What a reader gets: the redirect at the prefix, then every file under the version it names."""
    redirect = _get(f"{endpoint}/{BUCKET}/teams/sample/index.html").decode()
    match = re.search(r'url=(v/[^/"]+/)index\.html', redirect)
    assert match, redirect
    root = match.group(1)
    s3 = client(endpoint)
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET, Prefix=f"teams/sample/{root}")["Contents"]]
    files = {k.split(root, 1)[1]: _get(f"{endpoint}/{BUCKET}/{k}") for k in keys}
    return root, files


def _local(site: Path) -> dict[str, bytes]:
    return {p.relative_to(site).as_posix(): p.read_bytes() for p in sorted(site.rglob("*")) if p.is_file()}


@pytest.mark.slow
def test_a_run_publishes_the_site_to_object_storage(sample_repo: Path, tmp_path: Path, endpoint: str) -> None:
    first = _build(sample_repo, tmp_path, endpoint)
    site = tmp_path / "out" / "site"
    root, files = _read_live(endpoint)
    assert files == _local(site)  # every page, byte for byte, read back over HTTP
    assert first["uploaded"].value == len(files) and first["copied"].value == 0

    (sample_repo / "inventory" / "extra.py").write_text("def extra():\n    return 1\n", encoding="utf-8")
    second = _build(sample_repo, tmp_path, endpoint)
    new_root, files = _read_live(endpoint)
    assert new_root != root and files == _local(site)
    # unchanged files were copied inside the store, not sent again
    assert second["copied"].value > 0 and second["uploaded"].value < len(files)


class _DiesAfter:
    """The real client, whose connection drops after ``n`` objects were written (the fault)."""

    def __init__(self, s3: Any, n: int) -> None:
        self.s3, self.n = s3, n

    def __getattr__(self, name: str) -> Any:
        return getattr(self.s3, name)

    def _count(self) -> None:
        self.n -= 1
        if self.n < 0:
            raise ConnectionResetError("connection reset by peer")

    def put_object(self, **kwargs: Any) -> Any:
        self._count()
        return self.s3.put_object(**kwargs)

    def copy_object(self, **kwargs: Any) -> Any:
        self._count()
        return self.s3.copy_object(**kwargs)


@pytest.mark.slow
def test_a_publish_that_dies_half_way_leaves_the_previous_version_whole(
    sample_repo: Path, tmp_path: Path, endpoint: str
) -> None:
    _build(sample_repo, tmp_path, endpoint)
    site = tmp_path / "out" / "site"
    root, before = _read_live(endpoint)
    pointer = client(endpoint).get_object(Bucket=BUCKET, Key=f"teams/sample/{POINTER}")["Body"].read()

    (site / "index.html").write_bytes(b"<p>a new front page</p>")  # a different site to publish
    with pytest.raises(PublishError, match="connection reset by peer.*previous version stays live"):
        publish_site(site, URL, _DiesAfter(client(endpoint), 3))
    assert client(endpoint).get_object(Bucket=BUCKET, Key=f"teams/sample/{POINTER}")["Body"].read() == pointer
    assert _read_live(endpoint) == (root, before)

    # the next publish goes through and removes the dead one's partial version
    done = publish_site(site, URL, client(endpoint))
    new_root, files = _read_live(endpoint)
    assert files == _local(site) and new_root == f"v/{done.version}/"
    listed = client(endpoint).list_objects_v2(Bucket=BUCKET, Prefix="teams/sample/v/")["Contents"]
    assert {o["Key"].split("/")[3] for o in listed} == {root.split("/")[1], done.version}


@pytest.mark.parametrize("theirs", ["index.html", "v/2020/app.js"])
def test_a_prefix_oya_did_not_publish_to_is_refused_before_anything_is_written(
    tmp_path: Path, endpoint: str, theirs: str
) -> None:
    """A team's own static site at the prefix: its index.html would be overwritten by the redirect,
    and anything under v/ deleted as an old version."""
    prefix = f"own-{theirs.split('/')[0].split('.')[0]}/"  # (moto keeps its buckets between tests)
    url = f"s3://{BUCKET}/{prefix}"
    s3 = client(endpoint)
    s3.put_object(Bucket=BUCKET, Key=prefix + theirs, Body=b"the team's own")
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text("<!doctype html><title>wiki</title>", encoding="utf-8")
    with pytest.raises(PublishError, match=f"refusing to publish to {url}: it holds {prefix}{theirs}"):
        publish_site(site, url, s3)
    assert [o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET, Prefix=prefix)["Contents"]] == [
        prefix + theirs
    ]
    assert _get(f"{endpoint}/{BUCKET}/{prefix}{theirs}") == b"the team's own"

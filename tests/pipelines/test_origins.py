"""A file's origin travels from the reader to the index, the browser bundle and its wiki page,
and survives a patched rebuild (issue 24: generated, vendored and amalgamated copies)."""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
from dagster import DagsterInstance

from oya.core.shard_store import folder_fetch
from oya.core.shards import open_shards
from oya.site.bundle import bundle_document
from oya.site.shards import export_shards
from oya.store.index import Index
from pipelines.definitions import build_definitions
from pipelines.repos import OyaRepos, RepoEntry

SOURCE = "int parse_header(const char *buf) { return check_length(buf, HEADER_SIZE); }\n"


def _build(repo: Path, tmp_path: Path, instance: DagsterInstance) -> None:
    repos = OyaRepos(
        repos=[RepoEntry(name="r", path=str(repo), out=str(tmp_path / "out"))],
        embedder="hashing",
        cache_dir=str(tmp_path / "cache"),
        site_runtime=False,
    )
    job = build_definitions(repos=repos).resolve_job_def("index_repository")
    job.execute_in_process(partition_key="r", instance=instance)


def test_origins_reach_the_index_the_bundle_and_the_page(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    for rel, text in {
        "include/lib/header.h": SOURCE,
        "single_include/lib.h": SOURCE,
        "third_party/zlib/inflate.c": "int inflate(void) { return 0; }\n",
        "src/main.c": "int main(void) { return parse_header(0); }\n",
    }.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    instance = DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("repos", ["r"])
    _build(repo, tmp_path, instance)

    with Index(tmp_path / "out") as idx:
        assert {p: v.origin for p, v in idx.origins().items()} == {
            "single_include/lib.h": "amalgamated",
            "third_party/zlib/inflate.c": "vendored",
        }
        doc, vec_bytes = bundle_document(idx)  # what the site's shards are cut from
    export_shards(doc, vec_bytes, tmp_path / "shards")
    [manifest] = (tmp_path / "shards").glob("manifest-*")
    bundle = open_shards(folder_fetch(tmp_path / "shards"), manifest.name)  # as the browser opens it
    assert dict(bundle.corpus.file_origins()) == {
        "single_include/lib.h": "amalgamated",
        "third_party/zlib/inflate.c": "vendored",
    }
    page = (tmp_path / "out" / "site" / "files" / "single_include" / "lib.h.html").read_text()
    assert "A single-file build of other files" in page and "single_include/" in page
    plain = (tmp_path / "out" / "site" / "files" / "src" / "main.c.html").read_text()
    assert "origin-note" not in plain

    # a rebuild that patches the index keeps the origins current
    (repo / "api").mkdir()
    (repo / "api" / "svc.pb.c").write_text("int svc(void) { return 1; }\n")
    shutil.rmtree(repo / "third_party")
    _build(repo, tmp_path, instance)
    with Index(tmp_path / "out") as idx:
        assert {p: v.origin for p, v in idx.origins().items()} == {
            "api/svc.pb.c": "generated",
            "single_include/lib.h": "amalgamated",
        }


def test_an_index_written_before_origins_reads_as_none_and_is_rewritten_whole(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "vendor").mkdir(parents=True)
    (repo / "vendor" / "lib.c").write_text("int lib(void) { return 0; }\n")
    (repo / "main.c").write_text("int main(void) { return lib(); }\n")
    instance = DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("repos", ["r"])
    _build(repo, tmp_path, instance)
    con = duckdb.connect(str(tmp_path / "out" / "index.duckdb"))
    con.execute("DROP TABLE origins")
    con.close()
    with Index(tmp_path / "out") as idx:
        assert idx.origins() == {} and dict(idx.file_origins()) == {}
    _build(repo, tmp_path, instance)
    with Index(tmp_path / "out") as idx:
        assert {p: v.origin for p, v in idx.origins().items()} == {"vendor/lib.c": "vendored"}

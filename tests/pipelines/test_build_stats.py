"""Build statistics are typed records: each asset fills one, Dagster shows it as metadata, the build
reads it back from the materialization, and the CLI's table is rendered from it."""

from __future__ import annotations

import dataclasses
import json
import typing
from pathlib import Path

import pytest

from oya.build.stats import RECORDS, AssetStats, BuildStats, BuildSummary
from oya.cli import print_build_summary
from oya.scanning.reader import scan_repository
from oya.store.index import Index
from pipelines.assets import INDEX_ASSETS, SITE_ASSETS, _metadata
from pipelines.build import run_build


def test_every_asset_has_one_record_named_after_it() -> None:
    assets = [a.key.to_user_string() for a in [*INDEX_ASSETS, *SITE_ASSETS]]
    assert [f.name for f in dataclasses.fields(BuildStats)] == assets == [r.asset for r in RECORDS]
    for name, hint in typing.get_type_hints(BuildStats).items():
        (record,) = [t for t in typing.get_args(hint) or (hint,) if t is not type(None)]
        assert issubclass(record, AssetStats) and record.asset == name


def test_the_records_feed_the_dagster_metadata_and_the_cli_table(
    sample_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    summary = run_build(sample_repo, tmp_path / "out", embedder="hashing", cache_dir=tmp_path / "cache")
    assert isinstance(summary, BuildSummary) and summary.stats.wiki_site is None
    stats = summary.stats
    scan = scan_repository(sample_repo)
    assert (stats.source_files.files, stats.source_files.skipped) == (len(scan.files), len(scan.skipped))
    assert stats.source_files.lines == sum(f.n_lines for f in scan.files)
    with Index(Path(summary.index)) as idx:
        counts = idx.stats()
    assert stats.chunks.chunks == stats.search_index.chunks == counts.chunks
    assert stats.chunk_embeddings.embedded + stats.chunk_embeddings.cached >= 1
    assert stats.code_graph.symbols == counts.nodes and summary.index == stats.search_index.path

    for record in stats.assets():  # one metadata entry per field, under the field's name
        metadata = _metadata(record)
        assert list(metadata) == [f.name for f in dataclasses.fields(record)]  # type: ignore[arg-type]
        assert type(record).from_metadata(metadata) == record

    print_build_summary(summary)
    out = capsys.readouterr().out
    for asset, result, _ in summary.rows():
        assert asset in out and result in out
    assert f"{stats.source_files.files} files, {stats.source_files.lines} lines" in out
    assert "secrets redacted" not in out

    # the redaction line comes from the source files' record
    source = dataclasses.replace(stats.source_files, redactions={"jwt": 2, "url_credentials": 1})
    print_build_summary(dataclasses.replace(summary, stats=dataclasses.replace(stats, source_files=source)))
    assert "secrets redacted: 3 (jwt 2, url_credentials 1)" in capsys.readouterr().out

    plain = json.loads(json.dumps(summary.to_dict()))  # what bench/ writes
    assert plain["metadata"]["code_graph"]["symbols"] == stats.code_graph.symbols
    assert [row["asset"] for row in plain["assets"]] == [f.name for f in dataclasses.fields(BuildStats)][:5]

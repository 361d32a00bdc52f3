"""The Dagster asset graph, and the build's incremental and bad-input behaviour end to end."""

from __future__ import annotations

from pathlib import Path

import pytest

from oya.build.stats import BuildSummary
from oya.store.index import Index
from pipelines.build import run_build
from pipelines.definitions import defs

EXPECTED_LINEAGE = {
    "source_files": set(),
    "code_graph": {"source_files"},
    "chunks": {"source_files", "code_graph"},
    "chunk_embeddings": {"chunks"},
    "search_index": {"source_files", "code_graph", "chunks", "chunk_embeddings"},
    "wiki_pages": {"search_index"},
    "wiki_site": {"search_index", "wiki_pages"},
    "published_site": {"search_index", "wiki_site"},
}


def test_asset_graph_is_wired_as_designed() -> None:
    graph = defs.resolve_asset_graph()
    lineage = {
        key.to_user_string(): {p.to_user_string() for p in graph.get(key).parent_keys}
        for key in graph.get_all_asset_keys()
    }
    assert {k: v for k, v in lineage.items() if k in EXPECTED_LINEAGE} == EXPECTED_LINEAGE
    assert defs.resolve_job_def("index_repository") is not None
    checks = {c.name for c in graph.asset_check_keys}
    assert {
        "chunks_hold_no_secrets",
        "search_index_is_consistent",
        "site_links_resolve",
        "site_holds_no_secrets",
        "site_answers_like_the_index",
    } == checks


def _build(repo: Path, out: Path, cache: Path) -> BuildSummary:
    return run_build(repo, out, embedder="hashing", cache_dir=cache)


def test_second_build_embeds_nothing_and_one_change_embeds_only_changed_chunks(
    sample_repo: Path, tmp_path: Path
) -> None:
    out, cache = tmp_path / "idx", tmp_path / "cache"
    first = _build(sample_repo, out, cache)
    md = first.stats.chunk_embeddings
    assert md.embedded > 10 and md.cached == 0

    second = _build(sample_repo, out, cache)
    assert second.stats.chunk_embeddings.embedded == 0
    assert second.stats.chunk_embeddings.cached == md.embedded

    service = sample_repo / "inventory" / "service.py"
    text = service.read_text()
    marker = "    def list_items(self) -> list[Item]:\n"
    assert marker in text
    # change one function body; its neighbours shift by one line but keep their text
    service.write_text(text.replace(marker, marker + "        # sorted by SKU for stable output\n", 1))
    third = _build(sample_repo, out, cache)
    assert third.stats.chunk_embeddings.embedded == 1
    with Index(out) as idx:
        chunk = next(c for c in idx.all_chunks() if c.title == "InventoryService.list_items")
    assert "stable output" in chunk.text


def test_bad_repository_builds_and_reports_every_skip(
    bad_repo: Path, secret_marker: str, tmp_path: Path
) -> None:
    out = tmp_path / "idx"
    summary = _build(bad_repo, out, tmp_path / "cache")
    reasons = {s.path: s.reason for s in summary.skipped}
    assert reasons["assets/logo.png"] == "binary"
    assert reasons["big.py"] == "too-large"
    assert reasons["pkg/latin1.py"] == "not-utf8"
    assert reasons["empty.py"] == "empty"
    assert reasons[".env"] == "secret" and reasons["id_rsa"] == "secret"
    assert "settings.py" not in reasons  # indexed, its two tokens redacted
    assert summary.stats.source_files.redactions == {"aws_access_key_id": 1, "github_token": 1}
    assert reasons["loop_a"] == "symlink" and reasons["loop_b"] == "symlink"
    assert "too-deep" in reasons.values()
    assert all(c.passed for c in summary.checks)
    with Index(out) as idx:
        names = {n.name for n in idx.graph.nodes.values()}
        assert {"before_error", "after_error", "Circle", "total_area"} <= names
        assert int(idx.meta["parse_errors"]) >= 1
    for path in out.rglob("*"):
        if path.is_file():
            assert secret_marker.encode() not in path.read_bytes(), path


def test_a_failed_build_keeps_the_previous_index(sample_repo: Path, tmp_path: Path, monkeypatch) -> None:
    from oya.build import steps

    out = tmp_path / "idx"
    _build(sample_repo, out, tmp_path / "cache")
    before = (out / "index.duckdb").read_bytes()

    def boom(*args: object, **kwargs: object) -> None:
        raise RuntimeError("disk full")

    monkeypatch.setattr(steps, "make_chunks", boom)
    with pytest.raises(Exception, match="disk full"):
        _build(sample_repo, out, tmp_path / "cache")
    assert (out / "index.duckdb").read_bytes() == before
    assert [p.name for p in out.iterdir() if p.name.endswith(".tmp")] == []


def test_dagster_home_and_telemetry_are_configured() -> None:
    root = Path(__file__).resolve().parents[2]
    text = (root / "dagster.yaml").read_text()
    assert "telemetry:" in text and "enabled: false" in text
    makefile = (root / "Makefile").read_text()
    assert "DAGSTER_HOME" in makefile

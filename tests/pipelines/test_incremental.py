"""A rebuild reuses what did not change (parses, chunks, tokens, index rows, pages) and still
equals a full build: the index table by table, the site byte for byte."""

from __future__ import annotations

import json
import re
from pathlib import Path

import duckdb
import pytest

from oya.build import steps
from oya.build.stats import BuildSummary
from oya.core.shard_store import folder_fetch
from oya.core.shards import open_shards
from oya.graph import reuse
from oya.graph.parsing import parser_for
from oya.query.searcher import Searcher
from oya.scanning.reader import scan_repository
from oya.site.assets import site_file
from oya.site.build import write_wiki_site
from oya.site.render import render_wiki_pages
from oya.store import patch, previous, writer
from pipelines.build import run_build

# meta rows that differ between any two builds (when, and which folder the repository was in)
_VOLATILE_META = ("built_at",)
# A patched index numbers new BM25 documents and terms after the old ones, a full build in order
# (oya.store.patch): the BM25 tables are compared by chunk id and term instead of those labels.
_BM25_BY_NAME = {
    "fts_main_chunks.docs": "SELECT name, len FROM fts_main_chunks.docs",
    "fts_main_chunks.dict": "SELECT term, df FROM fts_main_chunks.dict",
    "main.bm25_postings": "SELECT d.term, c.name, p.tf FROM bm25_postings p "
    "LEFT JOIN fts_main_chunks.dict d USING (termid) LEFT JOIN fts_main_chunks.docs c USING (docid)",
}


def _build(repo: Path, out: Path, cache: Path) -> BuildSummary:
    return run_build(repo, out, embedder="hashing", cache_dir=cache)


def _tables(index: Path) -> dict[str, list[tuple[object, ...]]]:
    """Every table of the index (FTS tables included), rows sorted, volatile meta left out."""
    con = duckdb.connect(str(index), read_only=True)
    try:
        names = con.execute(
            "SELECT table_schema, table_name FROM information_schema.tables ORDER BY 1, 2"
        ).fetchall()
        out = {}
        for schema, name in names:
            query = _BM25_BY_NAME.get(f"{schema}.{name}", f'SELECT * FROM "{schema}"."{name}"')
            rows = con.execute(query).fetchall()
            if name == "meta":
                rows = [r for r in rows if r[0] not in _VOLATILE_META]
            out[f"{schema}.{name}"] = sorted(rows, key=repr)
        return out
    finally:
        con.close()


def _edit(repo: Path) -> None:
    service = repo / "inventory" / "service.py"
    marker = "    def list_items(self) -> list[Item]:\n"
    text = service.read_text()
    assert marker in text
    service.write_text(text.replace(marker, marker + "        # sorted by SKU for stable output\n", 1))
    (repo / "inventory" / "extra.py").write_text('def added():\n    """New."""\n    return slugify("x")\n')
    (repo / "inventory" / "reports.py").unlink()


def test_rebuild_after_changes_equals_a_full_build(sample_repo: Path, tmp_path: Path) -> None:
    out, cache = tmp_path / "idx", tmp_path / "cache"
    first = _build(sample_repo, out, cache)
    assert first.stats.code_graph.parses_reused == 0

    _edit(sample_repo)
    again = _build(sample_repo, out, cache)
    fresh = _build(sample_repo, tmp_path / "fresh", cache)

    python_files = sum(1 for f in scan_repository(sample_repo).files if parser_for(f.language))
    # every Python file but the edited and the new one came from the previous index
    assert again.stats.code_graph.parses_reused == python_files - 2
    assert fresh.stats.code_graph.parses_reused == 0
    reused, full = _tables(out / "index.duckdb"), _tables(tmp_path / "fresh" / "index.duckdb")
    assert reused.keys() == full.keys() and "fts_main_chunks.dict" in reused
    for table in full:
        assert reused[table] == full[table], table


def _change_delete_rename(repo: Path) -> None:
    """One file changed, one deleted (``low_stock_report`` goes with it), one renamed."""
    service = repo / "inventory" / "service.py"
    service.write_text(
        service.read_text() + '\n\ndef restock_all():\n    """Fill every shelf."""\n    return 0\n'
    )
    (repo / "inventory" / "reports.py").unlink()
    (repo / "inventory" / "storage.py").rename(repo / "inventory" / "persistence.py")


def _site(index_dir: Path, site: Path) -> dict[str, object]:
    pages = render_wiki_pages(index_dir, site)  # reuses what ``site`` already holds
    write_wiki_site(pages, index_dir, site, with_runtime=False, with_bundle=True)
    return pages.counts


def _site_files(site: Path, built_at: str) -> dict[str, bytes]:
    """Every file of the site; blanked: the index's build time (on the overview page, so in its
    key and in the service worker's build id, and in the manifest: the only places a build's moment
    shows) and how many pages were rendered or reused."""
    out = {}
    for p in sorted(site.rglob("*")):
        if p.is_file():
            rel = p.relative_to(site).as_posix()
            if p.suffix in (".br", ".gz") and p.with_suffix("").is_file():
                continue  # the build's compressed copy of a file compared here (oya.site.assets)
            data = p.read_bytes()
            if rel == "manifest.json":
                manifest = json.loads(data)
                manifest.pop("built_at")
                manifest.pop("index_built_at")
                for count in ("rendered", "reused"):
                    manifest["counts"].pop(count)
                data = json.dumps(manifest, sort_keys=True).encode()
            if rel == "pages.json":
                keys = json.loads(data)
                keys["pages"].pop("index.html")
                data = json.dumps(keys, sort_keys=True).encode()
            if rel == "sw.js":  # its build id digests pages.json, the overview page's key with it
                data = re.sub(rb'"id": "[0-9a-f]+"', b'"id": "BUILD_ID"', data)
            out[rel] = data.replace(built_at.encode(), b"BUILT_AT")
    return out


def _built_at(index_dir: Path) -> str:
    con = duckdb.connect(str(index_dir / "index.duckdb"), read_only=True)
    try:
        return str(con.execute("SELECT value FROM meta WHERE key = 'built_at'").fetchone()[0])  # type: ignore[index]
    finally:
        con.close()


def test_change_delete_rename_rebuild_equals_a_build_from_scratch(
    sample_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the sample is small, so these three files are half its chunks: patch the index all the same
    monkeypatch.setattr(patch, "MAX_CHANGED_SHARE", 1.0)
    out, cache, fresh = tmp_path / "idx", tmp_path / "cache", tmp_path / "fresh"
    _build(sample_repo, out, cache)
    _site(out, out / "site")
    with Searcher.open(out) as s:
        before = s.search("low_stock_report threshold", k=5)
    assert any(h.chunk.path == "inventory/reports.py" for h in before.hits)  # the query can find it

    _change_delete_rename(sample_repo)
    again = _build(sample_repo, out, cache)
    counts = _site(out, out / "site")
    _build(sample_repo, fresh, cache)
    _site(fresh, fresh / "site")

    assert again.stats.code_graph.parses_reused > 0
    assert again.stats.search_index.patched["patched"] == 1, again.stats.search_index
    assert 0 < counts["rendered"] < counts["pages"]  # pages were reused, some rendered again
    reused, full = _tables(out / "index.duckdb"), _tables(fresh / "index.duckdb")
    assert reused.keys() == full.keys()
    for table in full:
        assert reused[table] == full[table], table
    mine, theirs = _site_files(out / "site", _built_at(out)), _site_files(fresh / "site", _built_at(fresh))
    assert sorted(mine) == sorted(theirs)
    assert not any("reports.py" in p or "/storage.py" in p for p in mine)
    for rel in theirs:
        assert mine[rel] == theirs[rel], rel
    shards = site_file(out / "site", "bundle/shards/")
    [manifest] = shards.glob("manifest-*")
    bundle = open_shards(folder_fetch(shards), manifest.name)  # what the Ask panel loads
    assert "inventory/reports.py" not in bundle.pages and bundle.pages  # the deleted file's gone
    assert not any("low_stock_report" in n for n in bundle.graph.nodes)

    with Searcher.open(out) as s:
        after = s.search("low_stock_report threshold", k=5)
    gone = ("inventory/reports.py", "inventory/storage.py")
    assert after.hits and not any(h.chunk.path in gone for h in after.hits)
    assert not any(c.path in gone for c in after.citations)
    assert not any("low_stock_report" in (h.chunk.node_id or "") for h in after.hits)


def test_a_patched_index_patched_again_equals_a_build_from_scratch(
    sample_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """New docids and termids are numbered after the largest ones: a second patch must still
    agree with a full build (and a term that comes back after leaving gets a new termid)."""
    monkeypatch.setattr(patch, "MAX_CHANGED_SHARE", 1.0)
    out, cache = tmp_path / "idx", tmp_path / "cache"
    _build(sample_repo, out, cache)
    _change_delete_rename(sample_repo)
    _build(sample_repo, out, cache)
    utils = sample_repo / "inventory" / "utils.py"
    utils.write_text(utils.read_text() + '\n\ndef low_stock_report():\n    """Back again."""\n')
    (sample_repo / "inventory" / "service.py").unlink()
    again = _build(sample_repo, out, cache)
    assert again.stats.search_index.patched["patched"] == 1
    _build(sample_repo, tmp_path / "fresh", cache)
    assert _tables(out / "index.duckdb") == _tables(tmp_path / "fresh" / "index.duckdb")


def test_an_index_grown_by_patches_is_written_whole_again(
    sample_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Patched copies keep DuckDB's freed blocks: past MAX_GROWTH times the size of the last whole
    write, the next build writes the index whole (and records the new whole size)."""
    monkeypatch.setattr(patch, "MAX_CHANGED_SHARE", 1.0)
    utils = sample_repo / "inventory" / "utils.py"

    def edit(n: int) -> None:
        utils.write_text(utils.read_text() + f'\n\ndef added_{n}():\n    """Added."""\n    return {n}\n')

    out, cache = tmp_path / "idx", tmp_path / "cache"
    _build(sample_repo, out, cache)
    whole = int((out / writer.WHOLE_SIZE_FILE).read_text())
    assert whole == (out / "index.duckdb").stat().st_size
    edit(1)
    assert _build(sample_repo, out, cache).stats.search_index.patched["patched"] == 1
    monkeypatch.setattr(writer, "MAX_GROWTH", 0.5)  # as if the file had grown past the limit
    edit(2)
    assert _build(sample_repo, out, cache).stats.search_index.patched == {"patched": 0}
    assert int((out / writer.WHOLE_SIZE_FILE).read_text()) == (out / "index.duckdb").stat().st_size
    (out / writer.WHOLE_SIZE_FILE).unlink()  # an index from before the record: written whole once
    monkeypatch.setattr(writer, "MAX_GROWTH", 3.0)
    edit(3)
    assert _build(sample_repo, out, cache).stats.search_index.patched == {"patched": 0}


def test_an_index_from_other_code_is_not_reused(
    sample_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out, cache = tmp_path / "idx", tmp_path / "cache"
    _build(sample_repo, out, cache)
    assert _build(sample_repo, out, cache).stats.code_graph.parses_reused > 0
    # as if the parser or chunker had changed since the index was written
    monkeypatch.setattr(previous, "reuse_key", lambda: "another version of oya")
    monkeypatch.setattr(steps, "reuse_key", lambda: "another version of oya")  # what it records
    again = _build(sample_repo, out, cache).stats
    assert again.code_graph.parses_reused == 0
    assert again.search_index.patched == {"patched": 0}  # nor is the index file patched


def test_unreadable_previous_parses_are_parsed_again(sample_repo: Path, tmp_path: Path) -> None:
    out, cache = tmp_path / "idx", tmp_path / "cache"
    _build(sample_repo, out, cache)
    con = duckdb.connect(str(out / "index.duckdb"))
    con.execute("UPDATE parsed_files SET parsed = 'not a parse'::BLOB")
    con.close()
    again = _build(sample_repo, out, cache)
    assert again.stats.code_graph.parses_reused == 0
    _build(sample_repo, tmp_path / "fresh", cache)
    assert _tables(out / "index.duckdb") == _tables(tmp_path / "fresh" / "index.duckdb")


def test_a_parse_survives_its_encoding(sample_repo: Path) -> None:
    for f in scan_repository(sample_repo).files:
        parser = parser_for(f.language)
        if parser is not None:
            parsed = parser.parse(f)
            assert reuse.decode_parse(reuse.encode_parse(parsed)) == parsed

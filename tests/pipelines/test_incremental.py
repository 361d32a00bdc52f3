"""A rebuild reuses what did not change (parses, chunks, tokens) and still equals a full build."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from oya import reuse
from oya.build_stats import BuildSummary
from oya.parsing import parser_for
from oya.reader import scan_repository
from pipelines.build import run_build

# meta rows that differ between any two builds (when, and which folder the repository was in)
_VOLATILE_META = ("built_at",)


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
            rows = con.execute(f'SELECT * FROM "{schema}"."{name}"').fetchall()
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


def test_an_index_from_other_code_is_not_reused(
    sample_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out, cache = tmp_path / "idx", tmp_path / "cache"
    _build(sample_repo, out, cache)
    assert _build(sample_repo, out, cache).stats.code_graph.parses_reused > 0
    # as if the parser or chunker had changed since the index was written
    monkeypatch.setattr(reuse, "reuse_key", lambda: "another version of oya")
    assert _build(sample_repo, out, cache).stats.code_graph.parses_reused == 0


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

"""Secrets in every form the redaction corpus knows, seeded into a repository, built into an
index and a site (hashing embedder): no canary may reach index.duckdb, the bundle or any page.

The canaries are greped case-insensitively in the raw bytes of every output file and queried
from every text column of the index (DuckDB may compress a string so that a byte grep alone
could miss it).
"""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path

import brotli
import duckdb
import pytest
from secret_corpus import POSITIVES, TOKENS, WORD_CANARY

from oya.site.assets import site_file
from oya.site.build import render_wiki_pages, write_wiki_site
from pipelines.build import LOG_FILE, run_build

CANARIES = ("oyacanary", "oya-canary", WORD_CANARY.lower(), "y2fuyxj5onmzy3izda")  # the last: base64

# one file per language, so each form sits in the syntax it belongs to
FILE_FOR = {
    "yaml": "deploy/config.yaml",
    "ini": "setup.cfg",
    "toml": "deploy/settings.toml",
    "json": "deploy/registry.json",
    "shell": "scripts/deploy.sh",
    None: "deploy/env.txt",
    "dockerfile": "Dockerfile",
    "python": "app/settings.py",
    "javascript": "web/app.js",
    "typescript": "web/config.ts",
    "go": "cmd/main.go",
    "ruby": "config/app.rb",
    "makefile": "Makefile",
    "markdown": "docs/setup.md",
    "csharp": "src/Client.cs",
    "java": "src/Db.java",
    "php": "web/db.php",
    "text": "docs/keys.txt",
}
# files and a folder named like tokens (issue 22): skipped, and kept only under a masked path
TOKEN_PATHS = {
    f"{TOKENS[2][1]}.txt": "«redacted:github_token».txt",
    f"deploy/{TOKENS[0][1]}.json": "deploy/«redacted:aws_access_key_id».json",
    f"keys/{TOKENS[6][1]}/notes.md": "keys/«redacted:stripe_key»/notes.md",
}


def _seed(root: Path) -> Path:
    texts: dict[str, list[str]] = {}
    for i, (_form, language, text, _rule) in enumerate(POSITIVES):
        # ordinary lines around each secret: the file is redacted, not skipped as mostly secrets
        padding = "".join(f"plain_words_{i}_{j}\n" for j in range(4))
        texts.setdefault(FILE_FOR[language], []).append(padding + text + padding)
    tokens = "".join(
        f"TOKEN_{i} = '{token}'\nplain_{i} = 1\nplainer_{i} = 2\n" for i, (_, token) in enumerate(TOKENS)
    )
    texts.setdefault("app/tokens.py", []).append(tokens)
    for rel, parts in texts.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(parts), encoding="utf-8")
    for rel in TOKEN_PATHS:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("def harmless():\n    return 1\n", encoding="utf-8")
    (root / "README.md").write_text("# Seeded\n\nA repository full of secrets.\n", encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict, Path]:
    tmp = tmp_path_factory.mktemp("secrets")
    repo = _seed(tmp / "repo")
    out, site = tmp / "index", tmp / "site"
    summary = run_build(repo, out, embedder="hashing", cache_dir=tmp / "cache")
    write_wiki_site(render_wiki_pages(out), out, site, with_runtime=False, with_bundle=True)
    return out, summary, site


def _canaries_in(data: bytes) -> list[str]:
    data = data.lower()
    return [c for c in CANARIES if c.encode() in data]


def _leaks(path: Path) -> list[str]:
    """Canaries in a file's bytes, and in its inflated bytes when it is a compressed copy (the
    bundle, the build's .gz/.br beside each file). Told by name, not by magic bytes: a Brotli
    stream has no magic and may begin with gzip's two."""
    data = path.read_bytes()
    if path.suffix == ".gz":
        data += gzip.decompress(data)
    elif path.suffix == ".br":
        data += brotli.decompress(data)
    return _canaries_in(data)


def test_the_seeded_files_are_indexed_with_their_secrets_redacted(built: tuple[Path, dict, Path]) -> None:
    _, summary, _ = built
    # only the files named like tokens are skipped, under their masked paths
    assert {s.path for s in summary.skipped if s.reason == "secret"} == set(TOKEN_PATHS.values())
    redactions = summary.stats.source_files.redactions
    assert sum(redactions.values()) >= len(POSITIVES) + len(TOKENS)
    expected_rules = {rule for *_, rule in POSITIVES} | {rule for rule, _ in TOKENS}
    assert expected_rules <= set(redactions)
    assert all(c.passed for c in summary.checks)  # chunks_hold_no_secrets among them


def test_no_canary_in_any_index_file(built: tuple[Path, dict, Path]) -> None:
    out, _, _ = built
    files = [p for p in out.rglob("*") if p.is_file()]
    assert out / "index.duckdb" in files
    log = (out / LOG_FILE).read_text(encoding="utf-8")  # the skips are logged: masked paths only
    assert all(p in log for p in TOKEN_PATHS.values())
    assert {str(p): _leaks(p) for p in files if _leaks(p)} == {}


def test_no_canary_in_any_text_column_of_the_index(built: tuple[Path, dict, Path]) -> None:
    out, _, _ = built
    con = duckdb.connect(str(out / "index.duckdb"), read_only=True)
    try:
        columns = con.execute(
            "SELECT table_schema, table_name, column_name FROM information_schema.columns"
            " WHERE data_type = 'VARCHAR'"
        ).fetchall()
        assert len(columns) > 10
        assert any(schema.startswith("fts_") for schema, _, _ in columns)  # the full-text terms too
        for schema, table, column in columns:
            for canary in CANARIES:
                sql = f'SELECT count(*) FROM "{schema}"."{table}" WHERE lower("{column}") LIKE ?'
                row = con.execute(sql, [f"%{canary}%"]).fetchone()
                assert row is not None and row[0] == 0, (table, column, canary)
        blobs = con.execute("SELECT parsed FROM parsed_files").fetchall()  # zlib-compressed parses
        assert blobs and not [c for (b,) in blobs for c in _canaries_in(zlib.decompress(b))]
        (marked,) = con.execute("SELECT count(*) FROM files WHERE text LIKE '%«redacted:%'").fetchone() or (
            0,
        )
        assert marked == len(FILE_FOR) + 1
        skipped = dict(con.execute("SELECT path, reason FROM skipped").fetchall())
        assert {p: skipped.get(p) for p in TOKEN_PATHS.values()} == dict.fromkeys(
            TOKEN_PATHS.values(), "secret"
        )
    finally:
        con.close()


def test_no_canary_in_the_site_bundle_or_pages(built: tuple[Path, dict, Path]) -> None:
    _, _, site = built
    files = [p for p in site.rglob("*") if p.is_file()]
    pages = [p for p in files if p.suffix == ".html"]
    assert list(site_file(site, "bundle/shards/").glob("chunks-*")) and len(pages) >= len(FILE_FOR)
    assert {str(p): _leaks(p) for p in files if _leaks(p)} == {}
    page = (site / "files" / "app" / "settings.py.html").read_text(encoding="utf-8")
    assert "redacted:secret_assignment" in page and "redacted:url_credentials" in page

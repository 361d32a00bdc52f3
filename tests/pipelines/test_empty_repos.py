"""A repository with nothing (or almost nothing) to index still builds: an empty index, a site that
says so, and every blocking check passed — a check with nothing to check passes and says why.

Since the checks became blocking (fd39ce0), ``search_index_is_consistent`` counted an empty index
as a problem and ``site_answers_like_the_index`` failed when no symbol name was long enough to ask,
so an empty repository, one with only a README and one whose only code is ``def g(): return 2``
could not be built with ``--site`` at all.
"""

from __future__ import annotations

import html
import re
import subprocess
from pathlib import Path

import duckdb
import pytest
from cli_runs import oya, oya_build, runtime_cache

CHECKS = (
    "chunks_hold_no_secrets",
    "search_index_is_consistent",
    "site_answers_like_the_index",
    "site_holds_no_secrets",
    "site_links_resolve",
)


def _git_repo(path: Path, files: dict[str, bytes]) -> Path:
    path.mkdir()
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    for rel, data in files.items():
        (path / rel).write_bytes(data)
    if files:
        subprocess.run(["git", "-C", str(path), "add", "-A"], check=True)
        subprocess.run(
            ["git", "-C", str(path), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"],
            check=True,
        )
    return path


def _page_text(path: Path) -> str:
    text = re.sub(r"<(script|style)\b.*?</\1>", " ", path.read_text(encoding="utf-8"), flags=re.S)
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", text)))


REPOS = {
    "empty": ({}, 0),
    "readme-only": ({"README.md": b"# Notes\n\nNothing but words here.\n"}, 1),
    "binary-only": ({"blob.bin": bytes(range(256)) * 16}, 0),
    "tiny-python": ({"g.py": b"def g(): return 2\n"}, 1),
}


@pytest.mark.parametrize("name", list(REPOS))
def test_a_repository_with_little_or_nothing_to_index_builds_and_says_so(name: str, tmp_path: Path) -> None:
    files, indexed = REPOS[name]
    repo = _git_repo(tmp_path / name, files)
    out = tmp_path / "out"
    done = oya_build(repo, out, runtime_cache(tmp_path))
    assert done.returncode == 0, done.stderr
    for check in CHECKS:
        assert f"check {check}: passed" in done.stdout
    with duckdb.connect(str(out / "index.duckdb"), read_only=True) as con:
        row = con.execute("SELECT count(*) FROM files").fetchone()
    assert row is not None and row[0] == indexed
    overview = _page_text(out / "site" / "index.html")
    assert ("Nothing to index" in overview) == (indexed == 0), overview
    # the CLI answers from it: no results is an answer, not an error
    asked = oya("search", "what does it return", "--index", str(out))
    assert asked.returncode == 0, asked.stderr

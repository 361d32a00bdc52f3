"""Blocking asset checks stop the publish: a broken index, a secret anywhere in the site, a broken
link or a bundle that answers unlike the index keeps the previous site and index, and the failing
check says what is wrong."""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import pytest
from dagster import DagsterInstance
from secret_corpus import NEGATIVES

from oya.build import steps
from oya.core.shard_store import shard_name
from oya.errors import OyaError
from oya.site.assets import site_file
from oya.site.render import WikiPages
from pipelines import assets
from pipelines.build import run_build
from pipelines.definitions import build_definitions
from pipelines.repos import OyaRepos, RepoEntry

# a GitHub token shape (ghp_ + 36), split so this file holds none
TOKEN = "gh" + "p_" + "Zq9" * 12


ALL_PASS = {
    "chunks_hold_no_secrets": True,
    "search_index_is_consistent": True,
    "site_links_resolve": True,
    "site_holds_no_secrets": True,
    "site_answers_like_the_index": True,
}


def _run(sample_repo: Path, tmp_path: Path) -> Any:
    repos = OyaRepos(
        repos=[RepoEntry(name="sample", path=str(sample_repo), out=str(tmp_path / "out"))],
        embedder="hashing",
        cache_dir=str(tmp_path / "cache"),
        site_runtime=False,
    )
    instance = DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("repos", ["sample"])
    job = build_definitions(repos=repos).resolve_job_def("index_repository")
    return job.execute_in_process(partition_key="sample", instance=instance, raise_on_error=False)


def _site(tmp_path: Path) -> dict[str, bytes]:
    """The live site's files and the live index: what readers see."""
    site = tmp_path / "out" / "site"
    files = {str(p.relative_to(site)): p.read_bytes() for p in sorted(site.rglob("*")) if p.is_file()}
    return {**files, "(index)": (tmp_path / "out" / "index.duckdb").read_bytes()}


def _outcome(result: Any) -> tuple[dict[str, bool], set[str]]:
    checks = {e.check_name: e.passed for e in result.get_asset_check_evaluations()}
    built = {
        e.asset_key.to_user_string() for e in result.all_events if e.is_step_materialization and e.asset_key
    }
    return checks, built


def test_a_good_build_passes_every_check(sample_repo: Path, tmp_path: Path) -> None:
    checks, built = _outcome(_run(sample_repo, tmp_path))
    assert checks == ALL_PASS
    assert "published_site" in built


def _lose_a_vector(monkeypatch: Any) -> None:
    """The fault: the index is written with one chunk left without its vector and one dangling edge."""
    real = steps.write_search_index

    def broken(*args: Any, **kwargs: Any) -> Path:
        path = real(*args, **kwargs)
        with duckdb.connect(str(path)) as con:
            con.execute("DELETE FROM embeddings WHERE chunk_id = (SELECT min(chunk_id) FROM embeddings)")
            con.execute(
                "INSERT INTO edges SELECT source, 'no-such-node', kind, confidence FROM edges LIMIT 1"
            )
        return path

    monkeypatch.setattr(steps, "write_search_index", broken)


def test_an_inconsistent_index_blocks_the_site(sample_repo: Path, tmp_path: Path, monkeypatch) -> None:
    assert _run(sample_repo, tmp_path).success
    before = _site(tmp_path)
    (sample_repo / "inventory" / "extra.py").write_text("def extra():\n    return 1\n", encoding="utf-8")
    _lose_a_vector(monkeypatch)
    result = _run(sample_repo, tmp_path)
    checks, built = _outcome(result)
    assert checks["search_index_is_consistent"] is False
    [evaluation] = [e for e in result.get_asset_check_evaluations() if not e.passed]
    assert evaluation.metadata["chunks_without_vector"].value == 1
    assert evaluation.metadata["edges_with_missing_endpoint"].value == 1
    assert "wiki_pages" not in built and "published_site" not in built
    assert _site(tmp_path) == before  # the previous site and index are still the ones served


def test_oya_build_names_the_failed_check(sample_repo: Path, tmp_path: Path, monkeypatch) -> None:
    _lose_a_vector(monkeypatch)
    with pytest.raises(OyaError, match="check search_index_is_consistent failed: chunks_without_vector: 1, "):
        run_build(
            sample_repo, tmp_path / "out", embedder="hashing", cache_dir=tmp_path / "cache", with_site=True
        )
    assert not (tmp_path / "out" / "site").exists()


def test_a_secret_in_a_page_blocks_the_site(sample_repo: Path, tmp_path: Path, monkeypatch) -> None:
    assert _run(sample_repo, tmp_path).success
    before = _site(tmp_path)
    real = assets.render_wiki_pages

    def leak(*args: Any, **kwargs: Any) -> WikiPages:  # the fault: a renderer that lets a token through
        pages = real(*args, **kwargs)
        pages.pages["leak.html"] = f"<p>token {TOKEN}</p>"
        return pages

    monkeypatch.setattr(assets, "render_wiki_pages", leak)
    result = _run(sample_repo, tmp_path)
    checks, built = _outcome(result)
    assert checks == {**ALL_PASS, "site_holds_no_secrets": False}
    assert "wiki_site" in built and "published_site" not in built
    [failed] = [e for e in result.get_asset_check_evaluations() if not e.passed]
    assert failed.metadata["paths"].value == "leak.html"
    assert _site(tmp_path) == before
    assert not (tmp_path / "out" / "site" / "leak.html").exists()


def _stage_with_bundle(monkeypatch: Any, spoil: Callable[[Path], None]) -> None:
    """wiki_site writes the bundle too (the tests' sites have no runtime) and ``spoil`` then
    breaks the staged site: the fault a buggy exporter would make."""
    real = assets.write_wiki_site

    def staged(*args: Any, **kwargs: Any) -> dict[str, Any]:
        report = real(*args, **{**kwargs, "with_bundle": True})
        spoil(Path(report["staged"]))
        return report

    monkeypatch.setattr(assets, "write_wiki_site", staged)


def _rewrite_bundle(site: Path, change: Callable[[dict[str, Any]], None]) -> None:
    """``change`` the staged bundle's shard manifest (what the Ask panel opens first), written under
    the name its new bytes hash to, as an exporter would write it."""
    [path] = site_file(site, "bundle/shards/").glob("manifest-*.json.gz")
    data = json.loads(gzip.decompress(path.read_bytes()))
    change(data)
    payload = json.dumps(data).encode()
    path.unlink()
    (path.parent / shard_name("manifest", payload)).write_bytes(gzip.compress(payload))


def test_a_secret_only_in_the_bundle_blocks_the_site(sample_repo: Path, tmp_path: Path, monkeypatch) -> None:
    _stage_with_bundle(monkeypatch, lambda site: None)
    assert _run(sample_repo, tmp_path).success
    before = _site(tmp_path)
    (sample_repo / "inventory" / "extra.py").write_text("def extra():\n    return 1\n", encoding="utf-8")

    def leak(data: dict[str, Any]) -> None:
        data["leak"] = TOKEN

    _stage_with_bundle(monkeypatch, lambda site: _rewrite_bundle(site, leak))
    result = _run(sample_repo, tmp_path)
    checks, built = _outcome(result)
    assert checks == {**ALL_PASS, "site_holds_no_secrets": False}
    [failed] = [e for e in result.get_asset_check_evaluations() if not e.passed]
    assert re.fullmatch(
        r"bundle(\.[0-9a-f]+)?/shards/manifest-[0-9a-f]+\.json\.gz", failed.metadata["paths"].value
    )
    assert "published_site" not in built and _site(tmp_path) == before


def test_a_broken_link_blocks_the_site(sample_repo: Path, tmp_path: Path, monkeypatch) -> None:
    assert _run(sample_repo, tmp_path).success
    before = _site(tmp_path)

    def dangle(site: Path) -> None:  # a page that links to a page the build did not write
        (site / "files" / "dangling.html").write_text('<a href="../files/gone.py.html#L3">gone</a>')

    _stage_with_bundle(monkeypatch, dangle)
    result = _run(sample_repo, tmp_path)
    checks, built = _outcome(result)
    assert checks == {**ALL_PASS, "site_links_resolve": False}
    [failed] = [e for e in result.get_asset_check_evaluations() if not e.passed]
    assert failed.metadata["links"].value == "files/dangling.html -> ../files/gone.py.html#L3"
    assert "published_site" not in built and _site(tmp_path) == before


def test_a_bundle_that_answers_unlike_the_index_blocks_the_site(
    sample_repo: Path, tmp_path: Path, monkeypatch
) -> None:
    _stage_with_bundle(monkeypatch, lambda site: None)
    result = _run(sample_repo, tmp_path)
    assert result.success
    [golden] = [
        e for e in result.get_asset_check_evaluations() if e.check_name == "site_answers_like_the_index"
    ]
    assert len(golden.metadata["questions"].value.split(", ")) == 5  # the repository's own symbols
    before = _site(tmp_path)

    def scramble(data: dict[str, Any]) -> None:  # an exporter that gives each chunk its neighbour's id
        ids = data["chunks"]["id"]
        data["chunks"]["id"] = ids[1:] + ids[:1]

    _stage_with_bundle(monkeypatch, lambda site: _rewrite_bundle(site, scramble))
    result = _run(sample_repo, tmp_path)
    checks, built = _outcome(result)
    assert checks == {**ALL_PASS, "site_answers_like_the_index": False}
    [failed] = [e for e in result.get_asset_check_evaluations() if not e.passed]
    assert failed.metadata["disagreements"].value >= 1
    assert "published_site" not in built and _site(tmp_path) == before


def test_code_that_only_looks_like_secrets_publishes(sample_repo: Path, tmp_path: Path) -> None:
    """The redactor's negatives (code that names tokens and passwords without holding one) pass
    both secret checks once rendered as pages: `make run` on Oya's own repository, whose redactor
    and test corpus are full of them, once failed here."""
    lines = [f"EXAMPLE_{i} = {text!r}  # {text}" for i, (_, text) in enumerate(NEGATIVES)]
    (sample_repo / "lookalikes.py").write_text("\n".join(lines) + "\n")
    checks, built = _outcome(_run(sample_repo, tmp_path))
    assert checks == ALL_PASS
    assert "published_site" in built


def test_links_shown_as_code_are_not_links(tmp_path: Path) -> None:
    # a code page shows `href="{url}"` as text: its "<" is escaped, its quotes are not
    from oya.site.checks import broken_links

    (tmp_path / "page.html").write_text(
        '<pre>return f\'&lt;a href="{escape(url)}"&gt;\' src="{root}x.js"</pre>'
        '<a class="x" href="missing.html">m</a><img alt="" src="gone.png">',
        encoding="utf-8",
    )
    assert broken_links(tmp_path) == ["page.html -> missing.html", "page.html -> gone.png"]

"""Atomic publish: a build that fails in any asset, fails a blocking check or is killed leaves
the previously published index and site byte-identical, and they still answer."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from test_blocking_checks import _lose_a_vector, _run, _site
from test_build_ops import ROOT, _big_repo, kill_when

from oya.build import steps
from oya.build.lock import LOCK_FILE
from oya.build.ownership import OUTPUT_MARKER
from oya.errors import OyaError
from oya.query.searcher import Searcher
from oya.store.schema import INDEX_FILE, STAGED_SUFFIX
from pipelines import assets
from pipelines.build import run_build


class Fault(RuntimeError):
    """The injected failure."""


def _published(out: Path) -> dict[str, bytes]:
    """What a reader is served: the index file and every file of the site."""
    site = _site(out.parent) if (out / "site").is_dir() else {}
    return {INDEX_FILE: (out / INDEX_FILE).read_bytes(), **{f"site/{k}": v for k, v in site.items()}}


def _answers(out: Path, question: str, path: str) -> None:
    with Searcher.open(out) as searcher:
        hits = searcher.search(question, k=5).hits
    assert path in {hit.chunk.path for hit in hits}, [hit.chunk.path for hit in hits]


def _raise(*args: Any, **kwargs: Any) -> Any:
    raise Fault("injected")


def _after(real: Callable[..., Any]) -> Callable[..., Any]:
    """The real function runs (its file is written), then the fault."""

    def fail(*args: Any, **kwargs: Any) -> Any:
        real(*args, **kwargs)
        raise Fault("injected after the write")

    return fail


# each asset with the function it calls: the fault raises in it (after writing, for the writers)
FAULTS: list[tuple[str, Any, str, Callable[[Callable[..., Any]], Callable[..., Any]]]] = [
    ("source_files", steps, "scan", lambda real: _raise),
    ("code_graph", steps, "parse_and_link", lambda real: _raise),
    ("chunks", steps, "make_chunks", lambda real: _raise),
    ("chunk_embeddings", steps, "embed", lambda real: _raise),
    ("search_index", steps, "write_search_index", _after),
    ("wiki_pages", assets, "render_wiki_pages", lambda real: _raise),
    ("wiki_site", assets, "write_wiki_site", lambda real: _raise),
    ("published_site", assets, "swap_site", lambda real: _raise),
]


def _staged_files(out: Path) -> list[Path]:
    return [p for p in out.iterdir() if p.name.endswith(STAGED_SUFFIX)]


def _failed_step(result: Any) -> str:
    [step] = [e.step_key for e in result.all_events if e.is_step_failure]
    return str(step)


@pytest.mark.parametrize("asset,module,name,fault", FAULTS, ids=[f[0] for f in FAULTS])
def test_a_fault_in_any_asset_keeps_the_published_index_and_site(
    sample_repo: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    asset: str,
    module: Any,
    name: str,
    fault: Any,
) -> None:
    out = tmp_path / "out"
    assert _run(sample_repo, tmp_path).success
    before = _published(out)
    (sample_repo / "inventory" / "reports.py").unlink()  # the next build would drop it
    monkeypatch.setattr(module, name, fault(getattr(module, name)))

    result = _run(sample_repo, tmp_path)

    assert not result.success and _failed_step(result) == asset
    assert _published(out) == before
    _answers(out, "low stock report", "inventory/reports.py")  # still the previous index


def test_a_failed_check_keeps_the_previous_index_too(
    sample_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    assert _run(sample_repo, tmp_path).success
    before = _published(out)
    _lose_a_vector(monkeypatch)
    assert not _run(sample_repo, tmp_path).success
    assert _published(out) == before
    _answers(out, "low stock report", "inventory/reports.py")


def test_oya_build_without_a_site_publishes_only_after_the_checks(
    sample_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out, cache = tmp_path / "out", tmp_path / "cache"
    run_build(sample_repo, out, embedder="hashing", cache_dir=cache)
    before = (out / INDEX_FILE).read_bytes()
    (sample_repo / "inventory" / "reports.py").unlink()
    with monkeypatch.context() as patch:
        _lose_a_vector(patch)
        with pytest.raises(OyaError, match="check search_index_is_consistent failed"):
            run_build(sample_repo, out, embedder="hashing", cache_dir=cache)
    assert (out / INDEX_FILE).read_bytes() == before
    assert len(_staged_files(out)) == 1  # the rejected index, kept for a look until the next build
    _answers(out, "low stock report", "inventory/reports.py")

    summary = run_build(sample_repo, out, embedder="hashing", cache_dir=cache)

    assert summary.index == str(out / INDEX_FILE) and summary.stats.source_files.leftovers_removed == 1
    assert _staged_files(out) == []
    with Searcher.open(out) as searcher:
        assert "inventory/reports.py" not in {h.chunk.path for h in searcher.search("low stock report").hits}


# -- a real SIGKILL -----------------------------------------------------------------------------------
# test_blocking_checks._run's job, with the sample repository and the tmp_path given as arguments
CHILD = """
import sys
from dagster import DagsterInstance
from pipelines.definitions import build_definitions
from pipelines.repos import OyaRepos, RepoEntry
repo, tmp = sys.argv[1:3]
repos = OyaRepos(
    repos=[RepoEntry(name="sample", path=repo, out=tmp + "/out")],
    embedder="hashing",
    cache_dir=tmp + "/cache",
    site_runtime=False,
)
instance = DagsterInstance.ephemeral()
instance.add_dynamic_partitions("repos", ["sample"])
job = build_definitions(repos=repos).resolve_job_def("index_repository")
job.execute_in_process(partition_key="sample", instance=instance, raise_on_error=False)
"""


def _killed_build(repo: Path, tmp_path: Path, seen: Callable[[Path], bool]) -> list[str]:
    """Run the build (with its site) in a child process, SIGKILL it once ``seen(out)``, and return
    the names the killed run left in the output folder."""
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(repo), str(tmp_path)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    out = tmp_path / "out"
    kill_when(proc, lambda: seen(out), seconds=300)
    return sorted(p.name for p in out.iterdir() if p.name.startswith("."))


def _staged(out: Path) -> bool:
    return bool(_staged_files(out))


def _site_aside(out: Path) -> bool:
    return any(p.name.startswith(".site.new-") for p in out.iterdir())


@pytest.mark.slow  # three builds of 4,800 functions, two of them killed: about a minute
def test_a_killed_build_leaves_the_published_index_and_site_serving(tmp_path: Path) -> None:
    repo, out = _big_repo(tmp_path / "repo"), tmp_path / "out"
    assert _run(repo, tmp_path).success
    before = _published(out)
    (repo / "pkg" / "mod7.py").unlink()
    (repo / "pkg" / "extra.py").write_text("def brand_new_helper(x):\n    return x\n")

    for seen, mark in ((_staged, STAGED_SUFFIX), (_site_aside, ".site.new-")):
        left = _killed_build(repo, tmp_path, seen)
        assert any(mark in name for name in left), left
        assert _published(out) == before
        _answers(out, "Step 3 of part 7", "pkg/mod7.py")

    result = _run(repo, tmp_path)

    assert result.success
    assert sorted(p.name for p in out.iterdir() if p.name.startswith(".")) == sorted(
        [LOCK_FILE, OUTPUT_MARKER]
    )
    _answers(out, "brand new helper", "pkg/extra.py")
    assert not (out / "site" / "files" / "pkg" / "mod7.py.html").exists()

"""The build as a user meets it: one-line failures, leftovers of killed builds, progress lines."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from rich.console import Console

from oya.build.leftovers import INDEX_TEMP, remove_build_leftovers
from oya.build.lock import LOCK_FILE
from oya.build.ownership import OUTPUT_MARKER, claim_output
from oya.build.progress import ProgressBars, ProgressLog, format_duration
from oya.store.index import Index
from pipelines.build import run_build

ROOT = Path(__file__).resolve().parents[2]
KEPT = (LOCK_FILE, OUTPUT_MARKER)  # the dot files an output folder keeps between builds


def _oya(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "oya", *args],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
        capture_output=True,
        text=True,
        timeout=300,
    )


# -- one-line failures ------------------------------------------------------------------------------
def _unstageable(tmp_path: Path) -> Path:
    """An index folder where search_index fails: a folder where it records the size of an index
    written whole."""
    out = tmp_path / "out"
    claim_output(out)  # an output folder of Oya's, so the build gets as far as the failing step
    (out / "index.duckdb.whole-bytes").mkdir(parents=True)
    return out


def test_a_failed_step_is_one_line_with_the_log_path(sample_repo: Path, tmp_path: Path) -> None:
    out = _unstageable(tmp_path)
    for flags in (["-q"], []):
        done = _oya("build", str(sample_repo), "--out", str(out), "--embedder", "hashing", *flags)
        assert done.returncode == 1
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1, done.stderr
        assert "search_index failed: IsADirectoryError" in lines[0]
        assert lines[0].endswith(f"(log: {out / 'build.log'})")
    log = (out / "build.log").read_text()
    assert "STEP_FAILURE" in log or "Traceback" in log or 'File "' in log
    assert "(out_dir / WHOLE_SIZE_FILE).write_text" in log  # the stack trace is in the log


def test_oya_debug_prints_the_trace(sample_repo: Path, tmp_path: Path) -> None:
    out = _unstageable(tmp_path)
    done = _oya(
        "build", str(sample_repo), "--out", str(out), "--embedder", "hashing", "-q", env={"OYA_DEBUG": "1"}
    )
    assert done.returncode == 1
    assert "(out_dir / WHOLE_SIZE_FILE).write_text" in done.stderr and len(done.stderr.splitlines()) > 10


def test_an_output_folder_that_cannot_be_made_is_one_line(sample_repo: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    done = _oya("build", str(sample_repo), "--out", str(blocker / "out"), "--embedder", "hashing", "-q")
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        f"Error: cannot create the index folder {blocker / 'out'}: Not a directory"
    ]


# -- leftovers --------------------------------------------------------------------------------------
def _age(path: Path, seconds: float) -> None:
    for p in [path, *path.rglob("*")] if path.is_dir() else [path]:
        t = time.time() - seconds
        os.utime(p, (t, t), follow_symlinks=False)


def test_only_old_oya_temporaries_are_removed(tmp_path: Path) -> None:
    out = tmp_path / "out"
    site = out / "site"
    site.mkdir(parents=True)
    old_index = out / f".index.duckdb.{'a' * 32}.tmp"
    old_wal = out / f".index.duckdb.{'a' * 32}.tmp.wal"
    old_rows = out / ".chunks.k2j_9x0q.ndjson"
    old_site = out / ".site.new-0123456789ab"
    fresh_index = out / f".index.duckdb.{'b' * 32}.tmp"  # a build running right now
    fresh_site = out / ".site.new-ba9876543210"
    mine = [out / "index.duckdb", out / "notes.tmp", out / ".index.duckdb.backup", site / "page.html"]
    for path in (old_index, old_wal, old_rows, fresh_index, *mine):
        path.write_text("x")
    for folder in (old_site, fresh_site):
        (folder / "files").mkdir(parents=True)
        (folder / "files" / "a.html").write_text("x")
    for path in (old_index, old_wal, old_rows, old_site, *mine, fresh_site):
        _age(path, 3600)
    _age(fresh_site / "files" / "a.html", 0)  # deep inside, still being written

    removed = remove_build_leftovers(out, site, older_than=time.time() - 1)

    assert sorted(removed) == sorted(p.name for p in (old_index, old_wal, old_rows, old_site))
    assert not any(p.exists() for p in (old_index, old_wal, old_rows, old_site))
    assert all(p.exists() for p in (fresh_index, fresh_site, *mine))


def _big_repo(root: Path, files: int = 120, functions: int = 40) -> Path:
    for i in range(files):
        body = "\n\n".join(
            f'def f{i}_{j}(x):\n    """Step {j} of part {i}."""\n    return f{i}_{max(j - 1, 0)}(x) + {j}\n'
            for j in range(functions)
        )
        (root / "pkg").mkdir(parents=True, exist_ok=True)
        (root / "pkg" / f"mod{i}.py").write_text(body)
    return root


def kill_when(proc: subprocess.Popen[bytes], seen: Callable[[], bool], seconds: float = 240) -> None:
    """SIGKILL ``proc`` as soon as ``seen()``; fails when it ended before that."""
    deadline = time.time() + seconds
    try:
        while time.time() < deadline and proc.poll() is None and not seen():
            time.sleep(0.005)
        assert proc.poll() is None, "the build ended before the point where it was to be killed"
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.slow  # a real build of 4,800 functions, killed while it writes the index
def test_a_killed_build_is_cleaned_up_by_the_next(tmp_path: Path) -> None:
    repo, out, cache = _big_repo(tmp_path / "repo"), tmp_path / "out", tmp_path / "cache"
    proc = subprocess.Popen(
        [sys.executable, "-m", "oya", "build", str(repo), "--out", str(out), "--embedder", "hashing", "-q"],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), "OYA_CACHE_DIR": str(cache)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    # killed while the index is being written (not while a small record such as the scan's
    # `.scan_stat.json.<id>.tmp` is: that one is renamed within microseconds, and the kill can miss it)
    kill_when(proc, lambda: out.is_dir() and any(INDEX_TEMP.fullmatch(p.name) for p in out.iterdir()))
    left = sorted(p.name for p in out.iterdir() if p.name.startswith(".") and p.name not in KEPT)
    assert any(INDEX_TEMP.fullmatch(name) for name in left), left
    assert not (out / "index.duckdb").exists()

    summary = run_build(repo, out, embedder="hashing", cache_dir=cache)

    assert summary.stats.source_files.leftovers_removed == len(left)
    # only the folder's lock file (an unlocked, empty file: the kernel dropped the dead build's lock)
    # and its marker stay
    assert sorted(p.name for p in out.iterdir() if p.name.startswith(".")) == sorted(KEPT)
    with Index(out) as idx:
        assert idx.stats().files == 120


# -- progress ---------------------------------------------------------------------------------------
class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_progress_lines_are_few_and_carry_an_eta() -> None:
    lines: list[str] = []
    clock = _Clock()
    log = ProgressLog("chunk_embeddings", "embedded", lines.append, clock=clock)
    for done in range(0, 10_481 + 1, 50):  # 50 per 0.2 s: 250 chunks/s
        log(done, 10_481)
        clock.now += 0.2
    log(10_481, 10_481)
    assert 10 <= len(lines) <= 12  # the first, one per tenth, the last
    assert lines[0] == "chunk_embeddings: 0/10,481 embedded"
    assert lines[-1] == "chunk_embeddings: 10,481/10,481 embedded"
    at_4000 = next(line for line in lines if line.startswith("chunk_embeddings: 4,"))
    assert at_4000 == "chunk_embeddings: 4,200/10,481 embedded, ETA 25s"  # 6,281 left at 250/s


def test_slow_progress_is_logged_every_five_seconds() -> None:
    lines: list[str] = []
    clock = _Clock()
    log = ProgressLog("chunk_embeddings", "embedded", lines.append, clock=clock)
    for done in range(0, 101):  # 1 per 2.5 s: a tenth takes 25 s
        log(done, 1000)
        clock.now += 2.5
    assert 45 <= len(lines) <= 52
    assert lines[-1].endswith("ETA 37m30s")  # 900 left at 0.4/s


def test_format_duration() -> None:
    assert [format_duration(s) for s in (0, 7.4, 59.6, 80, 4000)] == ["0s", "7s", "1m00s", "1m20s", "1h06m"]


def test_the_build_log_holds_progress_lines(sample_repo: Path, tmp_path: Path) -> None:
    screen = io.StringIO()
    console = Console(file=screen, force_terminal=True, width=120)
    bars = ProgressBars(console)
    run_build(sample_repo, tmp_path / "out", embedder="hashing", cache_dir=tmp_path / "cache", progress=bars)
    assert "chunk_embeddings" in screen.getvalue() and "ETA" in screen.getvalue()  # the live bars
    log = (tmp_path / "out" / "build.log").read_text()
    assert "code_graph: 9/9 files" in log and "chunks: 9/9 files" in log
    assert "chunk_embeddings: 51/51 embedded" in log
    assert "search_index: 10/10 tables written" in log  # nine tables, then the BM25 tables


def test_dagster_logs_pages_written(sample_repo: Path, tmp_path: Path) -> None:
    """wiki_pages reports through the same reporter as the index steps, so Dagster's log shows it."""
    from dagster import DagsterInstance, materialize, mem_io_manager

    from pipelines.assets import INDEX_ASSETS, wiki_pages
    from pipelines.resources import OyaSettings, Progress

    settings = OyaSettings(
        repo_path=str(sample_repo), out_dir=str(tmp_path / "out"), embedder="hashing", cache_dir=str(tmp_path)
    )
    instance = DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("repos", ["sample"])  # the assets are partitioned by repository
    result = materialize(
        [*INDEX_ASSETS, wiki_pages],
        resources={"settings": settings, "progress": Progress(), "io_manager": mem_io_manager},
        instance=instance,
        partition_key="sample",
    )
    assert result.success
    messages = [e.user_message for e in instance.all_logs(result.run_id)]
    written = [m for m in messages if m.startswith("wiki_pages: ")]
    total = result.asset_materializations_for_node("wiki_pages")[0].metadata["pages"].value
    assert written and written[-1].startswith(f"wiki_pages: {total:,}/{total:,} pages")


def test_a_quick_step_writes_its_first_and_last_lines_only() -> None:
    lines: list[str] = []
    clock = _Clock()
    log = ProgressLog("code_graph", "files", lines.append, clock=clock)
    for done in range(0, 856):  # 855 files in 0.86 s
        log(done, 855)
        clock.now += 0.001
    assert lines == ["code_graph: 0/855 files", "code_graph: 855/855 files"]

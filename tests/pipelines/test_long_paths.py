"""A repository path that is legal but near the system's 4,096-byte limit does not fail the build:
the reader skips it as ``too-long-path`` (a wiki page could never be written for it), and a site
folder too deep for the pages that remain is refused in one line, before anything is written."""

from __future__ import annotations

from pathlib import Path

import duckdb
from cli_runs import error_lines, oya_build, runtime_cache

from oya.scanning.reader import MAX_PATH_BYTES

SEG = "d" * 250  # every name under the 255-byte limit


def _deep(root: Path, *names: str) -> Path:
    path = root.joinpath(*names)
    path.mkdir(parents=True)
    return path


def test_a_path_near_the_system_limit_is_skipped_and_the_site_builds(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    deep = _deep(repo, *[SEG] * 15)
    name = "f" * min(250, 4090 - len(str(deep).encode()) - len("/.py")) + ".py"
    (deep / name).write_text("def deep_function():\n    return 1\n")
    assert 3900 < len(str(deep / name).encode()) < 4096  # legal: the file exists
    (repo / "top.py").write_text("def top_level():\n    return 2\n")
    # an output folder a few hundred bytes deep, as a home directory or CI workspace can be
    out = _deep(tmp_path, "o" * 200, "p" * 200) / "out"
    done = oya_build(repo, out, runtime_cache(tmp_path))
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    with duckdb.connect(str(out / "index.duckdb"), read_only=True) as con:
        files = [r[0] for r in con.execute("SELECT path FROM files").fetchall()]
        skipped = con.execute("SELECT path, reason FROM skipped").fetchall()
    assert files == ["top.py"]
    [(path, reason)] = skipped  # the first folder past the limit, once
    assert reason == "too-long-path" and len(path.encode()) > MAX_PATH_BYTES
    assert "too-long-path" in done.stdout  # shown in the build's table of skipped files
    assert (out / "site" / "files" / "top.py.html").is_file()


def test_a_site_folder_too_deep_for_the_pages_is_refused_in_one_line(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    folder = _deep(repo, *[SEG] * 4)  # a path the reader keeps (under MAX_PATH_BYTES)
    (folder / "kept.py").write_text("def kept_function():\n    return 3\n")
    out = _deep(tmp_path, *["o" * 250] * 13) / "out"  # about 3,300 bytes: no room for that page
    done = oya_build(repo, out, runtime_cache(tmp_path))
    assert done.returncode != 0
    [line] = error_lines(done)
    assert "the site folder is too deep" in line and "choose a shorter --out" in line, line
    assert "Traceback" not in done.stderr
    assert not (out / "site").exists()

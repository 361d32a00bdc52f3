"""Nothing the user owns is deleted: ``oya build`` replaces only folders and files it can prove it
wrote (``oya.build.ownership``), and refuses anything else in one line before writing a byte.

The probe of issue 22: a web app's folder holds ``site/manifest.json`` (its PWA manifest) and
``oya build r --out r --site`` took it for an Oya site and deleted ``r/site/precious.txt``.
"""

from __future__ import annotations

import json
from pathlib import Path

from cli_runs import error_lines, oya_build, runtime_cache

from oya.build.ownership import OUTPUT_MARKER, SITE_MARKER

PWA_MANIFEST = {"name": "Precious", "short_name": "p", "start_url": "/", "display": "standalone", "icons": []}


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _web_app(root: Path) -> Path:
    (root / "site").mkdir(parents=True)
    (root / "app.py").write_text("def serve_app():\n    return 'ok'\n")
    (root / "site" / "manifest.json").write_text(json.dumps(PWA_MANIFEST))
    (root / "site" / "precious.txt").write_text("the only copy")
    return root


def test_a_site_folder_oya_did_not_write_is_refused_and_left_whole(tmp_path: Path) -> None:
    repo = _web_app(tmp_path / "r")
    out = _web_app(tmp_path / "out")  # its site/ holds a web app's manifest.json, not Oya's
    before = _tree(tmp_path)
    done = oya_build(repo, out, runtime_cache(tmp_path))
    assert done.returncode != 0
    [line] = error_lines(done)
    assert line == (
        f"Error: refusing to replace {out / 'site'}: it was not written by Oya (no {SITE_MARKER} marker); "
        "choose another --out or remove it"
    )
    assert {k: v for k, v in _tree(tmp_path).items() if not k.startswith("cache/")} == {
        k: v for k, v in before.items() if not k.startswith("cache/")
    }  # not even a log, a lock or a marker was written
    assert sorted(p.name for p in out.iterdir()) == ["app.py", "site"]


def test_the_repository_as_output_is_refused_and_left_whole(tmp_path: Path) -> None:
    """The probe: oya build r --out r --site. Writing into the repository would make the next
    build read the last one's output; it is refused before a byte is written."""
    repo = _web_app(tmp_path / "r")
    before = _tree(repo)
    done = oya_build(repo, repo, runtime_cache(tmp_path))
    assert done.returncode != 0
    [line] = error_lines(done)
    assert "is the repository or holds it" in line
    assert _tree(repo) == before
    assert sorted(p.name for p in repo.iterdir()) == ["app.py", "site"]


def test_a_users_output_folder_gets_oya_files_beside_its_own(tmp_path: Path) -> None:
    repo = _web_app(tmp_path / "r")
    out = _web_app(tmp_path / "out")
    (out / "site").rename(out / "public")  # no folder where the site goes
    before = _tree(out)
    done = oya_build(repo, out, runtime_cache(tmp_path))
    assert done.returncode == 0, done.stderr
    after = _tree(out)
    assert {k: after[k] for k in before} == before  # every file of the user's as it was
    assert (out / "index.duckdb").is_file() and (out / "site" / SITE_MARKER).is_file()
    assert (out / OUTPUT_MARKER).is_file()
    # the next build replaces what it wrote, and still nothing else
    (repo / "app.py").write_text("def serve_app():\n    return 'changed'\n")
    assert oya_build(repo, out, runtime_cache(tmp_path)).returncode == 0
    assert (out / "public" / "precious.txt").read_text() == "the only copy"


def test_a_file_of_the_users_with_one_of_oyas_names_is_not_overwritten(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "a.py").write_text("def a_function():\n    return 1\n")
    for name, content in (("build.log", b"my own log"), ("index.duckdb", b"not an index of Oya's" * 100)):
        out = tmp_path / f"out-{name}"
        out.mkdir()
        (out / name).write_bytes(content)
        done = oya_build(repo, out, runtime_cache(tmp_path))
        assert done.returncode != 0
        [line] = error_lines(done)
        assert f"refusing to write into {out}: its {name} was not written by Oya" in line, line
        assert _tree(out) == {name: content}


def test_a_second_build_replaces_an_oya_output_and_an_older_unmarked_one(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "a.py").write_text("def a_function():\n    return 1\n")
    out, cache = tmp_path / "out", runtime_cache(tmp_path)
    assert oya_build(repo, out, cache).returncode == 0
    (repo / "b.py").write_text("def b_function():\n    return 2\n")
    assert oya_build(repo, out, cache).returncode == 0
    assert (out / "site" / "files" / "b.py.html").is_file()
    # as an output folder and a site written before the markers existed: recognised by the index
    # and by the site's manifest, and marked again
    for marker in (out / OUTPUT_MARKER, out / "site" / SITE_MARKER, out / ".oya.lock"):
        marker.unlink()
    (repo / "c.py").write_text("def c_function():\n    return 3\n")
    done = oya_build(repo, out, cache)
    assert done.returncode == 0, done.stderr
    assert (out / "site" / "files" / "c.py.html").is_file()
    assert (out / OUTPUT_MARKER).is_file() and (out / "site" / SITE_MARKER).is_file()

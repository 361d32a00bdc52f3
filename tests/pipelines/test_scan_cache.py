"""A rebuild takes files whose stat is unchanged from the previous index (``oya.scanning.scan_cache``)
instead of reading them, and still sees every edit: the scan equals a scan from scratch."""

from __future__ import annotations

import os
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from oya.scanning import scan_cache, secret_rules
from oya.scanning.reader import scan_repository
from oya.scanning.scan_cache import CACHE_FILE, StatCache
from pipelines.build import run_build

CANARY = "zq8" + "Vb3xKp" + "Tn4Lw7"  # assembled, so this file holds no secret


@pytest.fixture(autouse=True)
def _short_racy_window(monkeypatch: pytest.MonkeyPatch) -> None:
    """A 50 ms window instead of 2 s, so the tests need not wait 2 s after writing files (a
    file's ctime cannot be set into the past)."""
    monkeypatch.setattr(scan_cache, "RACY_NS", 50_000_000)


def _scan(repo: Path, out: Path) -> tuple[Any, StatCache]:
    known = StatCache(repo, out)
    return scan_repository(repo, known=known), known


def _built(sample_repo: Path, tmp_path: Path) -> Path:
    (sample_repo / "settings.yaml").write_text(f"password: {CANARY}\nname: shop\nport: 80\nmode: on\n")
    time.sleep(0.1)  # past the racy window
    out = tmp_path / "idx"
    run_build(sample_repo, out, embedder="hashing", cache_dir=tmp_path / "cache")
    assert (out / CACHE_FILE).is_file()
    return out


def test_unchanged_files_come_from_the_index_and_an_edit_shows(sample_repo: Path, tmp_path: Path) -> None:
    out = _built(sample_repo, tmp_path)
    scanned, known = _scan(sample_repo, out)
    assert scanned == scan_repository(sample_repo)  # redaction counts and texts included
    assert known.hits == len(scanned.files) > 5
    assert any(f.redactions for f in scanned.files)

    # an edit keeping the size and the modification time: only the ctime shows it
    utils = sample_repo / "inventory" / "utils.py"
    before = utils.stat()
    utils.write_text(utils.read_text().replace("def slugify", "def slugifx"))
    os.utime(utils, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert utils.stat().st_size == before.st_size and utils.stat().st_mtime_ns == before.st_mtime_ns
    scanned, known = _scan(sample_repo, out)
    assert scanned == scan_repository(sample_repo)
    assert "def slugifx" in next(f.text for f in scanned.files if f.path == "inventory/utils.py")
    assert known.hits == len(scanned.files) - 1


def test_a_file_changed_close_to_the_recording_scan_is_read_again(sample_repo: Path, tmp_path: Path) -> None:
    out = _built(sample_repo, tmp_path)
    _, known = _scan(sample_repo, out)
    rel = "inventory/utils.py"
    size, mtime, ctime, ino = known.previous[rel][:4]
    # the same stat as recorded (a second edit in the same timestamp tick would look like this)
    same = SimpleNamespace(st_size=size, st_mtime_ns=mtime, st_ctime_ns=ctime, st_ino=ino)
    assert known.get(rel, same) is not None  # written well before the scan: trusted
    window = scan_cache.RACY_NS
    known.scanned_at = max(mtime, ctime) + window - 1  # the scan came less than a window after it
    assert known.get(rel, same) is None
    known.scanned_at = max(mtime, ctime) + window
    assert known.get(rel, same) is not None


def test_another_repository_or_no_record_reads_every_file(sample_repo: Path, tmp_path: Path) -> None:
    out = _built(sample_repo, tmp_path)
    moved = sample_repo.rename(tmp_path / "moved")
    _, known = _scan(moved, out)
    assert known.hits == 0
    (out / CACHE_FILE).write_text("{not json")
    _, known = _scan(moved, out)
    assert known.hits == 0


def test_a_record_made_under_other_secret_rules_is_not_used(
    sample_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rules decide what a file's text is after redaction; they are not in ``reuse_key``."""
    out = _built(sample_repo, tmp_path)
    rules = Path(str(secret_rules.__file__)).read_bytes()
    assert scan_cache.code_key(rules) != scan_cache.code_key(rules + b"\n# one more rule\n")
    monkeypatch.setattr(scan_cache, "CODE_KEY", scan_cache.code_key(rules + b"\n# one more rule\n"))
    _, known = _scan(sample_repo, out)
    assert known.hits == 0

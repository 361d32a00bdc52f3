"""The site's one-off preparations, done ahead in a child (``oya.site.prepare``): the lock it holds
for its whole life, and that what it caches is all the site step would compress — in the same bytes.

npm and the model export are replaced by folders of small files laid out as they lay theirs out;
the compression, the cache, the lock and the child process are the real ones.
"""

from __future__ import annotations

import fcntl
import os
import sys
import threading
import time
import zipfile
from pathlib import Path

import brotli
import pytest

from oya.embedding import model_export
from oya.site import assets, prepare, vendor
from oya.site.assets import precompress
from oya.site.prepare import compressed_dir, start_preparation, stop_preparation, wait_for_preparation
from oya.site.vendor import MODEL_FILES, RUNTIME_FILES, copy_model, copy_runtime


def _held(cache: Path) -> bool:
    with open(cache / prepare.LOCK_NAME, "rb") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(handle, fcntl.LOCK_UN)
        return False


def test_the_lock_is_held_from_the_start_until_the_child_ends(tmp_path: Path) -> None:
    sleeper = [sys.executable, "-c", "import time; time.sleep(1.5)"]
    child = start_preparation(tmp_path, command=sleeper)
    assert child is not None
    assert _held(tmp_path)  # at once: the parent took it before the child started
    assert start_preparation(tmp_path, command=sleeper) is None  # one child per cache folder
    # its own process group (stopped whole) in the build's session: with autogroup scheduling a
    # session of its own would get an equal share of the CPU whatever its nice value
    assert os.getpgid(child.pid) == child.pid and os.getsid(child.pid) == os.getsid(0)
    waited = wait_for_preparation(tmp_path)
    assert child.poll() == 0 and waited > 0.5 and not _held(tmp_path)
    assert wait_for_preparation(tmp_path) < 0.5  # nothing runs: no wait


def test_a_failed_build_ends_the_child_and_frees_the_lock(tmp_path: Path) -> None:
    child = start_preparation(tmp_path, command=[sys.executable, "-c", "import time; time.sleep(60)"])
    assert child is not None and _held(tmp_path)
    t0 = time.perf_counter()
    stop_preparation(child)
    assert child.poll() is not None and time.perf_counter() - t0 < 10 and not _held(tmp_path)


def test_a_child_that_ignores_the_stop_is_killed(tmp_path: Path) -> None:
    """A child that inherited SIGTERM ignored (or blocked) is killed after the grace: the build ends."""
    ready = tmp_path / "ignoring"
    code = f"import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); open({str(ready)!r}, 'w'); time.sleep(60)"
    child = start_preparation(tmp_path, command=[sys.executable, "-c", code])
    assert child is not None
    deadline = time.perf_counter() + 30
    while not ready.exists() and time.perf_counter() < deadline:
        time.sleep(0.05)
    assert ready.exists()
    t0 = time.perf_counter()
    stop_preparation(child)
    assert child.returncode == -9 and time.perf_counter() - t0 < prepare.STOP_GRACE_S + 5
    assert not _held(tmp_path)


def _fake_install(root: Path) -> tuple[Path, Path]:
    """node_modules with every runtime file, and an exported model folder, each small but compressible."""
    modules, model = root / "node_modules", root / "model" / "all-MiniLM-L6-v2"
    for i, (src, _, _) in enumerate(RUNTIME_FILES):
        path = modules / src
        path.parent.mkdir(parents=True, exist_ok=True)
        if src.endswith(".zip"):  # the standard library the site trims
            with zipfile.ZipFile(path, "w") as packed:
                packed.writestr("json/__init__.py", "import re\n" * 300)
        else:
            path.write_bytes(f"file {i} ".encode() * 400)
    for i, rel in enumerate(MODEL_FILES):
        (model / rel).parent.mkdir(parents=True, exist_ok=True)
        (model / rel).write_bytes(f"model part {i} ".encode() * 300)
    return modules, model


def test_what_the_child_caches_is_all_the_site_step_compresses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    modules, model = _fake_install(tmp_path)
    monkeypatch.setattr(vendor, "ensure_vendor", lambda cache_root: modules)
    monkeypatch.setattr(model_export, "export_query_model", lambda cache_root: model)
    cache = tmp_path / "cache"
    prepare.prepare(cache, workers=2)

    # the site step afterwards: its runtime files are all found compressed in the cache
    def no_slow_compression(data: bytes, encoding: str, best: bool) -> bytes:
        assert not best, "a runtime file was compressed again"
        return compress(data, encoding, best)

    compress = assets._compress
    monkeypatch.setattr(assets, "_compress", no_slow_compression)
    site = tmp_path / "site"
    copy_runtime(modules, site)
    copy_model(model, site)
    totals = precompress(site, compressed_dir(cache))
    runtime = [p for p in site.rglob("*") if p.is_file() and p.suffix not in (".br", ".gz")]
    assert totals["files"] == len(runtime) == len(RUNTIME_FILES) + len(MODEL_FILES)
    for path in runtime:  # the very bytes Brotli 11 makes
        packed = path.with_name(path.name + ".br").read_bytes()
        assert brotli.decompress(packed) == path.read_bytes()
        assert packed == brotli.compress(path.read_bytes(), quality=11, lgwin=24)


def test_two_processes_export_the_model_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[float] = []

    def slow_export(root: Path) -> None:  # stands in for the minute-long ONNX export
        calls.append(time.perf_counter())
        time.sleep(0.5)
        (root / model_export.MODEL_NAME / "onnx").mkdir(parents=True)
        for rel in (model_export.QUANTIZED, model_export.FP32):
            (root / model_export.MODEL_NAME / rel).write_bytes(b"onnx")
        (root / model_export._DONE).write_text("done\n")

    monkeypatch.setattr(model_export, "_export", slow_export)
    found: list[Path] = []
    threads = [
        threading.Thread(target=lambda: found.append(model_export.export_query_model(tmp_path)))
        for _ in range(2)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(calls) == 1 and len(found) == 2 and found[0] == found[1]

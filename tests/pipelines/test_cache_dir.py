"""``oya build --cache-dir`` reaches every use of the cache: the embedding cache, the exported
query model (the embedder and the site) and the browser runtime's npm packages. The default cache
(``$OYA_CACHE_DIR``) is pointed at an empty folder that must stay empty."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from oya.embedding.embedder import MINILM_INT8_ID
from oya.embedding.model_export import MODEL_NAME, QUANTIZED, export_query_model
from oya.settings import CachePaths, default_cache_dir
from oya.site.assets import site_file
from oya.site.vendor import ensure_vendor

ROOT = Path(__file__).resolve().parents[2]


def test_cache_paths_resolve_once_from_the_flag_or_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OYA_CACHE_DIR", str(tmp_path / "env"))
    assert CachePaths.resolve().root == tmp_path / "env" == default_cache_dir()
    assert CachePaths.resolve("").root == tmp_path / "env"
    paths = CachePaths.resolve(tmp_path / "flag")
    assert paths.root == tmp_path / "flag"
    assert paths.embeddings("a/b c") == tmp_path / "flag" / "embeddings" / "a_b_c.sqlite"
    monkeypatch.delenv("OYA_CACHE_DIR")
    assert CachePaths.resolve().root == Path.home() / ".cache" / "oya"


@pytest.mark.slow
def test_cache_dir_reaches_every_use(sample_repo: Path, tmp_path: Path) -> None:
    # the machine's cache lends the npm packages and the exported model (filled once, versioned)
    shared = default_cache_dir()
    npm = ensure_vendor(shared).parent
    models = export_query_model(shared).parent.parent
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "npm").symlink_to(npm, target_is_directory=True)
    (cache / "models").symlink_to(models, target_is_directory=True)
    default = tmp_path / "default-cache"
    default.mkdir()

    out = tmp_path / "out"
    args = ["build", str(sample_repo), "--out", str(out), "--embedder", "minilm", "--site", "-q"]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OYA_CACHE_DIR": str(default)}
    done = subprocess.run(
        [sys.executable, "-m", "oya", *args, "--cache-dir", str(cache)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert sorted(default.iterdir()) == []  # nothing resolved the default cache
    assert CachePaths(cache).embeddings(MINILM_INT8_ID).is_file()  # the embedding cache
    assert (cache / ".npm.lock").is_file()  # ensure_vendor ran against --cache-dir
    # the site's copy of the query model (its folder content-hashed, found through the manifest)
    assert site_file(out / "site", f"models/{MODEL_NAME}/{QUANTIZED}").is_file()

"""The site's last build step (content-hashed names, .br/.gz copies) and how `oya serve` sends them.

A real folder is post-processed by ``oya.site.assets.finish_assets`` and served by ``oya serve``'s
server on 127.0.0.1; requests go through http.client so the Accept-Encoding header is ours.
"""

from __future__ import annotations

import gzip
import http.client
import json
import random
import threading
from collections.abc import Iterator
from pathlib import Path

import brotli
import pytest

from oya.site import assets
from oya.site.assets import finish_assets, resolve, site_file
from oya.site.serve import IMMUTABLE, REVALIDATE, accepted_encodings, make_server

WASM = b"\0asm" + bytes(range(256)) * 400  # compressible, 100 kB
PAGE = "<!doctype html><title>wiki</title>" + "<p>same words again</p>" * 200


def make_site(root: Path) -> Path:
    site = root / "site"
    (site / "vendor" / "pyodide").mkdir(parents=True)
    (site / "vendor" / "pyodide" / "pyodide.asm.wasm").write_bytes(WASM)
    (site / "vendor" / "pyodide" / "pyodide.mjs").write_text("export const x = 1;\n" * 100, encoding="utf-8")
    (site / "vendor" / "mermaid").mkdir()
    (site / "vendor" / "mermaid" / "mermaid.min.js").write_text("var m = 1;\n" * 100, encoding="utf-8")
    (site / "vendor" / "oya_core-0.1.0-py3-none-any.whl").write_bytes(b"PK" + b"\0" * 100)
    (site / "models" / "all-MiniLM-L6-v2" / "onnx").mkdir(parents=True)
    (site / "models" / "all-MiniLM-L6-v2" / "onnx" / "model_quantized.onnx").write_bytes(bytes(2000))
    (site / "bundle").mkdir()
    (site / "bundle" / "index.json").write_text(json.dumps({"chunks": list(range(500))}), encoding="utf-8")
    (site / "bundle" / "shard-1.bin").write_bytes(bytes(3000))  # any file the bundle format adds
    (site / "index.html").write_text(PAGE, encoding="utf-8")
    return site


@pytest.fixture()
def built(tmp_path: Path) -> tuple[Path, dict]:
    site = make_site(tmp_path)
    manifest = {
        "wheel": "vendor/oya_core-0.1.0-py3-none-any.whl",
        "model": "models/all-MiniLM-L6-v2",
        "bundle": {"path": "bundle/", "index": "index.json"},
    }
    finish_assets(site, manifest, tmp_path / "cache", None)
    (site / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return site, manifest


def test_units_get_content_hashed_names_and_the_manifest_follows(built: tuple[Path, dict]) -> None:
    site, manifest = built
    assets = manifest["assets"]
    assert set(assets) == {
        "vendor/pyodide/",
        "vendor/oya_core-0.1.0-py3-none-any.whl",
        "models/all-MiniLM-L6-v2/",
        "bundle/",
    }
    assert "vendor/mermaid/" not in assets and (site / "vendor/mermaid/mermaid.min.js").is_file()
    assert not (site / "vendor/pyodide").exists() and not (site / "bundle").exists()
    pyodide = assets["vendor/pyodide/"]
    assert (
        pyodide.startswith("vendor/pyodide.") and (site / pyodide / "pyodide.asm.wasm").read_bytes() == WASM
    )
    assert manifest["wheel"].endswith(".whl") and (site / manifest["wheel"]).is_file()
    assert (site / manifest["model"] / "onnx" / "model_quantized.onnx").is_file()
    assert (site / manifest["bundle"]["path"] / "shard-1.bin").is_file()
    assert site_file(site, "bundle/index.json") == site / manifest["bundle"]["path"] / "index.json"
    assert resolve(assets, "vendor/pyodide/x/y.js") == pyodide + "x/y.js"
    assert resolve(assets, "vendor/pyodide-other/a") == "vendor/pyodide-other/a"  # a prefix, not a folder


def test_the_hash_follows_the_content(tmp_path: Path) -> None:
    names = []
    for run, wasm in enumerate((WASM, WASM, WASM + b"!")):
        site = make_site(tmp_path / str(run))
        (site / "vendor/pyodide/pyodide.asm.wasm").write_bytes(wasm)
        manifest: dict = {"bundle": None}
        finish_assets(site, manifest, None, None)
        names.append(manifest["assets"]["vendor/pyodide/"])
    assert names[0] == names[1] != names[2]


def test_compressed_copies_are_the_same_bytes(built: tuple[Path, dict]) -> None:
    site, manifest = built
    wasm = site / manifest["assets"]["vendor/pyodide/"] / "pyodide.asm.wasm"
    assert brotli.decompress(wasm.with_name(wasm.name + ".br").read_bytes()) == WASM
    assert gzip.decompress(wasm.with_name(wasm.name + ".gz").read_bytes()) == WASM
    assert gzip.decompress((site / "index.html.gz").read_bytes()).decode() == PAGE
    wheel = site / manifest["wheel"]
    assert not wheel.with_name(wheel.name + ".br").exists()  # .whl: already compressed, left alone


def test_an_unchanged_file_reuses_the_previous_sites_copies(tmp_path: Path) -> None:
    old = make_site(tmp_path / "old")
    finish_assets(old, {}, None, None)
    new = make_site(tmp_path / "new")
    finish_assets(new, {}, None, old)
    assert (new / "index.html.br").stat().st_ino == (old / "index.html.br").stat().st_ino


def test_the_seconds_of_the_runtimes_compression_are_reported_apart(tmp_path: Path) -> None:
    """A first build's summary says what the runtime's slow, cached compression cost (and the rest)."""
    seconds: dict[str, float] = {}
    finish_assets(make_site(tmp_path), {}, tmp_path / "cache", None, seconds)
    assert set(seconds) == {"compress_runtime", "compress_site"}
    assert seconds["compress_runtime"] > 0 and seconds["compress_site"] > 0


def test_near_random_runtime_data_gets_brotli_10_and_the_rest_11(tmp_path: Path) -> None:
    """Quality 11 only where its deeper search pays: int8 weights-like bytes (zlib -1 keeps ~75%)
    get quality 10 (on the real model 49 bytes more in 3/4 of the time); WASM-like bytes keep 11."""
    rng = random.Random(0)
    weights = bytes(max(0, min(255, int(rng.gauss(128, 12)))) for _ in range(300_000))
    assert brotli.compress(weights, quality=10, lgwin=24) != brotli.compress(weights, quality=11, lgwin=24)
    cache = tmp_path / "cache"
    for data, quality in ((weights, 10), (WASM, 11)):
        packed = assets._packed(data, "br", cache, runtime=True)
        assert packed == brotli.compress(data, quality=quality, lgwin=24)
        assert assets._packed(data, "br", cache, runtime=True) == packed  # cached under its recipe
    assert assets.brotli_quality(weights, best=False) == 6  # pages: fast, whatever their bytes


@pytest.fixture()
def server(built: tuple[Path, dict]) -> Iterator[tuple[int, dict]]:
    site, manifest = built
    httpd = make_server(site, "127.0.0.1", 0)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield int(httpd.server_address[1]), manifest
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


def fetch(port: int, path: str, **headers: str) -> tuple[http.client.HTTPResponse, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    conn.request("GET", path, headers={"Host": f"127.0.0.1:{port}", **headers})
    response = conn.getresponse()
    body = response.read()
    conn.close()
    return response, body


def test_oya_serve_sends_the_precompressed_copy_the_browser_accepts(server: tuple[int, dict]) -> None:
    port, manifest = server
    path = "/" + manifest["assets"]["vendor/pyodide/"] + "pyodide.asm.wasm"
    br, body = fetch(port, path, **{"Accept-Encoding": "gzip, deflate, br, zstd"})
    assert br.headers["Content-Encoding"] == "br" and brotli.decompress(body) == WASM
    assert br.headers["Content-Type"] == "application/wasm" and len(body) < len(WASM) / 2
    assert br.headers["Vary"] == "Accept-Encoding"
    gz, body = fetch(port, path, **{"Accept-Encoding": "gzip;q=1, br;q=0"})
    assert gz.headers["Content-Encoding"] == "gzip" and gzip.decompress(body) == WASM
    plain, body = fetch(port, path)
    assert plain.headers["Content-Encoding"] is None and body == WASM
    page, body = fetch(port, "/", **{"Accept-Encoding": "br"})
    assert page.headers["Content-Type"].startswith("text/html") and brotli.decompress(body).decode() == PAGE
    assert "Content-Security-Policy" in page.headers


def test_hashed_names_are_cached_for_good_and_the_rest_revalidated(server: tuple[int, dict]) -> None:
    port, manifest = server
    hashed, _ = fetch(port, "/" + manifest["bundle"]["path"] + "index.json", **{"Accept-Encoding": "br"})
    assert hashed.status == 200 and hashed.headers["Cache-Control"] == IMMUTABLE
    page, _ = fetch(port, "/index.html", **{"Accept-Encoding": "br"})
    assert page.headers["Cache-Control"] == REVALIDATE
    again, body = fetch(
        port, "/index.html", **{"Accept-Encoding": "br", "If-Modified-Since": page.headers["Last-Modified"]}
    )
    assert again.status == 304 and body == b""
    mermaid, _ = fetch(port, "/vendor/mermaid/mermaid.min.js")
    assert mermaid.status == 200 and mermaid.headers["Cache-Control"] == REVALIDATE


def test_accepted_encodings() -> None:
    assert accepted_encodings("gzip, deflate, br, zstd") == {"gzip", "deflate", "br", "zstd"}
    assert accepted_encodings("br;q=0, gzip;q=0.5") == {"gzip"}
    assert accepted_encodings(None) == set()


def test_the_stdlib_zip_is_trimmed_stored_once(tmp_path: Path) -> None:
    import zipfile

    from oya.site.stdlib_trim import trimmed_stdlib

    src = tmp_path / "python_stdlib_pyc.zip"
    with zipfile.ZipFile(src, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("pkg/b.pyc", b"y" * 5000)
        z.writestr("a.pyc", b"x" * 5000)
        z.writestr("unused.pyc", b"z" * 5000)
    out = trimmed_stdlib(src, ["a", "pkg.b"])
    with zipfile.ZipFile(out) as z:
        assert [i.compress_type for i in z.infolist()] == [zipfile.ZIP_STORED] * 2
        assert z.read("pkg/b.pyc") == b"y" * 5000 and z.namelist() == ["a.pyc", "pkg/b.pyc"]
    made = out.stat().st_mtime_ns
    assert trimmed_stdlib(src, ["pkg.b", "a"]) == out and out.stat().st_mtime_ns == made  # not made again
    assert trimmed_stdlib(src, ["a"]) != out  # another list, another file

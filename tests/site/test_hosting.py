"""Hosting as people host: the built site under a sub-path, from a plain static server and from
`oya serve`, and opened from disk — in real headless Chromium.

The servers are bench/browser_harness.py's (the same ones the benchmark measures): `oya serve`'s
handler or the standard library's plain one, under ``/team/wiki/`` with everything outside it 404.
No playwright route is set, so the pages run as they would for a reader; nothing beyond 127.0.0.1
can resolve (the harness's offline flags) and any attempt is recorded and fails the test.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bench.browser_harness import ANSWERED, browser, serve

pytestmark = pytest.mark.slow
PREFIX = "/team/wiki/"
QUESTION = "How is stock removed when an order ships?"
# fetched for an answer, MBs each on a plain host unless fetched compressed
LARGE_FILES = (
    "pyodide.asm.wasm",
    "pyodide.asm.mjs",
    "python_stdlib.zip",
    "ort-wasm-simd-threaded.wasm",
    "model_quantized.onnx",
    "tokenizer.json",
)
# of those, the ones a plain host sends as their Brotli copies, decoded in the worker (the rest: .gz)
BROTLI_FILES = frozenset({"pyodide.asm.wasm", "pyodide.asm.mjs", "python_stdlib.zip"})


@pytest.mark.parametrize("server", ["plain", "oya"])
def test_the_site_answers_under_a_sub_path(
    ask_site: Any, playwright_instance: Any, tmp_path: Path, server: str
) -> None:
    with (
        serve(ask_site.root, server, PREFIX) as served,
        browser(playwright_instance, tmp_path / "p", None) as (
            _ctx,
            page,
            offsite,
        ),
    ):
        assert served.url.endswith(PREFIX)
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(served.url + "index.html?ask=" + QUESTION.replace(" ", "+"))
        full = page.wait_for_selector(ANSWERED + ":not(.ask-partial)", timeout=240_000)
        assert full.query_selector(".ask-error") is None, full.inner_text()
        # asked cold, it was first answered without the query model; the full answer says
        # whether the semantic channel kept that answer's lead or changed it
        refined = full.query_selector(".ask-refined")
        assert refined is not None and refined.inner_text().startswith("Semantic search "), full.inner_text()
        cited = [a.get_attribute("href") for a in full.query_selector_all("a.ask-cite")]
        assert cited, full.inner_text()
        # the answer's links stay under the sub-path and lead to real pages
        first = page.evaluate("h => new URL(h, document.baseURI).pathname", cited[0])
        assert first.startswith(PREFIX), first
        transfers = served.wire.take()
    assert not offsite and not errors, (offsite, errors)
    missing = [t.path for t in transfers if t.status == 404 and not t.path.endswith("favicon.ico")]
    assert missing == [], missing
    assert all(t.path.startswith(PREFIX) for t in transfers if t.status < 400)
    # the runtime's and the model's large files: `oya serve` sends the build's Brotli copy with
    # Content-Encoding; from the plain server the page fetches Pyodide's .br copies and decodes them
    # in the worker (site_template/static/ask/brotli.js), the rest's .gz copies and inflates them
    # (site_template/static/ask/decoded.js), never the file as it is
    decoder = [t for t in transfers if "/vendor/brotli." in t.path]
    brotli_bytes = gzip_bytes = 0
    for name in LARGE_FILES:
        sent = [t for t in transfers if t.path.rsplit("/", 1)[-1] in (name, name + ".gz", name + ".br")]
        assert len(sent) == 1, (name, sent)
        path = ask_site.root / sent[0].path[len(PREFIX) :]
        if server == "oya":
            assert sent[0].path.endswith(name) and sent[0].encoding == "br", sent
            continue
        copy = ".br" if name in BROTLI_FILES else ".gz"
        assert sent[0].path.endswith(name + copy) and sent[0].encoding == "", sent
        # the copy's bytes and the headers: far less than the file
        assert path.stat().st_size <= sent[0].bytes < path.stat().st_size + 4096, sent
        assert sent[0].bytes < 0.9 * path.with_suffix("").stat().st_size, sent
        if name in BROTLI_FILES:
            brotli_bytes += sent[0].bytes
            gzip_bytes += path.with_suffix(".gz").stat().st_size
    if server == "oya":
        assert decoder == [], decoder  # the browser decodes what `oya serve` sends
        return
    # the decoder (its JavaScript, its WASM's .gz copy) costs far less than the Brotli copies save
    assert sorted(t.path.rsplit("/", 1)[-1] for t in decoder) == [
        "brotli_dec_wasm.js",
        "brotli_dec_wasm_bg.wasm.gz",
    ]
    decoder_bytes = sum(t.bytes for t in decoder)
    assert decoder_bytes < 150_000, decoder
    assert brotli_bytes + decoder_bytes < gzip_bytes - 500_000, (brotli_bytes, decoder_bytes, gzip_bytes)


def test_opened_from_disk_the_page_says_what_to_do(
    ask_site: Any, playwright_instance: Any, tmp_path: Path
) -> None:
    with browser(playwright_instance, tmp_path / "p", None) as (_ctx, page, offsite):
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto((ask_site.root / "index.html").as_uri())
        notice = page.wait_for_selector("#ask-file-notice", state="visible", timeout=30_000)
        text = notice.inner_text()
        assert "oya serve" in text and str(ask_site.root) in text and "file" in text, text
        page.wait_for_timeout(500)  # nothing else tries to load the panel
        assert page.locator("#ask-panel").count() == 0
    assert not offsite and not errors, (offsite, errors)

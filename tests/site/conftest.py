"""Fixtures for real-browser tests: a site folder with the browser runtime, a loopback static server,
and headless Debian Chromium driven by Python's playwright that can reach nothing but 127.0.0.1.

Chromium is required, not optional: a missing browser fails the tests with the command that installs
it, so CI never passes by skipping them.
"""

from __future__ import annotations

import json
import shutil
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from bench.browser_harness import OFFLINE_CHROMIUM_ARGS, route_test_hooks
from oya.embedding.model_export import export_query_model
from oya.settings import default_cache_dir
from oya.site.core_wheel import build_core_wheel
from oya.site.serve import SiteRequestHandler, SiteServer
from oya.site.vendor import copy_model, copy_runtime, ensure_vendor
from oya.system_deps import find_chromium, missing_chromium_message

REPO_ROOT = Path(__file__).resolve().parents[2]
SAMPLE_REPO = REPO_ROOT / "data" / "sample_repo"
CHROMIUM_ARGS = list(OFFLINE_CHROMIUM_ARGS)

TEST_PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>oya runtime test</title>
<link rel="icon" href="data:,"></head><body><p>runtime test page</p></body></html>
"""

# Collected by the tests, printed at the end of the run and written to test-artifacts/.
TIMINGS: dict[str, Any] = {}


@dataclass(frozen=True)
class SiteFolder:
    root: Path
    wheel_name: str
    sizes: dict[str, int]
    prepare_seconds: dict[str, float]


@dataclass(frozen=True)
class AskSite:
    root: Path
    index_dir: Path
    manifest: dict[str, Any]
    build_seconds: float

    def core_confidence(self, question: str) -> Any:
        """The confidence the CLI's core gives ``question`` on this site's index: the banner must
        show the same level, disclaimer and gaps (one structured answer, two renderings)."""
        from oya.query.searcher import Searcher

        with Searcher.open(self.index_dir) as searcher:
            return searcher.search(question).confidence


@pytest.fixture(scope="session")
def ask_site(tmp_path_factory: pytest.TempPathFactory) -> AskSite:
    """The sample repo indexed with the real MiniLM embedder and built into a full site (runtime,
    query model, core wheel, bundle); shared by test_ask_panel.py and test_browser_safety.py."""
    from test_pages import build_site

    from pipelines.build import run_build

    work = tmp_path_factory.mktemp("ask_site")
    index_dir = work / "index"
    t0 = time.perf_counter()
    run_build(SAMPLE_REPO, index_dir, embedder="minilm")
    build_site(index_dir, work / "site")
    manifest = json.loads((work / "site" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["model"] and manifest["bundle"] and manifest["wheel"], manifest
    return AskSite(work / "site", index_dir, manifest, time.perf_counter() - t0)


@pytest.fixture(scope="session")
def runtime_site(tmp_path_factory: pytest.TempPathFactory) -> SiteFolder:
    """A site folder with vendor runtimes, the int8 query model, the core wheel and the static JS.

    npm packages and the model export are cached (versioned) in the default Oya cache, so only the
    first run on a machine pays for them.
    """
    root = tmp_path_factory.mktemp("site")
    cache = default_cache_dir()
    t0 = time.perf_counter()
    vendor = ensure_vendor(cache)
    t1 = time.perf_counter()
    model_dir = export_query_model(cache)
    t2 = time.perf_counter()
    sizes = copy_runtime(vendor, root)
    sizes["model"] += copy_model(model_dir, root)
    wheel = build_core_wheel(root / "wheels")
    sizes["wheel"] = wheel.stat().st_size
    shutil.copytree(REPO_ROOT / "site_template" / "static", root / "static")
    (root / "index.html").write_text(TEST_PAGE, encoding="utf-8")
    prepare = {"ensure_vendor_s": round(t1 - t0, 2), "export_query_model_s": round(t2 - t1, 2)}
    TIMINGS["prepare"] = prepare
    TIMINGS["site_bytes"] = sizes
    return SiteFolder(root=root, wheel_name=wheel.name, sizes=sizes, prepare_seconds=prepare)


class _Handler(SiteRequestHandler):  # `oya serve`'s MIME types and quiet log
    def __init__(self, *args: Any, missing: list[str], **kwargs: Any) -> None:
        self._missing = missing
        super().__init__(*args, **kwargs)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        if code == 404:
            self._missing.append(self.path)
        super().send_error(code, message, explain)


@dataclass
class StaticServer:
    url: str
    missing: list[str] = field(default_factory=list)


@pytest.fixture(scope="session")
def site_server(runtime_site: SiteFolder) -> Iterator[StaticServer]:
    """The site folder over HTTP on 127.0.0.1 (random port); records every 404."""
    missing: list[str] = []
    handler = partial(_Handler, directory=str(runtime_site.root), missing=missing)
    httpd = SiteServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield StaticServer(url=f"http://127.0.0.1:{httpd.server_address[1]}/", missing=missing)
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


@dataclass
class BrowserPage:
    page: Any
    blocked: list[str] = field(default_factory=list)
    console: list[str] = field(default_factory=list)


@pytest.fixture(scope="session")
def playwright_instance() -> Iterator[Any]:
    if find_chromium() is None:
        pytest.fail(
            f"real-browser tests need Chromium: {missing_chromium_message()}. Never run `playwright install`.",
            pytrace=False,
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        yield p


def _route_offline(blocked: list[str], route: Any) -> None:
    url = route.request.url
    parts = urlsplit(url)
    if parts.scheme in ("data", "blob") or parts.hostname == "127.0.0.1":
        route.continue_()
    else:
        blocked.append(url)
        route.abort()


@pytest.fixture
def browser_page(playwright_instance: Any, tmp_path: Path) -> Iterator[BrowserPage]:
    """A fresh (cold-cache) headless Chromium page that can reach only 127.0.0.1.

    Every request elsewhere is aborted and recorded; the test fails if any happened. The Ask panel's
    test hooks can be imported (``bench.browser_harness.load_test_hooks``). The site's service worker
    is blocked: a request it answers reaches neither these routes (the test hooks) nor the server's
    log the tests read; test_offline.py and test_hosting.py run the site with it.
    """
    context = playwright_instance.chromium.launch_persistent_context(
        str(tmp_path / "profile"),
        executable_path=find_chromium(),
        headless=True,
        args=CHROMIUM_ARGS,
        service_workers="block",
    )
    result = BrowserPage(page=None)
    context.route("**/*", partial(_route_offline, result.blocked))
    route_test_hooks(context)  # static/ask/test_hooks.js: bench/ask_test_hooks.js, no site holds it
    page = context.pages[0] if context.pages else context.new_page()
    page.set_default_timeout(120_000)
    page.on("console", lambda msg: result.console.append(f"{msg.type}: {msg.text}"))
    page.on("pageerror", lambda exc: result.console.append(f"pageerror: {exc}"))
    result.page = page
    try:
        yield result
    finally:
        context.close()
    assert not result.blocked, f"the page tried to reach the network beyond loopback: {result.blocked}"


@pytest.fixture(scope="session")
def runtime_timings() -> dict[str, Any]:
    """Timings and sizes the tests measured; printed at the end of the run."""
    return TIMINGS


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not TIMINGS:
        return
    terminalreporter.section("browser runtime timings and sizes")
    for key, value in TIMINGS.items():
        terminalreporter.write_line(f"{key}: {json.dumps(value)}")
    out = REPO_ROOT / "test-artifacts"
    out.mkdir(exist_ok=True)
    (out / "browser_runtime.json").write_text(json.dumps(TIMINGS, indent=2) + "\n", encoding="utf-8")

"""Offline once visited: the site's service worker (site_template/sw.js, written by oya.site.offline).

In real headless Chromium, as test_hosting.py hosts the site (bench/browser_harness.py's servers, no
playwright route, nothing beyond 127.0.0.1): a reader visits a page, asks a question, opens a cited
page; then the server stops and the browser goes offline (both: Chromium's offline switch does not
reach a service worker's own fetches, and a stopped server leaves nothing to reach). Reloading the
visited page, opening another visited page with a question and asking it must still work, the
answer computed in the page from the cached runtime, model and shards; a page never visited gets the
worker's offline page. Without the worker the reload fails: nothing would answer it.

A second browser test puts a new build's sw.js in place: the new worker takes over, deletes the
earlier build's cache and the hashed files the new build no longer ships, and leaves other sites'
caches on the same origin alone. The worker's pure routing is tested in Node (tests/js/offline.test.js).
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from bench.browser_harness import ANSWERED, browser, serve
from oya.errors import SiteError
from oya.site import offline
from oya.site.offline import build_facts, write_service_worker

QUESTION = "How is stock removed when an order ships?"
CONTROLLED = "() => navigator.serviceWorker.controller !== null"
CACHES = "caches.keys()"
HAS_CACHE = "n => caches.keys().then(k => k.includes(n))"
CACHED_URLS = "n => caches.open(n).then(c => c.keys()).then(ks => ks.map(r => r.url))"


def _manifest(**changes: Any) -> dict[str, Any]:
    manifest: dict[str, Any] = {
        "built_at": "2026-11-28T02:00:00Z",
        "assets": {"bundle/": "bundle.0123456789/", "vendor/pyodide/": "vendor/pyodide.abcdef0123/"},
    }
    return {**manifest, **changes}


def _site(root: Path) -> Path:
    (root / "static").mkdir(parents=True)
    (root / "static" / "site.js").write_text("// v1\n", encoding="utf-8")
    (root / "pages.json").write_text('{"pages": {"index.html": "k1"}}\n', encoding="utf-8")
    return root


def test_the_build_writes_the_worker_with_its_id_and_hashed_names(tmp_path: Path) -> None:
    site = _site(tmp_path / "site")
    path = write_service_worker(site, _manifest())
    assert path == site / "sw.js"
    text = path.read_text(encoding="utf-8")
    assert offline.BUILD_LINE not in text
    line = next(x for x in text.splitlines() if x.startswith("const BUILD = "))
    facts = json.loads(line.removeprefix("const BUILD = ").split(";", 1)[0])
    assert facts["hashed"] == ["bundle.0123456789/", "vendor/pyodide.abcdef0123/"]
    assert facts == build_facts(site, _manifest())
    # the same site built again is the same worker, and keeps the readers' caches
    assert build_facts(site, _manifest(built_at="2026-11-28T03:00:00Z")) == facts
    # what a reader fetches changed: another worker, with its own caches
    other = _manifest(
        assets={"bundle/": "bundle.9999999999/", "vendor/pyodide/": "vendor/pyodide.abcdef0123/"}
    )
    assert build_facts(site, other)["id"] != facts["id"]
    (site / "pages.json").write_text('{"pages": {"index.html": "k2"}}\n', encoding="utf-8")
    assert build_facts(site, _manifest())["id"] not in (facts["id"], build_facts(site, other)["id"])
    paged = build_facts(site, _manifest())["id"]
    (site / "static" / "site.js").write_text("// v2\n", encoding="utf-8")
    assert build_facts(site, _manifest())["id"] not in (facts["id"], paged)
    assert build_facts(site, {"built_at": "x"})["hashed"] == []


def test_a_template_without_its_build_line_is_refused(tmp_path: Path, monkeypatch: Any) -> None:
    template = tmp_path / "sw.js"
    template.write_text("// no BUILD here\n", encoding="utf-8")
    monkeypatch.setattr(offline, "SW_TEMPLATE", template)
    with pytest.raises(SiteError, match="must hold the line"):
        write_service_worker(tmp_path / "site", _manifest())


def _until(page: Any, expression: str, arg: Any = None, timeout_s: float = 60) -> None:
    """Poll ``expression`` until it is truthy. (wait_for_function evaluates its predicate with eval,
    which the pages' Content-Security-Policy refuses; page.evaluate is not subject to it.)"""
    deadline = time.monotonic() + timeout_s
    while not page.evaluate(expression, arg):
        assert time.monotonic() < deadline, f"still false after {timeout_s} s: {expression} {arg!r}"
        page.wait_for_timeout(100)


def _answer(page: Any) -> tuple[Any, list[str]]:
    """The panel's complete answer (not the first, partial one) and its citations' URLs."""
    full = page.wait_for_selector(ANSWERED + ":not(.ask-partial)", timeout=240_000)
    assert full.query_selector(".ask-error") is None, full.inner_text()
    cited = [
        page.evaluate("h => new URL(h, document.baseURI).href", a.get_attribute("href"))
        for a in full.query_selector_all("a.ask-cite")
    ]
    assert cited, full.inner_text()
    return full, cited


@pytest.mark.slow
@pytest.mark.parametrize(("server", "prefix"), [("plain", "/team/wiki/"), ("oya", "/")])
def test_a_visited_site_answers_offline(
    ask_site: Any, playwright_instance: Any, tmp_path: Path, server: str, prefix: str
) -> None:
    with browser(playwright_instance, tmp_path / "p", None) as (ctx, page, offsite):
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        with serve(ask_site.root, server, prefix) as served:
            root = served.url
            page.goto(root + "index.html")
            # registered from the page's own path to the root: the site's root, never "/"
            assert page.evaluate("navigator.serviceWorker.ready.then(r => r.scope)") == root
            _until(page, CONTROLLED)
            page.goto(root + "index.html?ask=" + QUESTION.replace(" ", "+"))
            _, online = _answer(page)
            visited = online[0]
            page.goto(visited)
            title = page.title()
        ctx.set_offline(True)  # and the server is gone

        page.reload()
        assert page.title() == title
        assert page.locator("pre.code ol li").count() > 0  # site.js ran, from the cache
        # another visited page, with the question: asked again, answered from the cached engine
        page.evaluate("sessionStorage.clear()")  # no earlier answer restored from the session
        page.goto(root + "index.html?ask=" + QUESTION.replace(" ", "+"))
        full, cited = _answer(page)
        assert cited == online
        assert full.query_selector(".ask-refined") is not None  # the query model answered too
        assert page.locator(".ask-entry").count() == 1
        # a page never visited: the worker's offline page, linking the site's overview
        response = page.goto(root + "architecture.html")
        assert response is not None and response.status == 503
        assert "not available offline" in page.inner_text("body")
        assert page.get_attribute("a", "href") == root + "index.html"
    assert not offsite and not errors, (offsite, errors)


def _linked_copy(site: Path, dest: Path) -> Path:
    """A copy of the built site whose files are hard links (its sw.js is rewritten, not linked)."""
    shutil.copytree(site, dest, copy_function=os.link)
    (dest / "sw.js").unlink()
    shutil.copyfile(site / "sw.js", dest / "sw.js")
    return dest


@pytest.mark.slow
def test_a_new_build_cleans_up_the_earlier_builds_caches(
    ask_site: Any, playwright_instance: Any, tmp_path: Path
) -> None:
    site = _linked_copy(ask_site.root, tmp_path / "site")
    manifest = json.loads((site / "manifest.json").read_text(encoding="utf-8"))
    old_id = build_facts(site, manifest)["id"]
    bundle = manifest["bundle"]["path"]
    shard = bundle + "shards/" + manifest["bundle"]["shards"]["graph"]
    with (
        serve(site, "oya", "/team/wiki/") as served,
        browser(playwright_instance, tmp_path / "p", None) as (ctx, page, offsite),
    ):
        root = served.url
        other = root.replace("/team/wiki/", "/team/other/")
        page.goto(root + "index.html")
        _until(page, CONTROLLED)
        page.reload()  # now through the worker, which keeps the page in this build's cache
        # a hashed file of each kind: the wheel (kept by the next build) and a shard (not kept)
        for rel in (manifest["wheel"], shard):
            assert page.evaluate("u => fetch(u).then(r => r.status)", root + rel) == 200
        put = "([n, u]) => caches.open(n).then(c => c.put(u, new Response('x')))"
        page.evaluate(put, [f"oya {other} pages b0", other + "index.html"])
        files = f"oya {root} files"
        _until(page, "n => caches.open(n).then(c => c.keys()).then(k => k.length == 2)", files)
        old_pages = f"oya {root} pages {old_id}"
        _until(page, HAS_CACHE, old_pages)

        # the next build: a new bundle (the old one is not shipped), the same runtime
        new_manifest = dict(manifest)
        new_manifest["assets"] = {k: v for k, v in manifest["assets"].items() if v != bundle}
        write_service_worker(site, new_manifest)
        new_id = build_facts(site, new_manifest)["id"]
        page.evaluate("navigator.serviceWorker.getRegistration().then(r => r.update())")
        # the new worker installs, then activates and deletes the old caches: seconds, more under load
        _until(page, "n => caches.keys().then(k => !k.includes(n))", old_pages)
        page.reload()  # served by the new worker, kept in its cache
        _until(page, HAS_CACHE, f"oya {root} pages {new_id}")
        after = page.evaluate(CACHES)
        assert f"oya {other} pages b0" in after  # another site's on the same origin
        assert page.evaluate(CACHED_URLS, files) == [root + manifest["wheel"]]
    assert not offsite

"""The wiki and its Ask panel are safe in a real, offline Chromium, and the panel loads lazily.

* Hostile site: the repository of test_pages.py (``<script>``, ``<img onerror>``, ``javascript:``
  links, Mermaid breakers, a 5,000-character line, unicode and URL characters in names) built WITH
  the browser runtime and bundle (hashing embedder, so no query model ships). Its overview, a
  hostile file page, the README page and the architecture page open with no dialog, no page error
  and no CSP violation; every ``pre.mermaid`` becomes an SVG; the hostile strings are visible as
  text; the Ask panel answers a question about the hostile code with its snippets and titles as
  text (no element injected) and citation links that land on existing line anchors, and says that
  semantic search did not run because the site ships no model.
* Lazy loading (the sample site with the real runtime): a fresh page load, and a page where the
  panel is restored open, fetch nothing of Pyodide, the model, the bundle or the wheel; opening
  the panel or focusing its box starts those loads, and asking uses them.

Helpers are shared by import: the hostile repository builder from test_pages.py, the recording
loopback server and the panel helpers from test_ask_panel.py (tests/site is on sys.path: pytest's
default "prepend" import mode and no __init__.py).
"""

from __future__ import annotations

import re
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from test_ask_panel import ANSWERED, Server, ask_in_panel, check_anchor, heavy_requests, serve
from test_pages import IMG, LONG, XSS, make_hostile_repo, make_index

from bench.browser_harness import load_test_hooks
from oya.core.results import page_url

pytestmark = pytest.mark.slow

EVIL_PAGE = "files/pkg/evil.py.html"
README_PAGE = "files/README.md.html"
SAMPLE_FILE_PAGE = "files/inventory/service.py.html"

# Recorded in the page before any of its scripts run (CSP violations, dialogs that slipped through).
_WATCH = """
window.__oya_csp = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.__oya_csp.push(`${e.violatedDirective} ${e.blockedURI} ${e.sourceFile}:${e.lineNumber}`);
});
"""

# Everything that could execute or load something, as the DOM has it now.
_ACTIVE_CONTENT = """() => {
  const all = [...document.querySelectorAll("*")];
  return {
    scripts: [...document.scripts].map((s) => s.src || "inline:" + s.textContent.slice(0, 60)),
    images: document.querySelectorAll("img, image, picture, video, audio, source").length,
    frames: document.querySelectorAll("iframe, frame, object, embed, portal").length,
    handlers: all.flatMap((e) => [...e.attributes].filter((a) => /^on/i.test(a.name)).map((a) => `${e.tagName} ${a.name}`)),
    jsLinks: [...document.querySelectorAll("[href], [src], [action], [formaction], [xlink\\\\:href]")]
      .map((e) => e.getAttribute("href") || e.getAttribute("src") || e.getAttribute("action") || e.getAttribute("formaction") || e.getAttribute("xlink:href") || "")
      .filter((u) => /^\\s*(javascript|vbscript|data:text)/i.test(u)),
    svgScripts: document.querySelectorAll("svg script").length,
    panelForeign: document.querySelectorAll(".ask-panel svg foreignObject").length,
  };
}"""


@pytest.fixture(scope="module")
def hostile_runtime_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The hostile repository indexed with the hashing embedder and built with runtime and bundle."""
    from test_pages import build_site

    work = tmp_path_factory.mktemp("hostile_runtime")
    index = make_index(make_hostile_repo(work / "evil_repo"), work / "index")
    build_site(index, work / "site")
    return work / "site"


def _watch(browser_page: Any) -> list[str]:
    """Fail-on-dialog: every dialog is recorded (and dismissed so the page cannot hang)."""
    dialogs: list[str] = []
    page = browser_page.page

    def on_dialog(dialog: Any) -> None:
        dialogs.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()

    page.on("dialog", on_dialog)
    page.add_init_script(_WATCH)
    return dialogs


def _errors(browser_page: Any) -> list[str]:
    """Console errors, page errors and CSP reports (Chromium logs CSP violations as console errors)."""
    return [
        c
        for c in browser_page.console
        if c.startswith(("error", "pageerror")) or "Content Security Policy" in c or "Refused to" in c
    ]


def _open_and_check(page: Any, base: str, rel: str) -> dict[str, Any]:
    url = base + rel
    page.goto(url)
    page.wait_for_load_state("networkidle")
    n_mermaid = page.locator("pre.mermaid").count()
    if n_mermaid:  # site.js draws every diagram with the vendored mermaid
        page.wait_for_function(
            "() => [...document.querySelectorAll('pre.mermaid')].every((p) => p.querySelector('svg'))",
            timeout=60_000,
        )
    content = page.evaluate(_ACTIVE_CONTENT)
    assert content["images"] == 0 and content["frames"] == 0, (url, content)
    assert not content["handlers"] and not content["jsLinks"] and not content["svgScripts"], (url, content)
    own = (base + "static/", base + "nav/", base + "vendor/mermaid/")
    assert all(s.startswith(own) for s in content["scripts"]), content["scripts"]
    assert page.evaluate("window.__oya_csp") == [], (url, page.evaluate("window.__oya_csp"))
    return {"mermaid": n_mermaid, **content}


# -- hostile site -------------------------------------------------------------------------------
def test_hostile_site_in_a_real_browser(hostile_runtime_site: Path, browser_page: Any) -> None:
    page = browser_page.page
    page.set_viewport_size({"width": 1440, "height": 1000})
    dialogs = _watch(browser_page)
    with serve(hostile_runtime_site) as server:
        overview = _open_and_check(page, server.url, "index.html")
        assert XSS in page.inner_text("body"), "the README's heading is shown as text on the overview"

        readme = _open_and_check(page, server.url, README_PAGE)
        text = page.inner_text("body")
        assert (
            XSS in text and IMG in text and "click me" in text
        )  # the javascript: link is dropped, its text kept
        assert page.locator("a[href^='https://example.com']").count() == 1

        evil = _open_and_check(page, server.url, EVIL_PAGE)
        text = page.inner_text("body")
        assert XSS in text and IMG in text and "ünïcödé_fn" in text
        assert LONG in page.text_content("body")  # the 5,000-character line, whole
        assert '"]; click n0 call alert()' in text  # a Mermaid breaker as plain source text

        arch = _open_and_check(page, server.url, "architecture.html")
        assert arch["mermaid"] >= 1 and overview["mermaid"] + readme["mermaid"] + evil["mermaid"] >= 1
        assert page.locator("pre.mermaid svg g").count() > 0

        # -- the Ask panel on the hostile file page: the answer cites hostile code, as text
        page.goto(server.url + EVIL_PAGE)
        page.wait_for_load_state("networkidle")
        before = page.evaluate(_ACTIVE_CONTENT)
        page.click("#ask-toggle")
        ask_in_panel(page, "What does the Evil class run method do with the unicode function?")
        entry = page.locator(".ask-entry").last
        entry.locator(".ask-banner").wait_for()
        warning = entry.locator(".ask-warning").inner_text()
        assert "Semantic search did not run" in warning and "no query model" in warning, warning
        chips = entry.locator(".ask-chan").all_inner_texts()
        assert "✓ lexical" in chips and "✕ semantic" in chips, chips
        cited = entry.locator("a.ask-cite").evaluate_all("links => links.map(a => a.getAttribute('href'))")
        assert any("pkg/evil.py.html#L" in h for h in cited), cited

        entry.locator(".ask-snippets > summary").click()  # open the snippets: innerText shows them
        snippets = entry.locator(".ask-snippets").inner_text()
        assert XSS in snippets or IMG in snippets, snippets[:2000]
        answer_text = entry.inner_text()
        assert "ünïcödé_fn" in answer_text or "Evil.run" in answer_text, answer_text[:2000]
        if entry.locator(".ask-diagram").count():  # the answer's diagram, drawn (or its source as text)
            entry.locator(".ask-mermaid svg, .ask-mermaid-src").first.wait_for()

        after = page.evaluate(_ACTIVE_CONTENT)
        added = [s for s in after["scripts"] if s not in before["scripts"]]
        assert all(s.endswith("/vendor/mermaid/mermaid.min.js") for s in added), added
        for key in ("images", "frames", "handlers", "jsLinks", "svgScripts", "panelForeign"):
            assert after[key] == before[key], (key, before[key], after[key])
        assert page.locator(".ask-panel img, .ask-panel script, .ask-panel iframe").count() == 0

        # every citation link of the answer lands on an existing line anchor (names with #, %, ?)
        hrefs = entry.locator("a.ask-cite, a.ask-ref, a.ask-node").evaluate_all(
            "links => links.map(a => a.href)"
        )
        assert hrefs
        for href in sorted(set(hrefs)):
            check_anchor(server, href)

        # the file whose name has URL characters is answered and cited correctly too
        ask_in_panel(page, "odd File name with URL characters")
        odd = page.locator(".ask-entry").last
        odd_links = odd.locator("a.ask-cite").evaluate_all("links => links.map(a => a.href)")
        assert any(page_url("pkg/we ird#name%20?.py") + "#L" in h for h in odd_links), odd_links
        for href in sorted(set(odd_links)):
            check_anchor(server, href)
        assert server.missing == [], server.missing

    assert dialogs == [], dialogs
    assert _errors(browser_page) == [], _errors(browser_page)


# -- lazy loading ---------------------------------------------------------------------------------
def _unhashed(path: str) -> str:
    """``path`` without the build's content hashes (oya.site.assets): /vendor/pyodide.0a1b2c3d4e/x -> /vendor/pyodide/x."""
    return re.sub(r"\.[0-9a-f]{10}(?=/|\.[a-z]+$)", "", path)


def _heavy(server: Server) -> list[str]:
    engine = ("/static/pyodide_worker.js", "/static/pyodide_boot.js", "/static/embed.js")
    return heavy_requests(server) + [p for p in server.requested if p in engine]


def test_panel_loads_nothing_heavy_until_used(ask_site: Any, browser_page: Any) -> None:
    page = browser_page.page
    dialogs = _watch(browser_page)
    with serve(ask_site.root) as server:
        # a fresh page load (the overview has diagrams: mermaid may load, nothing else)
        for rel in ("index.html", SAMPLE_FILE_PAGE, "architecture.html"):
            page.goto(server.url + rel)
            page.wait_for_load_state("networkidle")
        page.mouse.move(200, 200)
        page.mouse.wheel(0, 400)
        page.wait_for_timeout(1000)  # (not time.sleep: the route handler must keep running)
        assert not _heavy(server), f"loaded before the panel was used: {_heavy(server)}"
        assert "/vendor/mermaid/mermaid.min.js" in server.requested  # page diagrams are allowed

        # the panel restored open on the next page (localStorage) is not a use: still nothing
        page.click("#ask-toggle")
        deadline = time.monotonic() + 30
        while (
            not any(p.startswith("/vendor/pyodide") for p in _heavy(server)) and time.monotonic() < deadline
        ):
            page.wait_for_timeout(50)
        assert _heavy(server), "opening the panel should start loading the engine"
        for_open = set(_heavy(server))
        page.goto(server.url + SAMPLE_FILE_PAGE)  # aborts the loads; the panel is restored open
        server.requested.clear()
        page.wait_for_load_state("networkidle")
        assert page.locator("#ask-panel").is_visible()
        page.wait_for_timeout(1000)  # (not time.sleep: the route handler must keep running)
        assert not _heavy(server), f"a restored panel loaded: {_heavy(server)}"

        # focusing the box starts every load in parallel: Python in its worker, bundle and model
        page.focus("#ask-input")
        page.wait_for_function("() => performance.getEntriesByName('oya:engine-ready').length > 0")
        page.wait_for_function("() => performance.getEntriesByName('oya:model-ready').length > 0")
        fetched = {_unhashed(p) for p in _heavy(server)}
        seconds = ask_in_panel(page, "How is stock removed when an order ships?")
        page.wait_for_selector(ANSWERED)

    assert seconds < 5, f"the answer after a warmed-up engine took {seconds:.1f} s"
    # the index as shards: what every question reads (manifest, graph) came with the engine, the
    # vectors shard with the model
    shards = ask_site.manifest["bundle"]["shards"]
    shard_paths = ["/bundle/" + shards["path"] + shards[k] for k in ("manifest", "graph", "vectors")]
    entry = page.locator(".ask-entry").last
    level = ask_site.core_confidence("How is stock removed when an order ships?").level
    assert entry.locator(".ask-banner").get_attribute("data-level") == level
    for wanted in (
        "/static/pyodide_worker.js",
        "/vendor/pyodide/pyodide.mjs",
        "/vendor/pyodide/pyodide.asm.wasm",
        "/vendor/pyodide/python_stdlib.zip",
        *shard_paths,
        "/static/embed.js",
        "/vendor/transformers/transformers.min.js",
        "/vendor/transformers/ort-wasm-simd-threaded.wasm",
    ):
        assert wanted in fetched, (wanted, sorted(fetched))
    bundled = [p for p in fetched if p.startswith("/bundle/")]
    assert all(p.startswith("/bundle/" + shards["path"]) for p in bundled), bundled  # shards only
    assert any(p.endswith(".whl") for p in fetched) and any(p.startswith("/models/") for p in fetched)
    assert any(p.startswith("/vendor/pyodide.") for p in for_open)
    load_test_hooks(page)
    marks = dict(page.evaluate("oyaAsk.marks()"))
    assert marks["warmup"] == 0 and marks["engine-ready"] > marks["core-imported"] > marks["pyodide-loaded"]
    assert dialogs == [] and _errors(browser_page) == [], (dialogs, _errors(browser_page))


def test_a_broken_engine_is_reported_in_the_panel(ask_site: Any, browser_page: Any, tmp_path: Path) -> None:
    """The Python worker's failure (here: no core wheel) reaches the panel as an error, not a hang."""
    site = tmp_path / "site"
    shutil.copytree(ask_site.root, site)
    for wheel in (site / "vendor").glob("*.whl"):
        wheel.unlink()
    page = browser_page.page
    with serve(site) as server:
        page.goto(server.url + SAMPLE_FILE_PAGE)
        page.click("#ask-toggle")
        ask_in_panel(page, "How is stock removed when an order ships?")
        error = page.locator(".ask-entry .ask-error").last.inner_text()
        assert "Could not answer" in error and "oya core wheel" in error and "404" in error, error
        assert [p for p in server.missing if not p.endswith(".whl")] == [], server.missing
    assert [c for c in browser_page.console if c.startswith("pageerror")] == [], browser_page.console

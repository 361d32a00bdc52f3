"""The side bar's file tree, long-file parts and line gutter in a real, offline Chromium.

A site without the runtime (pages only) is served on loopback. The tree comes from the shared
``nav/tree.<hash>.js``: on a deep file page it is drawn with the page's ancestors open and the page
marked current, other folders are filled only when opened; a citation ``#L<n>`` that reaches the
first page of a split file is forwarded to the part that holds the line; a click in a line's
number gutter selects that line. With scripts off the side bar is one link to the root folder page,
which lists the top level, and the breadcrumbs still lead up.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_ask_panel import serve
from test_pages import build_site, make_index
from test_site_build import _big_module, _write

pytestmark = pytest.mark.slow

DEEP = "files/pkg/sub/deep.py.html"
# a docstring, a string and comments over several lines: one tag each in the page, one item a line
DOC_PY = (
    'def f():\n    """First line.\n\n    More < text & here.\n    """\n'
    '    # one\n    # two\n    s = ("a"\n         "b")\n    return s\n'
)


@pytest.fixture(scope="module")
def nav_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("nav")
    repo = _write(
        work / "repo",
        {
            "pkg/sub/deep.py": "".join(f"def f{i}():\n    return {i}\n\n\n" for i in range(40)),
            "pkg/huge.py": _big_module(1000),
            "other/x.py": "X = 1\n",
            "other/doc.py": DOC_PY,
            "other/more/y.py": "Y = 1\n",
            "README.md": "# Nav test\n",
        },
    )
    build_site(make_index(repo, work / "index"), work / "site", with_runtime=False)
    return work / "site"


def _tree_state(page: Any) -> dict[str, Any]:
    return page.evaluate(
        """() => {
        const tree = document.querySelector('#tree > ul.tree');
        const current = tree && tree.querySelector('[aria-current="page"]');
        const open = [...document.querySelectorAll('#tree details[open] > summary a')].map((a) => a.textContent);
        const other = [...document.querySelectorAll('#tree details > summary a')].find((a) => a.textContent === 'other');
        return {
            current: current ? current.textContent : null,
            open,
            otherItems: other ? other.closest('details').querySelectorAll('li').length : -1,
        };
    }"""
    )


def test_tree_is_drawn_from_the_shared_script(nav_site: Path, browser_page: Any) -> None:
    page = browser_page.page
    with serve(nav_site) as server:
        page.goto(server.url + DEEP)
        page.wait_for_function("() => document.querySelector('#tree [aria-current=\"page\"]')")
        state = _tree_state(page)
        assert state["current"] == "deep.py" and state["open"] == ["pkg", "sub"], state
        assert state["otherItems"] == 0, "a folder off the current path is filled only when opened"
        page.locator("#tree details:not([open]) > summary", has_text="other").click(position={"x": 4, "y": 8})
        # the browser fires "toggle" as a queued task after the click: wait for the folder to fill
        page.wait_for_function(
            "() => [...document.querySelectorAll('#tree details[open] > summary a')]"
            ".some((a) => a.textContent === 'other' && a.closest('details').querySelectorAll('li').length >= 2)",
            timeout=5000,
        )
        assert _tree_state(page)["otherItems"] >= 2
        page.locator("#tree a", has_text="x.py").click()
        page.wait_for_url("**/files/other/x.py.html")
        assert _tree_state(page)["current"] == "x.py"
        assert any("nav/tree." in r for r in server.requested), server.requested
    assert not [c for c in browser_page.console if c.startswith(("error", "pageerror"))], browser_page.console


def test_citation_reaches_the_part_that_holds_the_line(nav_site: Path, browser_page: Any) -> None:
    page = browser_page.page
    page.set_default_timeout(20_000)
    with serve(nav_site) as server:
        page.goto(server.url + "files/pkg/huge.py.html#L15000")
        page.wait_for_url("**/parts/pkg/huge.py.*.html#L15000")
        page.wait_for_function("() => document.getElementById('L15000')?.classList.contains('hl')")
        # a click in the number gutter of a line selects it
        other = page.evaluate("document.getElementById('L15000').previousElementSibling.id")
        page.locator(f"[id='{other}']").click(position={"x": 6, "y": 6})
        assert page.evaluate("location.hash") == f"#{other}"
    assert not [c for c in browser_page.console if c.startswith(("error", "pageerror"))], browser_page.console


def test_without_scripts_the_side_bar_links_the_root_folder(
    nav_site: Path, playwright_instance: Any, tmp_path: Path
) -> None:
    from bench.browser_harness import OFFLINE_CHROMIUM_ARGS
    from oya.system_deps import find_chromium

    browser = playwright_instance.chromium.launch(
        executable_path=find_chromium(), headless=True, args=list(OFFLINE_CHROMIUM_ARGS)
    )
    try:
        context = browser.new_context(java_script_enabled=False)
        page = context.new_page()
        with serve(nav_site) as server:
            page.goto(server.url + DEEP)
            links = page.locator("#tree a").all_inner_texts()
            assert links == ["Browse files"], links
            crumbs = page.locator("nav.crumbs a").all_inner_texts()
            assert crumbs == ["Files", "pkg", "sub"], crumbs
            page.locator("#tree a").click()
            listed = page.locator("main a").all_inner_texts()
            assert {"other/", "pkg/", "README.md"} <= set(listed), listed
    finally:
        browser.close()


def test_a_token_over_several_lines_becomes_one_item_a_line(nav_site: Path, browser_page: Any) -> None:
    html = (nav_site / "files/other/doc.py.html").read_text(encoding="utf-8")
    assert html.count("<q>") == 1 and html.count("<s>") == 1  # spanning tags, not one a line
    page = browser_page.page
    with serve(nav_site) as server:
        page.goto(server.url + "files/other/doc.py.html#L4")
        page.wait_for_function("() => document.getElementById('L4')?.classList.contains('hl')")
        items = page.evaluate("[...document.querySelectorAll('pre.code li')].map((li) => li.textContent)")
        assert items == DOC_PY.rstrip("\n").split("\n"), items
        in_docstring = page.evaluate(
            "[2, 3, 4, 5].map((n) => !!document.querySelector(`#L${n} q`) || !document.getElementById(`L${n}`).textContent)"
        )
        assert in_docstring == [True, True, True, True], in_docstring
        assert page.evaluate("!!document.querySelector('#L7 s') && !!document.querySelector('#L9 u')")
    assert not [c for c in browser_page.console if c.startswith(("error", "pageerror"))], browser_page.console

"""Characters that hide or reorder text (Trojan Source) never reach a wiki page raw (issue 22, item 8).

The repository below holds the Trojan Source examples (a right-to-left override and isolates that
make a comment look like it ends a line, in code, a docstring and Markdown), zero-width
characters inside identifiers, a Hangul filler used as a function name, tag characters spelling
hidden words, and the same characters in file and folder names. Every page must show them as
marked stand-ins (names and titles as text stand-ins), warn on the pages of files that hold them,
keep code lines whole, and stay under the page budget however many there are; ordinary text
(an emoji joined by ZWJ, ⚠️ with its presentation selector) stays as it is. The Ask panel's
copy of the rule (site_template/static/ask/util.js) must agree with the Python one.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest
from test_pages import build_site, check_site, html_pages, make_index
from test_site_build import PAGE_BUDGET

from oya.core.hidden import HIDDEN_RANGES, JOINERS, visible
from oya.core.results import page_url

REPO_ROOT = Path(__file__).resolve().parents[2]
ASK_UTIL_JS = REPO_ROOT / "site_template" / "static" / "ask" / "util.js"

RLO, LRI, PDI, ZWSP, WJ, FILLER = "\u202e", "\u2066", "\u2069", "\u200b", "\u2060", "\u3164"
TAGS = "".join(chr(0xE0000 + ord(c)) for c in "run rm -rf")  # invisible ASCII
PLANTED = {RLO, LRI, PDI, ZWSP, WJ, FILLER, *TAGS}
EMOJI = "👩\u200d💻 ⚠\ufe0f"  # a ZWJ sequence and a presentation selector: ordinary text

TROJAN = f'''"""Access checks."""


def is_admin(user):
    """Whether user is an admin.

    Looks at the level{RLO} only{LRI}; nothing else{PDI}.
    """
    access_level = "user{RLO} {LRI}// Check if admin{PDI} {LRI}"
    if access_level != "user":  # {EMOJI}
        return True
    return is{ZWSP}_admin(user)


def {FILLER}(x):  # a function named by an invisible letter {TAGS}
    return x
'''
DOC = f"""# Hidden {RLO}text

A paragraph with a zero{ZWSP}width space and `code{WJ}span`, see [the{RLO} link](../pkg/trojan.py).
{EMOJI}

```
admin = False {RLO}{LRI}# true{PDI}
```
"""
FILES = {
    "pkg/trojan.py": TROJAN,
    "docs/hidden.md": DOC,
    f"pkg/evil{RLO}yp.py": "def f():\n    return 1\n",  # reads "evilyp.py" reversed: "evil" + "py.pye"
    f"zero{ZWSP}width/a.py": "A = 1\n",
    f"pkg/tag{TAGS}.py": "B = 2\n",
    # thousands of hidden characters: stand-ins are longer, the pages must still fit the budget
    "pkg/zw.txt": f"a{ZWSP}b\n" * 8_000 + ("c" + ZWSP) * 20_000 + "\n",  # and a line of them
    "docs/zw.md": ("# Zero widths\n\n" + ("b" + ZWSP) * 10_000) + "\n",
}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("hidden")
    for rel, text in FILES.items():
        path = work / "repo" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    build_site(make_index(work / "repo", work / "index"), work / "site", with_runtime=False)
    return work / "site"


def _page(site: Path, path: str) -> str:
    return (site / unquote(page_url(path))).read_text(encoding="utf-8")


def test_no_page_or_tree_holds_a_hidden_character_raw(site: Path) -> None:
    pages = dict(html_pages(site))
    texts = {**pages, **{p.name: p.read_text(encoding="utf-8") for p in (site / "nav").glob("tree.*.js")}}
    raw = {rel: sorted(PLANTED & set(text)) for rel, text in texts.items() if PLANTED & set(text)}
    assert not raw, raw
    assert EMOJI in _page(site, "pkg/trojan.py") and EMOJI in _page(site, "docs/hidden.md")
    check_site(site)  # every link still resolves, every page keeps its safety rules
    sizes = {rel: len(html.encode()) for rel, html in pages.items()}
    heaviest = max(sizes, key=sizes.__getitem__)
    assert sizes[heaviest] <= PAGE_BUDGET, (heaviest, sizes[heaviest])
    assert any(rel.startswith("parts/pkg/zw.txt.") for rel in pages)  # cut into parts like any big file


def test_code_page_marks_each_character_and_warns(site: Path) -> None:
    html = _page(site, "pkg/trojan.py")
    assert 'class="uni-warn"' in html and "contains 19 bidirectional or invisible Unicode characters" in html
    assert '<span class=uni title="RIGHT-TO-LEFT OVERRIDE">[U+202E]</span>' in html
    assert '<span class=uni title="LEFT-TO-RIGHT ISOLATE">[U+2066]</span>' in html
    assert '<span class=uni title="ZERO WIDTH SPACE">[U+200B]</span>_admin' in html
    assert "[U+E0072 U+E0075 U+E006E U+E0020 +6]" in html  # a run of tags: one stand-in
    code = html[html.index('<pre class="code') :]
    code = code[: code.index("</pre>")]
    lines = code.split("\n")
    marked = [line for line in lines if "class=uni" in line]
    assert len(marked) == 4  # the docstring's line, the string, the call, the def with its comment
    for line in marked:  # each closes its own tags (site.js splits only tags holding plain text)
        for tag in ("q", "u", "s", "b", "em", "i"):
            assert len(re.findall(f"<{tag}[ >]", line)) == line.count(f"</{tag}>"), (tag, line)
    assert '    <q>Looks at the level<span class=uni title="RIGHT-TO-LEFT OVERRIDE">' in code
    # the symbol list and the symbol index name the invisible function by its stand-in
    assert "[U+3164]" in html
    index = "".join(
        html for rel, html in html_pages(site) if rel.startswith("symbols/") or rel == "search.html"
    )
    assert "[U+3164]" in index


def test_rendered_document_marks_each_character(site: Path) -> None:
    html = _page(site, "docs/hidden.md")
    assert 'class="uni-warn"' in html
    assert (
        '<h1 class="md-block"><span class=la id=L1></span>Hidden <span class=uni title="RIGHT-TO-LEFT OVERRIDE">'
        in html
    )
    assert '<code>code<span class=uni title="WORD JOINER">[U+2060]</span>span</code>' in html
    assert "the<span class=uni" in html  # a link's label
    assert (
        '<span class=uni title="RIGHT-TO-LEFT OVERRIDE, LEFT-TO-RIGHT ISOLATE">[U+202E U+2066]</span># true'
        '<span class=uni title="POP DIRECTIONAL ISOLATE">[U+2069]</span>'
    ) in html  # in a code block


def test_names_and_titles_show_stand_ins_as_text(site: Path) -> None:
    html = _page(site, f"pkg/evil{RLO}yp.py")
    assert "<title>pkg/evil[U+202E]yp.py · " in html  # no markup in a <title>: the stand-in as text
    assert "<h1><code>evil[U+202E]yp.py</code></h1>" in html
    assert "uni-warn" not in html  # the file's text is ordinary
    folder = _page(site, f"zero{ZWSP}width/a.py")
    assert "zero[U+200B]width" in folder  # breadcrumbs
    tree = next((site / "nav").glob("tree.*.js")).read_text(encoding="utf-8")
    assert '["evil[U+202E]yp.py","evil%E2%80%AEyp.py.html"]' in tree  # label shown, page reached
    assert '"zero[U+200B]width"' in tree and "zero%E2%80%8Bwidth" in tree
    assert "tag[U+E0072 U+E0075 U+E006E U+E0020 +6].py" in tree


def test_ordinary_names_and_text_are_untouched() -> None:
    for text in ("naïve ünïcode", EMOJI, "می\u200cخواهم", "क्\u200dष", "日本語\u3000全角", "no\u00a0break"):
        assert visible(text) == text


# -- the Ask panel's copy of the rule -------------------------------------------------------------
def _js_ranges() -> tuple[list[tuple[int, int]], list[int]]:
    js = ASK_UTIL_JS.read_text(encoding="utf-8")
    block = re.search(r"export const HIDDEN_RANGES = \[(.*?)\n\];", js, re.S)
    joiners = re.search(r"export const JOINERS = \[(.*?)\];", js)
    assert block and joiners
    pairs = re.findall(r"\[(0x[0-9a-f]+), (0x[0-9a-f]+)\]", block.group(1))
    return [(int(a, 16), int(b, 16)) for a, b in pairs], [int(x, 16) for x in joiners.group(1).split(", ")]


def test_the_panel_and_the_pages_share_the_ranges() -> None:
    ranges, joiners = _js_ranges()
    assert ranges == list(HIDDEN_RANGES) and tuple(joiners) == JOINERS


SAMPLES = [
    "plain ascii",
    f"a{RLO}b{LRI}c{PDI}",
    f"is{ZWSP}{ZWSP}admin",
    f"x{TAGS}y",
    EMOJI,
    "a\u200db \u200d",
    "é\u200dé\u200d\u200dé",
    "\U000e0100\ufe0f\ufe0e\ufe00",
    "line\u2028sep",
]


def test_the_panel_and_the_pages_show_the_same_stand_ins() -> None:
    node = shutil.which("node")
    if node is None:
        pytest.fail("the Ask panel's rule is checked in Node.js: run `make test-deps`", pytrace=False)
    script = (
        f"import({json.dumps(ASK_UTIL_JS.as_uri())}).then((u) => "
        f"console.log(JSON.stringify({json.dumps(SAMPLES)}.map(u.visibleText))))"
    )
    out = subprocess.run([node, "-e", script], capture_output=True, text=True, check=True, timeout=60)
    assert json.loads(out.stdout) == [visible(s) for s in SAMPLES]


# -- in a real browser ----------------------------------------------------------------------------
@pytest.mark.slow
def test_browser_flags_the_lines_and_keeps_the_stand_ins(site: Path, browser_page: Any) -> None:
    """site.js makes the code lines items (a docstring's tag split per line included) and draws the
    tree: each stand-in survives, CSS flags exactly the lines holding one, nothing raw anywhere."""
    from test_ask_panel import serve

    page = browser_page.page
    with serve(site) as server:
        page.goto(server.url + page_url("pkg/trojan.py"))
        page.wait_for_selector("pre.code li#L16")
        page.wait_for_selector("#tree a[aria-current='page']")
        state = page.evaluate(
            """() => ({
            flagged: [...document.querySelectorAll('pre.code li')]
                .filter((li) => getComputedStyle(li).boxShadow !== 'none').map((li) => li.id),
            marked: [...document.querySelectorAll('pre.code li .uni')].map((m) => m.closest('li').id),
            tree: [...document.querySelectorAll('#tree a')].map((a) => a.textContent),
            text: document.body.innerText + document.title,
        })"""
        )
    assert state["flagged"] == ["L7", "L9", "L12", "L15"]
    assert sorted(set(state["marked"]), key=lambda i: int(i[1:])) == state["flagged"]
    assert "evil[U+202E]yp.py" in state["tree"]
    assert not PLANTED & set(state["text"])

"""The static wiki, checked without a browser: safe HTML, working links, no secrets, no remote loads.

Sites are built with ``with_runtime=False`` (no Pyodide/model copies) from indexes made with the
deterministic hashing embedder, so the whole module runs in seconds.
"""

from __future__ import annotations

import gzip
import json
import posixpath
import re
import shutil
import threading
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest

from oya.build.ownership import SITE_MANIFEST_KEYS, SITE_MARKER
from oya.build.steps import embed, make_chunks, parse_and_link, scan, write_search_index
from oya.core.results import page_url
from oya.embedding.embedder import HashingEmbedder
from oya.errors import OutputNotOursError, SiteError
from oya.site import build as site_build
from oya.site.build import render_wiki_pages, write_wiki_site
from oya.site.csp import CSP
from oya.site.markup import render_document, render_inline
from oya.site.serve import make_server, serve_site

SAMPLE_REPO = Path(__file__).resolve().parents[2] / "data" / "sample_repo"

XSS = "<script>alert(1)</script>"
IMG = "<img src=x onerror=alert(1)>"
MERMAID_BREAK = '"]; click n0 call alert() %%{init: {}}%%'
LONG = "x" * 5000

# Every line render_mermaid can emit: generated ids, quoted labels of safe characters, fixed classes.
_SAFE_MERMAID = re.compile(
    r"^(flowchart (LR|TD|TB|RL|BT)"
    r'|  n\d+\["[A-Za-z0-9 _./:(),-]*"\]:::(seed|mod|cls|fn)'
    r"|  n\d+ (-->|-\.->|---)(\|(calls|imports|inherits|contains)\|)? n\d+"
    r'|  click n\d+ href "[A-Za-z0-9_.~%-][A-Za-z0-9_.~/%-]*(#L[0-9]+)?"'
    r'|  subgraph n\d+\["[A-Za-z0-9 _./:(),-]*"\]|  end|  class n\d+ (seed|mod|cls|fn)'
    r"|  classDef (seed|mod|cls|fn) fill:#[0-9a-f]{6},stroke:#[0-9a-f]{6},color:#[0-9a-f]{3})$"
)

HOSTILE_README = f"""\
# Evil {XSS} project

Intro with {IMG} and `code {XSS}` and **bold** text.

[click me](javascript:alert(1)) [data](data:text/html,{XSS}) [proto](//evil.example/x)
[fine](https://example.com/docs) [source](pkg/evil.py) ![tracker](http://evil.example/pixel.png)
<a href="javascript:alert(1)">raw html link</a>

```
{XSS}
{MERMAID_BREAK}
```

- item {IMG}
- item `--> {MERMAID_BREAK}`

{LONG}
"""

HOSTILE_MODULE = f'''\
"""Module docstring {XSS} {IMG} {MERMAID_BREAK} --> `tick` ``double``."""

# comment {XSS} javascript:alert(1)
BANNER = "{LONG}"


class Evil:
    """Class {MERMAID_BREAK} {XSS}."""

    def run(self, value="{IMG}"):
        """Method --> {MERMAID_BREAK}"""
        return ünïcödé_fn(value)


def ünïcödé_fn(arg):
    """Unicode name {XSS}."""
    return helper(arg)


def helper(arg):
    return arg


if __name__ == "__main__":
    Evil().run()
'''


def build_site(index_dir: Path, site_dir: Path, *, with_runtime: bool = True) -> dict[str, Any]:
    """The wiki of the index in ``index_dir`` written to ``site_dir``, as the wiki_pages and
    wiki_site assets write it (pages unchanged since the site already there are taken from it)."""
    pages = render_wiki_pages(Path(index_dir), Path(site_dir))
    return write_wiki_site(pages, Path(index_dir), Path(site_dir), with_runtime=with_runtime)


def make_index(repo: Path, out: Path) -> Path:
    """An index of ``repo`` in ``out`` through the same functions the Dagster assets call."""
    scanned = scan(repo)
    graph = parse_and_link(scanned)
    chunks = make_chunks(scanned, graph)
    vectors = embed(chunks, HashingEmbedder(), out / "embed-cache.sqlite")
    write_search_index(out, repo, scanned, graph, chunks, vectors)
    return out


def write_whole_bundle(doc: dict[str, Any], vec_bytes: bytes, folder: Path) -> Path:
    """The whole bundle as two files (``index.json.gz``, ``vectors.bin.gz``): the reference the
    Node runner and the parity tests read. The site ships only shards (oya.site.shards)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "index.json.gz").write_bytes(gzip.compress(json.dumps(doc).encode("utf-8")))
    (folder / "vectors.bin.gz").write_bytes(gzip.compress(vec_bytes))
    return folder


def make_hostile_repo(root: Path) -> Path:
    files = {
        "README.md": HOSTILE_README,
        "pkg/__init__.py": '"""The evil package."""\n',
        "pkg/evil.py": HOSTILE_MODULE,
        "pkg/uses_evil.py": '"""Calls into evil."""\n\nfrom pkg.evil import Evil\n\n\ndef go():\n    return Evil().run()\n',
        "pkg/we ird#name%20?.py": f'"""File name with URL characters {XSS}."""\n\ndef odd():\n    return 1\n',
        f"docs/{IMG}.md": f"# Title {XSS}\n\n[back](../README.md)\n",
        "docs/guide.rst": f"Guide {XSS}\n=============================\n\nSee ``code {IMG}`` and `link <javascript:alert(1)>`_.\n\n"
        f"Example::\n\n    {XSS}\n",
        "web/app.js": f"// {XSS}\nfunction run() {{ return '{IMG}'; }}\n",
    }
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


# -- HTML inspection ---------------------------------------------------------------------------
@dataclass
class PageScan:
    scripts: list[tuple[dict[str, str | None], str]] = field(default_factory=list)
    links: list[tuple[str, str, dict[str, str | None]]] = field(default_factory=list)  # (tag, url, attrs)
    ids: set[str] = field(default_factory=set)
    on_attrs: list[str] = field(default_factory=list)
    mermaid: list[str] = field(default_factory=list)
    csp: list[str] = field(default_factory=list)


class _Scanner(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.result = PageScan()
        self._script: dict[str, str | None] | None = None
        self._script_body: list[str] = []
        self._mermaid_depth = 0
        self._mermaid_text: list[str] = []
        self._code_start = 1
        self._code_text: list[str] | None = None  # the text of a <pre class="code"> being read

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        for name, _ in attrs:
            if name.lower().startswith("on"):
                self.result.on_attrs.append(f"<{tag} {name}>")
        if "id" in a and a["id"]:
            self.result.ids.add(a["id"])
        self._code_line(tag, a)
        for attr in ("href", "src", "action", "srcset", "formaction", "poster", "data"):
            if a.get(attr) is not None:
                self.result.links.append((tag, str(a[attr]), a))
        if tag == "script":
            self._script = a
            self._script_body = []
        if tag == "meta" and (a.get("http-equiv") or "").lower() == "content-security-policy":
            self.result.csp.append(a.get("content") or "")
        if tag == "pre" and "mermaid" in (a.get("class") or "").split():
            self._mermaid_depth = 1
            self._mermaid_text = []
        elif self._mermaid_depth:
            self._mermaid_depth += 1

    def _code_line(self, tag: str, a: dict[str, str | None]) -> None:
        """Code lines get their ids ``L<n>`` from site.js: line i of ``<pre class="code" data-start=s>``
        (its text split at newlines, the one after ``<pre>`` dropped) is ``L<s + i>``."""
        if tag == "pre" and "code" in (a.get("class") or "").split():
            self._code_start, self._code_text = int(a.get("data-start") or 1), []
        elif tag == "span" and a.get("class") == "la" and a.get("data-to"):
            # a rendered document's block anchor: site.js adds ids up to its last line
            first = int(str(a.get("id"))[1:])
            self.result.ids.update(f"L{n}" for n in range(first + 1, int(str(a["data-to"])) + 1))

    def _end_code(self) -> None:
        text = "".join(self._code_text or [])
        text = text[1:] if text.startswith("\n") else text
        n_lines = text.count("\n") + 1 if text else 0
        self.result.ids.update(f"L{self._code_start + k}" for k in range(n_lines))
        self._code_text = None

    def handle_endtag(self, tag: str) -> None:
        if tag == "pre" and self._code_text is not None:
            self._end_code()
        if tag == "script" and self._script is not None:
            self.result.scripts.append((self._script, "".join(self._script_body)))
            self._script = None
        if self._mermaid_depth:
            self._mermaid_depth -= 1
            if self._mermaid_depth == 0:
                self.result.mermaid.append("".join(self._mermaid_text))

    def handle_data(self, data: str) -> None:
        if self._code_text is not None:
            self._code_text.append(data)
        if self._script is not None:
            self._script_body.append(data)
        if self._mermaid_depth:
            self._mermaid_text.append(data)


def scan_html(html: str) -> PageScan:
    scanner = _Scanner()
    scanner.feed(html)
    scanner.close()
    return scanner.result


def is_remote(url: str) -> bool:
    parts = urlsplit(url.strip())
    return bool(parts.netloc) or parts.scheme not in ("", "data")


def is_external_link(tag: str, url: str, attrs: dict[str, str | None]) -> bool:
    """A clickable link out of the site: <a> to http(s) with rel=noopener (navigation, never a load)."""
    parts = urlsplit(url)
    rel = (attrs.get("rel") or "").split()
    return tag == "a" and parts.scheme in ("http", "https") and "noopener" in rel and "noreferrer" in rel


def html_pages(site: Path) -> Iterator[tuple[str, str]]:
    for path in sorted(site.rglob("*.html")):
        yield path.relative_to(site).as_posix(), path.read_text(encoding="utf-8")


def check_site(site: Path) -> dict[str, int]:
    """Every safety and link rule of the wiki over every page; returns counts for sanity checks."""
    scans = {rel: scan_html(html) for rel, html in html_pages(site)}
    assert scans, "no pages were written"
    problems: list[str] = []
    n_links = n_anchor_links = n_mermaid = 0
    for rel, s in scans.items():
        if s.csp != [CSP]:
            problems.append(f"{rel}: CSP meta missing or wrong: {s.csp}")
        problems += [f"{rel}: event handler attribute {x}" for x in s.on_attrs]
        for attrs, body in s.scripts:
            src = attrs.get("src")
            if not src:
                problems.append(f"{rel}: a <script> without src")
            elif is_remote(src) or src.startswith("/"):
                problems.append(f"{rel}: script from outside the site: {src}")
            if body.strip():
                problems.append(f"{rel}: inline script body {body[:60]!r}")
        for block in s.mermaid:
            n_mermaid += 1
            for line in block.strip("\n").split("\n"):
                if not _SAFE_MERMAID.match(line):
                    problems.append(f"{rel}: unsafe mermaid line {line!r}")
        for tag, url, attrs in s.links:
            low = url.strip().lower()
            if low.startswith(("javascript:", "vbscript:")) or "javascript:" in low.replace(" ", ""):
                problems.append(f"{rel}: javascript url in <{tag}>: {url}")
                continue
            if low.startswith("data:"):
                if tag != "link" or low != "data:,":
                    problems.append(f"{rel}: data url in <{tag}>: {url[:40]}")
                continue
            if is_remote(url) or url.startswith("//"):
                if not is_external_link(tag, url, attrs):
                    problems.append(f"{rel}: remote {tag} url {url}")
                continue
            n_links += 1
            parts = urlsplit(url)
            if parts.path:
                if parts.path.startswith("/"):
                    problems.append(f"{rel}: absolute path {url}")
                    continue
                target = posixpath.normpath(posixpath.join(posixpath.dirname(rel), unquote(parts.path)))
                if target.startswith("../") or target == "..":
                    problems.append(f"{rel}: link escapes the site: {url}")
                    continue
                if not (site / target).is_file():
                    problems.append(f"{rel}: broken link {url} -> {target}")
                    continue
            else:
                target = rel
            if parts.fragment:
                n_anchor_links += 1
                frag = unquote(parts.fragment)
                m = re.fullmatch(r"L(\d+)(?:-L?(\d+))?", frag)
                wanted = f"L{m.group(1)}" if m else frag
                ids = scans[target].ids if target in scans else set()
                if wanted not in ids:
                    problems.append(f"{rel}: anchor #{frag} missing in {target}")
                if m and m.group(2) and f"L{m.group(2)}" not in ids:
                    problems.append(f"{rel}: range end #{frag} missing in {target}")
    assert not problems, "\n".join(problems[:40]) + (
        f"\n... {len(problems)} problems" if len(problems) > 40 else ""
    )
    return {"pages": len(scans), "links": n_links, "anchors": n_anchor_links, "mermaid": n_mermaid}


# -- fixtures ----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def sample_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("sample")
    repo = Path(
        shutil.copytree(SAMPLE_REPO, work / "sample_repo", ignore=shutil.ignore_patterns("__pycache__"))
    )
    index = make_index(repo, work / "index")
    build_site(index, work / "site", with_runtime=False)
    return work / "site"


@pytest.fixture(scope="module")
def hostile_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("hostile")
    repo = make_hostile_repo(work / "evil_repo")
    index = make_index(repo, work / "index")
    build_site(index, work / "site", with_runtime=False)
    return work / "site"


# -- the sample repository -------------------------------------------------------------------
def test_sample_site_layout_and_links(sample_site: Path) -> None:
    for rel in (
        "index.html",
        "architecture.html",
        "search.html",
        "dirs/index.html",
        "dirs/inventory/index.html",
    ):
        assert (sample_site / rel).is_file(), rel
    for rel in ("inventory/service.py", "README.md", "docs/guide.rst"):
        assert (sample_site / unquote(page_url(rel))).is_file(), rel
    for rel in (
        "site.css",
        "site.js",
        "ask.js",
        "ask/engine.js",
        "ask/vectors.js",
        "pyodide_boot.js",
        "embed.js",
    ):
        assert (sample_site / "static" / rel).is_file(), rel
    # the Ask panel's test hooks (bench/ask_test_hooks.js) are not in the site: no page can load them
    assert not (sample_site / "static" / "ask" / "test_hooks.js").exists()
    scripts = [p.read_text(encoding="utf-8") for p in (sample_site / "static").rglob("*.js")]
    assert scripts and not [
        s for s in scripts if re.search(r"""(from|import\()\s*["'][^"']*test_hooks|oyaAsk\s*=""", s)
    ]
    counts = check_site(sample_site)
    assert counts["anchors"] > 50 and counts["mermaid"] >= 5


def _module_imports(static: Path, name: str) -> set[str]:
    """``name`` (a module under static/) and every module it imports, transitively, as static/-relative paths."""
    seen: set[str] = set()
    todo = [name]
    while todo:
        rel = todo.pop()
        if rel in seen:
            continue
        seen.add(rel)
        text = (static / rel).read_text(encoding="utf-8")
        for spec in re.findall(r"""^import [^;]*?from "(\.{1,2}/[^"]+)";""", text, re.M | re.S):
            todo.append(posixpath.normpath(posixpath.join(posixpath.dirname(rel), spec)))
    return seen


def test_site_js_preloads_exactly_the_ask_panels_modules() -> None:
    static = SAMPLE_REPO.parents[1] / "site_template" / "static"
    listed = re.search(r"var ASK_MODULES = \[([^\]]*)\]", (static / "site.js").read_text(encoding="utf-8"))
    assert listed
    preloaded = re.findall(r'"([^"]+)"', listed.group(1))
    assert len(preloaded) == len(set(preloaded))
    assert set(preloaded) == _module_imports(static, "ask.js")
    assert "ask/test_hooks.js" not in preloaded


def test_sample_pages_content(sample_site: Path) -> None:
    overview = (sample_site / "index.html").read_text(encoding="utf-8")
    assert "Inventory" in overview and "stock-keeping" in overview  # README excerpt
    assert "python" in overview and "Entry points" in overview
    assert 'href="files/inventory/cli.py.html' in overview  # cli module / __main__ guard found
    assert 'href="files/inventory/models.py.html#L' in overview  # central symbols link to lines
    service = (sample_site / "files/inventory/service.py.html").read_text(encoding="utf-8")
    assert 'data-root="../../"' in service and 'data-page="files/inventory/service.py.html"' in service
    ids = scan_html(service).ids
    assert "L1" in ids and "L49" in ids and "L50" not in ids
    assert "Business rules" in service  # module docstring
    assert "add_item" in service and "href=#L16>" in service  # symbol with its line
    assert "href=cli.py.html#L" in service  # caller in another file of the same folder: a bare name
    # the Ask button and panel are ask.js's to add (tests/site/test_ask_panel.py): no dead button without it
    assert 'id="ask-toggle"' not in service and 'id="ask-panel"' not in service
    # site.js draws the wiki links and search box and loads ask.js + ask.css (tests/site/test_ask_panel.py)
    assert "src=../../static/site.js " in service and "href=../../search.html>" in service
    assert 'class="topsearch"' not in service and "ask.js" not in service
    guide = (sample_site / "files/docs/guide.rst.html").read_text(encoding="utf-8")
    assert "<h1" in guide and "User guide" in guide and "L1" in scan_html(guide).ids
    arch = (sample_site / "architecture.html").read_text(encoding="utf-8")
    assert 'class="mermaid"' in arch and "inventory/service.py" in arch
    search = (sample_site / "search.html").read_text(encoding="utf-8")
    assert (
        'name="q"' in search
        and "InventoryService" in search
        and "href=files/inventory/service.py.html#L10>" in search
    )


def test_manifest(sample_site: Path) -> None:
    manifest = json.loads((sample_site / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["repo"] == "sample_repo"
    assert manifest["counts"]["files"] == 9 and manifest["counts"]["pages"] >= 15
    assert manifest["wheel"] is None and manifest["model"] is None and manifest["bundle"] is None
    assert manifest["embedding_model"].startswith("oya-hashing")


def test_render_in_memory_matches_disk(sample_site: Path, tmp_path: Path) -> None:
    index = make_index(
        Path(
            shutil.copytree(
                SAMPLE_REPO, tmp_path / "sample_repo", ignore=shutil.ignore_patterns("__pycache__")
            )
        ),
        tmp_path / "index",
    )
    pages = render_wiki_pages(index)
    assert "files/inventory/models.py.html" in pages.pages and pages.counts["pages"] == len(pages.pages)
    report = write_wiki_site(pages, index, tmp_path / "site", with_runtime=False)
    assert report["pages"] == len(pages.pages) and report["bytes"]["pages"] > 0


# -- hostile input ---------------------------------------------------------------------------
def test_hostile_site_is_safe(hostile_site: Path) -> None:
    counts = check_site(hostile_site)
    assert counts["mermaid"] >= 2
    for rel, html in html_pages(hostile_site):
        assert "<script>alert" not in html, rel
        assert "<img" not in html, rel
        assert "onerror=alert(1)>" not in html.replace("&lt;img src=x onerror=alert(1)&gt;", ""), rel


def test_hostile_content_is_shown_escaped(hostile_site: Path) -> None:
    evil = (hostile_site / "files/pkg/evil.py.html").read_text(encoding="utf-8")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in evil
    assert LONG in evil  # the 5000-character line is kept whole
    assert "ünïcödé_fn" in evil
    readme = (hostile_site / "files/README.md.html").read_text(encoding="utf-8")
    assert 'href="https://example.com/docs"' in readme  # a clickable external link, rel=noopener
    assert 'href="../files/pkg/evil.py.html"' in readme  # a relative link to another file of the wiki
    assert "[tracker]" in readme and 'src="http' not in readme  # images are never loaded
    assert 'href="//evil.example' not in readme and 'href="data:text' not in readme
    weird = unquote(page_url("pkg/we ird#name%20?.py"))
    assert (hostile_site / weird).is_file()
    index = (hostile_site / "index.html").read_text(encoding="utf-8")
    assert page_url("pkg/evil.py") in index or "pkg/evil.py" in index  # the __main__ guard entry point


def test_bad_repo_site_has_no_secrets(bad_repo: Path, secret_marker: str, tmp_path: Path) -> None:
    index = make_index(bad_repo, tmp_path / "index")
    pages = render_wiki_pages(index)
    write_wiki_site(pages, index, tmp_path / "site", with_runtime=False, with_bundle=True)
    files = [p for p in (tmp_path / "site").rglob("*") if p.is_file()]
    assert len(files) > 10
    leaked = [p for p in files if secret_marker.encode() in p.read_bytes()]
    assert not leaked, f"secret marker in {leaked}"
    check_site(tmp_path / "site")


# -- markup units ------------------------------------------------------------------------------
def test_markup_links() -> None:
    def resolve(url: str) -> str | None:
        return url if url.startswith("https://") else ("page.html" if url == "rel.md" else None)

    html = str(
        render_inline("[a](javascript:alert(1)) [b](https://x.org) [c](rel.md) [d](missing.md)", resolve)
    )
    assert "javascript" not in html.split("a)")[0] and 'href="https://x.org"' in html
    assert 'href="page.html"' in html and "missing" not in html and ">d<" not in html
    doc = str(render_document("# T\n\ntext\n\n```\n<b>\n```\n", "markdown"))
    assert "&lt;b&gt;" in doc and {f"L{n}" for n in range(1, 8)} <= scan_html(doc).ids


# -- atomic replacement ------------------------------------------------------------------------
def test_failed_build_keeps_the_old_site(
    sample_site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    shutil.copytree(sample_site, site)
    before = sorted(p.relative_to(site).as_posix() for p in site.rglob("*"))

    def boom(*args: object, **kwargs: object) -> dict[str, object]:
        raise RuntimeError("disk full")

    monkeypatch.setattr(site_build, "_write_into", boom)
    pages = site_build.WikiPages({"index.html": "<p>new</p>"}, {"pages": 1})
    with pytest.raises(RuntimeError):
        write_wiki_site(pages, tmp_path, site, with_runtime=False)
    assert sorted(p.relative_to(site).as_posix() for p in site.rglob("*")) == before
    assert [p.name for p in tmp_path.iterdir()] == ["site"]  # no temporary folders left


@pytest.mark.parametrize(
    "manifest",
    [
        None,
        # a web app's manifest (the folder a PWA is served from): was taken for a site and deleted
        {"name": "My app", "short_name": "app", "start_url": "/", "display": "standalone", "icons": []},
        # Oya's keys and more: someone else's file that happens to share them
        {**dict.fromkeys(SITE_MANIFEST_KEYS, ""), "version": 1, "name": "not ours"},
    ],
)
def test_refuses_to_replace_a_folder_that_is_not_a_site(tmp_path: Path, manifest: dict | None) -> None:
    precious = tmp_path / "home"
    precious.mkdir()
    (precious / "notes.txt").write_text("keep me")
    if manifest is not None:
        (precious / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(OutputNotOursError, match="refusing to replace .*no .oya-site marker"):
        write_wiki_site(site_build.WikiPages({}, {}), tmp_path, precious, with_runtime=False)
    with pytest.raises(OutputNotOursError):  # the swap checks again: a run configured elsewhere
        site_build.swap_site(tmp_path / "staged", precious)
    assert sorted(p.name for p in precious.iterdir()) == sorted(
        ["notes.txt", "manifest.json"][: 1 + bool(manifest)]
    )
    assert (precious / "notes.txt").read_text() == "keep me"


def test_a_site_of_an_older_oya_without_its_marker_is_still_replaced(
    sample_repo: Path, tmp_path: Path
) -> None:
    index, site = make_index(sample_repo, tmp_path / "index"), tmp_path / "site"
    build_site(index, site, with_runtime=False)
    assert (site / SITE_MARKER).is_file()
    (site / SITE_MARKER).unlink()  # as a site written before the marker existed
    build_site(index, site, with_runtime=False)  # recognised by its manifest's keys
    assert (site / SITE_MARKER).is_file()


# -- serving -----------------------------------------------------------------------------------
def test_serve_site(sample_site: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    shutil.copytree(sample_site, site)
    (site / "vendor").mkdir()
    (site / "vendor" / "x.wasm").write_bytes(b"\0asm\1\0\0\0")
    (site / "vendor" / "x.mjs").write_text("export const x = 1;\n")
    server = make_server(site, "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}/"
        with urllib.request.urlopen(base + "index.html", timeout=5) as resp:
            assert resp.status == 200 and b"sample_repo" in resp.read()
        with urllib.request.urlopen(base + "vendor/x.wasm", timeout=5) as resp:
            assert resp.headers["Content-Type"] == "application/wasm"
        with urllib.request.urlopen(base + "vendor/x.mjs", timeout=5) as resp:
            assert resp.headers["Content-Type"].startswith("text/javascript")
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def test_serve_site_without_a_site(tmp_path: Path) -> None:
    with pytest.raises(SiteError, match="oya build"):
        serve_site(tmp_path / "nowhere", port=0)
    (tmp_path / "empty").mkdir()
    with pytest.raises(SiteError, match="index.html"):
        serve_site(tmp_path / "empty", port=0)

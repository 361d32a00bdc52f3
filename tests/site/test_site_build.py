"""The site step: legal but colliding layouts, page weight, incremental rebuilds equal full ones.

Sites are built without the browser runtime from indexes made with the deterministic hashing
embedder (``make_index`` of test_pages), so every test here takes seconds.
"""

from __future__ import annotations

import gzip
import os
import re
import shutil
import string
from pathlib import Path
from urllib.parse import unquote

import brotli
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_pages import SAMPLE_REPO, build_site, check_site, html_pages, make_index, scan_html

from oya.core.results import page_url
from oya.site.codeview import split_parts
from oya.site.render import _UNSHOWN_FIELDS, PAGE_KEYS_FILE, TEMPLATE_DIR
from oya.site.reuse import place_file

PAGE_BUDGET = 300_000  # bytes of one page before compression (issue 10)


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def _build(repo: Path, work: Path, site: Path | None = None) -> tuple[Path, dict[str, int]]:
    index = make_index(repo, work / "index")
    site = site or work / "site"
    report = build_site(index, site, with_runtime=False)
    return site, report["counts"]


def _site_files(site: Path) -> dict[str, bytes]:
    out = {}
    for p in sorted(site.rglob("*")):
        # the manifest (and its compressed copies) holds the build time
        if p.is_file() and not p.name.startswith("manifest.json"):
            out[p.relative_to(site).as_posix()] = p.read_bytes()
    return out


def test_the_manifest_ships_its_compressed_copies_whatever_their_size(tmp_path: Path) -> None:
    # the Ask panel reads manifest.json's Content-Encoding to learn whether the host sends the
    # Brotli copies (site_template/static/ask/decoded.js): `oya serve` must have one to send
    site, _ = _build(_write(tmp_path / "repo", {"a.py": "A = 1\n"}), tmp_path)
    manifest = (site / "manifest.json").read_bytes()
    assert brotli.decompress((site / "manifest.json.br").read_bytes()) == manifest
    assert gzip.decompress((site / "manifest.json.gz").read_bytes()) == manifest


# -- layouts that used to break the build ---------------------------------------------------------
COLLIDING = {
    "index.html/app.py": "def index():\n    return 1\n",  # a folder named index.html
    "docs/README.md": "# Readme\n\nSee [the page](README.md.html/page.md).\n",
    "docs/README.md.html/page.md": "# Page\n\n[back](../README.md)\n",  # file X beside folder X.html/
    "pkg/a.py": "from pkg.A import f\n\n\ndef g():\n    return f()\n",
    "pkg/A.py": "def f():\n    return 1\n",  # case
    "pkg/x.html~/y.py": "Y = 1\n",  # the escape character itself
    "pkg/x.html/z.py": "Z = 1\n",
    "dots/..x/.y.py": "V = 1\n",  # dots
    "ünï/cödé.py": "def ü():\n    return 'ü'\n",  # unicode
    "e\u0301/n.py": "N = 1\n",  # a decomposed accent
}


def test_colliding_layout_builds_and_every_link_resolves(tmp_path: Path) -> None:
    repo = _write(tmp_path / "repo", COLLIDING)
    site, counts = _build(repo, tmp_path)
    assert counts["files"] == len(COLLIDING)
    for rel in COLLIDING:
        assert (site / unquote(page_url(rel))).is_file(), rel
    assert (site / "dirs/index.html").is_file() and (site / "dirs/index.html~/index.html").is_file()
    check_site(site)


_SEGMENT = st.sampled_from(
    ["index.html", "a", "A", "a.html", "A.HTML", "a.html~", "b.py.html", "é", "e\u0301"]
)


@given(
    st.lists(
        st.tuples(
            st.lists(_SEGMENT, min_size=0, max_size=2), st.sampled_from(["a.py", "A.py", "b.py", "c.md"])
        ),
        min_size=1,
        max_size=8,
    )
)
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_generated_colliding_layouts(tmp_path: Path, layout: list[tuple[list[str], str]]) -> None:
    files: dict[str, str] = {}
    taken: set[str] = set()
    for dirs, name in layout:
        rel = "/".join([*dirs, name])
        prefixes = {"/".join(dirs[:i]) for i in range(1, len(dirs) + 1)}
        if rel in taken or prefixes & set(files):
            continue
        files[rel] = f"def f():\n    return {len(files)}\n" if rel.endswith(".py") else "# Doc\n"
        taken |= prefixes | {rel}
    work = tmp_path / f"run{len(list(tmp_path.iterdir()))}"
    repo = _write(work / "repo", files)
    site, counts = _build(repo, work)
    assert counts["files"] == len(files)
    for rel in files:
        assert (site / unquote(page_url(rel))).is_file(), rel
    check_site(site)


# -- page weight ----------------------------------------------------------------------------------
def _big_module(n_funcs: int) -> str:
    parts = ['"""A generated module with long docstrings, quotes and <markup> & entities."""\n']
    for i in range(n_funcs):
        parts.append(
            f"\n\ndef function_{i}(alpha, beta='<b>', gamma=\"&amp;\"):\n"
            f'    """Do thing {i} with "quotes", <tags> & ampersands.\n\n'
            + "    A docstring line that goes on for a while to look like real documentation.\n"
            * 6
            + '    """\n'
            f"    if alpha < beta and beta > gamma:\n        return [alpha, beta, gamma, {i}]\n"
            f"    return function_{max(i - 1, 0)}(alpha, beta, gamma)\n"
        )
    return "".join(parts)


def test_every_page_stays_under_the_budget(tmp_path: Path) -> None:
    wide = "\n".join("x = '" + ("<&>" * 3000) + f"'  # {i}" for i in range(60)) + "\n"
    repo = _write(
        tmp_path / "repo",
        {
            "pkg/huge.py": _big_module(1000),  # ~17k lines, 0.6 MB: split into parts
            "pkg/wide.py": wide,  # long lines full of characters that escape
            "docs/long.md": "# Long\n\n" + "A paragraph of documentation text. " * 12_000,
            "pkg/small.py": "from pkg.huge import function_900\n\n\ndef use():\n    return function_900(1, 2, 3)\n",
            # names outside A-Z sort before "a" ("_") and after "z" ("été"): one "other" page
            "pkg/odd.py": "def _private():\n    return 1\n\n\ndef été():\n    return 2\n",
        },
    )
    site, counts = _build(repo, tmp_path)
    sizes = {rel: len(html.encode()) for rel, html in html_pages(site)}
    heaviest = max(sizes, key=sizes.__getitem__)
    assert sizes[heaviest] <= PAGE_BUDGET, (heaviest, sizes[heaviest])
    assert counts["part_pages"] >= 3 and any(rel.startswith("parts/pkg/huge.py.") for rel in sizes)
    assert any(rel.startswith("symbols/") for rel in sizes)  # 1,000+ symbols: one page per letter
    other = (site / "symbols/other.html").read_text(encoding="utf-8")
    assert "_private" in other and "été" in other
    # a link to a line on a later part goes to that part, and the anchor is there
    small = (site / "files/pkg/small.py.html").read_text(encoding="utf-8")
    assert "parts/pkg/huge.py." in small
    check_site(site)
    # every line of the big file is on exactly one page
    ids: list[str] = []
    for rel, html in html_pages(site):
        if rel == "files/pkg/huge.py.html" or rel.startswith("parts/pkg/huge.py."):
            ids += [i for i in scan_html(html).ids if i.startswith("L") and i[1:].isdigit()]
    assert sorted(ids, key=lambda i: int(i[1:])) == [f"L{n}" for n in range(1, len(ids) + 1)]
    assert len(ids) == _big_module(1000).count("\n")


def _many_files(n: int) -> dict[str, str]:
    """``n`` modules in one folder (each with a one-sentence summary), n/5 files at the top level."""
    files = {
        f"flat/module_with_a_rather_long_name_{i:05d}.py": f'"""Module {i} computes one particular thing '
        f'about graphs, <nodes> & edges, described at some length."""\n\n\ndef f{i}():\n    return {i}\n'
        for i in range(n)
    }
    files.update({f"top_{i:04d}.txt": f"note {i}\n" for i in range(n // 5)})
    files["pkg/alone.py"] = '"""A module nothing else mentions."""\n\n\ndef alone():\n    return 1\n'
    return files


def test_page_weight_does_not_grow_with_the_repository(tmp_path: Path) -> None:
    """Thousands of files: every page under the budget, a big folder listed over several pages,
    and one file's page as heavy as in a ten-file repository (the tree is one shared script)."""
    site, counts = _build(_write(tmp_path / "big" / "repo", _many_files(1500)), tmp_path / "big")
    small_site, _ = _build(_write(tmp_path / "small" / "repo", _many_files(10)), tmp_path / "small")
    sizes = {rel: len(html.encode()) for rel, html in html_pages(site)}
    heaviest = max(sizes, key=sizes.__getitem__)
    assert sizes[heaviest] <= PAGE_BUDGET, (heaviest, sizes[heaviest])
    alone = "files/pkg/alone.py.html"
    assert abs(sizes[alone] - len((small_site / alone).read_bytes())) < 64
    trees = list((site / "nav").glob("tree.*.js"))
    assert len(trees) == 1 and all(trees[0].name in html for _, html in html_pages(site))
    # the folder of 1,500 modules: consecutive pages, each row on exactly one, each page linking all
    listing = sorted((rel for rel in sizes if rel.startswith("dirs/flat/index")), key=lambda r: (len(r), r))
    assert len(listing) >= 3 and counts["dir_pages"] == len(listing) + 2  # and the root, pkg/
    rows: list[str] = []
    for rel in listing:
        html = (site / rel).read_text(encoding="utf-8")
        rows += re.findall(r"class=file-link href=([^ >]+)>", html)
        assert all(other.rsplit("/", 1)[1] in html for other in listing), rel
        assert "<nav class=crumbs aria-label=Breadcrumbs><ol><li><a href=../index.html>Files</a>" in html
    assert rows == [f"../../files/flat/module_with_a_rather_long_name_{i:05d}.py.html" for i in range(1500)]
    overview = (site / "index.html").read_text(encoding="utf-8")
    assert "top-level entries" in overview and overview.count('class="file-link"') <= 60
    check_site(site)


@pytest.mark.slow
def test_this_repositorys_pages_stay_under_the_budget(tmp_path: Path) -> None:
    """Oya's own wiki (its git files: code, docs, bench results), every page under 300 kB (~50 s)."""
    repo = Path(__file__).resolve().parents[2]
    if not (repo / ".git").exists():
        pytest.skip("not a git checkout")
    site, counts = _build(repo, tmp_path)
    sizes = {rel: len(html.encode()) for rel, html in html_pages(site)}
    heaviest = max(sizes, key=sizes.__getitem__)
    assert counts["files"] > 200 and sizes[heaviest] <= PAGE_BUDGET, (heaviest, sizes[heaviest])


def test_split_parts_cuts_on_estimated_bytes() -> None:
    assert split_parts("short\n" * 10) == (1,)
    starts = split_parts("y = 1\n" * 60_000, budget=100_000)
    assert starts[0] == 1 and len(starts) > 3 and list(starts) == sorted(set(starts))
    assert split_parts("") == (1,)
    assert len(split_parts("y = 1\n" * 100, {k: 50_000 for k in range(1, 101, 10)}, budget=100_000)) >= 5


# -- incremental rebuilds -------------------------------------------------------------------------
def _rebuild_and_compare(repo: Path, site: Path, work: Path) -> dict[str, int]:
    """Rebuild ``site`` incrementally; assert it equals a from-scratch build; return its counts."""
    index = make_index(repo, work / "index")
    counts = build_site(index, site, with_runtime=False)["counts"]
    build_site(index, work / "fresh", with_runtime=False)
    assert _site_files(site) == _site_files(work / "fresh")  # byte for byte, and nothing left over
    return counts


def test_incremental_rebuild_equals_a_full_build(tmp_path: Path) -> None:
    repo = Path(shutil.copytree(SAMPLE_REPO, tmp_path / "repo", ignore=shutil.ignore_patterns("__pycache__")))
    site = tmp_path / "site"
    _build(repo, tmp_path / "first", site)
    # 1. only one file's text: same size, same lines, same symbols
    reports = repo / "inventory" / "reports.py"
    reports.write_text(reports.read_text(encoding="utf-8").replace(" left ", " LEFT "), encoding="utf-8")
    counts = _rebuild_and_compare(repo, site, tmp_path / "second")
    assert "LEFT" in (site / "files/inventory/reports.py.html").read_text(encoding="utf-8")
    assert counts["rendered"] <= 3 and counts["reused"] >= counts["pages"] - 3, counts
    # 2. one file changed, one deleted, one added
    service = repo / "inventory" / "service.py"
    service.write_text(service.read_text(encoding="utf-8") + "\n\ndef added_helper():\n    return 42\n")
    (repo / "inventory" / "utils.py").unlink()
    _write(repo, {"inventory/extra.py": '"""Extra."""\n\nVALUE = 1\n'})
    counts = _rebuild_and_compare(repo, site, tmp_path / "third")
    assert counts["reused"] > 0 and counts["rendered"] < counts["pages"], counts
    assert not (site / "files/inventory/utils.py.html").exists()
    assert (site / "files/inventory/extra.py.html").is_file()
    # 3. nothing changed: only the overview is rendered (it names the build time), the rest is linked
    before = {p: os.stat(site / p).st_ino for p in _site_files(site) if p.endswith(".html")}
    counts = _rebuild_and_compare(repo, site, tmp_path / "fourth")
    assert counts["rendered"] <= 1 and (site / PAGE_KEYS_FILE).is_file()
    linked = [p for p, ino in before.items() if os.stat(site / p).st_ino == ino]
    assert len(linked) >= len(before) - 1, "unchanged pages were not linked from the previous site"


def test_no_template_shows_a_field_left_out_of_page_keys() -> None:
    for template in TEMPLATE_DIR.glob("*.html"):
        text = template.read_text(encoding="utf-8")
        assert not [f for f in _UNSHOWN_FIELDS if f".{f}" in text], template


def test_place_file_links_identical_and_copies_changed(tmp_path: Path) -> None:
    src = tmp_path / "cache" / "big.wasm"
    src.parent.mkdir()
    src.write_bytes(b"\0asm" + bytes(range(256)) * 64)
    previous = tmp_path / "old" / "vendor" / "big.wasm"
    previous.parent.mkdir(parents=True)
    shutil.copyfile(src, previous)
    assert place_file(src, tmp_path / "new" / "vendor" / "big.wasm", previous)
    assert os.stat(tmp_path / "new" / "vendor" / "big.wasm").st_ino == os.stat(previous).st_ino
    previous.write_bytes(b"stale")
    assert not place_file(src, tmp_path / "new2" / "big.wasm", previous)
    assert (tmp_path / "new2" / "big.wasm").read_bytes() == src.read_bytes()
    assert not place_file(src, tmp_path / "new3" / "big.wasm", None)
    # same size, other bytes, other time: compared, not linked; equal bytes: linked, and given src's time
    same_size = tmp_path / "old" / "same_size.wasm"
    same_size.write_bytes(src.read_bytes()[:-1] + b"!")
    assert not place_file(src, tmp_path / "new4" / "big.wasm", same_size)
    equal = tmp_path / "old" / "equal.wasm"
    equal.write_bytes(src.read_bytes())
    os.utime(equal, ns=(0, 10**9))
    assert place_file(src, tmp_path / "new5" / "big.wasm", equal)
    assert os.stat(equal).st_mtime_ns == os.stat(src).st_mtime_ns
    assert os.stat(tmp_path / "new3" / "big.wasm").st_mtime_ns == os.stat(src).st_mtime_ns  # a copy keeps it


@pytest.mark.parametrize("name", ["".join(string.ascii_letters[:3]), "x" * 250])  # 255 is the limit
def test_long_and_short_names_build(tmp_path: Path, name: str) -> None:
    repo = _write(tmp_path / "repo", {f"{name}/{name}.py": "A = 1\n"})
    site, _ = _build(repo, tmp_path)
    assert (site / unquote(page_url(f"{name}/{name}.py"))).is_file()
    check_site(site)


# -- the bundle's document ------------------------------------------------------------------------
def test_bundle_document_is_deterministic_and_decodes_to_the_same_answers_gzipped_or_not(
    tmp_path: Path,
) -> None:
    import json

    from bench.variants.whole_bundle import decode_bundle
    from oya.site.bundle import bundle_document, gzip_deterministic
    from oya.store.index import Index

    index_dir = make_index(Path(shutil.copytree(SAMPLE_REPO, tmp_path / "repo")), tmp_path / "index")
    with Index(index_dir) as index:
        doc, vec_bytes = bundle_document(index)
        assert bundle_document(index) == (doc, vec_bytes)
    raw_index = json.dumps(doc, sort_keys=True).encode()
    assert doc["format"] == "oya-bundle" and vec_bytes
    packed = gzip_deterministic(raw_index)
    assert packed[:2] == b"\x1f\x8b" and packed == gzip_deterministic(raw_index)
    stored = decode_bundle(packed, gzip_deterministic(vec_bytes))
    plain = decode_bundle(raw_index, vec_bytes)
    question = "How is stock removed when an order ships?"
    assert stored.vector_index is not None
    vector = stored.vector_index.row(0)  # the first stored chunk's own vector
    answers = [b.ask(question, list(vector)) for b in (stored, plain)]
    for answer in answers:
        answer.pop("timings_ms")
    assert answers[0] == answers[1] and answers[0]["hits"]
    # one lexical channel serves every question: whole-file BM25's per-index tables (file
    # lengths, chunk -> file) are built once, not once per question (28 ms per question on networkx)
    first, again = stored.channels()[0], stored.channels()[0]
    assert first is again and first.name == "lexical"
    stored.ask("Which items are out of stock?", list(vector))
    tables = first._files._docs
    assert tables is not None
    stored.ask(question, list(vector))
    assert stored.channels()[0]._files._docs is tables

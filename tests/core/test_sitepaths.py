"""Repository paths map to site paths injectively, and no page can stand where a folder must."""

from __future__ import annotations

import unicodedata
from urllib.parse import unquote

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oya.core.results import page_url
from oya.core.sitepaths import (
    dir_page_path,
    dir_part_page_path,
    dir_segment,
    file_page_path,
    file_segment,
    part_page_path,
)

# names that collide under a naive "<path>.html" mapping, or on case-insensitive / normalising disks
TRICKY = [
    "index.html",
    "index",
    "README",
    "README.html",
    "README.HTML",
    "readme.html~",
    "README.html~",
    "README.html~~",
    "a",
    "A",
    "a.html",
    "a.2",
    "a.2.html",
    "index.2.html",
    "index.2",
    "é",
    "e\u0301",
    ".hidden",
    "..dots",
    "dots.",
    "x" * 250,
    "x" * 251,
    "é" * 130,
    "ü" * 121 + ".html",
]
# a small pool, so that siblings collide often
CLASHING = ["a", "A", "a.html", "A.HTML", "a.html~", "A.html~", "index.html", "index", "é", "e\u0301"]
_NAME = st.one_of(
    st.sampled_from(CLASHING),
    st.sampled_from(TRICKY),
    st.text(
        st.characters(blacklist_categories=("Cs",), blacklist_characters="/\0"), min_size=1, max_size=12
    ).filter(lambda s: s not in (".", "..")),
)


def _fold(path: str) -> str:
    """What a case-insensitive, Unicode-normalising file system sees."""
    return unicodedata.normalize("NFC", path).casefold()


def _valid_tree(paths: list[tuple[str, ...]]) -> list[str]:
    """Files of a legal repository: no file is also a folder on the way to another file."""
    files: list[str] = []
    dirs: set[str] = set()
    for parts in paths:
        path = "/".join(parts)
        ancestors = {"/".join(parts[:i]) for i in range(1, len(parts))}
        if path in dirs or path in files or ancestors & set(files):
            continue
        files.append(path)
        dirs |= ancestors
    return files


def _dirs_of(files: list[str]) -> set[str]:
    out = {""}
    for f in files:
        parts = f.split("/")
        out |= {"/".join(parts[:i]) for i in range(1, len(parts))}
    return out


def _site_paths(files: list[str]) -> list[str]:
    pages = [file_page_path(f) for f in files]
    pages += [dir_page_path(d) for d in _dirs_of(files)]
    pages += [part_page_path(f, k) for f in files for k in (2, 3, 12)]
    pages += [dir_part_page_path(d, k) for d in _dirs_of(files) for k in (2, 3, 12)]
    return pages


def _assert_no_collision(pages: list[str], key: object = None) -> None:
    fold = key if callable(key) else (lambda s: s)
    seen = [fold(p) for p in pages]
    assert len(set(seen)) == len(seen), "two pages share a path"
    folders = {p.rsplit("/", 1)[0] for p in seen if "/" in p}
    folders |= {"/".join(p.split("/")[:i]) for p in seen for i in range(1, p.count("/") + 1)}
    clash = folders & set(seen)
    assert not clash, f"a page stands where a folder must: {sorted(clash)[:3]}"


@given(st.lists(st.lists(_NAME, min_size=1, max_size=4).map(tuple), min_size=1, max_size=30))
@settings(max_examples=400, deadline=None)
def test_site_paths_never_collide(raw: list[tuple[str, ...]]) -> None:
    files = _valid_tree(raw)
    pages = _site_paths(files)
    _assert_no_collision(pages)
    for page in pages:
        assert all(len(seg.encode("utf-8", "surrogatepass")) <= 255 for seg in page.split("/")), page
    for f in files:
        assert unquote(page_url(f)) == file_page_path(f)
        assert page_url(f, 7) == page_url(f) + "#L7"


@given(st.lists(st.lists(_NAME, min_size=1, max_size=3).map(tuple), min_size=1, max_size=20))
@settings(max_examples=300, deadline=None)
def test_no_new_collisions_on_case_insensitive_disks(raw: list[tuple[str, ...]]) -> None:
    """Where a repository can be checked out on macOS/Windows, its site can be copied there too."""
    files = _valid_tree(raw)
    folded = _valid_tree([tuple(_fold(p).split("/")) for p in files])
    if len(folded) < len(files) or len(_dirs_of(folded)) < len(_dirs_of(files)):
        return  # the repository's own paths already collide (or merge folders) on such a disk
    _assert_no_collision(_site_paths(files), key=_fold)


def test_the_layouts_from_the_issue() -> None:
    # a folder named index.html must not shadow the root folder page dirs/index.html
    assert dir_page_path("") == "dirs/index.html"
    assert dir_page_path("index.html") == "dirs/index.html~/index.html"
    # a file docs/README beside a folder docs/README.html/
    assert file_page_path("docs/README") == "files/docs/README.html"
    assert file_page_path("docs/README.html/x.md") == "files/docs/README.html~/x.md.html"
    # the escape is itself escaped, so escaped and literal names stay apart
    assert dir_segment("a.html~") == "a.html~~" and dir_segment("a.HTML") == "a.HTML~"
    assert dir_segment("a.htm") == "a.htm" and dir_segment("a.html.x") == "a.html.x"
    # ordinary paths keep their familiar form
    assert page_url("pkg/mod.py", 3) == "files/pkg/mod.py.html#L3"
    assert part_page_path("pkg/mod.py", 2) == "parts/pkg/mod.py.2.html"
    assert dir_part_page_path("pkg", 2) == "dirs/pkg/index.2.html"
    assert dir_part_page_path("", 3) == "dirs/index.3.html"


def test_long_names_are_shortened_with_a_hash() -> None:
    long_a, long_b = "a" * 300, "a" * 299 + "b"
    seg_a, seg_b = file_segment(long_a), file_segment(long_b)
    assert seg_a != seg_b and len(seg_a.encode()) <= 255 and seg_a.endswith(".html")
    assert len(dir_segment("é" * 200).encode()) <= 255
    assert file_segment("a" * 236) == "a" * 236 + ".html"  # at the limit: kept
    assert len(part_page_path("a" * 300, 9999).rsplit("/", 1)[1].encode()) <= 255


def test_part_numbers_start_at_two() -> None:
    with pytest.raises(ValueError):
        part_page_path("a.py", 1)
    with pytest.raises(ValueError):
        dir_part_page_path("a", 1)

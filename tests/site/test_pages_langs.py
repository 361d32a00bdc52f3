"""The wiki of a project in many languages: every parsed language gets symbols, edges and highlighting.

Built like tests/site/test_pages.py (hashing embedder, no runtime copies), from the fixture projects
of tests/adapters/test_parsing_langs.py, the mixed TypeScript / Go / Python one among them.
"""

from __future__ import annotations

import html
import re
import shutil
from pathlib import Path

import pytest
from test_pages import build_site

from oya.build.steps import embed, make_chunks, parse_and_link, scan, write_search_index
from oya.embedding.embedder import HashingEmbedder

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "langs"


@pytest.fixture(scope="module")
def langs_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("langs")
    repo = Path(shutil.copytree(FIXTURES, work / "langs"))
    scanned = scan(repo)
    graph = parse_and_link(scanned)
    chunks = make_chunks(scanned, graph)
    vectors = embed(chunks, HashingEmbedder(), work / "embed-cache.sqlite")
    write_search_index(work / "index", repo, scanned, graph, chunks, vectors)
    build_site(work / "index", work / "site", with_runtime=False)
    return work / "site"


def page_text(site: Path, rel: str) -> str:
    raw = (site / "files" / f"{rel}.html").read_text(encoding="utf-8")
    raw = re.sub(r"<script.*?</script>", " ", raw, flags=re.S)
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", raw)))


@pytest.mark.parametrize(
    ("rel", "expected"),
    [
        ("mixed/web/src/api.ts", ("function listUsers", "Lists users by running the Python back end once.")),
        ("mixed/web/src/api.ts", ("Calls render (render.ts)",)),
        ("go/store/store.go", ("Store", "Get returns the value of key.", "Called by main (main.go)")),
        ("rust/src/store/mod.rs", ("Keeps values by key.", "Subclasses")),
        ("java/src/main/java/com/acme/Circle.java", ("Imports", "Maths.java")),
        ("php/src/FileLogger.php", ("Calls Clock.now (Clock.php)", "Bases Logger (Logger.php)")),
        ("kotlin/src/com/acme/Shapes.kt", ("interface Shape", "Something with an area.")),
    ],
)
def test_file_pages_list_symbols_docs_and_edges(
    langs_site: Path, rel: str, expected: tuple[str, ...]
) -> None:
    text = page_text(langs_site, rel)
    for piece in expected:
        assert piece in text, (rel, piece)


@pytest.mark.parametrize(
    "rel",
    [
        "ts/src/view.tsx",
        "go/store/store.go",
        "rust/src/lib.rs",
        "csharp/Dog.cs",
        "ruby/lib/greeter.rb",
        "cpp/src/shape.hpp",
    ],
)
def test_code_view_highlights_every_language(langs_site: Path, rel: str) -> None:
    raw = (langs_site / "files" / f"{rel}.html").read_text(encoding="utf-8")
    assert re.search(r"<b>(pub |func|class|public|def|export|import)\b", raw), rel  # keywords: <b> (codeview)


def test_architecture_groups_every_language(langs_site: Path) -> None:
    text = html.unescape((langs_site / "architecture.html").read_text(encoding="utf-8"))
    for folder in ("go/store/", "rust/src/store/", "java/src/main/java/com/acme/", "mixed/web/src/"):
        assert folder in text, folder

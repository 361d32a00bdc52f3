"""The docs' tables of numbers match bench/results, and every relative link of the docs resolves.

``bench/doc_tables.py`` renders each generated block of README.md and docs/*.md from its result
files. These tests run its check, so a number edited by hand, or a result file re-measured without
regenerating the docs, fails here; the fix is ``python -m bench.doc_tables``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bench import doc_tables

ROOT = doc_tables.ROOT
DOCS = doc_tables.documents()


_FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
_CODE = re.compile(r"`[^`\n]*`")
_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
_HEADING = re.compile(r"^#{1,6} +(.+?) *$", re.MULTILINE)


def _prose(text: str) -> str:
    """The text outside code blocks and code spans, where a bracket is Markdown, not code."""
    return _CODE.sub("", _FENCE.sub("", text))


def _anchors(doc: Path) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces as hyphens, repeats numbered."""
    seen: dict[str, int] = {}
    for heading in _HEADING.findall(_FENCE.sub("", doc.read_text(encoding="utf-8"))):
        slug = re.sub(r"[^\w\- ]", "", heading.replace("`", "").lower()).replace(" ", "-")
        seen[slug] = seen.get(slug, -1) + 1
        if seen[slug]:
            seen[f"{slug}-{seen[slug]}"] = 0
    return set(seen)


def _broken_links(doc: Path, root: Path = ROOT) -> list[str]:
    """Each relative link of ``doc`` that names no file of ``root``, or no heading of that file."""
    broken = []
    for target in _LINK.findall(_prose(doc.read_text(encoding="utf-8"))):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto: ... are not files
            continue
        path, _, anchor = target.partition("#")
        dest = (doc.parent / path).resolve() if path else doc
        rel = dest.relative_to(root).as_posix() if dest.is_relative_to(root) else None
        if rel is None:
            broken.append(f"{target} (outside the repository)")
        elif not dest.exists():
            broken.append(f"{target} (no such file)")
        elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
            broken.append(f"{target} (no heading #{anchor})")
    return broken


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_generated_tables_match_the_results(doc: Path) -> None:
    stale = doc_tables.stale_blocks(doc.read_text(encoding="utf-8"), doc_tables.Results())
    assert not stale, (
        f"{doc.name}: tables {stale} differ from bench/results; run `python -m bench.doc_tables`"
    )


def test_every_block_has_a_renderer_and_every_renderer_is_used_once() -> None:
    used = [b.name for doc in DOCS for b in doc_tables.find_blocks(doc.read_text(encoding="utf-8"))]
    assert sorted(set(used)) == sorted(doc_tables.TABLES), "a block without a renderer, or a renderer unused"
    assert len(used) == len(set(used)), "a table shown twice: its numbers would be written twice"


def test_the_check_names_a_changed_number_and_the_rewrite_restores_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    original = (ROOT / "docs" / "quality.md").read_text(encoding="utf-8")
    block = next(b for b in doc_tables.find_blocks(original) if b.name == "commits_families")
    body_start = block.text.index("\n| ", block.text.index("---")) + 1  # the first data row
    digit = re.compile(r"\d").search(block.text, body_start)
    assert digit is not None
    at = block.start + digit.start()
    changed = original[:at] + str((int(original[at]) + 1) % 10) + original[at + 1 :]
    doc = tmp_path / "quality.md"
    doc.write_text(changed, encoding="utf-8")

    assert doc_tables.main(["--check", str(doc)]) == 1
    assert "table commits_families differs" in capsys.readouterr().err
    assert doc.read_text(encoding="utf-8") == changed, "--check must change nothing"

    assert doc_tables.main([str(doc)]) == 0
    assert doc.read_text(encoding="utf-8") == original
    assert doc_tables.main(["--check", str(doc)]) == 0


def test_a_block_without_renderer_or_end_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    opening = doc_tables.TABLES["llm"].opening()
    unknown = opening.replace("table: llm", "table: no_such_table") + "\n| x |\n<!-- /table -->\n"
    unclosed = opening + "\n| x |\n"
    for name, text in (("unknown.md", unknown), ("unclosed.md", unclosed)):
        (tmp_path / name).write_text(text, encoding="utf-8")
        assert doc_tables.main(["--check", str(tmp_path / name)]) == 1
    err = capsys.readouterr().err
    assert "table no_such_table: no renderer" in err
    assert "table llm: no <!-- /table -->" in err


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_relative_links_resolve(doc: Path) -> None:
    assert _broken_links(doc) == []


def test_the_link_check_finds_each_kind_of_broken_link(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "security.md").write_text("# Security\n\n## Secrets\n", encoding="utf-8")
    probe = tmp_path / "docs" / "probe.md"
    probe.write_text(
        "# Here\n\n[ok](#here) [file](security.md#secrets) [gone](nowhere.md) [heading](security.md#no-such)"
        " [self](#nowhere) [out](../../x.md) [web](https://example.org/a) `[code](nowhere.md)`\n"
        "```\n[fenced](nowhere.md)\n```\n",
        encoding="utf-8",
    )
    assert _broken_links(probe, tmp_path) == [
        "nowhere.md (no such file)",
        "security.md#no-such (no heading #no-such)",
        "#nowhere (no heading #nowhere)",
        "../../x.md (outside the repository)",
    ]
